"""Kaldi / VoicePrivacy scores: ``enrol_id trial_id score`` lines with a key or utt2spk file.

The key (``enrol_id trial_id target|nontarget``) or utt2spk file (``utt_id speaker``) gives
each trial's speaker; a key also shows scores files cut short (pairs or trials without a score).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.readers._common import Source, Where, as_str_array, incomplete, load_source
from voxmetrics.data.readers.detect import detect_kind
from voxmetrics.data.readers.long import Pivot, drop_nan_rows
from voxmetrics.data.readers.tables import (
    blank_start,
    exact_labels,
    numeric_scores,
    skip_blank_start,
)
from voxmetrics.errors import VoxMetricsInputError

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "scores_from_kaldi",
]


_NOT_ENROLLED = "unknown speaker"  # of a Kaldi trial without a target key line (+ its id)


def _fields(k: int) -> str:
    return f"{k} field" if k == 1 else f"{k} fields"


_OPTIONS: dict[str, Any] = {  # whitespace-separated fields, every one read as text
    "sep": r"\s+",
    "header": None,
    "keep_default_na": False,
    "na_values": [""],
    "skip_blank_lines": False,
    "encoding": "utf-8-sig",
    "quoting": csv.QUOTE_NONE,
}

_KEY_LAYOUT = "enrol_id trial_id target|nontarget"

_PIECE_BYTES = 1 << 20  # bytes of a key parsed at a time (a master key may have 10^7 lines)

_LINE = re.compile(rb"[^\r\n]*")  # a line as the parser cuts them (at \n, \r\n or \r)


def _layout_error(name: str, line: str, k: int, layout: str, n: int) -> VoxMetricsInputError:
    return VoxMetricsInputError(
        f"{name}: {line} has {_fields(k)}; every line must be `{layout}` ({n} "
        "whitespace-separated fields)."
    )


def _first_content_line(data: bytes, start: int) -> int:
    """The number of the first line of ``data[start:]`` that is not blank (from 1)."""
    while start < len(data) and data[start] in b"\xef\xbb\xbf":
        start += 1
    k = 1
    while True:
        end = data.find(b"\n", start)
        if data[start : len(data) if end < 0 else end].strip() or end < 0:
            return k
        start, k = end + 1, k + 1


def _parser_error(
    exc: Exception, data: bytes, start: int, name: str, n: int, layout: str, offset: int = 0
) -> VoxMetricsInputError:
    """The message of a parser error in the text ``data[start:]`` (lines ``offset`` after)."""
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
    if not m:
        return VoxMetricsInputError(f"{name}: cannot be parsed as `{layout}` lines ({exc}).")
    expected, line, saw = (int(g) for g in m.groups())
    if expected != n:  # the first line set the wrong width
        return _layout_error(name, f"line {_first_content_line(data, start)}", expected, layout, n)
    return _layout_error(name, f"line {line + offset}", saw, layout, n)


def _short_line(
    df: pd.DataFrame, numbers: NDArray[np.int64], name: str, n: int, layout: str
) -> VoxMetricsInputError | None:
    """The first line (of the non-blank ``df``) without ``n`` fields, as a message."""
    if df.shape[1] == n and not df[n - 1].isna().any():
        return None
    counts = df.notna().sum(axis=1).to_numpy()
    bad = counts != n
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return _layout_error(name, f"line {int(numbers[i])}", int(counts[i]), layout, n)


def _read_fields(
    data: bytes, name: str, n: int, layout: str, *, numeric_last: bool
) -> tuple[pd.DataFrame, Where]:
    """Whitespace-separated lines of exactly ``n`` fields; blank lines are skipped."""
    labels = range(n - 1 if numeric_last else n)
    data, skipped = skip_blank_start(data)
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=dict.fromkeys(labels, "category"), **_OPTIONS)
        exact_labels(df, data, _OPTIONS, [c for c in labels if c in df.columns])
    except pd.errors.ParserError as exc:
        raise _parser_error(exc, data, 0, name, n, layout) from None
    except pd.errors.EmptyDataError:
        raise VoxMetricsInputError(f"{name}: the file is empty.") from None
    blank = df.isna().all(axis=1).to_numpy()
    df = df.loc[~blank]
    where = Where(name, "line", df.index.to_numpy(dtype=np.int64) + 1 + skipped)
    df = df.reset_index(drop=True)
    short = _short_line(df, where.numbers, name, n, layout)
    if short is not None:
        raise short
    return df, where


class _Distinct:
    """Counts distinct strings given in batches, in 16 bytes each.

    Each string becomes two independent 52-bit hashes, packed as the real and imaginary parts
    of a complex number (numpy sorts complex numbers by real, then imaginary part), so the
    count is a sort in place. Two different strings share both hashes with odds of about
    n^2 / 2^105 (under 10^-16 for 10^8 strings). Duplicates are dropped whenever the numbers
    held double. The buffer is made for ``capacity`` numbers (up to 2^26, 1 GiB; it grows
    beyond), of which only the part written takes memory.
    """

    _KEYS = ("0123456789123456", "VoxMetrics key 2")  # the first is pandas' default
    _MANTISSA, _ONE = np.uint64((1 << 52) - 1), np.uint64(0x3FF0000000000000)  # 1 <= x < 2
    _FIRST, _BLOCK = 1 << 20, 1 << 16  # numbers before the first dedup; per step of it

    def __init__(self, capacity: int) -> None:
        self._buf = np.empty(min(capacity, 1 << 26), dtype=np.complex128)
        self._size = 0
        self._unique = 0  # the first ones, distinct already

    def add(self, values: NDArray[np.object_]) -> None:
        """Count ``values`` (distinct among themselves) too."""
        if self._size + values.size > self._buf.size:  # past 2^26: no view of it is left here
            self._buf.resize(max(2 * self._buf.size, self._size + values.size), refcheck=False)
        new = self._buf[self._size : self._size + values.size]
        for k, part in zip(self._KEYS, (new.real, new.imag), strict=True):
            h = pd.util.hash_array(values, hash_key=k, categorize=False)
            part[:] = ((h & self._MANTISSA) | self._ONE).view(np.float64)
        self._size += values.size
        if self._size > max(self._FIRST, 2 * self._unique):
            self._compact()

    def _compact(self) -> None:
        buf = self._buf[: self._size]
        buf.sort()
        size = min(1, buf.size)
        for start in range(1, buf.size, self._BLOCK):  # each value unlike the one before it
            block = buf[start : start + self._BLOCK]
            keep = block[block != buf[start - 1 : start - 1 + block.size]]
            buf[size : size + keep.size] = keep
            size += keep.size
        self._size = self._unique = size

    def count(self) -> int:
        """How many distinct strings were added."""
        if self._size > self._unique:
            self._compact()
        return self._unique


class _Labels:
    """Text values given in pieces, kept as codes into each piece's distinct values."""

    def __init__(self) -> None:
        self._codes: list[NDArray[np.int32]] = []
        self._uniques: list[NDArray[np.object_]] = []

    def add(self, values: NDArray[np.object_]) -> None:
        codes, uniques = pd.factorize(values)
        self._codes.append(codes.astype(np.int32))
        self._uniques.append(uniques)

    def categorical(self) -> pd.Categorical:
        """All the values given, as one categorical (each distinct value once)."""
        starts = np.cumsum([0, *(u.size for u in self._uniques[:-1])])
        place, values = pd.factorize(np.concatenate(self._uniques))
        place = place.astype(np.int32)
        codes = np.concatenate([place[s + c] for s, c in zip(starts, self._codes, strict=True)])
        return pd.Categorical.from_codes(codes, categories=values)


@dataclass
class _KeyLines:
    """A key's lines whose trial is scored, and counts of the others."""

    columns: list[_Labels]
    """The scored trials' lines: enrolled, trial, label (see :meth:`frame`)."""
    where: Where
    """Their line numbers."""
    lines: int
    """Lines of the key (blank lines aside)."""
    unscored: int
    """Lines of the key whose trial is not scored."""
    first: tuple[str, str]
    """The first of them: its place ('line 7') and its trial."""
    unscored_trials: int
    """Distinct trials of those lines."""

    def frame(self) -> pd.DataFrame:
        """The scored trials' lines (columns 0, 1, 2; categories), none when no trial is."""
        if not self.where.numbers.size:
            return pd.DataFrame(columns=range(len(self.columns)))
        return pd.DataFrame({c: col.categorical() for c, col in enumerate(self.columns)})


def _pieces(data: bytes, start: int, size: int) -> Iterator[bytes]:
    """``data[start:]`` in pieces of about ``size`` bytes, each cut after a newline."""
    while start < len(data):
        cut = data.find(b"\n", start + size - 1) if start + size < len(data) else -1
        stop = len(data) if cut < 0 else cut + 1
        yield data[start:stop]
        start = stop


def _scan_key(data: bytes, name: str, trial_ids: NDArray[np.str_]) -> _KeyLines:
    """A key's lines of the trials in ``trial_ids``, read piece by piece (a master key).

    The same lines, checks and messages as parsing the whole key at once, in memory near the
    key's size: every piece is parsed as if it followed the key's first line (which sets the
    width of a line), only the lines of scored trials are kept, the others are counted.
    """
    n = 3
    start, skipped = blank_start(data)
    # ended by \n: a piece that starts with \n must not make it \r\n
    head = data[start : _LINE.match(data, start).end()] + b"\n"  # type: ignore[union-attr]
    short: VoxMetricsInputError | None = None  # refused unless a later line has too many fields
    kept = [_Labels() for _ in range(n)]  # the columns of the scored trials' lines
    kept_lines: list[NDArray[np.int64]] = []
    distinct = _Distinct(data.count(b"\n", start) + data.count(b"\r", start) + 1)  # lines at most
    trials = pd.Index(trial_ids, dtype=object)  # its look-up table built once
    lines = unscored = rows = 0
    first = ("", "")
    for k, piece in enumerate(_pieces(data, start, _PIECE_BYTES)):
        lead = 1 if k else 0  # the key's first line, set before the piece
        try:  # text as it is: no category or number inferred, so '007' stays '007'
            df = pd.read_csv(io.BytesIO(head + piece if lead else piece), dtype=object, **_OPTIONS)
        except pd.errors.ParserError as exc:
            raise _parser_error(exc, data, start, name, n, _KEY_LAYOUT, rows - lead) from None
        except pd.errors.EmptyDataError:
            raise VoxMetricsInputError(f"{name}: the file is empty.") from None
        df = df.iloc[lead:]
        blank = df.isna().all(axis=1).to_numpy()
        numbers = np.flatnonzero(~blank) + (rows + 1 + skipped)
        rows += blank.size
        if short is not None:
            continue  # refused at the end, unless a line has too many fields
        df = df.loc[~blank]
        short = _short_line(df, numbers, name, n, _KEY_LAYOUT)
        if short is not None or df.empty:
            continue
        trial = df[1].to_numpy()
        scored = trials.get_indexer(pd.Index(trial, dtype=object)) >= 0  # text as is
        lines += scored.size
        if not scored.all():
            out = ~scored
            if not unscored:
                i = int(np.argmax(out))
                first = (f"line {int(numbers[i])}", str(trial[i]))
            unscored += int(out.sum())
            distinct.add(pd.unique(trial[out]))
        if scored.any():
            for c in range(n):
                kept[c].add(df[c].to_numpy()[scored])
            kept_lines.append(numbers[scored])
    if short is not None:
        raise short
    numbers = np.concatenate(kept_lines) if kept_lines else np.zeros(0, dtype=np.int64)
    return _KeyLines(kept, Where(name, "line", numbers), lines, unscored, first, distinct.count())


def _positions(labels: NDArray[np.str_], col: pd.Series) -> NDArray[np.int32]:
    """The position in ``labels`` of each value of the categorical ``col`` (-1: not there)."""
    pos = pd.Index(labels).get_indexer(col.cat.categories.astype(str)).astype(np.int32)
    return pos[col.cat.codes.to_numpy()]


def _key_pairs_scored(
    pv: Pivot, key: pd.DataFrame, where: Where, scores_name: str, allow_incomplete: bool
) -> None:
    """Refuse key lines of scored trials whose (enrolled, trial) pair has no score.

    A scores file cut inside a trial (or from another run) lacks pairs its key lists. ``key``
    holds the scored trials' lines only (the others are :func:`_key_trials_scored`'s).
    """
    tpos = _positions(pv.trial_ids, key[1])
    epos = _positions(pv.enrol_speakers, key[0])
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
    scan: _KeyLines, scored_trials: int, scores_name: str, allow_incomplete: bool
) -> None:
    """Refuse a key whose trials are not all scored: a scores file cut between two trials.

    A file cut exactly at a trial boundary lacks whole trials, each with all its pairs; only
    the key shows it. A key that lists more trials on purpose (a master key serving several
    scores files) is read with ``allow_incomplete``: its unscored trials are left out, counted.
    """
    total = scan.unscored_trials + scored_trials
    incomplete(
        f"{scan.where.name}: {scan.unscored_trials:,} of the {total:,} trials listed in the key "
        f"({scan.unscored:,} of its {scan.lines:,} lines) have no score at all in "
        f"{scores_name} (first: {scan.first[0]}, trial '{scan.first[1]}'), so the scores file "
        "was cut between two trials, or the key lists more trials than it (a master key)",
        scan.unscored,
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
        scan = _scan_key(data, tn, pv.trial_ids)  # a master key may list other trials
        del data  # before the kept lines take their final form
        key, where = scan.frame(), scan.where
        if key.empty:
            raise VoxMetricsInputError(
                f"{tn}: the key file does not match {scores_name}: none of its trial ids "
                "appears in the scores; give the key (trials) file of the same experiment as "
                "the scores."
            )
        if scan.unscored:  # only the scored trials' lines are used (and checked)
            _key_trials_scored(scan, int(key[1].nunique()), scores_name, allow_incomplete)
        label = key[2].cat.categories.astype(str).str.lower()  # per category, not per line
        codes = key[2].cat.codes.to_numpy()
        bad = ~np.asarray(label.isin(("target", "nontarget")))[codes]
        if bad.any():
            i = int(np.argmax(bad))
            raise VoxMetricsInputError(
                f"{tn}: {where(i)}: label '{key[2].iloc[i]}' is neither 'target' nor "
                "'nontarget'; each key line is `enrol_id trial_id target|nontarget`."
            )
        is_tgt = np.asarray(label == "target")[codes]
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
    del df, scores  # in the matrix now: their memory serves the key
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
