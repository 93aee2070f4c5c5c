"""A shared dashboard in headless Chromium: the login before any page, one study per session.

The login server is started by ``voxmetrics app --login token --token T`` on 127.0.0.1 (the
gate of ``--host ADDRESS``, which picks the token login by default, without opening a port to
the network in a test); the two-session test uses the ordinary ``server`` of ``conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from voxmetrics.data.study import Study
from voxmetrics.data.studyfile import save_study
from voxmetrics.synth import demo_study
from voxmetrics.ui.setup import MENU

from .browsing import ARTIFACTS, idle
from .conftest import serve_app, worker_name

TOKEN = "browser-test-token-0123456789"
SECRET_NAMES = ["anon-mild", "anon-strong", "anon-leaky"]  # demo conditions (no page text)


@pytest.fixture(scope="module")
def login_server() -> Iterator[str]:
    """The app behind the token login, on a free loopback port."""
    options = ["--login", "token", "--token", TOKEN, "--", "--server.headless", "true"]
    with serve_app(options, f"streamlit_login_{worker_name()}.log") as url:
        yield url


def _url_path(script: str) -> str:
    """The URL path Streamlit gives a page script (``pages/1_Overview.py`` -> ``/Overview``)."""
    if script == "app.py":
        return "/"
    stem = script.rsplit("/", 1)[-1].removesuffix(".py")
    return "/" + stem.split("_", 1)[1]


def _text(pg) -> str:
    return pg.locator("[data-testid='stApp']").inner_text()


def test_no_page_shows_data_before_the_token(browser, login_server):
    context = browser.new_context(viewport={"width": 1440, "height": 1240})
    pg = context.new_page()
    pg.set_default_timeout(90_000)
    try:
        for item in MENU:  # each page opened directly, as a stranger would
            pg.goto(login_server + _url_path(item.path))
            pg.get_by_label("Access token").wait_for()
            idle(pg)
            shown = _text(pg)
            assert not any(name in shown for name in SECRET_NAMES), (item.path, shown)
            assert "Study:" not in shown and "Save study" not in shown, item.path
            assert pg.locator("[data-testid='stDataFrame']").count() == 0, item.path
            assert pg.locator("[data-testid='stPlotlyChart']").count() == 0, item.path
        pg.get_by_label("Access token").fill("a-wrong-guess-of-a-token")
        pg.get_by_role("button", name="Log in").click()
        pg.get_by_text("That is not the access token").wait_for()
        assert not any(name in _text(pg) for name in SECRET_NAMES)
        pg.get_by_label("Access token").fill(TOKEN)
        pg.get_by_role("button", name="Log in").click()
        sidebar = pg.locator("[data-testid='stSidebar']")
        sidebar.get_by_text("anon-leaky").wait_for()
        pg.screenshot(path=str(ARTIFACTS / "login_done.png"))
        sidebar.get_by_role("link", name="Overview", exact=True).click()  # the same session
        pg.wait_for_url("**/Overview")
        pg.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
        assert pg.get_by_label("Access token").count() == 0
        assert pg.locator("[data-testid='stException']").count() == 0
    finally:
        context.close()


def _load_study_file(pg, path) -> None:
    """Load a .vxm from the sidebar, as a user would."""
    sidebar = pg.locator("[data-testid='stSidebar']")
    sidebar.get_by_text("Load a study file").click()
    with pg.expect_response("**/_stcore/upload_file/**", timeout=120_000):
        sidebar.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(path)
    sidebar.locator("[data-testid='stFileChipName']", has_text=path.name).wait_for()
    pg.wait_for_timeout(500)  # the upload triggers a rerun that sends the widget value
    idle(pg)
    sidebar.get_by_role("button", name="Load study").click()
    idle(pg)


def _study_file(tmp_path, name: str, seed: int):
    demo = demo_study(n_speakers=8, seed=seed)
    conditions = [c for c in demo.conditions if c.name in ("plain", "anon-leaky")]
    study = Study(conditions=tuple(conditions), name=f"study of {name}")
    for c in conditions:
        study = study.renamed(c.name, f"{name}-{c.name}")
    return save_study(study, tmp_path / f"{name}.vxm")


def test_two_sessions_do_not_see_each_others_conditions(browser, server, tmp_path):
    contexts = [browser.new_context(viewport={"width": 1440, "height": 1240}) for _ in "ab"]
    try:
        alice, bob = (c.new_page() for c in contexts)
        for pg in (alice, bob):
            pg.set_default_timeout(90_000)
            pg.goto(server)
            idle(pg)
        _load_study_file(alice, _study_file(tmp_path, "alice", seed=11))
        alice.locator("[data-testid='stSidebar']").get_by_text("alice-anon-leaky").wait_for()
        bob.reload()  # a new run of Bob's page after Alice loaded hers
        idle(bob)
        assert "alice" not in _text(bob)
        _load_study_file(bob, _study_file(tmp_path, "bob", seed=12))
        bob.locator("[data-testid='stSidebar']").get_by_text("bob-anon-leaky").wait_for()
        for pg, mine, theirs in ((alice, "alice", "bob"), (bob, "bob", "alice")):
            sidebar = pg.locator("[data-testid='stSidebar']")
            sidebar.get_by_role("link", name="Overview", exact=True).click()
            pg.wait_for_url("**/Overview")
            pg.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
            idle(pg)
            pg.screenshot(path=str(ARTIFACTS / f"isolation_{mine}.png"), full_page=True)
            chart = pg.locator("[data-testid='stPlotlyChart']").first.inner_text()
            shown = _text(pg)
            assert f"{mine}-anon-leaky" in chart and f"{mine}-plain" in shown
            assert theirs not in shown and theirs not in chart
            assert not any(name in shown for name in ("anon-mild", "anon-strong"))
    finally:
        for c in contexts:
            c.close()
