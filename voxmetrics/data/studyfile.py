"""Study files: a whole study in one versioned ``.vxm`` file.

A ``.vxm`` file is a zip archive of

- ``manifest.json``: ``{"format": "voxmetrics-study", "version": 1, "voxmetrics": ...,
  "name", "settings", "conditions": [...], "provenance": {...}}``, where each condition gives
  its name, attacker, description and the archive members of its ``eval`` and ``dev`` score
  matrices and of its ``embeddings`` (the embedding matrix and one array per metadata column,
  in order), and its ``utility`` (WER, UAR, rho_F0 as fractions, their intervals, per-class
  accuracy, source and, where computed from files, their bootstrap ``replicates`` and
  ``draws``; or null), for a condition read from incomplete score files, its
  ``input_warnings``, and, when known, its ``attacker_recipe`` (how its scores were made:
  :meth:`voxmetrics.data.recipe.AttackerRecipe.to_dict`); ``provenance`` (optional) holds the
  ``libraries`` that wrote the file (their versions,
  :func:`~voxmetrics.data.provenance.library_versions`) and the ``inputs`` the study was
  built from (path, size, sha256, role);
- ``arrays/<k>.npy``: plain NumPy arrays (numbers or fixed-width unicode text), read with
  ``allow_pickle=False``, so loading a file never runs code.

Loading checks the format and version and refuses unsafe or damaged archives (a member name
that is absolute or climbs out with ``..``, a member above the size cap, a pickled or object
array, a manifest that points at a missing member) with one message saying what is wrong;
a file cut short or corrupt (no zip directory, a member cut short or failing its CRC-32) is
a "damaged or truncated study file".
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from voxmetrics._version import __version__
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.provenance import InputFile, library_versions
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import (
    ArchiveReader,
    DamagedArchiveError,
    check_count,
    check_input_path,
    get_limits,
    refuse,
)

__all__ = [
    "FILE_FORMAT",
    "FILE_VERSION",
    "MAX_MEMBER_BYTES",
    "load_study",
    "manifest_problems",
    "save_study",
    "study_from_bytes",
    "study_to_bytes",
]

FILE_FORMAT = "voxmetrics-study"
"""The ``format`` field of every manifest."""
FILE_VERSION = 1
"""Version written by this VoxMetrics; loading accepts exactly the versions it knows."""
MAX_MEMBER_BYTES = 4 * 2**30
"""Largest ``max_member_bytes`` worth passing (4 GiB); by default the input limits apply
(:mod:`voxmetrics.limits`, ``max_member_bytes``: 1 GiB)."""
MAX_MANIFEST_BYTES = 16 * 2**20
"""Cap on the uncompressed size of ``manifest.json`` (16 MiB)."""

_MANIFEST = "manifest.json"
_ARRAY_NAME = re.compile(r"arrays/[0-9]{1,9}\.npy")

Source = str | os.PathLike[str] | bytes | IO[bytes]


# ---------------------------------------------------------------- writing


class _Writer:
    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.n = 0

    def array(self, a: np.ndarray) -> str:
        a = np.asarray(a)
        if a.dtype.kind == "O":  # text columns of a DataFrame: stored as fixed-width unicode
            a = np.array(["" if pd.isna(v) else str(v) for v in a.tolist()], dtype=str)
        name = f"arrays/{self.n}.npy"
        self.n += 1
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
        self.zf.writestr(name, buf.getvalue())
        return name

    def matrix(self, sm: ScoreMatrix | None) -> dict[str, Any] | None:
        if sm is None:
            return None
        return {
            "scores": self.array(sm.scores),
            "trial_ids": self.array(sm.trial_ids),
            "trial_speakers": self.array(sm.trial_speakers),
            "enrol_speakers": self.array(sm.enrol_speakers),
            "attributes": [[k, self.array(v)] for k, v in sm.attributes.items()],
            "n_excluded_trials": int(sm.n_excluded_trials),
            "source": sm.source,
            **({} if sm.mask is None else {"mask": self.array(sm.mask)}),
        }

    def embeddings(self, es: EmbeddingSet | None) -> dict[str, Any] | None:
        if es is None:
            return None
        return {
            "embeddings": self.array(es.embeddings),
            "meta": [[str(c), self.array(es.meta[c].to_numpy())] for c in es.meta.columns],
            "source": es.source,
        }


def study_to_bytes(study: Study) -> bytes:
    """The ``.vxm`` file of ``study`` as bytes (what :func:`save_study` writes).

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> s = demo_study(n_speakers=4)
    >>> back = study_from_bytes(study_to_bytes(s))
    >>> back.names == s.names and back.get("plain").eval.equals(s.get("plain").eval)
    True
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        w = _Writer(zf)
        conditions = [
            {
                "name": c.name,
                "attacker": c.attacker,
                "description": c.description,
                "score_kind": c.score_kind,
                "eval": w.matrix(c.eval),
                "dev": w.matrix(c.dev),
                "embeddings": w.embeddings(c.embeddings),
                "utility": None if c.utility is None else c.utility.to_file_dict(),
                **({"input_warnings": list(c.input_warnings)} if c.input_warnings else {}),
                **({"attacker_recipe": c.recipe.to_dict()} if c.recipe is not None else {}),
            }
            for c in study.conditions
        ]
        manifest = {
            "format": FILE_FORMAT,
            "version": FILE_VERSION,
            "voxmetrics": __version__,
            "name": study.name,
            "settings": study.settings.to_dict(),
            "conditions": conditions,
            "provenance": {
                "libraries": library_versions(),
                "inputs": [f.to_dict() for f in study.inputs],
            },
        }
        zf.writestr(_MANIFEST, json.dumps(manifest, indent=1))
    return buf.getvalue()


def save_study(study: Study, path: str | os.PathLike[str]) -> Path:
    """Write ``study`` to a ``.vxm`` file (atomically: a partial file never replaces a good one).

    Returns
    -------
    Path
        The file written.
    """
    path = Path(path)
    data = study_to_bytes(study)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a sibling file opened with the usual permissions (mkstemp would make it owner-only)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    try:
        with tmp.open("xb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# ---------------------------------------------------------------- reading


def _bad(where: str, what: str) -> VoxMetricsInputError:
    return VoxMetricsInputError(f"{where}: {what}")


def _damaged(where: str, what: str) -> VoxMetricsInputError:
    """A study file cut short (an interrupted download or copy) or corrupt."""
    return VoxMetricsInputError(
        f"{where}: damaged or truncated study file: {what}. Copy the file whole again (a "
        "download or copy that stopped early cuts it short), or save the study again ('Save "
        "study' on the dashboard, or `python -m voxmetrics study build`)."
    )


def _safe_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return not (name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts)


# ---------------------------------------------------------------- manifest schema

_MATRIX_ARRAYS = ("scores", "trial_ids", "trial_speakers", "enrol_speakers")


def _type_name(value: Any) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "text",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _check_text(problems: list[str], path: str, value: Any, *, required: bool = False) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str):
        problems.append(f"{path} must be text, not {_type_name(value)}")


def _check_member(problems: list[str], path: str, value: Any) -> None:
    if not isinstance(value, str) or not _ARRAY_NAME.fullmatch(value):
        shown = repr(value) if isinstance(value, str) else _type_name(value)
        problems.append(f"{path} must name an array member (arrays/<k>.npy), not {shown}")


def _check_pairs(problems: list[str], path: str, value: Any, *, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, list):
        problems.append(f"{path} must be a list of [name, member] pairs, not {_type_name(value)}")
        return
    for i, pair in enumerate(value):
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            problems.append(f"{path}[{i}] must be a [name, member] pair, not {pair!r:.60}")
            continue
        _check_member(problems, f"{path}[{i}][1]", pair[1])
    names = [p[0] for p in value if isinstance(p, list) and len(p) == 2]
    if len(set(map(str, names))) != len(names):
        problems.append(f"{path} names the same column twice")


def _check_object(problems: list[str], path: str, value: Any, keys: tuple[str, ...]) -> bool:
    if not isinstance(value, dict):
        problems.append(f"{path} must be an object, not {_type_name(value)}")
        return False
    unknown = sorted(set(value) - set(keys))
    if unknown:
        problems.append(f"{path} has unknown field(s) {', '.join(map(str, unknown))}")
    return True


def _check_matrix(problems: list[str], path: str, spec: Any) -> None:
    keys = (*_MATRIX_ARRAYS, "attributes", "n_excluded_trials", "source", "mask")
    if not _check_object(problems, path, spec, keys):
        return
    for k in _MATRIX_ARRAYS:
        if k not in spec:
            problems.append(f"{path}.{k} is missing")
        else:
            _check_member(problems, f"{path}.{k}", spec[k])
    if spec.get("mask") is not None:
        _check_member(problems, f"{path}.mask", spec["mask"])
    _check_pairs(problems, f"{path}.attributes", spec.get("attributes"), required=False)
    n = spec.get("n_excluded_trials", 0)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        problems.append(f"{path}.n_excluded_trials must be a whole number >= 0, not {n!r:.40}")
    _check_text(problems, f"{path}.source", spec.get("source"))


def _check_embeddings(problems: list[str], path: str, spec: Any) -> None:
    if not _check_object(problems, path, spec, ("embeddings", "meta", "source")):
        return
    if "embeddings" not in spec:
        problems.append(f"{path}.embeddings is missing")
    else:
        _check_member(problems, f"{path}.embeddings", spec["embeddings"])
    _check_pairs(problems, f"{path}.meta", spec.get("meta"), required=True)
    _check_text(problems, f"{path}.source", spec.get("source"))


def _check_provenance(problems: list[str], spec: Any) -> None:
    if spec is None:
        return
    if not _check_object(problems, "provenance", spec, ("libraries", "inputs")):
        return
    libraries = spec.get("libraries")
    if libraries is not None and not (
        isinstance(libraries, dict)
        and all(isinstance(v, str | type(None)) for v in libraries.values())
    ):
        problems.append("provenance.libraries must map names to version texts")
    inputs = spec.get("inputs")
    if inputs is not None and not (
        isinstance(inputs, list)
        and all(isinstance(f, dict) and isinstance(f.get("sha256"), str) for f in inputs)
    ):
        problems.append("provenance.inputs must be a list of {path, sha256, size, role}")


def manifest_problems(manifest: Any) -> list[str]:
    """Every way ``manifest`` departs from the study-file schema (empty when it conforms).

    The schema: an object with ``format`` (text), ``version`` (number), ``voxmetrics`` and
    ``name`` (text), ``settings`` (object) and ``conditions``: a list of objects with ``name``
    (text, required), ``attacker``, ``description`` and ``score_kind`` (text), ``eval`` (a
    score-matrix object, required), ``dev`` (a score-matrix object or null), ``embeddings``
    (an embeddings object or null) and ``utility`` (an object, see
    :meth:`voxmetrics.data.utility.Utility.to_dict`, or null) and ``input_warnings`` (a list
    of texts: what was left out of its incomplete score files). A score-matrix object names the
    array members ``scores``, ``trial_ids``, ``trial_speakers`` and ``enrol_speakers``,
    optional ``attributes`` ([name, member] pairs), ``n_excluded_trials`` (whole number),
    ``source`` (text) and ``mask`` (the member of a sparse trial list's listed pairs); an
    embeddings object names ``embeddings``, ``meta`` ([column, member] pairs) and ``source``.

    Examples
    --------
    >>> for p in manifest_problems({"format": "voxmetrics-study", "version": 1, "conditions": [
    ...     {"name": "x", "eval": {"scores": None}}]})[:2]:
    ...     print(p)
    conditions[0].eval.scores must name an array member (arrays/<k>.npy), not null
    conditions[0].eval.trial_ids is missing
    """
    problems: list[str] = []
    top = ("format", "version", "voxmetrics", "name", "settings", "conditions", "provenance")
    if not _check_object(problems, "the manifest", manifest, top):
        return problems
    for k in ("format", "voxmetrics", "name"):
        _check_text(problems, k, manifest.get(k))
    settings = manifest.get("settings")
    if settings is not None and not isinstance(settings, dict):
        problems.append(f"settings must be an object, not {_type_name(settings)}")
    _check_provenance(problems, manifest.get("provenance"))
    conditions = manifest.get("conditions")
    if not isinstance(conditions, list):
        problems.append(f"conditions must be a list, not {_type_name(conditions)}")
        return problems
    keys = (
        *("name", "attacker", "description", "score_kind", "eval", "dev", "embeddings"),
        *("utility", "input_warnings", "attacker_recipe"),
    )
    for i, spec in enumerate(conditions):
        path = f"conditions[{i}]"
        if not _check_object(problems, path, spec, keys):
            continue
        if "name" not in spec:
            problems.append(f"{path}.name is missing")
        elif not isinstance(spec["name"], str) or not spec["name"].strip():
            problems.append(f"{path}.name must be non-empty text, not {spec['name']!r:.40}")
        _check_text(problems, f"{path}.attacker", spec.get("attacker"))
        _check_text(problems, f"{path}.description", spec.get("description"))
        _check_text(problems, f"{path}.score_kind", spec.get("score_kind"))
        if spec.get("eval") is None:
            problems.append(f"{path}.eval is missing (every condition needs eval scores)")
        else:
            _check_matrix(problems, f"{path}.eval", spec["eval"])
        if spec.get("dev") is not None:
            _check_matrix(problems, f"{path}.dev", spec["dev"])
        if spec.get("embeddings") is not None:
            _check_embeddings(problems, f"{path}.embeddings", spec["embeddings"])
        if spec.get("utility") is not None and not isinstance(spec["utility"], dict):
            problems.append(f"{path}.utility must be an object, not {_type_name(spec['utility'])}")
        notes = spec.get("input_warnings")
        if notes is not None and not (
            isinstance(notes, list) and all(isinstance(n, str) for n in notes)
        ):
            problems.append(f"{path}.input_warnings must be a list of texts")
        recipe = spec.get("attacker_recipe")
        if recipe is not None and not isinstance(recipe, dict):
            problems.append(f"{path}.attacker_recipe must be an object, not {_type_name(recipe)}")
    return problems


class _Reader:
    def __init__(self, archive: ArchiveReader, where: str, max_member_bytes: int | None) -> None:
        if max_member_bytes is None:
            max_member_bytes = archive.limits.max_member_bytes
        self.archive = archive
        self.where = where
        self.infos = {}
        for info in archive.infos.values():
            if not _safe_name(info.filename):
                raise _bad(
                    where,
                    f"refusing an unsafe archive: member '{info.filename}' points outside the "
                    "archive (absolute path or '..'). Only open study files saved by VoxMetrics.",
                )
            cap = MAX_MANIFEST_BYTES if info.filename == _MANIFEST else max_member_bytes
            if info.file_size > cap:
                raise _bad(
                    where,
                    f"refusing member '{info.filename}': it unpacks to {info.file_size:,} bytes, "
                    f"above the cap of {cap:,} bytes"
                    + (
                        " (a manifest is at most 16 MiB)."
                        if info.filename == _MANIFEST
                        else ". If the study is genuinely this large, load it with a larger "
                        "max_member_bytes (command line: --limit max_member_bytes=VALUE)."
                    ),
                )
            archive.check_member(info)
            self.infos[info.filename] = info
        self.caps = {
            n: MAX_MANIFEST_BYTES if n == _MANIFEST else max_member_bytes for n in self.infos
        }

    def read(self, name: str) -> bytes:
        if name not in self.infos:
            raise _bad(self.where, f"the manifest refers to '{name}', which is not in the archive.")
        try:
            data = self.archive.read(name, cap=self.caps[name])
        except DamagedArchiveError as exc:
            raise _damaged(self.where, exc.detail) from None
        if len(data) != self.infos[name].file_size:
            raise _damaged(self.where, f"member '{name}' is not its declared size")
        return data

    def array(self, name: str, what: str, kinds: str) -> np.ndarray:
        if name not in self.infos:
            raise _bad(self.where, f"the manifest refers to '{name}', which is not in the archive.")
        try:
            a = self.archive.load_npy(name)
        except DamagedArchiveError as exc:
            raise _damaged(self.where, f"{what} ({name}): {exc.detail}") from None
        except VoxMetricsInputError as exc:
            text = str(exc).removeprefix(f"{self.where}: ")
            if "Python object array" in text:
                raise _bad(
                    self.where,
                    f"refusing {what} ({name}): it is a pickled object array, which could run "
                    "code when loaded. VoxMetrics study files hold plain numeric and text "
                    "arrays only.",
                ) from None
            raise _bad(self.where, f"{what} ({name}): {text}") from None
        if a.dtype.kind not in kinds:
            raise _bad(
                self.where,
                f"{what} ({name}) has dtype {a.dtype}, expected {_KIND_NAMES[kinds]}.",
            )
        return a

    def matrix(self, spec: dict[str, Any] | None, what: str) -> ScoreMatrix | None:
        if spec is None:
            return None
        attrs = {
            str(k): self.array(v, f"{what} attribute '{k}'", "biufU")
            for k, v in spec.get("attributes") or []
        }
        mask = spec.get("mask")
        return ScoreMatrix.from_arrays(
            self.array(spec["scores"], f"{what} scores", "f"),
            trial_ids=self.array(spec["trial_ids"], f"{what} trial ids", "U"),
            trial_speakers=self.array(spec["trial_speakers"], f"{what} trial speakers", "U"),
            enrol_speakers=self.array(spec["enrol_speakers"], f"{what} enrolled", "U"),
            attributes=attrs,
            source=str(spec.get("source") or ""),
            n_excluded_trials=int(spec.get("n_excluded_trials", 0)),
            copy=False,
            mask=None if mask is None else self.array(mask, f"{what} mask", "b"),
        )

    def embeddings(self, spec: dict[str, Any] | None, what: str) -> EmbeddingSet | None:
        if spec is None:
            return None
        columns = {str(c): self.array(v, f"{what} column '{c}'", "biufU") for c, v in spec["meta"]}
        lengths = {len(v) if v.ndim == 1 else -1 for v in columns.values()}
        if len(lengths) > 1 or -1 in lengths:
            raise _bad(
                self.where,
                f"{what}: the metadata columns are not 1-D arrays of one length; the file is "
                "damaged or was edited by hand. Save the study again.",
            )
        return EmbeddingSet.from_arrays(
            self.array(spec["embeddings"], f"{what} matrix", "f"),
            pd.DataFrame(columns),
            source=str(spec.get("source") or ""),
        )


_KIND_NAMES = {
    "f": "floating-point numbers",
    "U": "text",
    "biufU": "numbers or text",
    "b": "booleans",
}


def _manifest(reader: _Reader) -> dict[str, Any]:
    where = reader.where
    if _MANIFEST not in reader.infos:
        raise _bad(
            where, "this is a zip archive but not a VoxMetrics study file (no manifest.json)."
        )
    try:
        manifest = json.loads(reader.read(_MANIFEST).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(where, f"manifest.json is not valid JSON ({exc}).") from None
    except RecursionError:
        raise _bad(
            where, "manifest.json is nested too deeply to be a study manifest; refusing it."
        ) from None
    depth = _depth(manifest, get_limits().max_json_depth)
    if depth > get_limits().max_json_depth:
        raise refuse(where, "manifest.json is nested too deeply", "max_json_depth")
    if not isinstance(manifest, dict) or manifest.get("format") != FILE_FORMAT:
        raise _bad(where, "manifest.json does not describe a VoxMetrics study.")
    version = manifest.get("version")
    if version != FILE_VERSION or isinstance(version, bool):
        newer = isinstance(version, int) and version > FILE_VERSION
        raise _bad(
            where,
            f"study file version {version!r:.40} is not supported; this VoxMetrics "
            f"({__version__}) reads version {FILE_VERSION}."
            + (" Upgrade VoxMetrics to open it." if newer else ""),
        )
    if not isinstance(manifest.get("conditions"), list):
        raise _bad(where, "manifest.json has no list of conditions.")
    check_count(where, "conditions", len(manifest["conditions"]), "max_conditions")
    problems = manifest_problems(manifest)
    if problems:
        shown = "; ".join(problems[:8])
        more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
        raise _bad(
            where,
            f"manifest.json does not match the study-file schema: {shown}{more}. The file is "
            "damaged or was edited by hand; save the study again from VoxMetrics.",
        )
    return manifest


def _utility(spec: dict[str, Any] | None) -> Utility | None:
    if spec is None:
        return None
    return Utility.from_dict(spec)


def _recipe(spec: dict[str, Any] | None, label: str) -> AttackerRecipe | None:
    return None if spec is None else AttackerRecipe.from_dict(spec, where=f"{label} attacker")


def _depth(value: Any, cap: int) -> int:
    """Nesting depth of parsed JSON, counted without recursion and stopping past ``cap``."""
    stack = [(value, 1)]
    deepest = 0
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            if deepest > cap:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def study_from_bytes(
    data: bytes, *, name: str = "study file", max_member_bytes: int | None = None
) -> Study:
    """Read a study from the bytes of a ``.vxm`` file (see :func:`load_study`)."""
    return load_study(io.BytesIO(data), name=name, max_member_bytes=max_member_bytes)


def load_study(
    source: Source, *, name: str | None = None, max_member_bytes: int | None = None
) -> Study:
    """Read a study saved by :func:`save_study`.

    Every member is read within the input limits of :mod:`voxmetrics.limits` (decompressed
    bytes per member and per archive, compression ratio, declared array shapes), and the
    manifest is checked against the study-file schema (:func:`manifest_problems`) before any
    array is read.

    Parameters
    ----------
    source : path, bytes or binary file
        The ``.vxm`` file.
    name : str, optional
        How to call the file in messages (default: its path).
    max_member_bytes : int, optional
        Refuse any member that unpacks to more than this many bytes (default: the input
        limit ``max_member_bytes`` in force, see :mod:`voxmetrics.limits`).

    Raises
    ------
    VoxMetricsInputError
        Not a zip archive or not a study file, an unknown version, a manifest that does not
        match the schema, an unsafe archive (member outside the archive, oversized member,
        decompression bomb, pickled array), or a damaged or truncated file (cut short, corrupt).
    """
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    where = name or (str(source) if isinstance(source, str | os.PathLike) else "study file")
    if isinstance(source, str | os.PathLike):
        check_input_path(source, where)  # a folder or a device gets its own message
    try:
        archive = ArchiveReader(source, where)
    except DamagedArchiveError as exc:
        raise _damaged(where, exc.detail) from None
    except VoxMetricsInputError:
        raise _bad(
            where,
            "not a VoxMetrics study file: it is not a zip archive. Study files end in .vxm and "
            "are written by 'Save study' or `python -m voxmetrics demo --format vxm`.",
        ) from None
    with archive:
        reader = _Reader(archive, where, max_member_bytes)
        manifest = _manifest(reader)
        conditions = []
        for spec in manifest["conditions"]:
            label = f"condition '{spec['name']}'"
            try:
                conditions.append(
                    Condition(
                        spec["name"],
                        eval=reader.matrix(spec["eval"], f"{label} eval"),  # type: ignore[arg-type]
                        dev=reader.matrix(spec.get("dev"), f"{label} dev"),
                        attacker=spec.get("attacker") or "semi-informed",
                        embeddings=reader.embeddings(spec.get("embeddings"), f"{label} embeddings"),
                        description=spec.get("description") or "",
                        score_kind=spec.get("score_kind") or "similarity",
                        utility=_utility(spec.get("utility")),
                        input_warnings=tuple(spec.get("input_warnings") or ()),
                        recipe=_recipe(spec.get("attacker_recipe"), label),
                    )
                )
            except VoxMetricsInputError as exc:  # the data model's own checks: say which file
                text = str(exc)
                raise (exc if text.startswith(f"{where}: ") else _bad(where, text)) from None
        names = [c.name for c in conditions]
        if len(set(names)) != len(names):
            raise _bad(where, "two conditions of the manifest have the same name.")
        settings = manifest.get("settings") or {}
        try:
            parsed = StudySettings.from_dict(settings)
        except VoxMetricsInputError as exc:
            raise _bad(where, str(exc)) from None
        except TypeError as exc:
            raise _bad(where, f"the manifest's settings are malformed ({exc}).") from None
        provenance = manifest.get("provenance") or {}
        try:
            inputs = tuple(InputFile.from_dict(f) for f in provenance.get("inputs") or ())
        except VoxMetricsInputError as exc:
            raise _bad(where, str(exc)) from None
        saved_by = {"voxmetrics": manifest.get("voxmetrics"), **(provenance.get("libraries") or {})}
        return Study(
            tuple(conditions),
            name=str(manifest.get("name") or "study"),
            settings=parsed,
            inputs=inputs,
            saved_by=saved_by,
        )
