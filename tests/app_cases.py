"""What the dashboard's tests share: opening the app or one of its pages, and emptying every
cache and result store the app fills."""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.testing.v1 import AppTest

from voxmetrics.data import Study
from voxmetrics.ui import condition_report
from voxmetrics.ui.computing import clear_caches
from voxmetrics.ui.setup import MENU
from voxmetrics.ui.state import STUDY_KEY
from voxmetrics.ui.widgets import stored_parts

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = [item.path for item in MENU if item.path != "app.py"]
"""Every page of the menu, in its order (the Overview first)."""


def clear_app_caches() -> None:
    """Empty the stores the pages fill (session state is new with every AppTest)."""
    st.cache_data.clear()
    clear_caches()


def text_of(elements) -> str:
    """The text of AppTest elements (``at.caption``, ``at.info``, ...), one per line."""
    return "\n".join(str(e.value) for e in elements)


def unescaped_text(elements) -> str:
    """:func:`text_of` with Markdown's backslash escapes removed."""
    return text_of(elements).replace("\\", "")


def table_with(at: AppTest, column: str) -> Any:
    """The value of the page's first dataframe that has ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def open_app(
    study: Study | None = None,
    *,
    timeout: float = 60,
    state: Mapping[str, Any] | None = None,
    before_first_run: bool = False,
) -> AppTest:
    """The app run once (its home page, without an exception), then ``study`` (the session's
    study) and ``state`` (other session keys, e.g. a page's settings) put in its session.

    ``before_first_run``: they are put there before that run (which then never loads the demo).
    """
    at = AppTest.from_file(APP, default_timeout=timeout)
    if not before_first_run:
        at.run()
        assert not at.exception, at.exception
    for key, value in (state or {}).items():
        at.session_state[key] = value
    if study is not None:
        at.session_state[STUDY_KEY] = study
    if before_first_run:
        at.run()
        assert not at.exception, at.exception
    return at


def run_function(script, *args: Any, timeout: float = 30, **state: Any) -> AppTest:
    """``script`` (a function holding a page's code) run once with ``args``, ``state`` put in
    its session first, without an exception."""
    at = AppTest.from_function(script, default_timeout=timeout, args=args)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def open_page(
    path: str,
    study: Study | None = None,
    *,
    timeout: float = 60,
    state: Mapping[str, Any] | None = None,
) -> AppTest:
    """:func:`open_app`, then page ``path`` (e.g. ``"pages/3_LID.py"``) run without an
    exception: its first run sees ``study`` and ``state``."""
    at = open_app(study, timeout=timeout, state=state)
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def page_after_a_full_report(
    path: str, parts: Collection[str], condition: str = "plain", timeout: float = 240
) -> tuple[AppTest, Study, dict[str, Any]]:
    """The demo's page ``path`` opened after the full report of ``condition`` (computed as the
    Overview does): asserts that the page took that condition's ``parts`` from the report and
    evaluated them itself for every other condition. Returns the app, its study and the
    study's evaluate options."""
    at = open_app(timeout=timeout)
    study = at.session_state[STUDY_KEY]
    options = study.settings.evaluate_options()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        condition_report(study.get(condition), **options)
    at.switch_page(path).run()
    assert not at.exception and not at.error, at.exception
    for c in study.conditions:
        taken = stored_parts(c, options, parts) is None
        assert taken == (c.name == condition), c.name
    return at, study, options
