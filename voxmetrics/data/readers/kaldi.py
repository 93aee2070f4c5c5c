"""Kaldi / VoicePrivacy scores: ``enrol_id trial_id score`` lines with a key or utt2spk file.

The key (``enrol_id trial_id target|nontarget``) or utt2spk file (``utt_id speaker``) gives
each trial's speaker; a key also shows scores files cut short (pairs or trials without a score).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.readers._common import Source, Where, as_str_array, incomplete, load_source
from voxmetrics.data.readers.detect import detect_kind
from voxmetrics.data.readers.long import Pivot, drop_nan_rows
from voxmetrics.data.readers.tables import exact_labels, numeric_scores, skip_blank_start
from voxmetrics.errors import VoxMetricsInputError

pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "scores_from_kaldi",
]


_NOT_ENROLLED = "unknown speaker"  # of a Kaldi trial without a target key line (+ its id)


def _fields(k: int) -> str:
    return f"{k} field" if k == 1 else f"{k} fields"


def _read_fields(
    data: bytes, name: str, n: int, layout: str, *, numeric_last: bool
) -> tuple[pd.DataFrame, Where]:
    """Whitespace-separated lines of exactly ``n`` fields; blank lines are skipped."""
    labels = range(n - 1 if numeric_last else n)
    data, skipped = skip_blank_start(data)
    options: dict[str, Any] = {
        "sep": r"\s+",
        "header": None,
        "keep_default_na": False,
        "na_values": [""],
        "skip_blank_lines": False,
        "encoding": "utf-8-sig",
        "quoting": csv.QUOTE_NONE,
    }
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=dict.fromkeys(labels, "category"), **options)
        exact_labels(df, data, options, [c for c in labels if c in df.columns])
    except pd.errors.ParserError as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if not m:
            raise VoxMetricsInputError(
                f"{name}: cannot be parsed as `{layout}` lines ({exc})."
            ) from None
        expected, line, saw = (int(g) for g in m.groups())
        if expected != n:  # the first line set the wrong width
            first = data.lstrip(b"\xef\xbb\xbf").split(b"\n")
            line = next(k for k, ln in enumerate(first, 1) if ln.strip())
            saw = expected
        raise VoxMetricsInputError(
            f"{name}: line {line} has {_fields(saw)}; every line must be `{layout}` ({n} "
            "whitespace-separated fields)."
        ) from None
    except pd.errors.EmptyDataError:
        raise VoxMetricsInputError(f"{name}: the file is empty.") from None
    blank = df.isna().all(axis=1).to_numpy()
    df = df.loc[~blank]
    where = Where(name, "line", df.index.to_numpy(dtype=np.int64) + 1 + skipped)
    df = df.reset_index(drop=True)
    if df.shape[1] != n or df[n - 1].isna().any():
        counts = df.notna().sum(axis=1).to_numpy()
        bad = counts != n
        if bad.any():
            i = int(np.argmax(bad))
            raise VoxMetricsInputError(
                f"{name}: {where(i)} has {_fields(counts[i])}; every line must be `{layout}` "
                f"({n} whitespace-separated fields)."
            )
    return df, where


def _key_pairs_scored(
    pv: Pivot, key: pd.DataFrame, where: Where, scores_name: str, allow_incomplete: bool
) -> None:
    """Refuse key lines of scored trials whose (enrolled, trial) pair has no score.

    A scores file cut inside a trial (or from another run) lacks pairs its key lists. ``key``
    holds the scored trials' lines only (the others are :func:`_key_trials_scored`'s).
    """
    tpos = pd.Index(pv.trial_ids).get_indexer(key[1].astype(str))
    epos = pd.Index(pv.enrol_speakers).get_indexer(key[0].astype(str))
    found = (tpos >= 0) & (epos >= 0)
    if pv.mask is not None:
        found[found] = pv.mask[tpos[found], epos[found]]
    if found.all():
        return
    missing = ~found
    i = int(np.argmax(missing))
    t, n = pv.scores.shape
    listed = t * n if pv.mask is None else int(pv.mask.sum())
    incomplete(
        f"{where.name}: {int(missing.sum()):,} of the {missing.size:,} pairs listed in the key "
        f"have no score in {scores_name} (first: {where(i)}, enrolled '{key[0].iloc[i]}' x "
        f"trial '{key[1].iloc[i]}'); the scores hold {listed:,} listed pairs of T x N = "
        f"{t:,} x {n:,} = {t * n:,}, so the scores file is truncated or from another run",
        int(missing.sum()),
        allow_incomplete,
    )


def _key_trials_scored(
    trial_col: pd.Series,
    scored: NDArray[np.bool_],
    where: Where,
    scores_name: str,
    allow_incomplete: bool,
) -> None:
    """Refuse a key whose trials are not all scored: a scores file cut between two trials.

    A file cut exactly at a trial boundary lacks whole trials, each with all its pairs; only
    the key shows it. A key that lists more trials on purpose (a master key serving several
    scores files) is read with ``allow_incomplete``: its unscored trials are left out, counted.
    """
    unscored = ~scored
    n_trials = int(trial_col[unscored].nunique())
    total = int(trial_col.nunique())
    i = int(np.argmax(unscored))
    incomplete(
        f"{where.name}: {n_trials:,} of the {total:,} trials listed in the key "
        f"({int(unscored.sum()):,} of its {unscored.size:,} lines) have no score at all in "
        f"{scores_name} (first: {where(i)}, trial '{trial_col.iloc[i]}'), so the scores file "
        "was cut between two trials, or the key lists more trials than it (a master key)",
        int(unscored.sum()),
        allow_incomplete,
    )


def _kaldi_trial_speakers(
    pv: Pivot,
    trials: Source,
    trials_name: str | None,
    scores_name: str,
    allow_incomplete: bool = False,
) -> tuple[NDArray[np.str_], bool]:
    data, tn = load_source(trials, trials_name)
    kind = detect_kind(data, tn)
    if kind == "kaldi-key":
        key, where = _read_fields(
            data, tn, 3, "enrol_id trial_id target|nontarget", numeric_last=False
        )
        scored = key[1].isin(pv.trial_ids).to_numpy()  # a master key may list other trials
        if not scored.any():
            raise VoxMetricsInputError(
                f"{tn}: the key file does not match {scores_name}: none of its trial ids "
                "appears in the scores; give the key (trials) file of the same experiment as "
                "the scores."
            )
        if not scored.all():  # only the scored trials' lines are used (and checked)
            _key_trials_scored(key[1], scored, where, scores_name, allow_incomplete)
            key = key.loc[scored].reset_index(drop=True)
            where = Where(where.name, where.unit, where.numbers[scored])
        label = key[2].astype(str).str.lower()
        bad = ~label.isin(("target", "nontarget")).to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            raise VoxMetricsInputError(
                f"{tn}: {where(i)}: label '{key[2].iloc[i]}' is neither 'target' nor "
                "'nontarget'; each key line is `enrol_id trial_id target|nontarget`."
            )
        is_tgt = (label == "target").to_numpy()
        tgt = key.loc[is_tgt, [0, 1]].drop_duplicates()
        clash = tgt.duplicated(subset=[1]).to_numpy()
        if clash.any():
            j = int(np.argmax(clash))
            trial = tgt[1].iloc[j]
            first = tgt[(tgt[1] == trial).to_numpy()].index
            raise VoxMetricsInputError(
                f"{tn}: {where(int(tgt.index[j]))}: trial '{trial}' is marked target for "
                f"enrolled '{tgt[0].iloc[j]}' but {where(int(first[0]))} marks it target for "
                f"'{key[0].iloc[int(first[0])]}'; a trial has one speaker, so mark only one "
                "target line per trial."
            )
        mapping = pd.Series(tgt[0].to_numpy(), index=tgt[1].to_numpy())
        speakers = mapping.reindex(pv.trial_ids)
        if not speakers.isna().all():
            _key_pairs_scored(pv, key, where, scores_name, allow_incomplete)
        if speakers.isna().all():
            raise VoxMetricsInputError(
                f"{tn}: the key file does not match {scores_name}: none of its target lines "
                "names a trial of the scores; give the key (trials) file of the same "
                "experiment as the scores."
            )
        # a trial without a target line: speaker unknown (not enrolled), one label per trial
        unknown = speakers.isna().to_numpy()
        speakers[unknown] = [f"{_NOT_ENROLLED} ({t})" for t in pv.trial_ids[unknown]]
        return as_str_array(speakers.to_numpy()), True
    if kind == "utt2spk":
        u2s, where = _read_fields(data, tn, 2, "utt_id speaker", numeric_last=False)
        pairs = u2s.drop_duplicates()
        clash = pairs.duplicated(subset=[0]).to_numpy()
        if clash.any():
            j = int(np.argmax(clash))
            utt = pairs[0].iloc[j]
            i = int(np.flatnonzero((u2s[0] == utt).to_numpy())[0])
            raise VoxMetricsInputError(
                f"{tn}: {where(int(pairs.index[j]))}: utterance '{utt}' has speaker "
                f"'{pairs[1].iloc[j]}' but {where(i)} gives '{u2s[1].iloc[i]}'; give each "
                "utterance one speaker."
            )
        speakers = pd.Series(pairs[1].to_numpy(), index=pairs[0].to_numpy()).reindex(pv.trial_ids)
        missing = speakers.isna().to_numpy()
        if missing.any():
            raise VoxMetricsInputError(
                f"{tn}: {int(missing.sum())} of {missing.size} trial ids of {scores_name} are "
                f"not in this utt2spk file, e.g. '{pv.trial_ids[int(np.argmax(missing))]}'; add "
                "a `utt_id speaker` line for every trial."
            )
        return as_str_array(speakers.to_numpy()), False
    raise VoxMetricsInputError(
        f"{tn}: the trials file must be a Kaldi key (`enrol_id trial_id target|nontarget`) or an "
        f"utt2spk file (`utt_id speaker`), but it looks like a {kind} file; pass the key file "
        "of the scores."
    )


def scores_from_kaldi(
    data: bytes,
    name: str,
    trials: Source | None,
    trials_name: str | None,
    allow_incomplete: bool = False,
) -> ScoreMatrix:
    """Kaldi score lines as a matrix, each trial's speaker from ``trials`` (key or utt2spk)."""
    if trials is None:
        raise VoxMetricsInputError(
            f"{name}: Kaldi / VoicePrivacy scores (`enrol_id trial_id score`) do not say who "
            "speaks in each trial; pass the key file (`enrol_id trial_id target|nontarget`) or "
            "an utt2spk file with trials=... (command line: --trials KEY)."
        )
    df, where = _read_fields(data, name, 3, "enrol_id trial_id score", numeric_last=True)
    if allow_incomplete:
        df, where = drop_nan_rows(df, 2, where)
    scores = numeric_scores(df[2], where)
    pv = Pivot(df[1], df[0], scores, where)
    speakers, keyed = _kaldi_trial_speakers(pv, trials, trials_name, name, allow_incomplete)
    if not keyed:  # a key names the pairs the scores lack; an utt2spk file does not
        pv.check_truncated(where, allow_incomplete)
    return ScoreMatrix.from_arrays(
        pv.scores,
        trial_ids=pv.trial_ids,
        trial_speakers=speakers,
        enrol_speakers=pv.enrol_speakers,
        source=name,
        copy=False,  # the pivot's own array
        mask=pv.mask,
    )
