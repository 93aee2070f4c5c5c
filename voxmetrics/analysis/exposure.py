"""Who stays exposed: the speakers an attacker still finds, under every anonymiser and attacker.

What this is: an auditor acts per data subject and a vendor fixes per speaker, so beside the
numbers of each condition this module lists, per speaker and per condition, how often the
speaker's trials are ranked first among the N enrolled identities (the rank-1 rate, against
chance 1/N), the speaker's highest per-trial LID (bits) and whether the speaker is singled out,
then ranks the speakers by how many conditions leave them exposed (:func:`exposed_speakers`).
What this is not: a new metric. Every number is a per-speaker view of the condition's report
(its SRD ranks, its LID, its singling out).

**Rules.** A speaker is *exposed* under a condition when at least :data:`EXPOSED_RANK1` (half)
of its trials rank its own identity first: the attacker who picks the top score finds that
speaker more often than not, whatever the pooled EER says. A speaker is *singled out* when the
predicate built from its enrolment isolates a single utterance in at least half of the draws
and folds of singling out. The table sorts the speakers by the number of conditions that leave
them exposed, then by their mean rank-1 rate over the conditions; the original speech is left
out of both (it exposes every speaker by design).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from voxmetrics._types import LID_DISPLAY_FLOOR

__all__ = [
    "EXPOSED_RANK1",
    "EXPOSURE_ATTRIBUTES",
    "SINGLED_OUT_RATE",
    "ExposedSpeakers",
    "condition_exposure",
    "exposed_speakers",
    "speaker_attributes",
]

EXPOSED_RANK1 = 0.5
"""A speaker whose trials rank its own identity first at least this often is exposed."""
SINGLED_OUT_RATE = 0.5
"""A speaker whose predicate isolates one utterance at least this often is singled out."""
EXPOSURE_ATTRIBUTES = ("sex", "age_group")
"""The speaker attributes the table shows where known."""

_CONDITION_COLUMNS = [
    "speaker",
    "n_trials",
    "rank1_rate",
    "chance",
    "lid_max",
    "singled_out",
    "exposed",
]


def condition_exposure(
    speakers: ArrayLike,
    ranks: ArrayLike,
    n_enrolled: int,
    *,
    lid: ArrayLike | None = None,
    predicates: ArrayLike | None = None,
    isolation: ArrayLike | None = None,
) -> pd.DataFrame:
    """Per speaker of one condition: trials, rank-1 rate, chance, LIDmax, singled out, exposed.

    Parameters
    ----------
    speakers, ranks : array_like, shape (T,)
        Each ranked trial's speaker and the rank of its own identity (1 = top).
    n_enrolled : int
        N, the enrolled identities the trials were ranked against (chance is 1/N).
    lid : array_like, shape (T,), optional
        Each trial's LID in bits (``lid_max`` is None without it).
    predicates, isolation : array_like, optional
        Singling out's predicate speakers and each one's isolation rate (``singled_out`` is
        None for a speaker without a predicate).

    Examples
    --------
    >>> f = condition_exposure(["a", "a", "b", "b"], [1, 1, 1, 3], 4, lid=[1.5, 0.2, 0.1, -1])
    >>> f[["speaker", "rank1_rate", "lid_max", "exposed"]].values.tolist()
    [['a', 1.0, 1.5, True], ['b', 0.5, 0.1, True]]
    """
    spk = np.asarray(speakers).astype(str).ravel()
    r = np.asarray(ranks, dtype=np.float64).ravel()
    frame = pd.DataFrame({"speaker": spk, "top": r == 1})
    if lid is not None:
        frame["lid"] = np.maximum(np.asarray(lid, dtype=np.float64).ravel(), LID_DISPLAY_FLOOR)
    grouped = frame.groupby("speaker", sort=True)
    out = pd.DataFrame(
        {
            "n_trials": grouped.size(),
            "rank1_rate": grouped["top"].mean(),
        }
    )
    out["chance"] = 1.0 / n_enrolled
    out["lid_max"] = grouped["lid"].max() if lid is not None else None
    out["singled_out"] = None
    if predicates is not None and isolation is not None:
        rates = pd.Series(
            np.asarray(isolation, dtype=np.float64).ravel(),
            index=np.asarray(predicates).astype(str).ravel(),
        )
        rates = rates.groupby(level=0).mean()
        known = out.index.intersection(rates.index)
        out.loc[known, "singled_out"] = (rates[known] >= SINGLED_OUT_RATE).to_numpy()
    out["exposed"] = out["rank1_rate"] >= EXPOSED_RANK1
    return out.rename_axis("speaker").reset_index()[_CONDITION_COLUMNS]


@dataclass(frozen=True)
class ExposedSpeakers:
    """The speakers ranked by how many conditions leave them exposed."""

    conditions: tuple[str, ...]
    """The conditions counted (the original speech left out), in study order."""
    per_condition: Mapping[str, pd.DataFrame] = field(repr=False)
    """Condition -> :func:`condition_exposure`'s table."""
    attributes: pd.DataFrame = field(repr=False)
    """Speaker -> sex and age group where known (index: speaker)."""

    def frame(self) -> pd.DataFrame:
        """One row per speaker, most exposed first.

        Columns: Speaker, the attributes known (Sex, Age group), Exposed under (the count of
        conditions), Conditions (how many rank the speaker), Mean rank-1 rate, then per
        condition its rank-1 rate, LIDmax (bits) and whether singled out.

        Examples
        --------
        >>> a = condition_exposure(["x", "y"], [1, 2], 4)
        >>> b = condition_exposure(["x", "y"], [1, 1], 4)
        >>> exposed_speakers({"A": a, "B": b}).frame()[["Speaker", "Exposed under"]].values.tolist()
        [['x', 2], ['y', 1]]
        """
        if not self.per_condition:
            return pd.DataFrame(columns=["Speaker", "Exposed under", "Conditions"])
        long = pd.concat(
            [f.assign(condition=name) for name, f in self.per_condition.items()],
            ignore_index=True,
        )
        summary = long.groupby("speaker", sort=True).agg(
            exposed=("exposed", "sum"),
            n_conditions=("condition", "size"),
            mean_rate=("rank1_rate", "mean"),
        )
        out = pd.DataFrame({"Speaker": summary.index})
        for col, label in (("sex", "Sex"), ("age_group", "Age group")):
            if col in self.attributes.columns:
                out[label] = self.attributes[col].reindex(summary.index).to_numpy()
        out["Exposed under"] = summary["exposed"].astype(int).to_numpy()
        out["Conditions"] = summary["n_conditions"].astype(int).to_numpy()
        out["Mean rank-1 rate"] = summary["mean_rate"].to_numpy()
        for name, f in self.per_condition.items():
            by = f.set_index("speaker").reindex(summary.index)
            out[f"{name}: rank-1 rate"] = by["rank1_rate"].to_numpy()
            if by["lid_max"].notna().any():
                out[f"{name}: LIDmax (bits)"] = by["lid_max"].to_numpy()
            if by["singled_out"].notna().any():
                out[f"{name}: singled out"] = by["singled_out"].to_numpy()
        order = np.lexsort((out["Speaker"].to_numpy(), -out["Mean rank-1 rate"].to_numpy(),
                            -out["Exposed under"].to_numpy()))  # fmt: skip
        return out.iloc[order].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the rule, the conditions and every speaker, most exposed first."""
        frame = self.frame()
        by = {name: f.set_index("speaker") for name, f in self.per_condition.items()}
        speakers = []
        for rec in frame.to_dict(orient="records"):
            spk = rec["Speaker"]
            conditions = {}
            for name, f in by.items():
                if spk not in f.index:
                    continue
                h = f.loc[spk]
                conditions[name] = {
                    "n_trials": int(h["n_trials"]),
                    "rank1_rate": _plain(h["rank1_rate"]),
                    "chance": _plain(h["chance"]),
                    "lid_max": _plain(h["lid_max"]),
                    "singled_out": _plain(h["singled_out"]),
                    "exposed": bool(h["exposed"]),
                }
            speakers.append(
                {
                    "speaker": spk,
                    "sex": _plain(rec.get("Sex")),
                    "age_group": _plain(rec.get("Age group")),
                    "n_exposed": int(rec["Exposed under"]),
                    "n_conditions": int(rec["Conditions"]),
                    "mean_rank1_rate": _plain(rec["Mean rank-1 rate"]),
                    "conditions": conditions,
                }
            )
        return {
            "rule": (
                f"exposed under a condition: rank-1 rate >= {EXPOSED_RANK1:g} (chance 1/N); "
                f"singled out: isolation rate of its predicate >= {SINGLED_OUT_RATE:g}; sorted "
                "by the count of conditions exposed, then by the mean rank-1 rate"
            ),
            "threshold": EXPOSED_RANK1,
            "conditions": list(self.conditions),
            "speakers": speakers,
        }


def _plain(v: Any) -> Any:
    """A JSON-safe scalar: numpy numbers as Python ones, NaN and pandas' NA as None."""
    if v is None:
        return None
    if isinstance(v, bool | np.bool_):
        return bool(v)
    if isinstance(v, str):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None if pd.isna(v) else str(v)
    return None if not np.isfinite(f) else f


def exposed_speakers(
    per_condition: Mapping[str, pd.DataFrame],
    *,
    attributes: pd.DataFrame | None = None,
) -> ExposedSpeakers:
    """Every speaker's exposure across the conditions (module docstring).

    ``per_condition`` maps each counted condition to its :func:`condition_exposure` table
    (leave the original speech out); ``attributes`` gives each speaker's sex and age group
    (index: speaker), where known.
    """
    attrs = attributes if attributes is not None else pd.DataFrame()
    return ExposedSpeakers(
        conditions=tuple(per_condition),
        per_condition=dict(per_condition),
        attributes=attrs,
    )


def speaker_attributes(
    tables: Sequence[pd.DataFrame], *, columns: Sequence[str] = EXPOSURE_ATTRIBUTES
) -> pd.DataFrame:
    """Each speaker's attributes from tables with a ``speaker`` column (first value kept).

    Examples
    --------
    >>> t = pd.DataFrame({"speaker": ["a", "a", "b"], "sex": ["F", "F", "M"]})
    >>> speaker_attributes([t]).to_dict()
    {'sex': {'a': 'F', 'b': 'M'}}
    """
    parts = []
    for t in tables:
        have = [c for c in columns if c in t.columns]
        if "speaker" in t.columns and have:
            parts.append(t[["speaker", *have]].astype({"speaker": str}))
    if not parts:
        return pd.DataFrame()
    joined = pd.concat(parts, ignore_index=True)
    return joined.groupby("speaker", sort=True).first()
