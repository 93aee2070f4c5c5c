"""A VoicePrivacy Challenge 2024 evaluation tree as a study.

The challenge's scripts (``run_evaluation.py`` with ``configs/eval_pre.yaml`` and
``eval_post.yaml``) leave a tree of two folders::

    data/<dataset>_<split>_{enrolls,trials_f,trials_m}[_<suffix>]/   trials, utt2spk, spk2gender
    exp/<asv model>/<enrol set>-<trial set>/scores                  enroll_id trial_id score
    exp/results_summary/eval_orig_<suffix>/results_orig.txt         SER, ASV (oo), ASR
    exp/results_summary/eval_anon_<suffix>/results_anon.txt         ASV of the retrained model
    [results/]result_for_rank_<system>                              both summaries in one file

``<split>`` is ``dev`` or ``test``, ``<suffix>`` names an anonymisation system (``_mcadams``:
system ``mcadams``), and the trial key of every pair of lists is the original one,
``data/<dataset>_<split>_trials_<g>/trials`` (``enrol_speaker trial_utt target|nontarget``).
The attack scenarios become attackers:

========================================================  ====================
scores                                                    attacker
========================================================  ====================
original model, original enrolment and trials (oo)        ``original``
original model, original enrolment, anonymised trials     ``ignorant``
original model, anonymised enrolment and trials (aa)      ``lazy-informed``
model retrained on anonymised speech
(``asv_anon_<suffix>``), anonymised enrolment and trials  ``semi-informed``
========================================================  ====================

One condition per (system, attacker), plus one ``original`` condition; its eval set is the
``test`` split and its dev set the ``dev`` split. The female and male trial lists join as one
sparse trial list (each listed pair exactly once) with the per-trial attribute ``sex`` (``F`` /
``M``, from the list's name), so every per-gender EER of the challenge is the EER of the subset
``sex = F`` or ``sex = M``. The results summaries give each condition its utility (WER, UAR
and per-emotion accuracy of the test split, as fractions).

A tree with missing pieces loads what is there; :class:`VPCImport` says what was found and
what is missing.
"""

from __future__ import annotations

import csv
import io
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from voxmetrics._types import Attacker
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.utility import Utility
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError, kept_warnings
from voxmetrics.limits import ArchiveReader, read_file_bytes, safe_member_name

__all__ = [
    "VPCImport",
    "is_vpc_tree",
    "read_results_summary",
    "read_vpc_tree",
    "read_vpc_zip",
    "utility_from_summary",
]

_SET = re.compile(
    r"(?P<dataset>[A-Za-z0-9]+)_(?P<split>dev|test)_(?P<part>enrolls|trials_f|trials_m)"
    r"(?P<suffix>_[A-Za-z0-9_.+]+)?"
)
_SECTIONS = {
    "SER results": "ser",
    "ASV_eval results": "asv",
    "ASV_eval^anon results": "asv_anon",
    "ASR results": "asr",
}
_SPLITS = {"test": "eval", "dev": "dev"}
_SEX = {"trials_f": "F", "trials_m": "M"}
_ATTACKERS: tuple[Attacker, ...] = ("ignorant", "lazy-informed", "semi-informed")
_WHAT = {
    "original": "original enrolment and trials, original ASV model (oo)",
    "ignorant": "original enrolment, anonymised trials, original ASV model (oa)",
    "lazy-informed": "anonymised enrolment and trials, original ASV model (aa)",
    "semi-informed": "anonymised enrolment and trials, ASV model retrained on anonymised "
    "speech (aa)",
}
_ZIP_NAMES = re.compile(
    r"(^|/)(trials|utt2spk|spk2gender|scores|results_orig\.txt|results_anon\.txt|"
    r"result_for_rank_[^/]+)$"
)


@dataclass(frozen=True)
class VPCImport:
    """A VoicePrivacy 2024 tree read as a study, with what was found and what is missing."""

    study: Study
    """One condition per (system, attacker), plus ``original``."""
    found: tuple[str, ...] = ()
    """What was read, one line each (for ``study build`` and the Data page)."""
    missing: tuple[str, ...] = ()
    """What the tree lacks or what was left aside, one line each."""
    summary_eers: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The EERs of the results summaries (system, dataset, split, gender, enrollment, trial,
    model, EER as a fraction), beside which the EERs computed from the scores can be checked."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the conditions' names, what was found and what is missing."""
        return {
            "conditions": self.study.names,
            "found": list(self.found),
            "missing": list(self.missing),
        }


# ---------------------------------------------------------------- small readers


def _frame(path: Path, columns: tuple[str, ...], layout: str) -> pd.DataFrame:
    """The whitespace-separated fields of a Kaldi-style file, as text, one row per line.

    Blank lines are skipped; any other line must have exactly ``len(columns)`` fields.
    """
    data = read_file_bytes(path, str(path))
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise VoxMetricsInputError(
            f"{path}: is not UTF-8 text; a `{layout}` file is plain text."
        ) from None
    try:
        df = pd.read_csv(
            io.BytesIO(data),
            sep=r"\s+",
            header=None,
            names=list(columns),
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=False,
            quoting=csv.QUOTE_NONE,
            encoding="utf-8-sig",
        )
    except pd.errors.ParserError as exc:
        m = re.search(r"in line (\d+), saw (\d+)", str(exc))
        where = f"line {m.group(1)} has {m.group(2)} fields" if m else f"cannot be parsed ({exc})"
        raise VoxMetricsInputError(f"{path}: {where}; every line must be `{layout}`.") from None
    except pd.errors.EmptyDataError:
        df = pd.DataFrame(columns=list(columns))
    empty = (df == "").to_numpy()
    blank = empty.all(axis=1)
    short = empty.any(axis=1) & ~blank
    if short.any():
        i = int(np.argmax(short))
        n = int((~empty[i]).sum())
        raise VoxMetricsInputError(
            f"{path}: line {i + 1} has {n} field(s); every line must be `{layout}`."
        )
    df = df.loc[~blank].reset_index(drop=True)
    if df.empty:
        raise VoxMetricsInputError(f"{path}: the file is empty; it should hold `{layout}` lines.")
    return df


def _key(path: Path) -> pd.DataFrame:
    """A trial key (enrol, trial, target) without duplicate pairs (VoicePrivacy's dict)."""
    df = _frame(path, ("enrol", "trial", "label"), "enrol_id trial_id target|nontarget")
    label = df["label"].str.lower()
    bad = ~label.isin(("target", "nontarget"))
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise VoxMetricsInputError(
            f"{path}: label '{df['label'].iloc[i]}' is neither 'target' nor 'nontarget'; each "
            "line is `enrol_id trial_id target|nontarget`."
        )
    df["target"] = (label == "target").to_numpy()
    df = df.drop(columns="label")
    dup = df.duplicated(subset=["enrol", "trial"], keep=False)
    clash = df[dup].groupby(["enrol", "trial"])["target"].nunique()
    if (clash > 1).any():
        enrol, trial = clash[clash > 1].index[0]
        raise VoxMetricsInputError(
            f"{path}: the pair ({enrol}, {trial}) is listed both as target and as nontarget; "
            "list each pair once."
        )
    return df.drop_duplicates(subset=["enrol", "trial"]).reset_index(drop=True)


def _scores(path: Path) -> pd.DataFrame:
    """A scores file ``enroll_id trial_id score`` (no header), scores as float64."""
    df = _frame(path, ("enrol", "trial", "score"), "enroll_id trial_id score")
    score = pd.to_numeric(df["score"], errors="coerce")
    bad = ~np.isfinite(score.to_numpy(dtype=np.float64))
    if bad.any():
        i = int(np.argmax(bad))
        raise VoxMetricsInputError(
            f"{path}: the score '{df['score'].iloc[i]}' of ({df['enrol'].iloc[i]}, "
            f"{df['trial'].iloc[i]}) is not a finite number; each line is `enroll_id trial_id "
            "score`."
        )
    df["score"] = score.to_numpy(dtype=np.float64)
    dup = df.duplicated(subset=["enrol", "trial"])
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise VoxMetricsInputError(
            f"{path}: the pair ({df['enrol'].iloc[i]}, {df['trial'].iloc[i]}) is scored twice; "
            "each pair of the trial key has one score."
        )
    return df


def _mapping(path: Path, layout: str) -> dict[str, str]:
    df = _frame(path, ("a", "b"), layout)
    out: dict[str, str] = {}
    for a, b in zip(df["a"].tolist(), df["b"].tolist(), strict=True):
        if out.setdefault(a, b) != b:
            raise VoxMetricsInputError(
                f"{path}: '{a}' is given both '{out[a]}' and '{b}'; give it one value."
            )
    return out


# ---------------------------------------------------------------- results summaries


def _table(lines: list[str], where: str) -> pd.DataFrame:
    """One table printed by pandas' ``to_string``.

    The index comes first; a second header row of aggregate names such as ``mean`` is dropped.
    """
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return pd.DataFrame()
    header = lines[0].split()
    body = lines[1:]
    if body and set(body[0].split()) <= {"mean", "min", "max", "std"}:
        body = body[1:]
    rows = []
    for ln in body:
        fields = ln.split()
        if len(fields) != len(header) + 1:
            raise VoxMetricsInputError(
                f"{where}: the row '{ln.strip()}' has {len(fields) - 1} value(s) for the "
                f"{len(header)} columns {', '.join(header)}; keep the table as the challenge's "
                "scripts print it."
            )
        rows.append(fields[1:])
    df = pd.DataFrame(rows, columns=header)
    for c in df.columns:
        if c in ("dataset", "split", "gender", "enrollment", "trial", "ser", "asr"):
            continue
        values = pd.to_numeric(df[c], errors="coerce")
        if values.isna().any():
            raise VoxMetricsInputError(
                f"{where}: column {c} holds '{df[c][values.isna()].iloc[0]}', not a number."
            )
        df[c] = values
    return df


def read_results_summary(path: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of a results summary of the challenge's ``run_evaluation.py``.

    ``results_orig.txt``, ``results_anon.txt`` or a published ``result_for_rank_*`` file, which
    holds both.

    Parameters
    ----------
    path : str or Path
        The summary the challenge's ``run_evaluation.py`` wrote.

    Returns
    -------
    dict of str to DataFrame
        ``"ser"`` (dataset, split, ser, UAR, ACC_<emotion>), ``"asv"`` and ``"asv_anon"``
        (dataset, split, gender, enrollment, trial, EER), ``"asr"`` (dataset, split, asr, WER);
        numbers in percent, as printed. A section printed twice is one table.

    Raises
    ------
    VoxMetricsInputError
        An unknown section, a malformed row or a non-numeric value.
    """
    p = Path(path)
    data = read_file_bytes(p, str(p))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise VoxMetricsInputError(f"{p}: is not UTF-8 text; a results summary is text.") from None
    sections: dict[str, list[pd.DataFrame]] = {}
    current: str | None = None
    block: list[str] = []

    def close() -> None:
        if current is not None:
            table = _table(block, f"{p.name}, section '{current}'")
            sections.setdefault(_SECTIONS[current], []).append(table)

    for line in text.splitlines():
        m = re.fullmatch(r"\s*----\s*(.*?)\s*----\s*", line)
        if m:
            close()
            block = []
            title = m.group(1)
            if title.startswith("Time:"):
                current = None
                continue
            if title not in _SECTIONS:
                raise VoxMetricsInputError(
                    f"{p}: unknown section '---- {title} ----'; a VoicePrivacy 2024 results "
                    f"summary has the sections {', '.join(_SECTIONS)}."
                )
            current = title
        elif current is not None:
            block.append(line)
        elif line.strip():
            raise VoxMetricsInputError(
                f"{p}: the line '{line.strip()[:60]}' is outside any section; a results "
                "summary is made of '---- <section> ----' headings followed by tables."
            )
    close()
    if not sections:
        raise VoxMetricsInputError(
            f"{p}: no section found; a VoicePrivacy 2024 results summary has the sections "
            f"{', '.join(_SECTIONS)}."
        )
    return {k: pd.concat(v, ignore_index=True) for k, v in sections.items()}


def _fraction(values: pd.Series, what: str, where: str, *, bounded: bool) -> pd.Series:
    """Percent -> fraction, refusing negative values (and over 100 % when ``bounded``)."""
    v = values.astype(float)
    if (v < 0).any() or (bounded and (v > 100).any()):
        bad = float(v[(v < 0) | ((v > 100) if bounded else False)].iloc[0])
        raise VoxMetricsInputError(
            f"{where}: {what} is {bad:g} %, outside 0-100 %; the summary must hold percentages "
            "as the challenge's scripts print them."
        )
    return (v / 100.0).round(12)  # percent / 100 without binary noise (2.9 -> 0.029)


def _pick(df: pd.DataFrame, column: str, value: str) -> tuple[pd.DataFrame, str]:
    """The rows of ``column == value`` of the test split (the dev split when there is none)."""
    rows = df[df[column].astype(str) == value]
    for split in ("test", "dev"):
        chosen = rows[rows["split"].astype(str) == split]
        if len(chosen):
            return chosen, split
    return rows.iloc[:0], ""


def utility_from_summary(
    tables: dict[str, pd.DataFrame], *, anonymised: bool, source: str
) -> Utility | None:
    """The utility of the anonymised (or the original) speech in a results summary.

    The test split's WER (ASR rows ``asr = anon`` or ``original``, mean over datasets) and
    UAR with per-emotion accuracy (SER rows ``ser = anon`` or ``original``), percent / 100;
    the dev split's when the summary has no test rows. None when the summary has neither.

    Raises
    ------
    VoxMetricsInputError
        A UAR or accuracy outside 0-100 %, or a negative WER.
    """
    which = "anon" if anonymised else "original"
    wer = uar = None
    per_class: dict[str, float] = {}
    notes = []
    if "asr" in tables and {"split", "asr", "WER"} <= set(tables["asr"].columns):
        rows, split = _pick(tables["asr"], "asr", which)
        if len(rows):
            wer = float(_fraction(rows["WER"], "a WER", source, bounded=False).mean())
            notes.append(f"WER: {split}")
    if "ser" in tables and {"split", "ser", "UAR"} <= set(tables["ser"].columns):
        rows, split = _pick(tables["ser"], "ser", which)
        if len(rows):
            uar = float(_fraction(rows["UAR"], "a UAR", source, bounded=True).mean())
            for c in rows.columns:
                if c.startswith("ACC_"):
                    acc = _fraction(rows[c], f"the accuracy {c}", source, bounded=True)
                    per_class[c[4:]] = float(acc.mean())
            notes.append(f"UAR: {split}")
    if wer is None and uar is None:
        return None
    return Utility(
        wer=wer, uar=uar, per_class=per_class, source=f"{source} ({', '.join(notes)} split)"
    )


# ---------------------------------------------------------------- the tree


def is_vpc_tree(root: str | Path) -> bool:
    """Whether ``root`` (or its only sub-folder) holds a VoicePrivacy ``data/`` and ``exp/``.

    Examples
    --------
    >>> is_vpc_tree("/nonexistent")
    False
    """
    return _tree_root(Path(root)) is not None


def _tree_root(root: Path) -> Path | None:
    if (root / "data").is_dir() and (root / "exp").is_dir():
        return root
    if root.is_dir():
        subs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))]
        if len(subs) == 1 and (subs[0] / "data").is_dir() and (subs[0] / "exp").is_dir():
            return subs[0]
    return None


@dataclass
class _Found:
    """What a walk of the tree found (mutable while reading)."""

    root: Path
    systems: set[str] = field(default_factory=set)
    # (system or "", attacker) -> split -> sex part ("trials_f") -> (scores path, key path)
    groups: dict[tuple[str, str], dict[str, dict[str, tuple[Path, Path]]]] = field(
        default_factory=dict
    )
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _set_name(name: str) -> re.Match[str] | None:
    return _SET.fullmatch(name)


def _pair_dir(name: str) -> tuple[re.Match[str], re.Match[str]] | None:
    """The enrolment and trial sets of a ``<enrol set>-<trial set>`` folder name."""
    for i in [k for k, ch in enumerate(name) if ch == "-"]:
        e, t = _set_name(name[:i]), _set_name(name[i + 1 :])
        if e and t and e["part"] == "enrolls" and t["part"] != "enrolls":
            return e, t
    return None


def _model_dirs(exp: Path) -> Iterator[tuple[Path, str | None]]:
    """ASV model folders holding score folders: (folder, system of a retrained model)."""
    for d in sorted(p for p in exp.iterdir() if p.is_dir()):
        if not any(_pair_dir(s.name) for s in d.iterdir() if s.is_dir()):
            continue
        m = re.fullmatch(r"asv_anon_(.+)", d.name)
        yield d, (m.group(1) if m else None)


def _classify(e: re.Match[str], t: re.Match[str], retrained: str | None) -> tuple[str, str] | None:
    """(system, attacker) of a score folder, None when the scenario is not an attacker."""
    es, ts = (e["suffix"] or "")[1:], (t["suffix"] or "")[1:]
    if e["dataset"] != t["dataset"] or e["split"] != t["split"]:
        return None
    if retrained is None:
        if not es and not ts:
            return "", "original"
        if not es and ts:
            return ts, "ignorant"
        if es and es == ts:
            return ts, "lazy-informed"
        return None
    if es and es == ts == retrained:
        return ts, "semi-informed"
    return None


def _walk(root: Path) -> _Found:
    f = _Found(root)
    data, exp = root / "data", root / "exp"
    for d in sorted(p for p in data.iterdir() if p.is_dir()):
        m = _set_name(d.name)
        if m and m["suffix"]:
            f.systems.add(m["suffix"][1:])
    models = list(_model_dirs(exp))
    originals = [d for d, r in models if r is None]
    if len(originals) > 1:
        raise VoxMetricsInputError(
            f"{exp}: several ASV models of original speech hold scores "
            f"({', '.join(d.name for d in originals)}); keep one (the challenge names it "
            "asv_orig) or give the others the name asv_anon_<suffix> of a retrained model."
        )
    if not models:
        f.missing.append(
            f"{exp}: no score folders (<model>/<enrol set>-<trial set>/scores); nothing to "
            "evaluate yet."
        )
    for model, retrained in models:
        if retrained is not None:
            f.systems.add(retrained)
        aside: list[str] = []
        for pair in sorted(p for p in model.iterdir() if p.is_dir()):
            sets = _pair_dir(pair.name)
            if sets is None:
                continue
            e, t = sets
            group = _classify(e, t, retrained)
            if group is None:
                aside.append(pair.name)
                continue
            scores = pair / "scores"
            original_trials = f"{t['dataset']}_{t['split']}_{t['part']}"
            key = data / original_trials / "trials"
            if not scores.is_file():
                f.missing.append(f"{model.name}/{pair.name}/scores: no scores file.")
                continue
            if not key.is_file():
                f.missing.append(
                    f"data/{original_trials}/trials: no trial key for {model.name}/{pair.name}; "
                    "its scores are not loaded."
                )
                continue
            if group[0]:
                f.systems.add(group[0])
            split = f.groups.setdefault(group, {}).setdefault(t["split"], {})
            split[t["part"]] = (scores, key)
        if aside:
            f.found.append(
                f"{model.name}: {len(aside)} score folder(s) of scenarios that are no attacker "
                f"of VoicePrivacy 2024 left aside (e.g. {aside[0]})"
            )
    return f


def _part_frame(scores: Path, key: Path, sex: str) -> pd.DataFrame:
    """The listed pairs of one trial list with their scores; every pair must be scored."""
    k, s = _key(key), _scores(scores)
    kk = k["enrol"] + "\t" + k["trial"]
    sk = s["enrol"] + "\t" + s["trial"]
    pos = pd.Index(sk).get_indexer(kk)  # the scores' pairs are unique (_scores checks)
    if (pos < 0).any():
        i = int(np.argmax(pos < 0))
        raise VoxMetricsInputError(
            f"{scores}: {int((pos < 0).sum())} of the {len(k)} pairs of the trial key {key} have "
            f"no score (first: {k['enrol'].iloc[i]} {k['trial'].iloc[i]}); the scores must cover "
            "every listed pair, so run the challenge's evaluation again or give the complete "
            "scores file."
        )
    if len(s) > len(k):
        extra = ~sk.isin(kk).to_numpy()
        i = int(np.argmax(extra))
        raise VoxMetricsInputError(
            f"{scores}: {int(extra.sum())} scored pair(s) are not in the trial key {key} (first: "
            f"{s['enrol'].iloc[i]} {s['trial'].iloc[i]}); give the scores and the key of the same "
            "trial list."
        )
    both = k.assign(score=s["score"].to_numpy()[pos])
    both["sex"] = sex
    return both


def _speakers(
    pairs: pd.DataFrame, utt2spk: dict[str, str] | None, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """Trial ids (order of first appearance) and their speakers."""
    trials = pd.unique(pairs["trial"])
    if utt2spk is not None:
        missing = [t for t in trials if t not in utt2spk]
        if missing:
            raise VoxMetricsInputError(
                f"{where}: {len(missing)} trial(s) are not in utt2spk (first: '{missing[0]}'); "
                "give the utt2spk of the trial list."
            )
        spk = pd.Series(utt2spk).reindex(trials).to_numpy()
    else:  # the enrolled speaker of each trial's target line
        tgt = pairs[pairs["target"]].drop_duplicates("trial").set_index("trial")["enrol"]
        spk = tgt.reindex(trials).fillna("<not enrolled>").to_numpy()
    spk = spk.astype(str)
    by_trial = pd.Series(spk, index=trials)
    is_target = pairs["enrol"].to_numpy() == by_trial.reindex(pairs["trial"]).to_numpy()
    wrong = is_target != pairs["target"].to_numpy()
    if wrong.any():
        r = pairs.iloc[int(np.argmax(wrong))]
        raise VoxMetricsInputError(
            f"{where}: the key marks ({r['enrol']}, {r['trial']}) as "
            f"{'target' if r['target'] else 'nontarget'} but the trial's speaker is "
            f"'{by_trial[r['trial']]}'; the key and utt2spk must agree."
        )
    return np.asarray(trials, dtype=str), spk


def _utt2spk(parts: dict[str, tuple[Path, Path]]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for _, key in parts.values():
        path = key.parent / "utt2spk"
        if not path.is_file():
            return None
        out.update(_mapping(path, "utt_id speaker"))
    return out


def _matrix(parts: dict[str, tuple[Path, Path]], label: str) -> tuple[ScoreMatrix, list[str]]:
    """The split's one sparse matrix (female and male lists joined), and notes on it."""
    frames = [_part_frame(s, k, _SEX[part]) for part, (s, k) in sorted(parts.items())]
    pairs = pd.concat(frames, ignore_index=True)
    sexes = pairs.groupby("trial")["sex"].nunique()
    if (sexes > 1).any():
        raise VoxMetricsInputError(
            f"{label}: trial '{sexes[sexes > 1].index[0]}' is in both the female and the male "
            "trial list; each trial belongs to one list."
        )
    trials, speakers = _speakers(pairs, _utt2spk(parts), label)
    enrolled = pd.unique(pairs["enrol"]).astype(str)
    rows = pd.Index(trials).get_indexer(pairs["trial"])
    cols = pd.Index(enrolled).get_indexer(pairs["enrol"])
    scores = np.full((trials.size, enrolled.size), np.nan)
    mask = np.zeros(scores.shape, dtype=bool)
    scores[rows, cols] = pairs["score"].to_numpy()
    mask[rows, cols] = True
    sex = pairs.drop_duplicates("trial").set_index("trial")["sex"].reindex(trials).to_numpy()
    with kept_warnings(ExcludedTrialsWarning):  # dropped: the notes count those trials
        sm = ScoreMatrix.from_arrays(
            scores,
            trial_ids=trials,
            trial_speakers=speakers,
            enrol_speakers=enrolled,
            attributes={"sex": sex.astype(str)},
            source=label,
            copy=False,
            mask=mask,
        )
    return sm, _matrix_notes(sm, pairs, parts, label)


def _matrix_notes(
    sm: ScoreMatrix, pairs: pd.DataFrame, parts: dict[str, tuple[Path, Path]], label: str
) -> list[str]:
    """Where a per-gender subset of ``sm`` would not be the challenge's trial list."""
    notes = []
    unenrolled = int(np.count_nonzero(~sm.trial_enrolled)) + sm.n_excluded_trials
    if unenrolled:
        notes.append(
            f"{label}: {unenrolled} trial(s) have a speaker who is not enrolled; their listed "
            "pairs count as non-mated (as in the challenge's EER), and the 1-to-N metrics "
            "leave them out."
        )
    for value, n in pairs.groupby("sex").size().items():
        try:
            got = sm.subset_attribute("sex", str(value)).n_pairs
        except VoxMetricsInputError:
            got = 0
        if got != n:
            notes.append(
                f"{label}: the subset sex = {value} holds {got} of the {n} pairs of its trial "
                "list, so its EER is not the challenge's per-gender EER."
            )
    for part, (_, key) in parts.items():
        path = key.parent / "spk2gender"
        if not path.is_file():
            continue
        genders = _mapping(path, "speaker gender")
        own = pairs.loc[pairs["sex"] == _SEX[part], "enrol"].unique()
        other = [s for s in own if genders.get(s, part[-1]).lower() != part[-1]]
        if other:
            notes.append(
                f"{label}: {path.parent.name}/spk2gender gives {len(other)} speaker(s) of the "
                f"{part} list another gender (first: '{other[0]}'); sex follows the list, as "
                "in the challenge's results."
            )
    return notes


def _summaries(f: _Found) -> tuple[dict[str, dict[str, pd.DataFrame]], pd.DataFrame]:
    """The results summaries of each system, and their EERs as one table."""
    out: dict[str, dict[str, pd.DataFrame]] = {}
    eers = []
    summary = f.root / "exp" / "results_summary"
    candidates: list[tuple[str, Path]] = []
    if summary.is_dir():
        for d in sorted(p for p in summary.iterdir() if p.is_dir()):
            m = re.fullmatch(r"eval_(orig|anon)_(.+)", d.name)
            name = f"results_{m.group(1)}.txt" if m else ""
            if m and (d / name).is_file():
                candidates.append((m.group(2), d / name))
    for folder in (f.root, f.root / "results", summary, f.root / "exp"):
        if folder.is_dir():
            for p in sorted(folder.glob("result_for_rank_*")):
                if p.is_file():
                    candidates.append((p.name[len("result_for_rank_") :], p))
    for system, path in candidates:
        tables = read_results_summary(path)
        rel = path.relative_to(f.root).as_posix()
        f.found.append(f"results summary {rel} (system {system})")
        mine = out.setdefault(system, {})
        for k, v in tables.items():
            mine[k] = pd.concat([mine[k], v], ignore_index=True) if k in mine else v
            if k in ("asv", "asv_anon") and "EER" in v.columns:
                e = v.assign(system=system, model="original" if k == "asv" else "anonymised")
                e["EER"] = _fraction(e["EER"], "an EER", rel, bounded=True)
                eers.append(e)
    for tables in out.values():
        for k, v in tables.items():
            tables[k] = v.drop_duplicates().reset_index(drop=True)
    eer_table = pd.concat(eers, ignore_index=True).drop_duplicates() if eers else pd.DataFrame()
    return out, eer_table


def _condition(
    f: _Found, system: str, attacker: Attacker, utility: Utility | None
) -> Condition | None:
    name = "original" if attacker == "original" else f"{system} ({attacker})"
    splits = f.groups.get((system, attacker), {})
    matrices: dict[str, ScoreMatrix] = {}
    for split, parts in sorted(splits.items()):
        for part in ("trials_f", "trials_m"):
            if part not in parts:
                f.missing.append(f"{name}: no {split} {part} scores; the {split} set has one sex.")
        label = f"{name} {split}"
        sm, notes = _matrix(parts, label)
        f.missing.extend(notes)
        matrices[_SPLITS[split]] = sm
        f.found.append(
            f"{label}: {sm.n_trials} trials x {sm.n_enrolled} enrolled, {sm.n_pairs} listed pairs"
        )
    if not matrices:
        f.missing.append(f"{name}: no scores ({_WHAT[attacker]}); condition not built.")
        return None
    if "eval" not in matrices:
        f.missing.append(f"{name}: no test scores, only dev; condition not built.")
        return None
    if "dev" not in matrices:
        f.missing.append(f"{name}: no dev scores; the condition has no calibration set.")
    who = "original speech" if attacker == "original" else f"system '{system}'"
    return Condition(
        name,
        eval=matrices["eval"],
        dev=matrices.get("dev"),
        attacker=attacker,
        description=f"VoicePrivacy 2024, {who}: {_WHAT[attacker]}.",
        utility=utility,
    )


def read_vpc_tree(root: str | Path, *, name: str | None = None) -> VPCImport:
    """Read a VoicePrivacy Challenge 2024 evaluation tree (see the module docstring).

    Parameters
    ----------
    root : str or Path
        The folder holding ``data/`` and ``exp/`` (or a folder whose only sub-folder does).
    name : str, optional
        The study's name (default: the folder's name).

    Returns
    -------
    VPCImport
        The study and what was found and what is missing.

    Raises
    ------
    VoxMetricsInputError
        Not such a tree, a listed pair without a score (or a score of an unlisted pair), a key
        that disagrees with utt2spk, a results summary with an unknown section or a percentage
        over 100, or no condition at all.
    """
    path = Path(root)
    tree = _tree_root(path)
    if tree is None:
        raise VoxMetricsInputError(
            f"{path}: not a VoicePrivacy 2024 evaluation tree; it needs the data/ and exp/ "
            "folders the challenge's run_evaluation.py uses."
        )
    f = _walk(tree)
    summaries, eers = _summaries(f)
    conditions = []
    utility = _utility(f, summaries, None)
    cond = _condition(f, "", "original", utility)
    if cond is not None:
        conditions.append(cond)
    for system in sorted(f.systems):
        utility = _utility(f, summaries, system)
        for attacker in _ATTACKERS:
            cond = _condition(f, system, attacker, utility)
            if cond is not None:
                conditions.append(cond)
    for system in sorted(set(summaries) - f.systems):
        f.missing.append(
            f"results of system '{system}': no scores of this system in the tree; its utility "
            "numbers are not attached to any condition."
        )
    if not conditions:
        raise VoxMetricsInputError(
            f"{path}: no condition could be built; " + " ".join(f.missing[:5])
        )
    study = Study(tuple(conditions), name=name or path.name or "vpc")
    return VPCImport(study, tuple(f.found), tuple(f.missing), eers)


def _utility(
    f: _Found, summaries: dict[str, dict[str, pd.DataFrame]], system: str | None
) -> Utility | None:
    if system is None:  # the original speech: any summary's original rows
        for s, original in sorted(summaries.items()):
            u = utility_from_summary(original, anonymised=False, source=f"results of {s}")
            if u is not None:
                return u
        return None
    tables = summaries.get(system)
    if tables is None:
        f.missing.append(f"system '{system}': no results summary, so no WER / UAR.")
        return None
    u = utility_from_summary(tables, anonymised=True, source=f"results of {system}")
    if u is None:
        f.missing.append(f"system '{system}': its results summary has no ASR or SER rows.")
    return u


def read_vpc_zip(data: bytes, name: str = "upload.zip") -> VPCImport:
    """Read a VoicePrivacy 2024 tree uploaded as a zip archive (see :func:`read_vpc_tree`).

    Only the text files the tree's metrics need (``trials``, ``utt2spk``, ``spk2gender``,
    ``scores`` and the results summaries) are unpacked, within the archive limits; audio in the
    archive is skipped unread.

    Raises
    ------
    VoxMetricsInputError
        Not a zip archive, an unsafe member name, an archive over the limits, or anything
        :func:`read_vpc_tree` refuses.
    """
    with (
        tempfile.TemporaryDirectory(prefix="voxmetrics-vpc-") as tmp,
        ArchiveReader(io.BytesIO(data), name) as ar,
    ):
        base = Path(tmp) / Path(name).stem
        for member in ar.names():
            if not safe_member_name(member):
                raise VoxMetricsInputError(
                    f"{name}: refusing an unsafe archive: member '{member}' points outside the "
                    "archive (absolute path or '..'); zip the tree again."
                )
            if member.endswith("/") or "__MACOSX" in member or not _ZIP_NAMES.search(member):
                continue
            target = base / member
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(ar.read(member))
        if not base.is_dir():
            raise VoxMetricsInputError(
                f"{name}: the archive holds no trials, scores or results files; zip the folder "
                "that holds the challenge's data/ and exp/ folders."
            )
        prefix = str(base) + "/"
        try:
            out = read_vpc_tree(base, name=Path(name).stem)
        except VoxMetricsInputError as exc:  # name the files inside the archive
            raise VoxMetricsInputError(f"{name}: {str(exc).replace(prefix, '')}") from None
        found = tuple(s.replace(prefix, "") for s in out.found)
        missing = tuple(s.replace(prefix, "") for s in out.missing)
        return VPCImport(out.study, found, missing, out.summary_eers)
