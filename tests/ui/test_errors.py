"""The dashboard never shows a traceback (AppTest): hostile uploads and errors on every page."""

from __future__ import annotations

import re

import pytest
from app_cases import open_app

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.ui.errors import APOLOGY
from voxmetrics.ui.setup import MENU
from voxmetrics.ui.state import STUDY_KEY

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


class _Broken:
    """A study whose every use raises ``error`` (stands in for any failure inside a page)."""

    def __init__(self, error: BaseException) -> None:
        object.__setattr__(self, "_error", error)

    def __getattr__(self, name):
        raise object.__getattribute__(self, "_error")

    def __len__(self):
        raise object.__getattribute__(self, "_error")

    def __iter__(self):
        raise object.__getattribute__(self, "_error")


@pytest.mark.parametrize("page", [m.path for m in MENU])
def test_an_unexpected_error_shows_an_apology_with_details_not_a_traceback(page):
    at = open_app(timeout=60)
    at.session_state[STUDY_KEY] = _Broken(RuntimeError("internal detail 42"))
    (at.switch_page(page) if page != "app.py" else at).run()
    assert not at.exception
    assert [e.value for e in at.error] == [APOLOGY]
    assert [x.label for x in at.expander] == ["Details"]
    details = at.expander[0].code[0].value
    assert "Error reference" in details and "RuntimeError" in details
    assert "internal detail 42" not in details and "Traceback" not in details  # server log only


@pytest.mark.parametrize("page", [m.path for m in MENU])
def test_a_library_input_error_shows_its_message(page):
    at = open_app(timeout=60)
    at.session_state[STUDY_KEY] = _Broken(VoxMetricsInputError("x.csv: line 3 is wrong; fix it."))
    (at.switch_page(page) if page != "app.py" else at).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["x.csv: line 3 is wrong; fix it."]
    assert not at.expander


def test_out_of_memory_is_explained():
    at = open_app(timeout=60)
    at.session_state[STUDY_KEY] = _Broken(MemoryError())
    at.run()
    assert not at.exception
    assert "more memory than the server has" in at.error[0].value


def _scaled_study(scale: float):
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.data.study import Condition, Study
    from voxmetrics.synth import demo_study

    base = demo_study(n_speakers=10)

    def scaled(sm):
        if sm is None:
            return None
        return ScoreMatrix.from_arrays(
            sm.scores * scale,
            trial_ids=sm.trial_ids,
            trial_speakers=sm.trial_speakers,
            enrol_speakers=sm.enrol_speakers,
            attributes=sm.attributes,
        )

    conditions = tuple(
        Condition(c.name, eval=scaled(c.eval), dev=scaled(c.dev), attacker=c.attacker)
        for c in base.conditions
    )
    return Study(conditions, name="extreme", settings=base.settings)


@pytest.mark.parametrize(
    "page", ["pages/1_Overview.py", "pages/3_LID.py", "pages/4_SRD.py", "pages/5_ZEBRA.py"]
)
def test_scores_around_1e300_give_the_same_pages_as_ordinary_scores(page):
    seen = []
    for scale in (1.0, 1e300):
        at = open_app(timeout=60)
        at.session_state[STUDY_KEY] = _scaled_study(scale)
        at.switch_page(page).run()
        assert not at.exception and not at.error
        # the same warnings; numbers of a fit that diverges by design (perfect separation)
        # may differ in their last digits, so they are masked
        seen.append(sorted(re.sub(r"[-+]?\d[\d.e+-]*", "#", w.value) for w in at.warning))
    assert seen[0] == seen[1]
