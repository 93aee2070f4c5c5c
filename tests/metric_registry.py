"""A registry of the metric callables and the properties each one has (style.md item 10).

Like ``sklearn/metrics/tests/test_common.py``: every metric is registered once with its tags,
and ``tests/metrics/test_properties.py`` has one hypothesis test per property, run over the
entries that carry its tag. Adding a metric here puts it under every property it claims.

Each entry takes the matrix form ``(scores, targets)`` (T x N scores, one target column per
trial); the 1-to-1 metrics also have a pool form ``(tar, non)``.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from voxmetrics import cllr, eer, eer_rocch, linkability, mated_pools, min_cllr
from voxmetrics.metrics.dcf import dcf
from voxmetrics.metrics.srd import srd

# property tags
TRIAL_ORDER = "invariant to the order of the trials (rows)"
COLUMN_ORDER = "invariant to the order of the enrolled identities (columns)"
BOUNDED = "bounded: the value lies in MetricSpec.bounds"
MONOTONE = "invariant to one strictly increasing map of every score"
ROW_AFFINE = "invariant to a positive affine map of each row (1-to-N metrics)"
IDENTICAL_POOLS = "known value when tar and non hold the same scores"
SEPARATED_POOLS = "known value when min(tar) > max(non)"


@dataclass(frozen=True)
class MetricSpec:
    """One metric, its two call forms and the properties it has."""

    name: str
    on_matrix: Callable[[np.ndarray, np.ndarray], float]
    on_pools: Callable[[np.ndarray, np.ndarray], float] | None
    tags: frozenset[str]
    bounds: tuple[float, float] = (-math.inf, math.inf)
    identical_pools: float | None = None
    separated_pools: float | None = None


def _pooled(metric: Callable[[np.ndarray, np.ndarray], float]):
    """The matrix form of a 1-to-1 metric: split the matrix into its mated / non-mated pools."""

    def on_matrix(scores, targets):
        return metric(*mated_pools(scores, targets))

    return on_matrix


def _min_dcf(tar, non) -> float:
    """Normalised minDCF at P_target 0.01, unit costs."""
    return float(dcf(tar, non, p_targets=0.01).min_dcf[0])


def _idr(scores, targets) -> float:
    """SRD identification rate p_1 (metrics.md section 4; equals linkability)."""
    return srd(scores, targets).stats.idr


_ORDER = {TRIAL_ORDER, COLUMN_ORDER}

REGISTRY: dict[str, MetricSpec] = {
    spec.name: spec
    for spec in [
        MetricSpec(
            "eer",
            _pooled(eer),
            eer,
            frozenset(_ORDER | {BOUNDED, MONOTONE, IDENTICAL_POOLS, SEPARATED_POOLS}),
            bounds=(0.0, 1.0),
            identical_pools=0.5,
            separated_pools=0.0,
        ),
        MetricSpec(
            "eer_rocch",
            _pooled(eer_rocch),
            eer_rocch,
            frozenset(_ORDER | {BOUNDED, MONOTONE, IDENTICAL_POOLS, SEPARATED_POOLS}),
            bounds=(0.0, 0.5),  # the hull lies below the chord (0, 1) - (1, 0)
            identical_pools=0.5,
            separated_pools=0.0,
        ),
        MetricSpec(
            "cllr",
            _pooled(cllr),
            cllr,
            frozenset(_ORDER | {BOUNDED}),
            bounds=(0.0, math.inf),
        ),
        MetricSpec(
            "min_cllr",
            _pooled(min_cllr),
            min_cllr,
            frozenset(_ORDER | {BOUNDED, MONOTONE, IDENTICAL_POOLS, SEPARATED_POOLS}),
            bounds=(0.0, 1.0),
            identical_pools=1.0,
            separated_pools=0.0,
        ),
        MetricSpec(
            "min_dcf",
            _pooled(_min_dcf),
            _min_dcf,
            frozenset(_ORDER | {BOUNDED, MONOTONE, IDENTICAL_POOLS, SEPARATED_POOLS}),
            bounds=(0.0, 1.0),
            identical_pools=1.0,
            separated_pools=0.0,
        ),
        MetricSpec(
            "linkability",
            linkability,
            None,
            frozenset(_ORDER | {BOUNDED, MONOTONE, ROW_AFFINE}),
            bounds=(0.0, 1.0),
        ),
        MetricSpec(
            "idr",
            _idr,
            None,
            frozenset(_ORDER | {BOUNDED, MONOTONE, ROW_AFFINE}),
            bounds=(0.0, 1.0),
        ),
    ]
}


def with_tag(tag: str, *, pools: bool = False) -> list:
    """``pytest.param`` of every registered metric carrying ``tag`` (and a pool form if asked)."""
    specs = [
        s for s in REGISTRY.values() if tag in s.tags and (not pools or s.on_pools is not None)
    ]
    assert specs, f"no registered metric has the tag {tag!r}"
    return [pytest.param(s, id=s.name) for s in specs]


_scanned_len: int | None = None


def forget_unimportable_modules() -> None:
    """Drop ``sys.modules`` placeholders that raise ImportError on attribute access.

    SpeechBrain registers lazy placeholders for optional dependencies (k2, flair, spacy,
    transformers...) in ``sys.modules``. Hypothesis scans ``sys.modules`` for local constants
    with ``getattr(module, "__file__", None)``, which only tolerates AttributeError, so once any
    test has imported SpeechBrain every later ``@given`` test would fail with "Lazy import of
    LazyModule(...) failed". The placeholders can never be imported here anyway, so dropping
    them changes nothing else.
    """
    global _scanned_len
    if len(sys.modules) == _scanned_len:
        return
    for name, module in list(sys.modules.items()):
        try:
            with warnings.catch_warnings():  # deprecated redirects warn when resolved
                warnings.simplefilter("ignore")
                getattr(module, "__file__", None)
        except ImportError:
            del sys.modules[name]
    _scanned_len = len(sys.modules)
