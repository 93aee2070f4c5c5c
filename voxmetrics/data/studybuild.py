"""Build a study from many files: a folder layout or a manifest CSV (a challenge's systems).

Folder layout (``build_study(folder)``)::

    ROOT/<system>/<attacker>/eval.<ext>       scores of the evaluated set (any score format)
    ROOT/<system>/<attacker>/dev.<ext>        optional calibration scores (other speakers)
    ROOT/<system>/<attacker>/eval.trials      Kaldi key or utt2spk of Kaldi scores (dev.trials;
                                              or eval.key, eval.<ext>.key)
    ROOT/<system>/<attacker>/embeddings.<ext> optional utterance embeddings (NPZ, Kaldi ark /
    ROOT/<system>/<attacker>/metadata.csv     scp, HDF5, Parquet) and their metadata; without
                                              eval scores they are scored by cosine

``<attacker>`` is one of ``ignorant``, ``lazy-informed``, ``semi-informed``. A condition is
named after its system, or ``system (attacker)`` when a system has several attackers.

VoicePrivacy tree, 2024 or 2026 (``build_study(root)`` of a folder holding the challenge's
``data/`` and ``exp/``, or its ``exp/`` alone): read by
:func:`voxmetrics.data.vpc.read_vpc_tree`, one condition per (anonymisation system, attacker)
with the utility of the results summaries and the challenge's embeddings.

Manifest (``build_study(manifest.csv)``): one row per condition with columns ``condition``,
``attacker`` and ``eval`` and optional ``dev``, ``eval_trials`` (or ``trials``),
``dev_trials``, ``embeddings``, ``metadata``, ``system`` (keep the metadata rows of that
system) and ``score_kind`` (similarity, llr or distance); paths are relative to the manifest's
folder. An empty ``eval`` with ``embeddings`` scores the embeddings.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from voxmetrics._types import ATTACKERS, SCORE_KINDS
from voxmetrics.data.provenance import fingerprint_paths
from voxmetrics.data.readers import read_embeddings, read_scores, read_table
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.setups import one_system
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.vpc import is_vpc_tree, read_vpc_tree
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count

__all__ = ["build_study", "source_files"]

_MANIFEST_COLUMNS = ("condition", "attacker", "eval")
_OPTIONAL = (
    "dev",
    "eval_trials",
    "trials",
    "dev_trials",
    "embeddings",
    "metadata",
    "system",
    "score_kind",
)
_SKIP_SUFFIXES = (".trials", ".key", ".md", ".txt", ".json")


def _one(folder: Path, stem: str) -> Path | None:
    """The file ``stem.<ext>`` of a folder (not a key file); None when absent."""
    found = sorted(
        p
        for p in folder.glob(f"{stem}.*")
        if p.is_file() and p.suffix.lower() not in _SKIP_SUFFIXES
    )
    if len(found) > 1:
        raise VoxMetricsInputError(
            f"{folder}: several '{stem}' files ({', '.join(p.name for p in found)}); keep one."
        )
    return found[0] if found else None


def _spec_from_folder(folder: Path) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "eval": _one(folder, "eval"),
        "dev": _one(folder, "dev"),
        "embeddings": _one(folder, "embeddings"),
        "metadata": folder / "metadata.csv" if (folder / "metadata.csv").is_file() else None,
    }
    for split in ("eval", "dev"):
        keys = sorted(
            p
            for p in [*folder.glob(f"{split}.trials"), *folder.glob(f"{split}.key"),
                      *folder.glob(f"{split}.*.key")]
            if p.is_file()
        )  # fmt: skip
        if len(keys) > 1:
            raise VoxMetricsInputError(
                f"{folder}: several {split} key files ({', '.join(p.name for p in keys)}); "
                "keep one."
            )
        spec[f"{split}_trials"] = keys[0] if keys else None
    if spec["eval"] is None and spec["embeddings"] is None:
        raise VoxMetricsInputError(
            f"{folder}: no eval.<ext> scores and no embeddings.<ext>; each "
            "<system>/<attacker> folder needs one of them."
        )
    return spec


def _specs_from_root(root: Path) -> list[dict[str, Any]]:
    specs = []
    for system in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        attackers = sorted(p for p in system.iterdir() if p.is_dir())
        if not attackers:
            raise VoxMetricsInputError(
                f"{system}: no attacker folder; expected {system.name}/<attacker>/eval.<ext> "
                f"with <attacker> one of {', '.join(ATTACKERS)}."
            )
        for att in attackers:
            if att.name not in ATTACKERS:
                raise VoxMetricsInputError(
                    f"{att}: '{att.name}' is not an attacker; name the folder one of "
                    f"{', '.join(ATTACKERS)}."
                )
            name = system.name if len(attackers) == 1 else f"{system.name} ({att.name})"
            specs.append({"condition": name, "attacker": att.name, **_spec_from_folder(att)})
    if not specs:
        raise VoxMetricsInputError(
            f"{root}: no <system>/<attacker>/ folders; expected e.g. "
            "b1/semi-informed/eval.csv (see the layout in the documentation)."
        )
    return specs


def _specs_from_manifest(path: Path) -> list[dict[str, Any]]:
    df = read_table(path)
    missing = [c for c in _MANIFEST_COLUMNS if c not in df.columns]
    if missing:
        raise VoxMetricsInputError(
            f"{path.name}: the manifest lacks column(s) {', '.join(missing)}; it needs "
            f"{', '.join(_MANIFEST_COLUMNS)} and may have {', '.join(_OPTIONAL)}."
        )
    unknown = sorted(set(df.columns) - set(_MANIFEST_COLUMNS) - set(_OPTIONAL))
    if unknown:
        raise VoxMetricsInputError(
            f"{path.name}: unknown column(s) {', '.join(unknown)}; the columns are "
            f"{', '.join(_MANIFEST_COLUMNS + _OPTIONAL)}."
        )
    base = path.parent
    specs = []
    for i, row in enumerate(df.to_dict("records"), start=2):

        def cell(col: str, row: dict[str, Any] = row) -> str | None:
            v = row.get(col)
            return None if v is None or pd.isna(v) or not str(v).strip() else str(v).strip()

        spec: dict[str, Any] = {"line": i}
        for col in ("condition", "attacker", "score_kind", "system"):
            spec[col] = cell(col)
        for col in ("eval", "dev", "eval_trials", "dev_trials", "embeddings", "metadata"):
            value = cell(col) or (cell("trials") if col == "eval_trials" else None)
            if value is not None:
                p = Path(value) if Path(value).is_absolute() else base / value
                if not p.is_file():
                    raise VoxMetricsInputError(
                        f"{path.name}: line {i}: {col} file '{value}' does not exist (paths are "
                        "relative to the manifest's folder)."
                    )
                spec[col] = p
            else:
                spec[col] = None
        if spec["condition"] is None or (spec["eval"] is None and spec["embeddings"] is None):
            raise VoxMetricsInputError(
                f"{path.name}: line {i}: give a condition name and an eval scores file (or "
                "embeddings with metadata)."
            )
        specs.append(spec)
    return specs


def _condition(spec: dict[str, Any], distance: bool) -> Condition:
    where = f"condition '{spec['condition']}'"
    kind = spec.get("score_kind") or ("distance" if distance else "similarity")
    if kind not in SCORE_KINDS:
        raise VoxMetricsInputError(
            f"{where}: score_kind '{kind}' is unknown; use one of {', '.join(SCORE_KINDS)}."
        )
    attacker = spec.get("attacker") or "semi-informed"
    embeddings = None
    if spec.get("embeddings") is not None:
        if spec.get("metadata") is None and spec["embeddings"].suffix.lower() != ".parquet":
            raise VoxMetricsInputError(
                f"{where}: embeddings {spec['embeddings'].name} need a metadata file "
                "(metadata.csv beside them, or the manifest's metadata column)."
            )
        embeddings = read_embeddings(
            spec["embeddings"], metadata=spec.get("metadata"), system=spec.get("system")
        )
        # several systems pooled into one condition would average their enrolment profiles
        how = "the manifest's system column" if "line" in spec else "a manifest's system column"
        one_system(embeddings, where=f"{where}: {spec['embeddings'].name}", how=how)
    if spec.get("eval") is not None:
        eval_sm = read_scores(
            spec["eval"], trials=spec.get("eval_trials"), distance=kind == "distance"
        )
        dev_sm = (
            read_scores(spec["dev"], trials=spec.get("dev_trials"), distance=kind == "distance")
            if spec.get("dev") is not None
            else None
        )
    else:
        assert embeddings is not None
        if kind == "distance":
            raise VoxMetricsInputError(
                f"{where}: embeddings are scored by cosine similarity; score_kind 'distance' "
                "applies to score files only."
            )
        eval_sm = embeddings.score_matrix("eval")
        dev_sm = embeddings.score_matrix("dev") if "dev" in embeddings.splits() else None
    return Condition(
        spec["condition"],
        eval=eval_sm,
        dev=dev_sm,
        attacker=attacker,  # type: ignore[arg-type]
        embeddings=embeddings,
        score_kind=kind,
        # scored here from its embeddings: today's attacker, cosine (imported: unknown)
        recipe=AttackerRecipe("cosine") if spec.get("eval") is None else None,
    )


def build_study(
    source: str | os.PathLike[str], *, distance: bool = False, name: str | None = None
) -> Study:
    """A study from a folder layout or a manifest CSV (see the module docstring).

    Parameters
    ----------
    source : str or os.PathLike
        The root folder (``<system>/<attacker>/{eval,dev}.*``) or the manifest CSV.
    distance : bool, default False
        The score files hold distances (lower = closer): negate them on reading (a manifest's
        ``score_kind`` column overrides this per condition).
    name : str, optional
        The study's name (default: the folder's or manifest's name).

    Returns
    -------
    Study
        Save it with :func:`voxmetrics.data.studyfile.save_study`. Its ``inputs`` fingerprint
        the files it was read from (:func:`source_files`): a folder's files, a manifest and the
        files it names.

    Raises
    ------
    VoxMetricsInputError
        Missing files, unknown attackers or columns, duplicate condition names, and anything the
        readers refuse (the message names the file).
    """
    path = Path(source)
    if is_vpc_tree(path):
        if distance:
            raise VoxMetricsInputError(
                f"{path}: the scores of a VoicePrivacy tree are cosine similarities; "
                "drop --distance."
            )
        study = read_vpc_tree(path, name=name).study
        return replace(study, inputs=fingerprint_paths(source_files(path)))
    if path.is_dir():
        specs = _specs_from_root(path)
    elif path.is_file():
        specs = _specs_from_manifest(path)
    else:
        raise VoxMetricsInputError(f"{path}: no such folder or manifest file.")
    check_count(path.name, "conditions", len(specs), "max_conditions")
    study = Study(name=name or path.stem)
    for spec in specs:
        if spec["condition"] in study.names:
            raise VoxMetricsInputError(
                f"{path.name}: two conditions are called '{spec['condition']}'; names must be "
                "unique."
            )
        try:
            study = study.with_condition(_condition(spec, distance))
        except VoxMetricsInputError as exc:
            if str(exc).startswith("condition '"):
                raise
            raise VoxMetricsInputError(f"condition '{spec['condition']}': {exc}") from None
    return replace(study, inputs=fingerprint_paths(_spec_files(path, specs)))


_SPEC_FILES = ("eval", "dev", "eval_trials", "dev_trials", "embeddings", "metadata")


def _spec_files(path: Path, specs: list[dict[str, Any]]) -> list[tuple[Path, str]]:
    """The files a folder layout or a manifest's conditions were read from, with their roles."""
    if path.is_dir():
        return [(path, "study source")]
    out = [(path, "study manifest")]
    for spec in specs:
        out += [(spec[k], f"{spec['condition']}: {k}") for k in _SPEC_FILES if spec.get(k)]
    return out


def source_files(source: str | os.PathLike[str]) -> list[tuple[Path, str]]:
    """The files a study built from ``source`` reads, with their roles, for its provenance.

    A folder (a layout or a VoicePrivacy tree): the folder, walked; a manifest: itself and the
    files its rows name.
    """
    path = Path(source)
    if path.is_dir():
        return [(path, "study source")]
    return _spec_files(path, _specs_from_manifest(path))
