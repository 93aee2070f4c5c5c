"""``voxmetrics app``: the checkout's dashboard, shipped in the wheel, starts from a fresh install.

``app.py`` and ``pages/`` live at the repository root (``streamlit run app.py`` in a checkout);
the build backend maps them into the wheel as ``voxmetrics/_dashboard/``. The wheel test builds
the wheel, installs it with ``pip --no-deps --no-index`` into a new
virtual environment that sees this environment's packages through a ``.pth`` file (no
network), runs the installed command line, starts the installed dashboard headless on a free
port, fetches its health endpoint and page, checks that the idle server uses (almost) no CPU,
and renders the installed pages with Streamlit's AppTest.

What ``voxmetrics app`` tells Streamlit: this machine only unless the operator opens it
(``--host``), and then behind a token or an OIDC login; the operator's encoder folders; a study
given at start read with the safe reader (the gate itself: ``tests/ui/test_access.py``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from voxmetrics import cli
from voxmetrics._version import __version__
from voxmetrics.cli import app as app_command
from voxmetrics.cli.app import (
    SETTINGS_ENV,
    TOKEN_ENV,
    DashboardSettings,
    is_loopback,
    token_digest,
)
from voxmetrics.data.studyfile import save_study
from voxmetrics.synth import demo_study

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_dashboard_lives_at_the_root_of_the_checkout():
    assert cli.dashboard_script() == ROOT / "app.py"
    assert cli.dashboard_script().is_file()
    pages = sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    assert "1_Overview.py" in pages and "10_Report.py" in pages
    assert not (ROOT / "pages" / "__init__.py").exists()  # scripts, not a package
    assert not (ROOT / "voxmetrics" / "ui" / "dashboard").exists()  # one copy of the pages
    assert not (ROOT / "voxmetrics" / "_dashboard").exists()  # only in the wheel


def test_the_wheel_maps_the_dashboard_into_the_package():
    wheel = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"] == {
        "app.py": "voxmetrics/_dashboard/app.py",
        "pages": "voxmetrics/_dashboard/pages",
    }
    sdist = PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"/app.py", "/pages", "/voxmetrics", "/LICENSE", "/README.md"} <= set(sdist)
    assert "voxmetrics/_dashboard/" in (ROOT / ".gitignore").read_text(encoding="utf-8")


def test_an_installed_dashboard_comes_first(tmp_path, monkeypatch):
    package = tmp_path / "voxmetrics"
    (package / "_dashboard").mkdir(parents=True)
    monkeypatch.setattr(app_command, "_PACKAGE", package)
    assert cli.dashboard_script() == tmp_path / "app.py"  # a checkout: its root
    (package / "_dashboard" / "app.py").write_text("", encoding="utf-8")
    assert cli.dashboard_script() == package / "_dashboard" / "app.py"  # a wheel


def test_command_passes_the_config_and_turns_the_watcher_off():
    cmd = cli.dashboard_command(port=8765, streamlit_args=["--server.headless", "true"])
    assert cmd[:5] == [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py")]
    for key, value in cli.DASHBOARD_CONFIG.items():
        assert f"--{key}={value}" in cmd
    assert cmd[cmd.index("--server.fileWatcherType") + 1] == "none"
    assert "--server.runOnSave" not in cmd
    assert cmd[cmd.index("--server.port") + 1] == "8765"
    assert cmd[-2:] == ["--server.headless", "true"]  # last: they override
    dev = cli.dashboard_command(dev=True)
    assert dev[dev.index("--server.fileWatcherType") + 1] == "auto"
    assert dev[dev.index("--server.runOnSave") + 1] == "true"
    assert "--server.port" not in dev


def test_repository_streamlit_config_matches_the_launcher():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    flat = {
        f"{section}.{key}": value
        for section, values in config.items()
        for key, value in values.items()
    }
    for key, value in cli.DASHBOARD_CONFIG.items():
        got = flat[key]
        assert (str(got).lower() if isinstance(got, bool) else str(got)) == value, key
    # `streamlit run` from the checkout must not watch the virtual environment
    assert flat.get("server.fileWatcherType") == "none" or ".venv" in flat.get(
        "server.folderWatchBlacklist", []
    )


class _Exec(Exception):
    pass


def test_app_subcommand_execs_streamlit(monkeypatch):
    seen = []

    def fake_execv(path, argv):
        seen.append(argv)
        raise _Exec

    monkeypatch.setattr(app_command.os, "execv", fake_execv)
    monkeypatch.setattr(app_command.subprocess, "call", lambda argv: seen.append(argv) or 0)
    # the command writes its settings into the environment: restored after the test, so the
    # tests that run after it in this process (AppTest pages read them) see none
    monkeypatch.setenv(app_command.SETTINGS_ENV, "")
    try:
        cli.main(["app", "--port", "8600", "--dev", "--", "--server.headless", "true"])
    except _Exec:
        pass
    (argv,) = seen
    assert argv[argv.index("--server.port") + 1] == "8600"
    assert argv[argv.index("--server.fileWatcherType") + 1] == "auto"
    assert argv[-2:] == ["--server.headless", "true"]


def test_app_without_streamlit_or_with_a_bad_port_says_how_to_fix(monkeypatch, capsys):
    assert cli.main(["app", "--port", "70000"]) == 2
    assert "--port 70000" in capsys.readouterr().err
    monkeypatch.setattr(app_command.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["app"]) == 2
    assert "voxmetrics[app]" in capsys.readouterr().err


def test_app_help_documents_the_options(capsys):
    with pytest.raises(SystemExit):
        cli.main(["app", "--help"])
    out = capsys.readouterr().out
    assert "--port" in out and "--dev" in out and "streamlit run" in out


# ---------------------------------------------------------------- the wheel, installed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout}\n{proc.stderr}"
    return proc


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment with the built wheel installed; returns its bin folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "app.py"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("voxmetrics", "pages"):
        shutil.copytree(
            ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    dist = tmp / "dist"
    _run(
        [
            sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
            "--no-index", "-w", str(dist), str(src),
        ],
        cwd=tmp,
    )  # fmt: skip
    (wheel,) = dist.glob("voxmetrics-*.whl")
    assert wheel.name == f"voxmetrics-{__version__}-py3-none-any.whl"
    py = _fresh_venv(tmp / "venv")
    _run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        cwd=tmp,
    )
    return py.parent


def _fresh_venv(venv: Path) -> Path:
    """A new virtual environment that sees this one's packages; returns its python."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    # the new environment sees this one's packages (numpy, streamlit, pip...): no network
    Path(purelib.stdout.strip(), "_parent_env.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    return py


def test_editable_install_serves_the_checkouts_dashboard(tmp_path):
    """README's ``pip install -e .``: the checkout's package and its root ``app.py``."""
    py = _fresh_venv(tmp_path / "venv")
    _run(
        [
            str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
            "--no-index", "-e", str(ROOT),
        ],
        cwd=tmp_path,
    )  # fmt: skip
    code = "from voxmetrics import cli; print(cli.__file__, cli.dashboard_script())"
    out = _run([str(py), "-c", code], cwd=tmp_path).stdout.split()
    assert out == [str(ROOT / "voxmetrics" / "cli" / "__init__.py"), str(ROOT / "app.py")]
    assert not (ROOT / "voxmetrics" / "_dashboard").exists()


def test_installed_cli_runs_from_the_wheel(installed, tmp_path):
    where = _run(
        [str(installed / "python"), "-c", "import voxmetrics; print(voxmetrics.__file__)"],
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(str(installed.parent)), where  # the wheel, not the checkout
    assert _run([str(installed / "voxmetrics"), "--version"]).stdout.strip() == (
        f"voxmetrics {__version__}"
    )
    _run(
        [str(installed / "voxmetrics"), "demo", "d", "--format", "csv", "--no-embeddings"],
        cwd=tmp_path,
    )
    out = _run(
        [str(installed / "voxmetrics"), "evaluate", "d/anon-leaky_eval.csv", "--html", "p.html"],
        cwd=tmp_path,
    ).stdout
    assert json.loads(out)["eer"] > 0.4
    pkg = Path(where).parent
    # the report's package data (style sheet, script, method texts) ship and are read from there
    assets = sorted(p.name for p in (ROOT / "voxmetrics" / "report" / "assets").iterdir())
    assert assets == ["download.js", "methods.md", "report.css"]
    for name in assets:
        shipped = pkg / "report" / "assets" / name
        assert (
            shipped.read_bytes() == (ROOT / "voxmetrics" / "report" / "assets" / name).read_bytes()
        )
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "--rule: #d0d7de" in page and "Pareto front" in page  # the css, a method text
    shipped = sorted(p.name for p in (pkg / "_dashboard" / "pages").glob("*.py"))
    assert shipped == sorted(p.name for p in (ROOT / "pages").glob("*.py"))
    assert (pkg / "_dashboard" / "app.py").read_bytes() == (ROOT / "app.py").read_bytes()
    assert (pkg / "py.typed").is_file()
    launcher = "from voxmetrics import cli; print(cli.dashboard_script())"
    script = _run([str(installed / "python"), "-c", launcher], cwd=tmp_path).stdout.strip()
    assert script == str(pkg / "_dashboard" / "app.py")
    (dist_info,) = pkg.parent.glob("voxmetrics-*.dist-info")
    assert "MIT" in (dist_info / "METADATA").read_text(encoding="utf-8")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_installed_app_serves_and_idles(installed, tmp_path):
    port = _free_port()
    log = (tmp_path / "app.log").open("w")
    proc = subprocess.Popen(
        [
            str(installed / "voxmetrics"), "app", "--port", str(port), "--",
            "--server.headless", "true", "--server.address", "127.0.0.1",
        ],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (tmp_path / "app.log").read_text()
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    assert resp.read() == b"ok"
                    break
            except OSError:
                assert time.monotonic() < deadline, "the dashboard did not start"
                time.sleep(0.5)
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.status == 200 and b"<html" in resp.read().lower()
        time.sleep(2)  # let start-up settle, then measure a quiet stretch
        before = _cpu_seconds(proc.pid)
        time.sleep(4)
        idle = _cpu_seconds(proc.pid) - before
        # no file watcher: a watched virtual environment kept a whole core busy
        assert idle < 0.4, f"the idle server used {idle:.2f} s of CPU in 4 s"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert "Inotify" not in (tmp_path / "app.log").read_text()


def test_installed_pages_render(installed, tmp_path):
    """The installed home page and Report page run (AppTest, from the fresh environment)."""
    code = (
        "import sys, pathlib, voxmetrics\n"
        "from streamlit.testing.v1 import AppTest\n"
        "app = pathlib.Path(voxmetrics.__file__).parent / '_dashboard' / 'app.py'\n"
        "at = AppTest.from_file(str(app), default_timeout=120)\n"
        "at.run()\n"
        "assert not at.exception, at.exception\n"
        "assert at.title[0].value == 'VoxMetrics', at.title\n"
        "at.switch_page('pages/10_Report.py').run()\n"
        "assert not at.exception, at.exception\n"
        "print(at.title[0].value)\n"
    )
    out = _run([str(installed / "python"), "-c", code], cwd=tmp_path).stdout
    assert out.strip() == "Report"


TOKEN = "a-test-token-of-enough-length"


@pytest.fixture
def launched(monkeypatch):
    """Run ``voxmetrics app ARGS`` up to the exec of Streamlit; return (argv, settings)."""
    monkeypatch.setenv(SETTINGS_ENV, "")  # restored after the test (run() sets it)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    seen = []

    def fake_execv(path, argv):
        seen.append(argv)
        raise _Exec

    monkeypatch.setattr(app_command.os, "execv", fake_execv)
    monkeypatch.setattr(app_command.subprocess, "call", lambda argv: seen.append(argv) or 0)

    def launch(*args: str):
        try:
            status = cli.main(["app", *args])
        except _Exec:
            status = 0
        if status != 0:
            return status, None
        (argv,) = seen[-1:]
        return argv, DashboardSettings.from_env()

    return launch


def _option(argv: list[str], name: str) -> str:
    """The value Streamlit takes for ``--name`` (the last one given wins)."""
    value = None
    for k, arg in enumerate(argv):
        if arg.startswith(f"--{name}="):
            value = arg.split("=", 1)[1]
        elif arg == f"--{name}":
            value = argv[k + 1]
    assert value is not None, f"--{name} is not passed"
    return value


def test_the_default_is_this_machine_only_with_what_held_before(launched, capsys):
    argv, settings = launched()
    assert _option(argv, "server.address") == "127.0.0.1"
    assert _option(argv, "browser.gatherUsageStats") == "false"  # no usage statistics
    assert _option(argv, "server.enableXsrfProtection") == "true"
    assert _option(argv, "server.enableCORS") == "true"
    assert _option(argv, "server.maxUploadSize") == "1024"  # upload limit, in MB
    assert settings.login is None and not settings.exposed and settings.study is None
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["--host", "0.0.0.0"],
        ["--", "--server.address", "0.0.0.0"],
        ["--", "--server.address=192.168.1.20"],
        ["--host", "lab-server.example"],
    ],
)
def test_a_network_address_warns_and_asks_for_a_token(launched, capsys, args):
    argv, settings = launched(*args)
    out, err = capsys.readouterr()
    assert settings.exposed and settings.login == "token"
    assert _option(argv, "server.address") == settings.host != "127.0.0.1"
    for exposed in ("study", "per-trial tables", "figures", "download", ".vxm"):
        assert exposed in err, exposed
    assert "reachable from the network" in err
    (token,) = re.findall(r"access token \(enter it in the browser\): (\S+)", out)
    assert len(token) >= 16 and token_digest(token) == settings.token_sha256
    assert token not in json.dumps(json.loads(app_command.os.environ[SETTINGS_ENV]))


def test_a_given_token_is_not_printed_nor_kept(launched, capsys, monkeypatch):
    _, settings = launched("--host", "0.0.0.0", "--token", TOKEN)
    out, _ = capsys.readouterr()
    assert TOKEN not in out and settings.token_sha256 == token_digest(TOKEN)
    monkeypatch.setenv(TOKEN_ENV, TOKEN + "-env")
    _, settings = launched("--host", "0.0.0.0")
    assert settings.token_sha256 == token_digest(TOKEN + "-env")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--host", "0.0.0.0", "--token", "short"], "at least 16"),
        (["--token", TOKEN, "--login", "oidc"], "--token goes with"),
        (["--allow", "@lab.org"], "go with --login oidc"),
        (["--model-dir", "ecapa=/tmp"], "taken"),
        (["--model-dir", "no folder"], "NAME=FOLDER"),
        (["--model-dir", "mine=/no/such/folder"], "hyperparams.yaml"),
        (["missing.vxm"], "no such study file"),
    ],
)
def test_bad_options_say_how_to_fix(launched, capsys, args, message):
    status, _ = launched(*args)
    assert status == 2
    assert message in capsys.readouterr().err


def test_oidc_login_and_loopback_addresses(launched):
    _, settings = launched("--host", "0.0.0.0", "--login", "oidc", "--allow", "@Lab.org")
    assert settings.login == "oidc" and settings.allowed == ("@lab.org",)
    assert settings.token_sha256 == ""
    _, settings = launched("--login", "token", "--token", TOKEN)  # a login on loopback too
    assert settings.login == "token" and not settings.exposed
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "", "::", "10.0.0.1", "example.org"))


def test_model_folders_are_the_operators(launched, tmp_path):
    folder = tmp_path / "ecapa-lab"
    folder.mkdir()
    (folder / "hyperparams.yaml").write_text("x: 1\n", encoding="utf-8")
    _, settings = launched("--model-dir", f"lab={folder}")
    assert settings.models == (("lab", str(folder.resolve())),)


def test_model_folders_from_the_config_file(launched, tmp_path, monkeypatch, capsys):
    for name in ("a", "b"):
        (tmp_path / "models" / name).mkdir(parents=True)
        (tmp_path / "models" / name / "hyperparams.yaml").write_text("x: 1\n", encoding="utf-8")
    config = tmp_path / "voxmetrics.toml"
    config.write_text('[models]\nteam = "models/a"\n', encoding="utf-8")
    monkeypatch.setenv("VOXMETRICS_CONFIG", str(config))
    _, settings = launched("--model-dir", f"mine={tmp_path / 'models' / 'b'}")
    assert settings.models == (
        ("team", str((tmp_path / "models" / "a").resolve())),  # relative to the file
        ("mine", str((tmp_path / "models" / "b").resolve())),
    )
    config.write_text("[models]\nteam = 3\n", encoding="utf-8")
    status, _ = launched()
    assert status == 2 and "[models]" in capsys.readouterr().err


def test_a_study_given_at_start_is_read_with_the_safe_reader(launched, tmp_path, capsys):
    path = save_study(demo_study(n_speakers=6, seed=3), tmp_path / "lab.vxm")
    argv, settings = launched(str(path), "--", "--server.headless", "true")
    assert settings.study == str(path.resolve())
    assert argv[-2:] == ["--server.headless", "true"]
    argv, settings = launched(str(path), "--port", "8601", "--", "--server.headless", "true")
    assert settings.study == str(path.resolve()) and argv[-2:] == ["--server.headless", "true"]
    assert "8601" in argv
    bad = tmp_path / "bad.vxm"
    bad.write_bytes(b"PK\x03\x04 not a study")
    status, _ = launched(str(bad))
    assert status == 2
    err = capsys.readouterr().err
    assert "bad.vxm" in err and "Traceback" not in err


def test_the_live_server_listens_on_loopback_only(tmp_path):
    """``voxmetrics app`` started as a user would, found in the kernel's socket table."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        pytest.skip("reads the listening sockets from /proc/net")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path / "app.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "voxmetrics", "app", "--port", str(port), "--",
         "--server.headless", "true"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (tmp_path / "app.log").read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health") as r:
                    assert r.read() == b"ok"
                    break
            except OSError:
                assert time.monotonic() < deadline, "the dashboard did not start"
                time.sleep(0.5)
        listening = []
        for table in tables:
            if not table.exists():
                continue
            for line in table.read_text().splitlines()[1:]:
                local, _, state = line.split()[1:4]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    listening.append(address)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert listening == ["0100007F"], listening  # 127.0.0.1, and nothing else (no IPv6 either)
