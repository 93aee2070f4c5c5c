document.getElementById("voxmetrics-download").addEventListener("click", function () {
  var text = document.getElementById("voxmetrics-data").textContent;
  var blob = new Blob([text], {type: "application/json"});
  var a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = this.dataset.filename;
  document.body.appendChild(a); a.click(); a.remove();
});
