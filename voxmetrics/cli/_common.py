"""What the handlers share: exit codes, reading inputs, checking outputs, JSON, evaluate's end."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxmetrics.cli._fail_on import fail_on_holds
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_input_path

if TYPE_CHECKING:
    from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
    from voxmetrics.evaluation import ConditionReport

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


def read_score_file(
    path: str,
    key: str | None,
    fmt: str,
    distance: bool = False,
    *,
    allow_incomplete: bool = False,
) -> tuple[ScoreMatrix, tuple[str, ...]]:
    """A score file (with its Kaldi key file, if any) as a ScoreMatrix, its paths checked.

    With ``allow_incomplete`` a broken file is read (its broken pairs left out): the messages
    saying so are returned beside the matrix, for the JSON's ``input_warnings``, and warned
    as :class:`~voxmetrics.errors.IncompleteScoresWarning` (on stderr) as well.
    """
    from voxmetrics.data.readers import read_scores
    from voxmetrics.errors import IncompleteScoresWarning

    for p in (path, key):
        if p is not None:
            check_input_path(p)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sm = read_scores(
            path,
            trials=key,
            format=fmt,  # type: ignore[arg-type]
            distance=distance,
            allow_incomplete=allow_incomplete,
        )
    left_out = []
    for w in caught:
        if issubclass(w.category, IncompleteScoresWarning):
            left_out.append(str(w.message))
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return sm, tuple(left_out)


def read_embedding_file(
    path: str, metadata: str | None, system: str | None = None, ark_root: str | None = None
) -> EmbeddingSet:
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


def priors(text: str) -> list[float]:
    """The target priors of ``--p-target``."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise VoxMetricsInputError(
            f"--p-target '{text}': give numbers separated by commas, e.g. 0.01,0.001."
        ) from None


def check_source(args: argparse.Namespace, what: str) -> None:
    """Refuse EVAL with --embeddings, neither, and --metadata / --system without --embeddings."""
    if args.embeddings:
        if args.eval:
            raise VoxMetricsInputError("give either EVAL or --embeddings, not both.")
    elif args.eval:
        for flag, value in (("--metadata", args.metadata), ("--system", args.system)):
            if value:
                raise VoxMetricsInputError(f"{flag} goes with --embeddings.")
    else:
        raise VoxMetricsInputError(f"give {what} EVAL or --embeddings EMB.")


def finish(
    args: argparse.Namespace, report: ConditionReport, input_warnings: Sequence[str] = ()
) -> int:
    """Print (and write) the JSON and the HTML report of ``report``; check ``--fail-on``.

    ``input_warnings`` (what ``--allow-incomplete`` left out of the score files) go into the
    report's ``input_warnings``.
    """
    if input_warnings:
        report = dataclasses.replace(report, input_warnings=tuple(input_warnings))
    result = report.to_dict()
    # check --fail-on before writing anything, so a bad expression leaves no partial output
    failed = fail_on_holds(args.fail_on, result) if args.fail_on else False
    print_json(result, args.json)
    if args.html:  # the HTML module loads Plotly: only when asked for
        from voxmetrics.report.html import report_html

        subsets = [r for values in (report.by or {}).values() for r in values.values()]
        Path(args.html).write_text(report_html([report, *subsets]), encoding="utf-8")
    if failed:
        print(f"voxmetrics: --fail-on condition holds: {args.fail_on}", file=sys.stderr)
        return EXIT_FAIL_ON
    return EXIT_OK
