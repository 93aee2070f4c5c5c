"""The command line: ``python -m voxmetrics COMMAND ...``.

Commands: ``evaluate`` (one condition's metrics as JSON), ``similarity`` (voice similarity
matrices, DeID, G_VD), ``legal`` (singling out, linkability and 1 - EER against the number of
speakers per conversation length, Vauquier et al. 2025), ``sbls`` (soft-biometric leakage),
``report`` (the HTML / PDF / JSON / CSV / LaTeX / Markdown report of a saved study, a ``.vxm``
file), ``compare`` (two conditions of a study, paired), ``study build`` (a ``.vxm`` study from a
folder of score files or a manifest), ``demo`` (the built-in demo study as score files and a
``.vxm`` study), ``extract`` (speaker embeddings from audio) and ``app`` (starts the dashboard,
installed with ``pip install "voxmetrics[app]"``).

Contract: ``evaluate`` prints one JSON object; exit status 0 on success, 2 on bad
input (one line on stderr, no traceback), 1 when a ``--fail-on`` condition holds.

Every command takes ``--limit NAME=VALUE`` (repeatable) to change an input limit of
:mod:`voxmetrics.limits` for this run; an input over a limit is bad input (status 2).

Each command is a module of this package holding its options (``add_parser``) beside its
handler (``run``); the option groups several commands share are written once, in
``_options``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import sys
import warnings
from collections.abc import Iterator, Sequence

from voxmetrics._version import __version__
from voxmetrics.cli import (
    app,
    compare,
    demo,
    evaluate,
    extract,
    legal,
    report,
    sbls,
    similarity,
    study,
)
from voxmetrics.cli._common import EXIT_BAD_INPUT
from voxmetrics.cli._fail_on import fail_on_holds
from voxmetrics.cli.app import DASHBOARD_CONFIG, dashboard_command, dashboard_script
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import get_limits, parse_limit, use_limits

__all__ = ["DASHBOARD_CONFIG", "dashboard_command", "dashboard_script", "fail_on_holds", "main"]

_COMMANDS = {
    "evaluate": evaluate,
    "similarity": similarity,
    "legal": legal,
    "sbls": sbls,
    "report": report,
    "compare": compare,
    "app": app,
    "study": study,
    "demo": demo,
    "extract": extract,
}
"""Each command's module (``add_parser`` and ``run``), in the order ``--help`` lists them."""


def _parser() -> argparse.ArgumentParser:
    """The parser of every command."""
    parser = argparse.ArgumentParser(
        prog="python -m voxmetrics",
        description="Privacy metrics for anonymised speech (VoxMetrics).",
    )
    parser.add_argument("--version", action="version", version=f"voxmetrics {__version__}")
    parser.add_argument(
        "--limit", action="append", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in _COMMANDS.values():
        command.add_parser(sub)
    return parser


@contextlib.contextmanager
def _no_huge_page_compaction() -> Iterator[None]:
    """NumPy's large arrays on ordinary pages while the command runs (unless the user chose).

    NumPy asks the kernel for transparent huge pages on arrays of 4 MB and more; where the
    kernel then compacts memory to find them (``defrag = madvise``, a common default), the
    first touch of a score matrix or its sorted copy costs about 1 s of system time per
    400 MB, against 0.2 s on ordinary pages. ``NUMPY_MADVISE_HUGEPAGE`` set by the user wins.
    """
    try:
        from numpy._core import multiarray
    except ImportError:  # pragma: no cover - another NumPy layout: leave it as it is
        yield
        return
    # private NumPy functions, absent from its type stubs: looked up by name
    _get_madvise_hugepage = getattr(multiarray, "_get_madvise_hugepage", None)
    _set_madvise_hugepage = getattr(multiarray, "_set_madvise_hugepage", None)
    if _get_madvise_hugepage is None or _set_madvise_hugepage is None:  # pragma: no cover
        yield
        return
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        yield
        return
    before = _get_madvise_hugepage()
    _set_madvise_hugepage(False)
    try:
        yield
    finally:
        _set_madvise_hugepage(before)


def _keep_freed_memory() -> None:
    """Memory a command frees stays with glibc's malloc for its next allocations (Linux only).

    The metrics walk a score matrix in chunks whose temporaries (a few MB each) are freed and
    allocated again hundreds of times. By default glibc hands such memory back to the kernel
    (trimming the heap, or mapping each allocation afresh above its adaptive threshold), and
    each reuse faults its pages in again: about 0.5 s of system time in an ``evaluate`` of
    22,024 x 4,949 scores. Here arrays below 32 MB come from the heap and up to 128 MB of
    freed heap is kept (a few tens of MB more peak memory). ``MALLOC_MMAP_THRESHOLD_`` or
    ``MALLOC_TRIM_THRESHOLD_`` set by the user wins; elsewhere than glibc nothing changes.
    """
    if not sys.platform.startswith("linux") or any(
        v in os.environ for v in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    ):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
    mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD


def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> int:
    """Run the command of ``args`` under its ``--limit`` values; bad input is status 2."""
    try:
        limits = get_limits()
        overrides = dict(parse_limit(text) for text in getattr(args, "limit", []))
        stack.enter_context(use_limits(limits.with_overrides(overrides)))
        return _COMMANDS[args.command].run(args)
    except VoxMetricsInputError as exc:
        print(f"voxmetrics: error: {exc}", file=sys.stderr)
    except OSError as exc:
        print(f"voxmetrics: error: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
    except (MemoryError, RecursionError) as exc:  # past every limit: still no traceback
        what = "memory" if isinstance(exc, MemoryError) else "nesting depth"
        print(
            f"voxmetrics: error: the input needs more {what} than this machine allows; "
            "check it is the intended file, or lower its size (see --limit).",
            file=sys.stderr,
        )
    return EXIT_BAD_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    passed_on: list[str] = []
    if argv[:1] == ["app"] and "--" in argv:  # `app STUDY --port N -- OPTIONS`: argparse
        k = argv.index("--")  # would refuse options after a positional given before --port
        argv, passed_on = argv[:k], argv[k + 1 :]
    args = _parser().parse_args(argv)
    if passed_on:
        args.rest = [*args.rest, *passed_on]
    _keep_freed_memory()
    with warnings.catch_warnings(record=True) as caught, contextlib.ExitStack() as stack:
        warnings.simplefilter("always")
        stack.enter_context(_no_huge_page_compaction())
        status = _run(args, stack)
    # one line per warning (a condition's warnings name it: see voxmetrics.errors.warnings_of)
    for message in dict.fromkeys(
        str(w.message) for w in caught if issubclass(w.category, UserWarning)
    ):
        print(f"voxmetrics: warning: {message}", file=sys.stderr)
    return status
