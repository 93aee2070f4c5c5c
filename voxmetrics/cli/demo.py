"""``demo``: the built-in demo study as score files, embeddings and a study file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voxmetrics.cli import _options
from voxmetrics.cli._common import EXIT_OK, check_outputs

HELP = "write the built-in demo study to score files and a .vxm study file"
DESCRIPTION = (
    "Write the dev and eval score files of every demo condition (see voxmetrics.synth) "
    "to OUTDIR, in one or all formats, and its utterance embeddings, for trying the "
    "evaluate and similarity commands; --format vxm (or all) also writes the whole "
    "study as OUTDIR/demo.vxm, for the report command and the dashboard."
)
_SUFFIX = {"csv": ".csv", "parquet": ".parquet", "npz": ".npz", "kaldi": ".scores"}


def add_parser(subparsers: Any) -> None:
    """The ``demo`` command and its options."""
    p = subparsers.add_parser(
        "demo", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    p.add_argument("outdir", metavar="OUTDIR", help="folder to write into (created)")
    p.add_argument(
        "--format",
        choices=["csv", "parquet", "npz", "kaldi", "vxm", "all"],
        default="all",
        help="score file format, or vxm for the study file demo.vxm only (default: all, "
        "which includes demo.vxm)",
    )
    _options.add_seed(p, "the simulation")
    p.add_argument(
        "--no-embeddings",
        dest="embeddings",
        action="store_false",
        help="skip the utterance embeddings (<name>_embeddings.npz + .csv metadata)",
    )


def run(args: argparse.Namespace) -> int:
    """``demo``: write the demo study's files into OUTDIR and print their paths."""
    from voxmetrics.data.writers import write_embeddings, write_scores
    from voxmetrics.synth import demo_study

    check_outputs(folders=[args.outdir])
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    if args.format == "all":
        formats = ["csv", "parquet", "npz", "kaldi"]
    else:
        formats = [] if args.format == "vxm" else [args.format]
    written: list[Path] = []
    study = demo_study(seed=args.seed)
    for cond in study.conditions if formats else ():
        for split, sm in (("dev", cond.dev), ("eval", cond.eval)):
            for fmt in formats:
                path = out / f"{cond.name}_{split}{_SUFFIX[fmt]}"
                written += write_scores(sm, path, format=fmt)  # type: ignore[arg-type]
        if args.embeddings and cond.embeddings is not None:
            written += write_embeddings(
                cond.embeddings, out / f"{cond.name}_embeddings", format="npz"
            )
    if args.format in ("vxm", "all"):
        from voxmetrics.data.studyfile import save_study

        path = out / "demo.vxm"
        save_study(study, path)
        written.append(path)
    for p in written:
        print(p)
    return EXIT_OK
