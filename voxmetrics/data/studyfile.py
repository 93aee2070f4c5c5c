"""Study files: a whole study in one versioned ``.vxm`` file (design.md, Dashboard).

A ``.vxm`` file is a zip archive of

- ``manifest.json``: ``{"format": "voxmetrics-study", "version": 1, "voxmetrics": ...,
  "name", "settings", "conditions": [...]}``, where each condition gives its name, attacker,
  description and the archive members of its ``eval`` and ``dev`` score matrices and of its
  ``embeddings`` (the embedding matrix and one array per metadata column, in order);
- ``arrays/<k>.npy``: plain NumPy arrays (numbers or fixed-width unicode text), read with
  ``allow_pickle=False``, so loading a file never runs code.

Loading checks the format and version and refuses unsafe or damaged archives (a member name
that is absolute or climbs out with ``..``, a member above the size cap, a pickled or object
array, a manifest that points at a missing member) with one message saying what is wrong.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from voxmetrics._version import __version__
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "FILE_FORMAT",
    "FILE_VERSION",
    "MAX_MEMBER_BYTES",
    "load_study",
    "save_study",
    "study_from_bytes",
    "study_to_bytes",
]

FILE_FORMAT = "voxmetrics-study"
"""The ``format`` field of every manifest."""
FILE_VERSION = 1
"""Version written by this VoxMetrics; loading accepts exactly the versions it knows."""
MAX_MEMBER_BYTES = 4 * 2**30
"""Default cap on the uncompressed size of one archive member (4 GiB)."""
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


def _safe_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return not (name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts)


class _Reader:
    def __init__(self, zf: zipfile.ZipFile, where: str, max_member_bytes: int) -> None:
        self.zf = zf
        self.where = where
        self.infos = {}
        for info in zf.infolist():
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
                    f"above the cap of {cap:,} bytes. If the study is genuinely this large, "
                    "load it with a larger max_member_bytes.",
                )
            self.infos[info.filename] = info

    def read(self, name: str) -> bytes:
        if name not in self.infos:
            raise _bad(self.where, f"the manifest refers to '{name}', which is not in the archive.")
        try:
            return self.zf.read(name)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise _bad(self.where, f"member '{name}' is damaged ({exc}).") from None

    def array(self, name: Any, what: str, kinds: str) -> np.ndarray:
        if not isinstance(name, str) or not _ARRAY_NAME.fullmatch(name):
            raise _bad(
                self.where, f"{what}: '{name}' is not an array member name (arrays/<k>.npy)."
            )
        data = self.read(name)
        try:
            a = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            if "pickle" in str(exc):
                raise _bad(
                    self.where,
                    f"refusing {what} ({name}): it is a pickled object array, which could run "
                    "code when loaded. VoxMetrics study files hold plain numeric and text "
                    "arrays only.",
                ) from None
            raise _bad(self.where, f"{what} ({name}) is not a valid .npy array ({exc}).") from None
        except (OSError, EOFError) as exc:
            raise _bad(self.where, f"{what} ({name}) is not a valid .npy array ({exc}).") from None
        if not isinstance(a, np.ndarray) or a.dtype.kind not in kinds:
            raise _bad(
                self.where,
                f"{what} ({name}) has dtype {getattr(a, 'dtype', type(a))}, expected "
                f"{_KIND_NAMES[kinds]}.",
            )
        return a

    def matrix(self, spec: Any, what: str) -> ScoreMatrix | None:
        if spec is None:
            return None
        if not isinstance(spec, Mapping):
            raise _bad(self.where, f"{what}: expected an object in the manifest.")
        try:
            attrs = {
                str(k): self.array(v, f"{what} attribute '{k}'", "biufU")
                for k, v in spec.get("attributes", [])
            }
            return ScoreMatrix.from_arrays(
                self.array(spec["scores"], f"{what} scores", "f"),
                trial_ids=self.array(spec["trial_ids"], f"{what} trial ids", "U"),
                trial_speakers=self.array(spec["trial_speakers"], f"{what} trial speakers", "U"),
                enrol_speakers=self.array(spec["enrol_speakers"], f"{what} enrolled", "U"),
                attributes=attrs,
                source=str(spec.get("source", "")),
                n_excluded_trials=int(spec.get("n_excluded_trials", 0)),
                copy=False,
            )
        except (KeyError, TypeError) as exc:
            raise _bad(self.where, f"{what}: the manifest lacks or garbles {exc}.") from None

    def embeddings(self, spec: Any, what: str) -> EmbeddingSet | None:
        if spec is None:
            return None
        if not isinstance(spec, Mapping):
            raise _bad(self.where, f"{what}: expected an object in the manifest.")
        try:
            meta = pd.DataFrame(
                {str(c): self.array(v, f"{what} column '{c}'", "biufU") for c, v in spec["meta"]}
            )
            return EmbeddingSet.from_arrays(
                self.array(spec["embeddings"], f"{what} matrix", "f"),
                meta,
                source=str(spec.get("source", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, VoxMetricsInputError):
                raise
            raise _bad(self.where, f"{what}: the manifest lacks or garbles {exc}.") from None


_KIND_NAMES = {"f": "floating-point numbers", "U": "text", "biufU": "numbers or text"}


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
    if not isinstance(manifest, dict) or manifest.get("format") != FILE_FORMAT:
        raise _bad(where, "manifest.json does not describe a VoxMetrics study.")
    version = manifest.get("version")
    if version != FILE_VERSION:
        newer = isinstance(version, int) and version > FILE_VERSION
        raise _bad(
            where,
            f"study file version {version!r} is not supported; this VoxMetrics "
            f"({__version__}) reads version {FILE_VERSION}."
            + (" Upgrade VoxMetrics to open it." if newer else ""),
        )
    if not isinstance(manifest.get("conditions"), list):
        raise _bad(where, "manifest.json has no list of conditions.")
    return manifest


def study_from_bytes(
    data: bytes, *, name: str = "study file", max_member_bytes: int = MAX_MEMBER_BYTES
) -> Study:
    """Read a study from the bytes of a ``.vxm`` file (see :func:`load_study`)."""
    return load_study(io.BytesIO(data), name=name, max_member_bytes=max_member_bytes)


def load_study(
    source: Source, *, name: str | None = None, max_member_bytes: int = MAX_MEMBER_BYTES
) -> Study:
    """Read a study saved by :func:`save_study`.

    Parameters
    ----------
    source : path, bytes or binary file
        The ``.vxm`` file.
    name : str, optional
        How to call the file in messages (default: its path).
    max_member_bytes : int
        Refuse any member that unpacks to more than this many bytes.

    Raises
    ------
    VoxMetricsInputError
        Not a zip archive or not a study file, an unknown version, an unsafe archive (member
        outside the archive, oversized member, pickled array) or damaged content.
    """
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    where = name or (str(source) if isinstance(source, str | os.PathLike) else "study file")
    try:
        zf = zipfile.ZipFile(source)
    except FileNotFoundError:
        raise _bad(where, "no such file.") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise _bad(
            where,
            f"not a VoxMetrics study file: it is not a zip archive ({exc}). Study files "
            "end in .vxm and are written by 'Save study' or `python -m voxmetrics demo "
            "--format vxm`.",
        ) from None
    with zf:
        reader = _Reader(zf, where, max_member_bytes)
        manifest = _manifest(reader)
        conditions = []
        for k, spec in enumerate(manifest["conditions"]):
            if not isinstance(spec, Mapping) or "name" not in spec or "eval" not in spec:
                raise _bad(where, f"condition {k + 1} of the manifest lacks a name or eval data.")
            label = f"condition '{spec['name']}'"
            conditions.append(
                Condition(
                    str(spec["name"]),
                    eval=reader.matrix(spec["eval"], f"{label} eval"),  # type: ignore[arg-type]
                    dev=reader.matrix(spec.get("dev"), f"{label} dev"),
                    attacker=spec.get("attacker", "semi-informed"),
                    embeddings=reader.embeddings(spec.get("embeddings"), f"{label} embeddings"),
                    description=str(spec.get("description", "")),
                    score_kind=spec.get("score_kind", "similarity"),
                )
            )
        names = [c.name for c in conditions]
        if len(set(names)) != len(names):
            raise _bad(where, "two conditions of the manifest have the same name.")
        settings = manifest.get("settings") or {}
        if not isinstance(settings, dict):
            raise _bad(where, "the manifest's settings are not an object.")
        try:
            parsed = StudySettings.from_dict(settings)
        except VoxMetricsInputError as exc:
            raise _bad(where, str(exc)) from None
        return Study(tuple(conditions), name=str(manifest.get("name", "study")), settings=parsed)
