"""SBLS's tables: the components, intervals, attributes, subgroups, intersections and identity.

One :class:`SBLSRow` per condition, and the DataFrames the dashboard shows, the report prints
and the command line writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from voxmetrics.analysis._result import ConditionResult
from voxmetrics.analysis.sbls.attacks import Attack
from voxmetrics.analysis.sbls.replicates import COMPONENTS
from voxmetrics.data.study import Condition
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.sbls import SBLSResult

__all__ = [
    "SBLSRow",
    "attribute_frame",
    "component_frame",
    "identity_frame",
    "intersection_frame",
    "interval_frame",
    "subgroup_frame",
    "weights_ok",
]


@dataclass(frozen=True, eq=False)
class SBLSRow:
    """One condition of the Soft biometrics page."""

    condition: Condition
    """The condition."""
    attack: Attack | None = None
    """The attacker's output (None when there is none)."""
    result: SBLSResult | None = None
    """SBLS of the attack (None when it could not be computed)."""
    intervals: dict[str, BootstrapInterval] | None = None
    """Bootstrap intervals (None when off)."""
    status: str = ""
    """Who attacked, or why there is no result."""

    @property
    def name(self) -> str:
        """The condition's name."""
        return self.condition.name


def component_frame(rows: Sequence[SBLSRow], *, intervals: bool = True) -> pd.DataFrame:
    """One row per condition: the attacker, the components, SBLS and their 95 % intervals.

    Columns: Condition, Attacker (the row's ``status``), P_attr, P_assoc, P_subgroup, SBLS,
    then, when ``intervals``, "<component> CI" text columns ("[low, high]"), then Groups used
    ("k of m" intersections reaching the minimum size). Conditions without a result keep
    empty cells.
    """
    records = []
    for row in rows:
        r = row.result
        rec: dict[str, Any] = {"Condition": row.name, "Attacker": row.status}
        for key, label in COMPONENTS.items():
            rec[label] = getattr(r, key) if r is not None else None
        if intervals:
            for key, label in COMPONENTS.items():
                iv = row.intervals.get(key) if row.intervals else None
                rec[f"{label} CI"] = None if iv is None else iv.bounds_text(".3f") or "undefined"
        if r is not None:
            joint = [s for s in r.subgroups if s.attribute == "all"]
            rec["Groups used"] = f"{sum(s.used for s in joint)} of {len(joint)}"
        else:
            rec["Groups used"] = None
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    for label in COMPONENTS.values():
        df[label] = df[label].astype("float64")
    return df


def interval_frame(rows: Sequence[SBLSRow]) -> pd.DataFrame:
    """The bootstrap intervals as numbers: one row per (condition, component).

    Columns: condition, component, estimate, low, high, confidence, n_boot, n_valid, attacker.
    """
    records = []
    for row in rows:
        for key, label in COMPONENTS.items():
            iv = (row.intervals or {}).get(key)
            if iv is None:
                continue
            records.append(
                {
                    "condition": row.name,
                    "component": label,
                    **iv.to_dict(),
                    "attacker": row.status,
                }
            )
    return pd.DataFrame.from_records(
        records,
        columns=[
            "condition",
            "component",
            "estimate",
            "low",
            "high",
            "confidence",
            "n_boot",
            "n_valid",
            "attacker",
        ],
    )


def attribute_frame(result: SBLSResult) -> pd.DataFrame:
    """One row per attribute: classes, aligned AUC, balanced accuracy, leakage, NMI."""
    return pd.DataFrame(
        {
            "Attribute": [a.name for a in result.attributes],
            "Classes": [", ".join(a.classes) for a in result.attributes],
            "AUC (aligned)": [a.auc for a in result.attributes],
            "Balanced accuracy": [a.balanced_accuracy for a in result.attributes],
            "Leakage L_a": [a.leakage for a in result.attributes],
            "NMI": [a.nmi for a in result.attributes],
        }
    ).astype({"AUC (aligned)": "float64"})


def subgroup_frame(result: SBLSResult) -> pd.DataFrame:
    """The per-(attribute, subgroup) rows of a result.

    Each row is the leakage of one attribute within one subgroup of the other attributes' values
    (the joint-recovery rows of the full intersections are in :func:`intersection_frame`).
    """
    rows = [r for r in result.subgroups if r.attribute != "all"]
    df = pd.DataFrame(
        {
            "Attribute": [r.attribute for r in rows],
            "Within subgroup": [r.group for r in rows],
            "n": [r.n for r in rows],
            "AUC": [r.auc for r in rows],
            "Leakage": [r.leakage for r in rows],
            "Accuracy": [r.accuracy for r in rows],
            "Used": [r.used for r in rows],
        },
        columns=["Attribute", "Within subgroup", "n", "AUC", "Leakage", "Accuracy", "Used"],
    )
    return df.astype({"AUC": "float64", "Leakage": "float64", "Accuracy": "float64"})


def intersection_frame(result: SBLSResult, attack: Attack | None = None) -> pd.DataFrame:
    """One row per intersection of all attributes: n, speakers, joint recovery rate L_g.

    ``attack`` adds the number of distinct speakers of each intersection (utterances of one
    speaker are not independent, so this is the subgroup's real sample size).
    """
    rows = [r for r in result.subgroups if r.attribute == "all"]
    recovery: list[float] = []
    for r in rows:
        assert r.leakage is not None  # L_g, the joint recovery rate, of every intersection
        recovery.append(r.leakage)
    df = pd.DataFrame(
        {
            "Subgroup": [r.group for r in rows],
            "Utterances": [r.n for r in rows],
            "Joint recovery L_g": recovery,
            "Protection 1 - L_g": [1.0 - v for v in recovery],
            "Used": [r.used for r in rows],
        },
        columns=["Subgroup", "Utterances", "Joint recovery L_g", "Protection 1 - L_g", "Used"],
    )
    if attack is not None:
        names = [a.name for a in result.attributes]
        counts = []
        for r in rows:
            values = dict(part.split("=", 1) for part in r.group.split(" & "))
            mask = np.ones(attack.n, dtype=bool)
            for a in names:
                mask &= attack.labels[a] == values[a]
            counts.append(int(np.unique(attack.speakers[mask]).size))
        df.insert(2, "Speakers", counts)
    return df.astype({"Joint recovery L_g": "float64", "Protection 1 - L_g": "float64"})


def identity_frame(
    rows: Sequence[SBLSRow], reports: Mapping[str, ConditionResult | None]
) -> pd.DataFrame:
    """SBLS beside the identity metrics: one row per condition with a result.

    Columns: Condition, SBLS, P_attr, EER, LIDmax (bits), Linkability.
    """
    records = []
    for row in rows:
        if row.result is None:
            continue
        rep = reports.get(row.name)
        b = rep.baseline if rep is not None else None
        records.append(
            {
                "Condition": row.name,
                "SBLS": row.result.sbls,
                "P_attr": row.result.p_attr,
                "EER": b.eer if b is not None else None,
                "LIDmax (bits)": rep.lid.lid_max if rep is not None and rep.lid else None,
                "Linkability": b.linkability if b is not None else None,
            }
        )
    df = pd.DataFrame.from_records(
        records, columns=["Condition", "SBLS", "P_attr", "EER", "LIDmax (bits)", "Linkability"]
    )
    return df.astype({c: "float64" for c in df.columns[1:]})


def weights_ok(weights: Sequence[float]) -> bool:
    """Whether three weights are non-negative and sum to 1 (what SBLS accepts)."""
    return (
        len(weights) == 3
        and all(w >= 0 for w in weights)
        and math.isclose(sum(weights), 1.0, abs_tol=1e-9)
    )
