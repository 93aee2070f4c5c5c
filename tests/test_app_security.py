"""A dashboard that lets no one in where they don't belong.

``voxmetrics app`` listens on this machine only unless the operator opens it (``--host``),
and then behind a login that every page passes first; the speaker encoders the browser may
load are the operator's list, never a location typed in the browser; a study given at start
is read with the safe reader. What held before (no usage statistics, XSRF protection, upload
limit) is checked in the command line that starts Streamlit. The real-browser checks (token
login, two sessions) are in ``tests/browser/test_browser_security.py``.
"""

from __future__ import annotations

import ast
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from voxmetrics import cli
from voxmetrics.cli import app as app_command
from voxmetrics.cli.app import (
    SETTINGS_ENV,
    TOKEN_ENV,
    DashboardSettings,
    is_loopback,
    token_digest,
)
from voxmetrics.data.study import Study
from voxmetrics.data.studyfile import save_study
from voxmetrics.synth import demo_study
from voxmetrics.ui import access
from voxmetrics.ui.setup import MENU

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / item.path for item in MENU]
TOKEN = "a-test-token-of-enough-length"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


class _Exec(Exception):
    pass


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


# ---------------------------------------------------------------- what Streamlit is told


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


# ---------------------------------------------------------------- no location from the browser

_TEXT_BOXES = {"text_input", "text_area", "chat_input"}
_LOCATION_WORDS = re.compile(r"folder|director|path|hub|url|location|file|repo|\.ya?ml", re.I)


def _text_boxes(path: Path) -> list[tuple[int, str]]:
    """(line, label) of every free-text widget in a script."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if name in _TEXT_BOXES:
            label = node.args[0] if node.args else None
            text = label.value if isinstance(label, ast.Constant) else ast.unparse(label or node)
            found.append((node.lineno, str(text)))
    return found


def test_no_page_asks_for_a_location_on_the_server():
    scripts = [*PAGES, *sorted((ROOT / "voxmetrics" / "ui").glob("*.py"))]
    assert set(PAGES) == {ROOT / "app.py", *(ROOT / "pages").glob("*.py")}  # every page
    boxes = {
        f"{p.relative_to(ROOT)}:{line}": label for p in scripts for line, label in _text_boxes(p)
    }
    assert boxes, "the scan finds the text boxes there are (e.g. the condition's name)"
    asking = {where: label for where, label in boxes.items() if _LOCATION_WORDS.search(label)}
    assert not asking, f"free-text locations in the dashboard: {asking}"


def test_no_text_box_reaches_the_speaker_encoder_or_a_file():
    """Text typed in a page flows to no loader: the pages that have text boxes call none."""
    loaders = re.compile(r"\b(load_extractor|load_study|EcapaExtractor|open|Path)\(")
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if _text_boxes(page):
            assert not loaders.search(text), f"{page.name} has a text box and a loader"
    embeddings = (ROOT / "pages" / "8_Embeddings.py").read_text(encoding="utf-8")
    assert not _text_boxes(ROOT / "pages" / "8_Embeddings.py")
    assert "ui.speaker_encoders()" in embeddings


def test_every_page_passes_the_gate_first():
    """The first call of every page is ``ui.page_setup``, whose first act is the login gate."""
    for page in PAGES:
        tree = ast.parse(page.read_text(encoding="utf-8"))
        calls = [
            ast.unparse(node.value.func)
            for node in tree.body
            if isinstance(node, ast.Expr | ast.Assign) and isinstance(node.value, ast.Call)
        ]
        assert calls and calls[0] == "ui.page_setup", f"{page.name} starts with {calls[:1]}"
    setup = (ROOT / "voxmetrics" / "ui" / "setup.py").read_text(encoding="utf-8")
    body = setup[setup.index("def page_setup") :]
    assert body.index("require_login()") < body.index("get_study()")


# ---------------------------------------------------------------- the gate, page by page (AppTest)


def _apptest(script: Path):
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(str(script), default_timeout=120)


def _shown_text(at) -> str:
    """Every text the run put on the page (markdown, captions, titles, tables, sidebar)."""
    parts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "info", "success"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [e.value.to_csv() for e in at.dataframe]
    parts += [str(e.options) for e in at.selectbox]
    return "\n".join(parts)


def _settings(monkeypatch, **fields) -> None:
    monkeypatch.setenv(SETTINGS_ENV, DashboardSettings(**fields).to_json())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_shows_data_before_the_token(monkeypatch, page):
    _settings(monkeypatch, host="0.0.0.0", login="token", token_sha256=token_digest(TOKEN))
    at = _apptest(ROOT / "app.py")
    if page.name != "app.py":
        at.switch_page(str(page.relative_to(ROOT)))
    at.run()
    assert not at.exception, at.exception
    shown = _shown_text(at)
    assert not any(name in shown for name in DEMO_NAMES), shown
    assert "Study:" not in shown and not at.sidebar.button
    assert [t.label for t in at.text_input] == ["Access token"]


def test_streamlit_run_on_a_network_address_shows_nothing(monkeypatch):
    """``streamlit run app.py --server.address 0.0.0.0``, without ``voxmetrics app``."""
    from streamlit import config

    monkeypatch.delenv(SETTINGS_ENV, raising=False)
    before = config.get_option("server.address")
    try:
        config.set_option("server.address", "0.0.0.0")
        at = _apptest(ROOT / "app.py").run()
        assert "voxmetrics app --host 0.0.0.0" in at.error[0].value
        assert "plain" not in _shown_text(at) and not at.sidebar.button
        config.set_option("server.address", "127.0.0.1")
        at = _apptest(ROOT / "app.py").run()
        assert not at.error and all(name in _shown_text(at) for name in DEMO_NAMES)
    finally:
        config.set_option("server.address", before)


def test_the_token_opens_the_dashboard_for_this_session(monkeypatch):
    _settings(monkeypatch, host="0.0.0.0", login="token", token_sha256=token_digest(TOKEN))
    at = _apptest(ROOT / "app.py").run()
    at.text_input[0].input("not-the-token-at-all")
    at.button[0].click().run()
    assert "not the access token" in at.error[0].value
    assert "plain" not in _shown_text(at)
    at.text_input[0].input(TOKEN)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert all(name in _shown_text(at) for name in DEMO_NAMES)
    assert at.session_state["vm_access_token"] == ""  # the token is not kept
    at.switch_page("pages/1_Overview.py").run()  # once per session, for every page
    assert at.title[0].value == "Overview"
    assert "Access token" not in [t.label for t in at.text_input]
    at.sidebar.button(key="vm_logout").click().run()
    assert [t.label for t in at.text_input] == ["Access token"]


def test_oidc_login_through_streamlit(monkeypatch):
    """``st.login``'s outcome as ``st.user`` (no provider is contacted)."""
    _settings(monkeypatch, host="0.0.0.0", login="oidc", allowed=("@lab.org",))
    at = _apptest(ROOT / "app.py")
    at.run()  # no [auth] section: the page says so and shows nothing
    assert "secrets.toml" in at.error[0].value and "plain" not in _shown_text(at)
    at.secrets["auth"] = {
        "redirect_uri": "http://localhost:8501/oauth2callback",
        "cookie_secret": "x" * 32,
        "client_id": "id",
        "client_secret": "secret",
        "server_metadata_url": "http://localhost:1/.well-known/openid-configuration",
    }
    at.user = {"is_logged_in": False}
    monkeypatch.setattr(access, "_authlib_installed", lambda: False)
    at.run()  # st.login needs Authlib: the page says how to install it
    assert "streamlit[auth]" in at.error[0].value and "plain" not in _shown_text(at)
    monkeypatch.setattr(access, "_authlib_installed", lambda: True)
    at.run()
    assert [b.label for b in at.button] == ["Log in"] and "plain" not in _shown_text(at)
    at.user = {"is_logged_in": True, "email": "eve@elsewhere.org"}
    at.run()
    assert "may not see" in at.error[0].value and "plain" not in _shown_text(at)
    at.user = {"is_logged_in": True, "email": "Ana@lab.org", "email_verified": True}
    at.run()
    assert not at.exception and all(name in _shown_text(at) for name in DEMO_NAMES)


def test_the_embeddings_page_offers_the_operators_encoders_only(monkeypatch, tmp_path):
    folder = tmp_path / "secret-location" / "ecapa"
    _settings(monkeypatch, models=(("lab-ecapa", str(folder)),))
    at = _apptest(ROOT / "app.py")
    at.switch_page("pages/8_Embeddings.py").run()
    assert not at.exception, at.exception
    (encoder,) = [s for s in at.selectbox if s.label == "Speaker encoder"]
    assert encoder.options[:2] == [
        "GE2E (offline, Resemblyzer weights; a different attacker model)",
        "ECAPA-TDNN (speechbrain/spkrec-ecapa-voxceleb; downloads once)",
    ]
    assert "lab-ecapa" in encoder.options[2] and len(encoder.options) == 3
    assert "secret-location" not in _shown_text(at)  # the browser sees the name, not the path
    assert not at.main.text_input and not at.main.text_area


def test_a_study_given_at_start_opens_in_every_session(monkeypatch, tmp_path):
    study = demo_study(n_speakers=6, seed=3)
    study = Study(conditions=study.conditions[:2], name="lab study")
    path = save_study(study.renamed(study.names[0], "lab-only"), tmp_path / "lab.vxm")
    _settings(monkeypatch, study=str(path))
    for _ in range(2):  # two sessions, each from the file's study
        at = _apptest(ROOT / "app.py").run()
        assert not at.exception, at.exception
        shown = _shown_text(at)
        assert "lab-only" in shown and "lab study" in shown and "anon-strong" not in shown
    path.unlink()
    at = _apptest(ROOT / "app.py").run()  # the file is gone: said, and an empty study
    assert not at.exception and "lab.vxm given at start is gone" in at.error[0].value
    assert str(tmp_path) not in at.error[0].value  # the name, not where it lies


# ---------------------------------------------------------------- one store, no shared data


RUNS: list[float] = []


@pytest.mark.usefixtures("fresh_app_caches")
def test_a_store_hit_needs_the_data_itself():
    """Every session shares the store of ``ui.compute``: an entry is found only with the very
    data that made it, also through a lambda or a page's function closing over its data."""
    import numpy as np

    from voxmetrics.ui.computing import compute, content_key

    RUNS.clear()

    def session(secret: np.ndarray):
        def mean_of():  # a local function closing over one session's data
            RUNS.append(secret.sum())
            return secret.mean()

        return mean_of

    a, b = np.arange(4.0), np.arange(4.0) + 100  # two sessions' data
    assert compute(session(a)).value == 1.5
    assert compute(session(b)).value == 101.5  # not the other session's result
    assert compute(lambda: b.max()).value == 103 and compute(lambda: a.max()).value == 3
    assert compute(session(a.copy())).value == 1.5 and len(RUNS) == 2  # same data: a hit
    assert content_key(a) != content_key(a + 1e-12)  # one changed value is another key
    # a page's own function (pages run as __main__): keyed by its file, not its name alone
    page_a, page_b = {"__name__": "__main__"}, {"__name__": "__main__"}
    exec(compile("def table(x):\n    return x + 1\n", "pages/a.py", "exec"), page_a)
    exec(compile("def table(x):\n    return x - 1\n", "pages/b.py", "exec"), page_b)
    assert compute(page_a["table"], 1).value == 2 and compute(page_b["table"], 1).value == 0
