"""What the sub-commands' handlers share: exit codes, input reading, output checks and JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_input_path

EXIT_OK, EXIT_FAIL_ON, EXIT_BAD_INPUT = 0, 1, 2


def check_outputs(files: Sequence[str | None] = (), folders: Sequence[str | None] = ()) -> None:
    """Refuse output paths that cannot be written, before any work is done."""
    for f in filter(None, files):
        p = Path(f)
        if p.is_dir():
            raise VoxMetricsInputError(f"{f}: is a directory; give the path of a file to write.")
        if p.exists() and not p.is_file():
            raise VoxMetricsInputError(f"{f}: is not a regular file; give a file path to write.")
    for d in filter(None, folders):
        p = Path(d)
        if p.exists() and not p.is_dir():
            raise VoxMetricsInputError(
                f"{d}: exists and is not a folder; give a folder to write into."
            )


def read_score_file(path: str, key: str | None, fmt: str, distance: bool = False) -> Any:
    """A score file (with its Kaldi key file, if any) as a ScoreMatrix, its paths checked."""
    from voxmetrics.data.readers import read_scores

    for p in (path, key):
        if p is not None:
            check_input_path(p)
    return read_scores(path, trials=key, format=fmt, distance=distance)  # type: ignore[arg-type]


def read_embedding_file(
    path: str, metadata: str | None, system: str | None = None, ark_root: str | None = None
) -> Any:
    """An embedding file (with its metadata, if any) as an EmbeddingSet, its paths checked."""
    from voxmetrics.data.readers import read_embeddings

    for p in (path, metadata):
        if p is not None:
            check_input_path(p)
    if ark_root is not None and not Path(ark_root).is_dir():
        raise VoxMetricsInputError(f"--ark-root {ark_root}: no such folder.")
    return read_embeddings(path, metadata=metadata, system=system, ark_root=ark_root)


def print_json(obj: Any, out: str | None) -> None:
    """Print ``obj`` as indented JSON, and write the same text to ``out`` when given."""
    text = json.dumps(obj, indent=2)
    print(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")


def progress_bar(fraction: float, message: str) -> None:
    """A one-line progress bar on stderr (a library ``progress`` callback)."""
    filled = int(30 * fraction)
    print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {message:<40.40}", end="", file=sys.stderr)
