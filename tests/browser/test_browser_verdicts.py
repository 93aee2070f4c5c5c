"""One front per attacker on the Privacy vs utility page, in headless Chromium (style.md 18).

The dashboard opens a VoicePrivacy-shaped study of two systems under three attackers
(``tests/verdict_cases.py``); the page draws the ranking attacker's plane first, and picking
another attacker draws that attacker's conditions and front only, with the original speech.
Screenshots of the page, the Overview's card and the Threat model's exposed speakers go to
``tests/artifacts``.
"""

from __future__ import annotations

import pytest
from verdict_cases import two_system_study

from voxmetrics.data.studyfile import save_study

from .browsing import ARTIFACTS, CHART, idle


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app opening the two-system study for every visitor."""
    from .conftest import serve_app

    vxm = save_study(two_system_study(), tmp_path_factory.mktemp("study") / "two.vxm")
    options = [str(vxm), "--", "--server.headless", "true", "--server.address", "127.0.0.1"]
    with serve_app(options, "streamlit_verdicts.log") as url:
        yield url


_TRACES = f"""() => Array.from(document.querySelectorAll("{CHART} .js-plotly-plot"))[0].data
    .map(t => ({{name: t.name, x: t.x, customdata: t.customdata || null}}))"""


def _open(page, name: str, heading: str) -> None:
    idle(page)
    page.get_by_role("link", name=name, exact=True).click()
    page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=120_000)
    idle(page)


def test_one_front_per_attacker(page):
    _open(page, "Privacy vs utility", "VoicePrivacy ranking")
    page.wait_for_function(
        f'document.querySelectorAll("{CHART} .main-svg").length >= 1', timeout=60_000
    )
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "verdicts_privacy_vs_utility.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    traces = page.evaluate(_TRACES)
    points = next(t for t in traces if t["name"] == "conditions")
    # the ranking attacker's plane first: its conditions only, labelled by their anonymiser
    assert {c[1] for c in points["customdata"]} == {"semi-informed"}
    front = next(t for t in traces if t["name"] == "Pareto front")
    assert None not in front["x"] and front["x"]  # one attacker, one front
    assert any(t["name"] == "original speech" for t in traces)
    chart_text = page.locator(CHART).nth(0).inner_text()
    assert "alpha" in chart_text and "(semi-informed)" not in chart_text  # short labels

    # another attacker: its own front
    page.get_by_text("ignorant", exact=True).first.click()
    idle(page)
    page.wait_for_timeout(1500)
    traces = page.evaluate(_TRACES)
    points = next(t for t in traces if t["name"] == "conditions")
    assert {c[1] for c in points["customdata"]} == {"ignorant"}
    page.locator(CHART).nth(0).screenshot(path=str(ARTIFACTS / "verdicts_front_ignorant.png"))
    # how firm the ranking is: its table is on the page
    assert page.get_by_text("How firm each rank is").count() >= 1


def test_card_and_exposed_speakers_fit_the_screen(page):
    _open(page, "Overview", "Overview")
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(1500)
    card = page.locator("[data-testid='stDataFrame']").first
    card.screenshot(path=str(ARTIFACTS / "verdicts_card.png"))
    box = card.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1440
    page.screenshot(path=str(ARTIFACTS / "verdicts_overview.png"), full_page=True)
    _open(page, "Threat model", "4. Your study")
    page.get_by_text("Who stays exposed").first.wait_for()
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / "verdicts_threat.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
