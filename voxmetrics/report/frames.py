"""The condition reports as tables: the overview, intervals, comparisons and verification.

Each builder takes :class:`~voxmetrics.evaluation.result.ConditionReport` objects (or a
comparison, or verification results) and returns a :class:`pandas.DataFrame` keyed by column
names, with the display labels beside them (``*_COLUMNS``, :func:`labelled`). The dashboard, the
study report and its files show these tables.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from voxmetrics.analysis.ranking import UtilityCallout
from voxmetrics.data.utility import UTILITY_METRICS
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.dcf import VerificationResult
from voxmetrics.metrics.lid import clamp_lid_bits, clamp_lid_number
from voxmetrics.metrics.paired import Comparison

__all__ = [
    "COMPARISON_COLUMNS",
    "INTERVALS_COLUMNS",
    "INTERVAL_LABELS",
    "OVERVIEW_COLUMNS",
    "callouts_frame",
    "comparison_frame",
    "headline_values",
    "intervals_frame",
    "labelled",
    "number_references",
    "overview_frame",
    "verification_frame",
]


OVERVIEW_COLUMNS: dict[str, str] = {
    "condition": "Condition",
    "eer": "EER",
    "linkability": "Linkability",
    "chance_linkability": "Chance (1/N)",
    "alid": "ALID (bits)",
    "lid_max": "LIDmax (bits)",
    "mean_d": "MeanD (bits)",
    "idr": "IdR",
    "d_ece": "D_ECE (bits)",
    "zebra_tag": "ZEBRA tag",
    "singling_out": "Singling out",
    "wer": "WER",
    "uar": "UAR",
    "rho_f0": "ρF0",
    "eer_rocch": "EER (ROCCH)",
    "min_cllr": "min Cllr",
    "cllr": "Cllr",
    "n_trials": "T",
    "n_enrolled": "N",
    "n_pairs": "Pairs",
    "n_trials_one_to_n": "T (1-to-N)",
    "n_excluded_trials": "Excluded",
    "attacker": "Attacker",
}
"""Overview table columns and their display labels: the EER beside the 1-to-N metrics first,
the utility numbers (WER, UAR, ρF0 as fractions; empty when unknown), the other 1-to-1
baselines and the counts after (``Pairs``: the listed pairs of the pairwise
metrics; ``T (1-to-N)``: the complete trials of the 1-to-N metrics, T unless the trial list is
sparse)."""


def overview_frame(reports: Iterable[ConditionReport]) -> pd.DataFrame:
    """One row per condition with every metric available so far (keys of OVERVIEW_COLUMNS).

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> df = overview_frame(evaluate_study(demo_study(n_speakers=6)))
    >>> list(df["condition"])
    ['plain', 'random', 'anon-mild', 'anon-strong', 'anon-leaky']
    """
    rows = []
    for r in reports:
        rows.append(
            {
                "condition": r.name,
                "attacker": r.attacker,
                **r.to_dict(),
                "chance_linkability": r.chance_linkability,
                # displays show LID within [-64 bits, log2 N] (the JSON keeps the raw numbers)
                "alid": None if r.lid is None else clamp_lid_bits(r.lid.alid, r.lid.n_enrolled),
                "lid_max": (
                    None if r.lid is None else clamp_lid_bits(r.lid.lid_max, r.lid.n_enrolled)
                ),
                "mean_d": None if r.srd is None else r.srd.stats.mean_d,
                "idr": None if r.srd is None else r.srd.stats.idr,
                "d_ece": None if r.zebra is None else r.zebra.d_ece,
                "zebra_tag": None if r.zebra is None else r.zebra.tag,
                "singling_out": None if r.singling_out is None else r.singling_out.value,
                **{k: None if r.utility is None else r.utility.value(k) for k in UTILITY_METRICS},
                "n_trials_one_to_n": (
                    None if r.trials_used is None else r.trials_used.one_to_n_trials
                ),
            }
        )
    return pd.DataFrame(rows, columns=list(OVERVIEW_COLUMNS))


INTERVAL_LABELS: dict[str, str] = {
    "eer": "EER",
    "eer_rocch": "EER (ROCCH)",
    "cllr": "Cllr",
    "min_cllr": "min Cllr",
    "linkability": "Linkability",
    "alid": "ALID (bits)",
    "pdr": "PDR",
    "ndr": "NDR",
    "lid_plus": "LID+ (bits)",
    "lid_minus": "LID− (bits)",
    "lid_max": "LIDmax (bits)",
    "lid_q95": "LID q95 (bits)",
    "mean_d": "MeanD (bits)",
    "idr": "IdR",
    "max_d": "MaxD (bits)",
    "max_d_q95": "SRD disclosure q95 (bits)",
    "d_ece": "D_ECE (bits)",
    "log10_l": "log10 l",
    "log10_l_q95": "|log10 LR| q95",
    "singling_out": "Singling out",
    "deid": "DeID",
    "g_vd": "G_VD (dB)",
}
"""Display label of every number that carries an interval, in table order."""


def headline_values(report: ConditionReport) -> dict[str, float | None]:
    """Every headline number of a report by key (the q95 quantiles only when bootstrapped)."""
    b, z = report.baseline, report.zebra  # a page's partial report (e.g. SRD) has no ZEBRA
    st = None if report.srd is None else report.srd.stats  # None: a sparse list, no complete trial
    out: dict[str, float | None] = {
        "eer": b.eer,
        "eer_rocch": getattr(b, "eer_rocch", None),
        "cllr": getattr(b, "cllr", None),
        "min_cllr": getattr(b, "min_cllr", None),
        "linkability": b.linkability,
        "mean_d": None if st is None else st.mean_d,
        "idr": None if st is None else st.idr,
        "max_d": None if st is None else st.max_d,
        "d_ece": None if z is None else z.d_ece,
        "log10_l": None if z is None else z.log10_l,
    }
    if report.lid is not None:
        x = report.lid
        out.update(
            alid=x.alid,
            pdr=x.pdr,
            ndr=x.ndr,
            lid_plus=x.lid_plus,
            lid_minus=x.lid_minus,
            lid_max=x.lid_max,
        )
    if report.replicates is not None:
        est = report.replicates.estimates
        out.update({k: est[k] for k in ("lid_q95", "max_d_q95", "log10_l_q95") if k in est})
    return out


_READ_AGAINST: dict[str, str] = {
    "eer": "fraction of errors; 0.5 = chance, 0 = every comparison right",
    "eer_rocch": "fraction of errors; 0.5 = chance",
    "cllr": "bits; 1 = no information (as given: LLRs only)",
    "min_cllr": "bits; 1 = no information, 0 = perfect",
    "linkability": "share of trials; chance 1/N = {chance}",
    "mean_d": "bits; 0 = chance ranks, at most log2 N = {ceiling}",
    "idr": "share of trials ranked first; chance 1/N = {chance}",
    "max_d": "bits; at most log2 N = {ceiling}",
    "max_d_q95": "bits; at most log2 N = {ceiling}",
    "d_ece": "bits; 0 = no evidence, at most 0.72",
    "log10_l": "log10 of a likelihood ratio; 0 = no evidence, 4 = odds of 10,000:1",
    "log10_l_q95": "log10 of a likelihood ratio; 0 = no evidence",
    "alid": "bits; 0 = nothing learned, at most log2 N = {ceiling}",
    "pdr": "share of trials with LID > 0",
    "ndr": "share of trials with LID <= 0",
    "lid_plus": "bits; at most log2 N = {ceiling}",
    "lid_minus": "bits (negative: the attacker is misled)",
    "lid_max": "bits; at most log2 N = {ceiling}",
    "lid_q95": "bits; at most log2 N = {ceiling}",
    "singling_out": "probability; chance (1 - 1/N)^(N-1)",
    "deid": "0 = voices unchanged, 1 = no trace of the original voices",
    "g_vd": "dB; 0 = voices as distinct as the originals, below 0 = less distinct",
}
"""What each number of :func:`intervals_frame` is read against (unit and reference point)."""


def number_references(reports: Iterable[ConditionReport]) -> pd.DataFrame:
    """The unit and reference point of every number of every condition, to read it by.

    One row per condition and key (``condition, key, read_against``), e.g. ALID: "bits; 0 =
    nothing learned, at most log2 N = 5.32": a number's excess over a chance level far below 0
    bits (a random identity's calibrated LLR is confidently wrong) is read against the ceiling,
    not as bits learned. Join it to :func:`intervals_frame` on ``condition`` and ``key``.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> df = number_references(evaluate_study(demo_study(n_speakers=4), bootstrap=0))
    >>> df.set_index(["condition", "key"]).loc[("plain", "alid"), "read_against"]
    'bits; 0 = nothing learned, at most log2 N = 2.00'
    """
    rows = []
    for r in reports:
        n = r.baseline.n_enrolled if r.lid is None else r.lid.n_enrolled
        chance = r.chance_linkability
        fill = {
            "ceiling": f"{math.log2(n):.2f}" if n > 1 else "0",
            "chance": "–" if chance is None else f"{chance:.1%}",
        }
        for key in (*headline_values(r), "singling_out", "deid", "g_vd"):
            if key in _READ_AGAINST:
                rows.append(
                    {
                        "condition": r.name,
                        "key": key,
                        "read_against": _READ_AGAINST[key].format(**fill),
                    }
                )
    return pd.DataFrame(rows, columns=["condition", "key", "read_against"])


INTERVALS_COLUMNS: dict[str, str] = {
    "condition": "Condition",
    "number": "Number",
    "value": "Value",
    "low": "95% low",
    "high": "95% high",
    "chance": "Chance",
    "excess": "Excess over chance",
}
"""Display labels of the columns of :func:`intervals_frame` (all but ``key``)."""

COMPARISON_COLUMNS: dict[str, str] = {
    "number": "Number",
    "a": "A",
    "b": "B",
    "difference": "B − A",
    "low": "95% low",
    "high": "95% high",
    "p_value": "p",
    "p_adjusted": "p (Holm)",
    "p_resampled": "p (resampled, ≥ 1/(B+1))",
    "reason": "Not compared because",
}
"""Display labels of the columns of :func:`comparison_frame` (all but ``key``)."""


def labelled(df: pd.DataFrame, labels: Mapping[str, str]) -> pd.DataFrame:
    """``df`` with the columns of ``labels`` only, in its order, under their display labels.

    Examples
    --------
    >>> labelled(pd.DataFrame({"key": ["eer"], "number": ["EER"]}), {"number": "Number"})
      Number
    0    EER
    """
    return df[list(labels)].rename(columns=dict(labels))


def intervals_frame(
    reports: Iterable[ConditionReport],
    *,
    keys: Iterable[str] | None = None,
    similarity: Mapping[str, Mapping[str, BootstrapInterval]] | None = None,
) -> pd.DataFrame:
    """Every headline number of every condition with its interval, chance and excess.

    One row per condition and number: ``condition, key, number, value, low, high, chance,
    excess`` (value - chance; None where no chance level is defined). The LID numbers in bits,
    their bounds and chance levels are shown within [-64 bits, log2 N]
    (:func:`~voxmetrics.metrics.lid.clamp_lid_bits`). Without a bootstrap
    ``low`` and ``high`` are None; a maximum never has them (read its q95 row). ``keys``
    restricts the numbers (in the order of :data:`INTERVAL_LABELS`). ``similarity`` adds DeID
    and G_VD rows (no chance level): condition name -> ``deid`` and ``g_vd`` intervals (their
    ``estimate`` is the value), from
    :func:`~voxmetrics.metrics.embedding_intervals.similarity_intervals`.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> df = intervals_frame(evaluate_study(demo_study(n_speakers=6), bootstrap=20))
    >>> ok = df.dropna(subset=["low", "high"])  # maxima have no interval
    >>> list(df.columns)[:4], bool((ok["low"] <= ok["high"]).all())
    (['condition', 'key', 'number', 'value'], True)
    >>> sorted(set(df["key"]) - set(ok["key"]))
    ['lid_max', 'log10_l', 'max_d']
    """
    wanted = set(INTERVAL_LABELS if keys is None else keys)
    rows = []
    for r in reports:
        iv = r.intervals
        values = headline_values(r)
        chance = r.chance.values if r.chance is not None else {}
        n = r.baseline.n_enrolled if r.lid is None else r.lid.n_enrolled

        def shown(key: str, x: float | None) -> float | None:
            return clamp_lid_number(key, x, n)  # noqa: B023 (used within the iteration)

        for key, label in INTERVAL_LABELS.items():
            if key not in values or key not in wanted:
                continue
            c = shown(key, chance.get(key))
            v = shown(key, values[key])
            rows.append(
                {
                    "condition": r.name,
                    "key": key,
                    "number": label,
                    "value": v,
                    "low": shown(key, iv[key].low) if key in iv else None,
                    "high": shown(key, iv[key].high) if key in iv else None,
                    "chance": c,
                    "excess": None if c is None or v is None else v - c,
                }
            )
        so, so_iv = r.singling_out, r.singling_out_interval
        if so is not None and (keys is None or "singling_out" in wanted):
            rows.append(
                {
                    "condition": r.name,
                    "key": "singling_out",
                    "number": "Singling out",
                    "value": so.value,
                    "low": None if so_iv is None else so_iv.low,
                    "high": None if so_iv is None else so_iv.high,
                    "chance": so.chance,
                    "excess": so.value - so.chance,
                }
            )
        for key in ("deid", "g_vd"):
            sim = (similarity or {}).get(r.name) or {}
            if key in sim and key in wanted:
                rows.append(
                    {
                        "condition": r.name,
                        "key": key,
                        "number": INTERVAL_LABELS[key],
                        "value": sim[key].estimate,
                        "low": sim[key].low,
                        "high": sim[key].high,
                        "chance": None,
                        "excess": None,
                    }
                )
    columns = ["condition", "key", "number", "value", "low", "high", "chance", "excess"]
    return pd.DataFrame(rows, columns=columns)


_SBLS_LABELS = {
    "sbls": "SBLS",
    "p_attr": "P_attr",
    "p_assoc": "P_assoc",
    "p_subgroup": "P_subgroup",
}
"""Labels of the SBLS numbers of a comparison
(:func:`~voxmetrics.evaluation.compare.compare_conditions_sbls`)."""


def comparison_frame(comparison: Mapping[str, Comparison]) -> pd.DataFrame:
    """A paired comparison as a table: one row per number (B - A, interval, p-values).

    ``p_value`` is the normal approximation of the paired bootstrap distribution (not floored),
    ``p_adjusted`` its Holm adjustment, ``p_resampled`` the resampling p (never below
    ``p_floor`` = 1/(B'+1); :data:`~voxmetrics.metrics.paired.P_VALUE_METHOD`).
    ``reason`` says why a number could not be compared (None when it was).
    """
    rows = [
        {
            "key": k,
            "number": INTERVAL_LABELS.get(k, _SBLS_LABELS.get(k, k)),
            "a": c.a,
            "b": c.b,
            "difference": c.difference,
            "low": c.interval[0],
            "high": c.interval[1],
            "p_value": c.p_value,
            "p_adjusted": c.p_adjusted,
            "p_resampled": c.p_resampled,
            "p_floor": c.p_floor,
            "reason": c.reason,
        }
        for k, c in comparison.items()
    ]
    columns = [
        "key", "number", "a", "b", "difference", "low", "high", "p_value", "p_adjusted",
        "p_resampled", "p_floor", "reason",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def verification_frame(
    results: Mapping[str, VerificationResult], *, eer: Mapping[str, float] | None = None
) -> pd.DataFrame:
    """The standard ASV numbers of each condition: minDCF / actDCF per prior and d'.

    Columns: ``Condition``, ``EER`` (only with ``eer``, condition -> EER), ``minDCF (P=p)``
    and ``actDCF (P=p)`` for each target prior p (NaN unless the scores are LLRs), ``d'``
    (NaN when infinite), ``C_miss``, ``C_fa``, ``Scores``.

    Examples
    --------
    >>> from voxmetrics.metrics.dcf import verification
    >>> df = verification_frame({"x": verification([1.0, 3.0], [0.0, 2.0], p_targets=[0.5])})
    >>> df.columns.tolist()
    ['Condition', 'minDCF (P=0.5)', 'actDCF (P=0.5)', "d'", 'C_miss', 'C_fa', 'Scores']
    >>> df.iloc[0, 1:4].tolist()
    [0.5, nan, 1.0]
    """
    rows = []
    for name, v in results.items():
        row: dict[str, Any] = {"Condition": name}
        if eer is not None:
            row["EER"] = eer.get(name)
        for key, d in v.dcf.to_dict().items():
            row[f"minDCF (P={key})"] = d["min_dcf"]
            row[f"actDCF (P={key})"] = d["act_dcf"]
        row["d'"] = v.d_prime if math.isfinite(v.d_prime) else None
        row["C_miss"], row["C_fa"] = v.dcf.c_miss, v.dcf.c_fa
        row["Scores"] = "LLRs" if v.scores_are_llrs else "as given (not LLRs)"
        rows.append(row)
    df = pd.DataFrame(rows)
    numeric = [c for c in df.columns if c not in ("Condition", "Scores")]
    df[numeric] = df[numeric].apply(pd.to_numeric).astype(float)  # empty cells: NaN
    return df


def callouts_frame(callouts: Iterable[UtilityCallout]) -> pd.DataFrame:
    """The auditors' call-out as a table: systems that clear an EER band but still leak.

    Examples
    --------
    >>> list(callouts_frame([]).columns)[:4]
    ['System', 'Attacker', 'EER', 'Band cleared']
    """
    return pd.DataFrame(
        [
            {
                "System": c.condition,
                "Attacker": c.attacker,
                "EER": c.eer,
                "Band cleared": f"EER >= {c.band:.0%}",
                "LIDmax (bits)": c.lid_max,
                "Linkability": c.linkability,
                "Chance (1/N)": c.chance_linkability,
                "Why": "; ".join(c.reasons),
            }
            for c in callouts
        ],
        columns=[
            "System",
            "Attacker",
            "EER",
            "Band cleared",
            "LIDmax (bits)",
            "Linkability",
            "Chance (1/N)",
            "Why",
        ],
    )
