"""A VoicePrivacy Challenge evaluation tree (2024, or 2026 tracks 1 and 2) as a study.

The challenge's scripts (``run_evaluation.py`` with ``configs/eval_pre.yaml`` and
``eval_post.yaml``; 2026: ``configs/track1/...`` and ``configs/track2/eval_post_<lang>.yaml``)
leave a tree of two folders::

    data/<dataset>_<split>_<list>[_<suffix>]/                trials, utt2spk, spk2gender
    exp/<asv model>/<enrol set>-<trial set>/scores           enroll_id trial_id score
    exp/<asv model>/<distance>_out/emb_xvect/<set>/{spk,utt}-level/speaker_vectors.pt
    exp/results_summary/[track<n>/]eval_{orig,anon}_.../results_{orig,anon}.txt
    [results/[track<n>/]]result_for_rank_<system>            both summaries in one file

``<split>`` is ``dev`` or ``test``; ``<list>`` is ``enrolls``, the per-gender trial lists
``trials_f`` and ``trials_m`` (2024) or the mixed list ``trials_mixed`` (2026, both genders in
one list, ``scripts/mixed_trials_librispeech.py``); ``<suffix>`` names an anonymisation system
(``_mcadams``: system ``mcadams``). ``<dataset>`` is ``libri`` (2024, 2026 track 1) or one of
the languages ``en``, ``de``, ``es``, ``fr`` (2026 track 2). The trial key of every pair of
sets is the original one, ``data/<dataset>_<split>_<list>/trials``. The original ASV model is
``asv_orig`` (2024) or ``asv_ssl`` (2026); a model retrained on anonymised speech is
``asv_anon_<suffix>`` or, per language in 2026 track 2, ``asv_anon_track2_<epochs>_<lang>_
<suffix>``. The attack scenarios become attackers:

========================================================  ====================
scores                                                    attacker
========================================================  ====================
original model, original enrolment and trials (oo)        ``original``
original model, original enrolment, anonymised trials     ``ignorant``
original model, anonymised enrolment and trials (aa)      ``lazy-informed``
model retrained on anonymised speech, anonymised
enrolment and trials                                      ``semi-informed``
========================================================  ====================

One condition per (system, attacker), plus one ``original`` condition; its eval set is the
``test`` split and its dev set the ``dev`` split. A split's lists join as one sparse trial list
(:func:`voxmetrics.data.vpc_lists.split_matrix`: each distinct listed pair once, with the
per-trial attributes ``sex`` and, for several languages, ``language``), so every EER the
challenge prints is the EER of a subset. The results summaries give each condition its utility
(WER, UAR and per-emotion accuracy of the test split, as fractions), and the embeddings the
challenge saved (``speaker_vectors.pt``) become the condition's
:class:`~voxmetrics.data.model.EmbeddingSet` (speaker-level vectors as enrolment profiles,
utterance-level vectors as trials): singling out, the voice similarity matrices and SBLS need
them.

A tree with missing pieces loads what is there, an ``exp/`` folder without ``data/`` included
(its scores are labelled by the trials' speakers, which the embeddings or LibriSpeech's ids
give); :class:`VPCImport` says what was read, what was noted and what is missing.
"""

from __future__ import annotations

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
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.utility import Utility
from voxmetrics.data.vpc_lists import ListRead, TrialList, split_matrix
from voxmetrics.data.vpc_summary import (
    fraction,
    read_results_summary,
    summary_scenario,
    utility_from_summary,
)
from voxmetrics.data.vpc_vectors import VECTORS_FILE, SpeakerVectors, read_speaker_vectors
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import ArchiveReader, safe_member_name

__all__ = [
    "VPCImport",
    "is_vpc_tree",
    "read_results_summary",
    "read_vpc_tree",
    "read_vpc_zip",
    "utility_from_summary",
]

_SET = re.compile(
    r"(?P<dataset>[A-Za-z0-9]+)_(?P<split>dev|test)_"
    r"(?P<part>enrolls|trials_mixed|trials_f|trials_m)(?P<suffix>_[A-Za-z0-9_.+]+)?"
)
_RETRAINED = (  # a model retrained on anonymised speech: (system, language or None)
    re.compile(r"asv_anon_track\d+_\d+_(?P<lang>[A-Za-z]+)_(?P<system>.+)"),
    re.compile(r"asv_anon_(?P<system>.+)"),
)
_SPLITS = {"test": "eval", "dev": "dev"}
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
    r"result_for_rank_[^/]+)$|/emb_xvect/[^/]+/(spk|utt)-level/(speaker_vectors\.pt|id2idx|"
    r"idx2spk)$"
)
_EMBEDDING_TOLERANCE = 1e-3
"""Largest difference between a score of the tree and the cosine of its embeddings for the two
to count as one run (the challenge's scores are float32 cosines, printed in full)."""


@dataclass(frozen=True)
class VPCImport:
    """A VoicePrivacy tree read as a study, with what was read, noted and missing."""

    study: Study
    """One condition per (system, attacker), plus ``original``."""
    found: tuple[str, ...] = ()
    """What was read, one line per condition and per results summary (for ``study build``
    and the Data page)."""
    missing: tuple[str, ...] = ()
    """What the tree lacks, one line each: only what is really missing."""
    summary_eers: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The EERs of the results summaries (system, dataset, split, gender, enrollment, trial,
    model, condition: the condition whose scores give it, EER as a fraction), beside which the
    EERs computed from the scores can be checked."""
    notes: tuple[str, ...] = ()
    """What was read in a way worth saying (repeated key lines, trial speakers who are not
    enrolled, scenarios left aside, a per-gender subset that is not the challenge's list)."""
    edition: str = "2024"
    """``2024`` or ``2026`` (the 2026 trees hold mixed trial lists)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the conditions' names, what was found, noted and missing."""
        return {
            "edition": self.edition,
            "conditions": self.study.names,
            "found": list(self.found),
            "notes": list(self.notes),
            "missing": list(self.missing),
        }


# ---------------------------------------------------------------- the tree


@dataclass(frozen=True)
class _Tree:
    root: Path
    exp: Path
    data: Path | None


def is_vpc_tree(root: str | Path) -> bool:
    """Whether ``root`` (or its only sub-folder) is a VoicePrivacy evaluation tree.

    A folder holding ``data/`` and ``exp/``, or an ``exp/`` folder of the challenge's (score
    folders ``<model>/<enrol set>-<trial set>/`` or ``results_summary/``) without ``data/``.

    Examples
    --------
    >>> is_vpc_tree("/nonexistent")
    False
    """
    return _tree_root(Path(root)) is not None


def _looks_like_exp(d: Path) -> bool:
    """Whether ``d`` is an ``exp/`` folder of the challenge's: summaries, models or scores."""
    if not d.is_dir():
        return False
    if (d / "results_summary").is_dir():
        return True
    if any(re.fullmatch(r"asv_(orig|ssl|anon_.+)", m.name) for m in d.iterdir() if m.is_dir()):
        return True  # the challenge's ASV model folders
    return any(
        _pair_dir(s.name) for m in d.iterdir() if m.is_dir() for s in m.iterdir() if s.is_dir()
    )


def _tree_root(root: Path) -> _Tree | None:
    candidates = [root]
    if root.is_dir():
        subs = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))]
        if len(subs) == 1:
            candidates.append(subs[0])
    for c in candidates:
        data = c / "data"
        if (c / "exp").is_dir() and (data.is_dir() or _looks_like_exp(c / "exp")):
            return _Tree(c, c / "exp", data if data.is_dir() else None)
    for c in candidates:  # the exp/ folder itself
        if c.name == "exp" and _looks_like_exp(c):
            return _Tree(c, c, None)
    return None


@dataclass(frozen=True)
class _Scored:
    """One score folder of an attacker scenario."""

    model: Path
    enrol_set: str
    trial_set: str
    scores: Path
    key: Path | None


@dataclass
class _Found:
    """What a walk of the tree found (mutable while reading)."""

    tree: _Tree
    systems: set[str] = field(default_factory=set)
    # (system or "", attacker) -> split -> (dataset, list) -> score folder
    groups: dict[tuple[str, str], dict[str, dict[tuple[str, str], _Scored]]] = field(
        default_factory=dict
    )
    found: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    mixed: bool = False

    @property
    def edition(self) -> str:
        return "2026" if self.mixed else "2024"


def _set_name(name: str) -> re.Match[str] | None:
    return _SET.fullmatch(name)


def _pair_dir(name: str) -> tuple[re.Match[str], re.Match[str]] | None:
    """The enrolment and trial sets of a ``<enrol set>-<trial set>`` folder name."""
    for i in [k for k, ch in enumerate(name) if ch == "-"]:
        e, t = _set_name(name[:i]), _set_name(name[i + 1 :])
        if e and t and e["part"] == "enrolls" and t["part"] != "enrolls":
            return e, t
    return None


def _retrained(name: str) -> tuple[str, str | None] | None:
    """(system, language) of a model retrained on anonymised speech, None for another."""
    for pattern in _RETRAINED:
        m = pattern.fullmatch(name)
        if m:
            return m["system"], m.groupdict().get("lang")
    return None


def _model_dirs(exp: Path) -> Iterator[tuple[Path, tuple[str, str | None] | None]]:
    """ASV model folders holding score folders: (folder, (system, language) if retrained)."""
    for d in sorted(p for p in exp.iterdir() if p.is_dir()):
        if not any(_pair_dir(s.name) for s in d.iterdir() if s.is_dir()):
            continue
        yield d, _retrained(d.name)


def _classify(
    e: re.Match[str], t: re.Match[str], retrained: tuple[str, str | None] | None
) -> tuple[str, str] | None:
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
    system, language = retrained
    if es and es == ts == system and language in (None, t["dataset"]):
        return ts, "semi-informed"
    return None


def _walk(tree: _Tree) -> _Found:
    f = _Found(tree)
    if tree.data is not None:
        for d in sorted(p for p in tree.data.iterdir() if p.is_dir()):
            m = _set_name(d.name)
            if m and m["suffix"]:
                f.systems.add(m["suffix"][1:])
    else:
        f.missing.append(
            "data/: not in the tree (an exp/ folder alone); without the trial keys each pair is "
            "labelled by its trial's speaker (the challenge's embeddings, or LibriSpeech's "
            "utterance ids), the scores cannot be checked against the keys, and the gender of a "
            "mixed list's trials comes from the embeddings only."
        )
    models = list(_model_dirs(tree.exp))
    originals = [d for d, r in models if r is None]
    if len(originals) > 1:
        raise VoxMetricsInputError(
            f"{tree.exp}: several ASV models of original speech hold scores "
            f"({', '.join(d.name for d in originals)}); keep one (the challenge names it "
            "asv_orig in 2024, asv_ssl in 2026) or give the others the name asv_anon_<suffix> "
            "of a retrained model."
        )
    if not models:
        f.missing.append(
            "exp/: no score folders (<model>/<enrol set>-<trial set>/scores); nothing to "
            "evaluate yet."
        )
    for model, retrained in models:
        if retrained is not None:
            f.systems.add(retrained[0])
        _walk_model(f, model, retrained)
    return f


def _walk_model(f: _Found, model: Path, retrained: tuple[str, str | None] | None) -> None:
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
        f.mixed |= t["part"] == "trials_mixed"
        scores = pair / "scores"
        original_trials = f"{t['dataset']}_{t['split']}_{t['part']}"
        key = None
        if f.tree.data is not None:
            key = f.tree.data / original_trials / "trials"
            if not key.is_file():
                f.missing.append(
                    f"data/{original_trials}/trials: no trial key for {model.name}/{pair.name}; "
                    "its scores are not loaded."
                )
                continue
        if not scores.is_file():
            f.missing.append(f"{model.name}/{pair.name}/scores: no scores file.")
            continue
        if group[0]:
            f.systems.add(group[0])
        split = f.groups.setdefault(group, {}).setdefault(t["split"], {})
        where = (t["dataset"], t["part"])
        if where in split:
            raise VoxMetricsInputError(
                f"{f.tree.exp}: two score folders give the same scenario, "
                f"{split[where].model.name}/{split[where].scores.parent.name} and "
                f"{model.name}/{pair.name}; keep one."
            )
        split[where] = _Scored(model, e[0], t[0], scores, key)
    if aside:
        f.notes.append(
            f"{model.name}: {len(aside)} score folder(s) of scenarios that are no attacker of "
            f"the challenge left aside (e.g. {aside[0]})"
        )


# ---------------------------------------------------------------- embeddings


def _vectors(model: Path, set_name: str, level: str, root: Path) -> SpeakerVectors | None:
    """The challenge's embeddings of one set under one model, None when not saved."""
    folders = sorted(model.glob(f"*_out/emb_xvect/{set_name}/{level}-level"))
    folders = [d for d in folders if (d / VECTORS_FILE).is_file()]
    if not folders:
        return None
    return read_speaker_vectors(folders[0], label=folders[0].relative_to(root).as_posix())


def _trial_speakers(f: _Found, s: _Scored) -> SpeakerVectors | None:
    """Utterance-level embeddings of a trial set (any model's), to label pairs without keys."""
    own = _vectors(s.model, s.trial_set, "utt", f.tree.root)
    if own is not None:
        return own
    for model, _ in _model_dirs(f.tree.exp):
        v = _vectors(model, s.trial_set, "utt", f.tree.root)
        if v is not None:
            return v
    return None


def _embedding_rows(
    f: _Found, scored: dict[tuple[str, str], _Scored], split: str, multi: bool
) -> tuple[list[np.ndarray], list[pd.DataFrame]] | None:
    """The enrolment (speaker-level) and trial (utterance-level) vectors of one split."""
    arrays, metas = [], []
    enrols: dict[tuple[Path, str], str] = {}
    for (dataset, _), s in sorted(scored.items()):
        trials = _vectors(s.model, s.trial_set, "utt", f.tree.root)
        if trials is None:
            return None
        parts = [(trials, "trial")]
        if (s.model, s.enrol_set) not in enrols:  # the f and m lists share their enrolment
            enrol = _vectors(s.model, s.enrol_set, "spk", f.tree.root)
            if enrol is None:
                return None
            enrols[(s.model, s.enrol_set)] = dataset
            parts.insert(0, (enrol, "enrol"))
        for sv, role in parts:
            q = (lambda x, d=dataset: f"{d}/{x}") if multi else (lambda x: x)
            meta = pd.DataFrame(
                {
                    "utt_id": [q(x) for x in sv.ids],
                    "speaker": [q(x) for x in sv.speakers],
                    "role": role,
                    "split": _SPLITS[split],
                    "sex": sv.genders,
                }
            )
            if multi:
                meta["language"] = dataset
            arrays.append(sv.vectors)
            metas.append(meta)
    return arrays, metas


def _check_embeddings(es: EmbeddingSet, sm: ScoreMatrix, split: str, label: str) -> str | None:
    """A problem when the embeddings do not give the tree's scores (another run)."""
    try:
        speakers, profiles, trial_unit = es.scoring_inputs(split)  # type: ignore[arg-type]
    except VoxMetricsInputError:
        return f"{label}: the embeddings have no enrolment or no trial vectors"
    trials = es.meta.loc[es.roles(split)[1], "utt_id"].to_numpy()  # type: ignore[arg-type]
    rows = pd.Index(trials).get_indexer(sm.trial_ids)
    cols = pd.Index(speakers).get_indexer(sm.enrol_speakers)
    if (rows < 0).any() or (cols < 0).any():
        return (
            f"{label}: the challenge's embeddings do not cover the scored trials and enrolled "
            "speakers, so they are not attached"
        )
    mask = sm.mask if sm.mask is not None else np.ones(sm.shape, dtype=bool)
    r, c = np.nonzero(mask)
    cos = np.einsum("ij,ij->i", trial_unit[rows[r]], profiles[cols[c]])
    diff = float(np.max(np.abs(cos - sm.scores[r, c]))) if r.size else 0.0
    if diff > _EMBEDDING_TOLERANCE:
        return (
            f"{label}: the cosine of the challenge's embeddings differs from the scores by up to "
            f"{diff:.3g}, so the embeddings and the scores come from different runs; the "
            "embeddings are not attached"
        )
    return None


def _embeddings(
    f: _Found, name: str, splits: dict[str, dict[tuple[str, str], _Scored]],
    matrices: dict[str, ScoreMatrix],
) -> EmbeddingSet | None:  # fmt: skip
    """The condition's embeddings when the tree holds them for every list of every split."""
    arrays, metas = [], []
    for split, scored in sorted(splits.items()):
        if _SPLITS[split] not in matrices:
            continue
        multi = len({d for d, _ in scored}) > 1
        rows = _embedding_rows(f, scored, split, multi)
        if rows is None:
            return None
        arrays += rows[0]
        metas += rows[1]
    if not arrays:
        return None
    meta = pd.concat(metas, ignore_index=True)
    if (meta["sex"] == "").any():
        meta = meta.drop(columns="sex")
    try:
        es = EmbeddingSet.from_arrays(np.vstack(arrays), meta, source=f"{name} (embeddings)")
    except VoxMetricsInputError as exc:
        f.missing.append(f"{name}: the challenge's embeddings cannot be used ({exc})")
        return None
    for split, sm in matrices.items():
        label = f"{name} {'test' if split == 'eval' else 'dev'}"
        problem = _check_embeddings(es, sm, split, label)
        if problem is not None:
            f.notes.append(problem)
            return None
    return es


# ---------------------------------------------------------------- results summaries


def _summary_files(tree: _Tree) -> list[tuple[str, Path]]:
    """(system, path) of every results summary of the tree."""
    out: list[tuple[str, Path]] = []
    summary = tree.exp / "results_summary"
    folders = [summary, *sorted(summary.glob("track*"))] if summary.is_dir() else []
    for folder in folders:
        # 2026 track 2: eval_anon_<epochs>_<lang>_<suffix>, one per language
        lang = r"(?:\d+_[A-Za-z]+_)?" if folder.name.startswith("track") else ""
        for d in sorted(p for p in folder.iterdir() if p.is_dir()):
            m = re.fullmatch(rf"eval_(orig|anon)_{lang}(.+)", d.name)
            name = f"results_{m.group(1)}.txt" if m else ""
            if m and (d / name).is_file():
                out.append((m.group(2), d / name))
    places = [tree.root, tree.root / "results", tree.exp, *folders]
    places += sorted((tree.root / "results").glob("track*"))
    for folder in dict.fromkeys(places):
        if folder.is_dir():
            for p in sorted(folder.glob("result_for_rank_*")):
                if p.is_file():
                    out.append((p.name[len("result_for_rank_") :], p))
    return out


def _summaries(f: _Found) -> tuple[dict[str, dict[str, pd.DataFrame]], pd.DataFrame]:
    """The results summaries of each system, and their EERs as one table."""
    out: dict[str, dict[str, pd.DataFrame]] = {}
    eers = []
    for system, path in _summary_files(f.tree):
        tables = read_results_summary(path)
        rel = path.relative_to(f.tree.root).as_posix()
        f.found.append(f"results summary {rel} (system {system})")
        mine = out.setdefault(system, {})
        for k, v in tables.items():
            mine[k] = pd.concat([mine[k], v], ignore_index=True) if k in mine else v
            if k in ("asv", "asv_anon") and "EER" in v.columns:
                e = v.assign(system=system, model="original" if k == "asv" else "anonymised")
                e["EER"] = fraction(e["EER"], "an EER", rel, bounded=True)
                scenario = [
                    summary_scenario(k, a, b)
                    for a, b in zip(e.get("enrollment", ""), e.get("trial", ""), strict=True)
                ]
                e["condition"] = [
                    "" if s is None else "original" if s == "original" else f"{system} ({s})"
                    for s in scenario
                ]
                eers.append(e)
    for tables in out.values():
        for k, v in tables.items():
            tables[k] = v.drop_duplicates().reset_index(drop=True)
    eer_table = pd.concat(eers, ignore_index=True).drop_duplicates() if eers else pd.DataFrame()
    return out, eer_table


def _utility(
    f: _Found, summaries: dict[str, dict[str, pd.DataFrame]], system: str | None
) -> Utility | None:
    if system is None:  # the original speech: any summary's original rows
        for s, tables in sorted(summaries.items()):
            u = utility_from_summary(tables, anonymised=False, source=f"results of {s}")
            if u is not None:
                return u
        return None
    if system not in summaries:
        f.missing.append(f"system '{system}': no results summary, so no WER / UAR.")
        return None
    u = utility_from_summary(summaries[system], anonymised=True, source=f"results of {system}")
    if u is None:
        f.missing.append(f"system '{system}': its results summary has no ASR or SER rows.")
    return u


# ---------------------------------------------------------------- conditions


def _lists(f: _Found, scored: dict[tuple[str, str], _Scored]) -> list[TrialList]:
    out = []
    for (dataset, part), s in sorted(scored.items()):
        speakers = genders = None
        if s.key is None:  # no data/: the embeddings name each trial's speaker
            sv = _trial_speakers(f, s)
            if sv is not None:
                speakers, genders = sv.speaker_of(), sv.gender_of() or None
        out.append(TrialList(dataset, part, s.scores, s.key, speakers, genders))
    return out


def _expected(f: _Found, split: str) -> set[tuple[str, str]]:
    """The (dataset, list) pairs some scenario of the tree scores in ``split``."""
    return {where for splits in f.groups.values() for where in splits.get(split, {})}


def _condition(
    f: _Found, system: str, attacker: Attacker, utility: Utility | None
) -> Condition | None:
    name = "original" if attacker == "original" else f"{system} ({attacker})"
    splits = f.groups.get((system, attacker), {})
    matrices: dict[str, ScoreMatrix] = {}
    said = []
    for split, scored in sorted(splits.items()):
        for dataset, part in sorted(_expected(f, split) - set(scored)):
            if len({d for d, _ in _expected(f, split)}) > 1:
                f.missing.append(f"{name}: no {split} scores of {dataset} {part}.")
            else:
                f.missing.append(f"{name}: no {split} {part} scores; the {split} set has one sex.")
        label = f"{name} {split}"
        sm, read = split_matrix(_lists(f, scored), label)
        _note(f, read)
        matrices[_SPLITS[split]] = sm
        size = f"{sm.n_trials} trials x {sm.n_enrolled} enrolled, {sm.n_pairs} listed pairs"
        said.append(f"{split}: {size}")
    if not matrices:
        f.missing.append(f"{name}: no scores ({_WHAT[attacker]}); condition not built.")
        return None
    if "eval" not in matrices:
        f.missing.append(f"{name}: no test scores, only dev; condition not built.")
        return None
    if "dev" not in matrices:
        f.missing.append(f"{name}: no dev scores; the condition has no calibration set.")
    embeddings = _embeddings(f, name, splits, matrices)
    tail = "; with the challenge's embeddings" if embeddings is not None else ""
    said.sort(key=lambda s: not s.startswith("test"))  # the evaluated split first
    f.found.append(f"{name} " + "; ".join(said) + tail)
    who = "original speech" if attacker == "original" else f"system '{system}'"
    return Condition(
        name,
        eval=matrices["eval"],
        dev=matrices.get("dev"),
        attacker=attacker,
        embeddings=embeddings,
        description=f"VoicePrivacy {f.edition}, {who}: {_WHAT[attacker]}.",
        utility=utility,
    )


def _note(f: _Found, read: ListRead) -> None:
    for line in read.notes + read.problems:
        if line not in f.notes:
            f.notes.append(line)


def read_vpc_tree(root: str | Path, *, name: str | None = None) -> VPCImport:
    """Read a VoicePrivacy Challenge evaluation tree, 2024 or 2026 (see the module docstring).

    Parameters
    ----------
    root : str or Path
        The folder holding ``data/`` and ``exp/`` (or a folder whose only sub-folder does), or
        an ``exp/`` folder alone.
    name : str, optional
        The study's name (default: the folder's name).

    Returns
    -------
    VPCImport
        The study and what was read, noted and missing.

    Raises
    ------
    VoxMetricsInputError
        Not such a tree, a listed pair without a score (or a score of an unlisted pair), a key
        that disagrees with utt2spk, a results summary with an unknown section or a percentage
        over 100, unreadable embeddings, or no condition at all.
    """
    path = Path(root)
    tree = _tree_root(path)
    if tree is None:
        raise VoxMetricsInputError(
            f"{path}: not a VoicePrivacy 2024 evaluation tree nor a 2026 one; it needs the exp/ "
            "folder (and data/) that the challenge's run_evaluation.py writes."
        )
    f = _walk(tree)
    summaries, eers = _summaries(f)
    conditions = []
    cond = _condition(f, "", "original", _utility(f, summaries, None))
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
        if not f.groups:  # nothing scored at all: say that alone
            what = "results summaries but no scores" if summaries else "no score folders"
            raise VoxMetricsInputError(
                f"{path}: no condition could be built: the tree holds {what} "
                "(exp/<model>/<enrol set>-<trial set>/scores). The challenge's submission "
                "archive (result_for_submission_*.zip) holds none; zip the evaluation's exp/ "
                "folder (and data/) instead."
            )
        raise VoxMetricsInputError(
            f"{path}: no condition could be built; " + " ".join(f.missing[:5])
        )
    study = Study(tuple(conditions), name=name or path.name or "vpc")
    return VPCImport(study, tuple(f.found), tuple(f.missing), eers, tuple(f.notes), f.edition)


def read_vpc_zip(data: bytes, name: str = "upload.zip") -> VPCImport:
    """Read a VoicePrivacy tree uploaded as a zip archive (see :func:`read_vpc_tree`).

    Only the files the tree's metrics need (``trials``, ``utt2spk``, ``spk2gender``,
    ``scores``, the results summaries and the challenge's embeddings: ``speaker_vectors.pt``,
    ``id2idx``, ``idx2spk``) are unpacked, within the archive limits; audio in the archive is
    skipped unread. The archive may hold ``data/`` and ``exp/``, or ``exp/`` alone.

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

        def clean(lines: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(s.replace(prefix, "") for s in lines)

        return VPCImport(
            out.study,
            clean(out.found),
            clean(out.missing),
            out.summary_eers,
            clean(out.notes),
            out.edition,
        )
