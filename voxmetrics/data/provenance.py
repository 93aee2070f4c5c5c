"""Where a study's numbers came from: input fingerprints and the versions that shaped them.

What this is: :class:`InputFile` (a file's path as given, its size and sha256, and what it was
for), :func:`fingerprint_paths` (every regular file under the paths given), and
:func:`library_versions` (VoxMetrics' and the libraries' that shape its numbers: NumPy, SciPy,
scikit-learn, pandas, jiwer, and SpeechBrain and torch where installed, for the embeddings
extracted here). A study keeps the fingerprints of the files it was built from
(:attr:`voxmetrics.data.study.Study.inputs`), its ``.vxm`` file records them with the versions
that wrote it, and every report records them with its own versions, settings, seed and the
attacker of each condition (:mod:`voxmetrics.report.study`), so that ``voxmetrics report
--verify`` can check a report against its inputs. What this is not: a reader.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxmetrics._version import __version__
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "ATTACKER_FIELDS",
    "LIBRARIES",
    "MAX_FINGERPRINTED_FILES",
    "InputFile",
    "attacker_record",
    "file_sha256",
    "fingerprint_paths",
    "library_versions",
]

LIBRARIES: tuple[str, ...] = (
    "numpy",
    "scipy",
    "scikit-learn",
    "pandas",
    "jiwer",
    "speechbrain",
    "torch",
)
"""The distributions whose versions shape VoxMetrics' numbers (SpeechBrain and torch: the
embeddings extracted here; jiwer: the WER), as their package indexes name them."""
MAX_FINGERPRINTED_FILES = 20_000
"""Most files :func:`fingerprint_paths` reads under one folder (a larger tree is refused)."""
_CHUNK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, hex (read in 1 MiB chunks).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = p.write_bytes(b"abc")
    >>> file_sha256(p)[:16]
    'ba7816bf8f01cfea'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class InputFile:
    """One input file: where it was, how big, its sha256, and what it was for."""

    path: str
    """The path as given (relative paths stay relative to where the command ran)."""
    sha256: str
    """Hex digest of its bytes."""
    size: int
    """Its size in bytes."""
    role: str = ""
    """What it was for (e.g. "study source", "--wer", "study file")."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"path": self.path, "sha256": self.sha256, "size": self.size, "role": self.role}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> InputFile:
        """The input file of a :meth:`to_dict` dictionary (as a ``.vxm`` file stores it)."""
        try:
            return cls(
                path=str(values["path"]),
                sha256=str(values["sha256"]),
                size=int(values.get("size") or 0),
                role=str(values.get("role") or ""),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise VoxMetricsInputError(f"an input file's record is malformed ({exc}).") from None

    @classmethod
    def of(cls, path: str | os.PathLike[str], *, role: str = "") -> InputFile:
        """Fingerprint one file."""
        p = Path(path)
        return cls(path=str(path), sha256=file_sha256(p), size=p.stat().st_size, role=role)

    def check(self, base: str | os.PathLike[str] | None = None) -> str | None:
        """Why the file no longer matches (missing, changed), None when it does.

        ``base`` resolves a relative :attr:`path` (default: the working folder).
        """
        p = Path(self.path)
        if not p.is_absolute() and base is not None:
            p = Path(base) / p
        if not p.is_file():
            return f"{self.path}: not found"
        if file_sha256(p) != self.sha256:
            return f"{self.path}: changed (sha256 differs from the recorded {self.sha256[:12]}…)"
        return None


def fingerprint_paths(
    paths: Iterable[tuple[str | os.PathLike[str], str]],
    *,
    max_files: int = MAX_FINGERPRINTED_FILES,
) -> tuple[InputFile, ...]:
    """Fingerprint every regular file among ``(path, role)`` pairs, folders walked (sorted).

    Hidden files and folders (a name starting with ".") are skipped, and so is a path that is
    neither a file nor a folder; each file is fingerprinted once (the first role wins).

    Raises
    ------
    VoxMetricsInputError
        A folder holding more than ``max_files`` files.
    """
    seen: dict[str, InputFile] = {}
    for path, role in paths:
        p = Path(path)
        if p.is_file():
            files = [p]
        elif p.is_dir():
            files = sorted(
                f
                for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            if len(files) > max_files:
                raise VoxMetricsInputError(
                    f"{path}: {len(files):,} files, more than the {max_files:,} a study's "
                    "provenance fingerprints; point at the folders the study reads."
                )
        else:
            continue
        for f in files:
            key = str(f)
            if key not in seen:
                seen[key] = InputFile.of(f, role=role)
    return tuple(seen.values())


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str | None]:
    """VoxMetrics', Python's and each library's version (None when it is not installed).

    Examples
    --------
    >>> v = library_versions()
    >>> v["voxmetrics"] == __version__, v["numpy"] is not None
    (True, True)
    """
    out: dict[str, str | None] = {"voxmetrics": __version__, "python": platform.python_version()}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


ATTACKER_FIELDS: tuple[str, ...] = (
    "attacker",
    "score_kind",
    "backend",
    "trained_on",
    "n_train_speakers",
    "n_train_utterances",
    "parameters",
    "calibrated",
    "selected_by",
    "dev_value",
    "candidates",
    "cautions",
)
"""The fields that describe a condition's attacker, recorded where the condition has them:
its knowledge level and what its scores are, then the fields of its attacker recipe
(:class:`~voxmetrics.data.recipe.AttackerRecipe`: the scoring back-end, what it was trained on
and how much, its parameters, calibration, how it was chosen as the strongest and its dev
figure, every candidate's, and the weak-attacker findings). Add a field here to record it."""


def attacker_record(condition: Any) -> dict[str, Any]:
    """What a condition says about its attacker (:data:`ATTACKER_FIELDS` it has), JSON-safe.

    A field is read off the condition, else off its attacker recipe (``condition.recipe``,
    as the recipe's JSON writes it); a condition without a recipe (imported scores) records
    its knowledge level and score kind only.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> attacker_record(SimpleNamespace(attacker="semi-informed", score_kind="similarity"))
    {'attacker': 'semi-informed', 'score_kind': 'similarity'}
    >>> from voxmetrics.data.recipe import AttackerRecipe
    >>> c = SimpleNamespace(attacker="ignorant", recipe=AttackerRecipe("plda", trained_on="train"))
    >>> r = attacker_record(c)
    >>> r["backend"], r["trained_on"], r["cautions"]
    ('plda', 'train', [])
    """
    recipe = getattr(condition, "recipe", None)
    written = {} if recipe is None else recipe.to_dict()
    out: dict[str, Any] = {}
    for name in ATTACKER_FIELDS:
        value = getattr(condition, name, None)
        if value is None:
            value = written.get(name)
        if value is None:
            continue
        out[name] = value.to_dict() if hasattr(value, "to_dict") else value
    return out
