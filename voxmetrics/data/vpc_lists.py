"""The trial lists of a VoicePrivacy evaluation tree: keys, scores and one split's matrix.

A trial list is a key ``data/<trial set>/trials`` (``enrol_id trial_id target|nontarget``) and
the ``scores`` file the challenge's ``asv.py`` writes for it (``enroll_id trial_id score``, no
header). ``asv.py`` reads the key into a dict: a pair the key lists several times counts once,
with the label of its **last** line, and ``scores`` holds one line per distinct pair. The 2026
mixed lists (``scripts/mixed_trials_librispeech.py``) repeat pairs that way: a pair may come
first as ``nontarget`` and later as ``target``. :func:`read_key` keeps every distinct pair with
its last label, as ``asv.py`` does.

:func:`split_matrix` joins the lists of one split (2024: the female and the male list of a
dataset; 2026: one mixed list per dataset, one dataset per language in track 2) into one sparse
:class:`~voxmetrics.data.model.ScoreMatrix` with the per-trial attributes ``sex`` (``F`` /
``M``: from the list's name in 2024, from ``spk2gender`` for a mixed list) and, when the split
holds several datasets, ``language`` (the dataset) and ``language_sex`` (the complete groups of
the 1-to-N metrics). Identities of several datasets are named ``<dataset>/<id>``, so two
corpora's speaker ids never meet.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError, kept_warnings
from voxmetrics.limits import read_file_bytes

__all__ = [
    "KeyRead",
    "ListRead",
    "TrialList",
    "read_kaldi_frame",
    "read_key",
    "read_mapping",
    "read_score_file",
    "split_matrix",
]

SEX_OF_PART = {"trials_f": "F", "trials_m": "M"}
"""The sex of the trials of a 2024 per-gender list."""


def read_kaldi_frame(path: Path, columns: tuple[str, ...], layout: str) -> pd.DataFrame:
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


@dataclass(frozen=True)
class KeyRead:
    """A trial key as the challenge's ``asv.py`` reads it."""

    pairs: pd.DataFrame
    """One row per distinct pair (``enrol``, ``trial``, ``target``), in the order of first
    appearance, with the label of its last line."""
    n_lines: int
    """Lines of the key."""
    n_relabelled: int
    """Distinct pairs listed with both labels (the last one counts)."""

    @property
    def n_repeated_lines(self) -> int:
        """Lines that repeat a pair listed before."""
        return self.n_lines - len(self.pairs)


def read_key(path: Path) -> KeyRead:
    """A trial key: every distinct pair with the label of its last line (``asv.py``'s dict)."""
    df = read_kaldi_frame(path, ("enrol", "trial", "label"), "enrol_id trial_id target|nontarget")
    label = df["label"].str.lower()
    bad = ~label.isin(("target", "nontarget"))
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise VoxMetricsInputError(
            f"{path}: label '{df['label'].iloc[i]}' is neither 'target' nor 'nontarget'; each "
            "line is `enrol_id trial_id target|nontarget`."
        )
    df = df.assign(target=(label == "target").to_numpy()).drop(columns="label")
    grouped = df.groupby(["enrol", "trial"], sort=False)["target"]
    pairs = grouped.last().reset_index()
    relabelled = int((grouped.nunique() > 1).sum())
    return KeyRead(pairs, len(df), relabelled)


def read_score_file(path: Path) -> pd.DataFrame:
    """A scores file ``enroll_id trial_id score`` (no header), scores as float64."""
    df = read_kaldi_frame(path, ("enrol", "trial", "score"), "enroll_id trial_id score")
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


def read_mapping(path: Path, layout: str) -> dict[str, str]:
    """A two-field Kaldi file (``utt2spk``, ``spk2gender``...) as a dict.

    A key given two values is refused.
    """
    df = read_kaldi_frame(path, ("a", "b"), layout)
    out: dict[str, str] = {}
    for a, b in zip(df["a"].tolist(), df["b"].tolist(), strict=True):
        if out.setdefault(a, b) != b:
            raise VoxMetricsInputError(
                f"{path}: '{a}' is given both '{out[a]}' and '{b}'; give it one value."
            )
    return out


@dataclass(frozen=True)
class TrialList:
    """The files of one scored trial list of a tree."""

    dataset: str
    """The dataset (``libri``; ``en``, ``de``, ``es``, ``fr`` in 2026 track 2)."""
    part: str
    """``trials_f``, ``trials_m`` (2024) or ``trials_mixed`` (2026)."""
    scores: Path
    """The ``scores`` file."""
    key: Path | None
    """The original trial set's ``trials`` (None: ``data/`` is missing)."""
    speakers: Mapping[str, str] | None = None
    """Trial id -> speaker when no key or no ``utt2spk`` gives it (the challenge's utterance
    embeddings, ``idx2spk``); None when unknown."""
    genders: Mapping[str, str] | None = None
    """Speaker -> gender when no ``spk2gender`` of ``data/`` gives it (the embeddings')."""

    @property
    def folder(self) -> Path | None:
        """The original trial set's folder of ``data/`` (``utt2spk``, ``spk2gender``)."""
        return None if self.key is None else self.key.parent


@dataclass
class ListRead:
    """What reading a split's lists found, in words (mutable while reading)."""

    notes: list[str] = field(default_factory=list)
    """Facts worth saying (repeated key lines, unenrolled trial speakers, how labels were
    found)."""
    problems: list[str] = field(default_factory=list)
    """What makes a number differ from the challenge's (a subset that is not its list)."""


def _labelled_by_speakers(scores: pd.DataFrame, tl: TrialList, read: ListRead) -> pd.DataFrame:
    """The scored pairs labelled by their trial's speaker (no key: ``data/`` is missing)."""
    trials = scores["trial"].astype(str)
    if tl.speakers is not None:
        spk = trials.map(dict(tl.speakers))
        if spk.isna().any():
            raise VoxMetricsInputError(
                f"{tl.scores}: {int(spk.isna().sum())} scored pair(s) have a trial the "
                f"challenge's utterance embeddings do not name (first: "
                f"'{trials[spk.isna()].iloc[0]}'); give the tree's data/ folder (the trial key)."
            )
        how = "the speaker of each trial in the challenge's utterance embeddings (idx2spk)"
    elif trials.str.contains("-").all():
        spk = trials.str.split("-", n=1).str[0]
        how = (
            "the prefix of each trial id before its first '-' (LibriSpeech's "
            "<speaker>-<chapter>-<utterance>, as the challenge's mixed_trials_librispeech.py "
            "reads it)"
        )
    else:
        raise VoxMetricsInputError(
            f"{tl.scores}: no trial key (data/ is missing) and no utterance embeddings naming "
            "each trial's speaker, so no pair can be labelled target or nontarget; give the "
            "tree's data/ folder."
        )
    read.notes.append(
        f"no trial keys (data/ is missing): each pair is labelled by {how}, and the scores "
        "cannot be checked against the keys"
    )
    out = scores.assign(target=(scores["enrol"].astype(str) == spk).to_numpy())
    return out.assign(speaker=spk.to_numpy())


def _list_pairs(tl: TrialList, read: ListRead) -> pd.DataFrame:
    """The distinct pairs of one list with their scores; every pair of the key must be scored."""
    s = read_score_file(tl.scores)
    if tl.key is None:
        return _labelled_by_speakers(s, tl, read)
    kr = read_key(tl.key)
    k = kr.pairs
    if kr.n_repeated_lines:
        changed = f", {kr.n_relabelled} of them with both labels" if kr.n_relabelled else ""
        read.notes.append(
            f"{tl.key.parent.name}/trials: {kr.n_repeated_lines} line(s) repeat a pair listed "
            f"before{changed}; each of its {len(k)} distinct pairs counts once, with the label "
            "of its last line, as the challenge's asv.py reads the key"
        )
    kk = k["enrol"] + "\t" + k["trial"]
    sk = s["enrol"] + "\t" + s["trial"]
    pos = pd.Index(sk).get_indexer(kk)  # the scores' pairs are unique (read_score_file checks)
    if (pos < 0).any():
        i = int(np.argmax(pos < 0))
        raise VoxMetricsInputError(
            f"{tl.scores}: {int((pos < 0).sum())} of the {len(k)} pairs of the trial key "
            f"{tl.key} have no score (first: {k['enrol'].iloc[i]} {k['trial'].iloc[i]}); the "
            "scores must cover every listed pair, so run the challenge's evaluation again or "
            "give the complete scores file."
        )
    if len(s) > len(k):
        extra = ~sk.isin(kk).to_numpy()
        i = int(np.argmax(extra))
        raise VoxMetricsInputError(
            f"{tl.scores}: {int(extra.sum())} scored pair(s) are not in the trial key {tl.key} "
            f"(first: {s['enrol'].iloc[i]} {s['trial'].iloc[i]}); give the scores and the key "
            "of the same trial list."
        )
    return k.assign(score=s["score"].to_numpy()[pos])


def _speakers(
    pairs: pd.DataFrame, utt2spk: Mapping[str, str] | None, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """Trial ids (order of first appearance) and their speakers."""
    trials = pd.unique(pairs["trial"])
    if "speaker" in pairs.columns:  # labelled without a key: the speaker is known
        spk = pairs.drop_duplicates("trial").set_index("trial")["speaker"].reindex(trials)
        return np.asarray(trials, dtype=str), spk.to_numpy().astype(str)
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


def _utt2spk(lists: Sequence[TrialList]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for tl in lists:
        if tl.folder is None or not (tl.folder / "utt2spk").is_file():
            return None
        out.update(read_mapping(tl.folder / "utt2spk", "utt_id speaker"))
    return out


def _genders(tl: TrialList) -> dict[str, str] | None:
    """Speaker -> ``F`` / ``M`` of a mixed list, None when unknown.

    From the ``spk2gender`` of ``data/``, else from the challenge's embeddings.
    """
    genders: Mapping[str, str] | None = tl.genders
    if tl.folder is not None and (tl.folder / "spk2gender").is_file():
        genders = read_mapping(tl.folder / "spk2gender", "speaker gender")
    if genders is None:
        return None
    return {k: str(v).upper() for k, v in genders.items()}


def _sex(pairs: pd.DataFrame, tl: TrialList, utt2spk: Mapping[str, str] | None) -> pd.Series:
    """Each pair's trial sex (``F`` / ``M``), ``""`` where unknown."""
    if tl.part in SEX_OF_PART:
        return pd.Series(SEX_OF_PART[tl.part], index=pairs.index)
    genders = _genders(tl)
    if genders is None:
        return pd.Series("", index=pairs.index)
    if "speaker" in pairs.columns:
        spk = pairs["speaker"]
    elif utt2spk is not None:
        spk = pairs["trial"].map(dict(utt2spk))
    else:
        spk = pairs["trial"].map(pairs[pairs["target"]].set_index("trial")["enrol"].to_dict())
    return spk.map(genders).fillna("").astype(str)


def split_matrix(lists: Sequence[TrialList], label: str) -> tuple[ScoreMatrix, ListRead]:
    """One split's lists joined as one sparse matrix, and what reading them found.

    See the module docstring; identities are named ``<dataset>/<id>`` when the split holds
    several datasets.
    """
    read = ListRead()
    multi = len({tl.dataset for tl in lists}) > 1
    frames = []
    utt2spk: dict[str, str] | None = {}
    for tl in sorted(lists, key=lambda t: (t.dataset, t.part)):
        pairs = _list_pairs(tl, read)
        own = _utt2spk([tl])
        pairs = pairs.assign(sex=_sex(pairs, tl, own).to_numpy(), dataset=tl.dataset)
        if multi:  # qualify every identity with its dataset, before anything is joined
            pairs = _qualified(pairs, tl.dataset)
            own = None if own is None else {f"{tl.dataset}/{u}": f"{tl.dataset}/{x}"
                                            for u, x in own.items()}  # fmt: skip
        utt2spk = None if own is None or utt2spk is None else {**utt2spk, **own}
        frames.append(pairs)
    pairs = pd.concat(frames, ignore_index=True)
    trials, speakers = _speakers(pairs, utt2spk, label)
    sex_of = pairs.drop_duplicates("trial").set_index("trial")["sex"].reindex(trials).to_numpy()
    data_of = pairs.drop_duplicates("trial").set_index("trial")["dataset"].reindex(trials)
    sexes = pairs.groupby("trial")["sex"].nunique()
    if (sexes > 1).any():
        raise VoxMetricsInputError(
            f"{label}: trial '{sexes[sexes > 1].index[0]}' is in both the female and the male "
            "trial list; each trial belongs to one list."
        )
    attributes: dict[str, np.ndarray] = {}
    if (sex_of != "").all():
        attributes["sex"] = sex_of.astype(str)
    else:
        read.problems.append(
            f"{label}: the gender of {int((sex_of == '').sum())} trial(s) is unknown (no "
            "spk2gender names their speaker), so the condition has no per-gender subsets and "
            "its 1-to-N numbers are not pooled per gender"
        )
    if multi:
        attributes["language"] = data_of.to_numpy().astype(str)
        if "sex" in attributes:
            attributes["language_sex"] = np.char.add(
                np.char.add(attributes["language"], " "), attributes["sex"]
            )
    sm = _sparse(pairs, trials, speakers, attributes, label)
    _matrix_notes(sm, pairs, lists, label, read)
    return sm, read


def _qualified(pairs: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The pairs with every identity named ``<dataset>/<id>``."""
    cols = [c for c in ("enrol", "trial", "speaker") if c in pairs.columns]
    return pairs.assign(**{c: dataset + "/" + pairs[c].astype(str) for c in cols})


def _sparse(
    pairs: pd.DataFrame,
    trials: np.ndarray,
    speakers: np.ndarray,
    attributes: dict[str, np.ndarray],
    label: str,
) -> ScoreMatrix:
    enrolled = pd.unique(pairs["enrol"]).astype(str)
    rows = pd.Index(trials).get_indexer(pairs["trial"])
    cols = pd.Index(enrolled).get_indexer(pairs["enrol"])
    scores = np.full((trials.size, enrolled.size), np.nan)
    mask = np.zeros(scores.shape, dtype=bool)
    scores[rows, cols] = pairs["score"].to_numpy()
    mask[rows, cols] = True
    with kept_warnings(ExcludedTrialsWarning):  # dropped: the notes count those trials
        sm = ScoreMatrix.from_arrays(
            scores,
            trial_ids=trials,
            trial_speakers=speakers,
            enrol_speakers=enrolled,
            attributes=attributes,
            source=label,
            copy=False,
            mask=mask,
        )
    return sm


def _matrix_notes(
    sm: ScoreMatrix, pairs: pd.DataFrame, lists: Sequence[TrialList], label: str, read: ListRead
) -> None:
    """Unenrolled trial speakers; where a per-gender subset is not the challenge's list."""
    unenrolled = (
        int(np.count_nonzero(~sm.trial_enrolled)) + sm.n_excluded_trials + sm.n_other_trials
    )
    if unenrolled:
        read.notes.append(
            f"{label}: {unenrolled} trial(s) have a speaker who is not enrolled; their listed "
            "pairs count as non-mated (as in the challenge's EER), and the 1-to-N metrics "
            "leave them out."
        )
    if "sex" in sm.attributes and not any(tl.part == "trials_mixed" for tl in lists):
        for value, n in pairs.groupby("sex").size().items():
            try:
                with kept_warnings(ExcludedTrialsWarning):  # the unenrolled: noted above
                    got = sm.subset_attribute("sex", str(value)).pairwise_view().n_pairs
            except VoxMetricsInputError:
                got = 0
            if got != n:
                read.problems.append(
                    f"{label}: the subset sex = {value} holds {got} of the {n} pairs of its "
                    "trial list, so its EER is not the challenge's per-gender EER."
                )
    for tl in lists:
        if tl.part not in SEX_OF_PART or tl.folder is None:
            continue
        path = tl.folder / "spk2gender"
        if not path.is_file():
            continue
        genders = read_mapping(path, "speaker gender")
        own = pairs.loc[pairs["sex"] == SEX_OF_PART[tl.part], "enrol"].unique()
        g = tl.part[-1]
        other = [s for s in own if genders.get(s, g).lower() != g]
        if other:
            read.notes.append(
                f"{label}: {path.parent.name}/spk2gender gives {len(other)} speaker(s) of the "
                f"{tl.part} list another gender (first: '{other[0]}'); sex follows the list, as "
                "in the challenge's results."
            )
