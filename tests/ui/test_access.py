"""The gate of every page (voxmetrics.ui.access): a dashboard that lets no one in where they
don't belong.

Every page passes the login first; the speaker encoders the browser may load are the
operator's list, never a location typed in the browser; a study given at start opens in every
session. What the command line tells Streamlit (``voxmetrics app``: loopback unless opened, the
token, no usage statistics, XSRF protection, upload limit) is checked in
``tests/cli/test_app.py``. The real-browser checks (token login, two sessions) are in
``tests/browser/test_browser_security.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from voxmetrics.cli.app import (
    SETTINGS_ENV,
    DashboardSettings,
    token_digest,
)
from voxmetrics.data.study import Study
from voxmetrics.data.studyfile import save_study
from voxmetrics.synth import demo_study
from voxmetrics.ui import access
from voxmetrics.ui.setup import MENU

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / item.path for item in MENU]
TOKEN = "a-test-token-of-enough-length"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


# ---------------------------------------------------------------- what Streamlit is told


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
