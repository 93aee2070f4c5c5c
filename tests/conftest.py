"""Shared fixtures: a small random study (scores and embeddings) with trial attributes.

The suite runs on every core (``pytest -n auto --dist loadscope --no-loadscope-reorder``,
pytest-xdist): each worker is its own process with its own temporary folders (``tmp_path``),
ports (bound to 0, or found free and retried) and caches. ``--dist loadscope`` runs each test
module whole on one worker, so a module-scoped fixture (a built wheel, a documentation site, a
study report) is built once, not once per worker; ``--no-loadscope-reorder`` hands out the
modules in the order they are collected, so the long browser modules (``tests/browser/``)
start first and the short doctests of ``voxmetrics/`` fill the end. (``--dist loadgroup``
would keep every browser test on one worker, but pytest-xdist 3.8 cannot group under pytest
9.2: pytest-xdist issue 1386.)

What the workers share is made safe here and in ``browser/conftest.py`` (one dashboard server
and one Chromium per worker, shared by the browser modules): Hypothesis's example database
(``.hypothesis/`` in the working folder) writes each example to its own file by an atomic
rename, and a test runs on one worker only; its wall-clock deadline is off, since the cores
are shared with the other workers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

from voxmetrics.data import EmbeddingSet, ScoreMatrix

settings.register_profile("voxmetrics", deadline=None)
settings.load_profile("voxmetrics")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems() -> None:
    """Drop SpeechBrain's unimportable lazy modules before Hypothesis scans ``sys.modules``.

    A test module that imports SpeechBrain at collection (e.g. its ``EER`` as a reference)
    would otherwise break Hypothesis's collection hook (see ``forget_unimportable_modules``).
    """
    from tests.metric_registry import forget_unimportable_modules

    forget_unimportable_modules()


@pytest.fixture(autouse=True)
def _no_lazy_placeholders():
    """The same after each test's imports, for the ``@given`` tests that follow."""
    yield
    from tests.metric_registry import forget_unimportable_modules

    forget_unimportable_modules()


@pytest.fixture
def small_sm() -> ScoreMatrix:
    """12 trials x 5 enrolled, random scores, attributes sex and age_group."""
    rng = np.random.default_rng(7)
    t, n = 12, 5
    enrol = np.array([f"spk{j}" for j in range(n)])
    speakers = enrol[rng.integers(0, n, size=t)]
    return ScoreMatrix.from_arrays(
        rng.normal(size=(t, n)),
        trial_ids=[f"utt{i:03d}" for i in range(t)],
        trial_speakers=speakers,
        enrol_speakers=enrol,
        attributes={
            "sex": rng.choice(["F", "M"], size=t),
            "age_group": rng.choice(["18-30", "31-50", "51+"], size=t),
        },
    )


@pytest.fixture
def small_es() -> EmbeddingSet:
    """4 speakers, 2 enrolment + 2 trial utterances each, in dev and eval, 8-dimensional."""
    rng = np.random.default_rng(11)
    rows = [
        (f"{split}_{spk}_{role}{k}", spk, role, split, "F" if spk in ("a", "b") else "M")
        for split in ("dev", "eval")
        for spk in "abcd"
        for role in ("enrol", "trial")
        for k in range(2)
    ]
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split", "sex"])
    return EmbeddingSet.from_arrays(rng.normal(size=(len(meta), 8)), meta)


@pytest.fixture
def fresh_app_caches():
    """Every dashboard cache empty before and after the test (app tests use it module-wide)."""
    from app_cases import clear_app_caches

    clear_app_caches()
    yield
    clear_app_caches()
