"""``legal``: singling out, linkability and 1 - EER against the number of speakers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voxmetrics._types import ATTACKERS
from voxmetrics.cli import _options
from voxmetrics.cli._common import EXIT_OK, check_outputs, print_json, read_embedding_file
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count

HELP = "singling out, linkability and 1 - EER vs number of speakers per conversation length"
DESCRIPTION = (
    "The legally validated evaluation of Vauquier et al. 2025 (their figure 1) on one "
    "split of an embedding set: for each conversation length L (trial utterances "
    "averaged per speaker), singling out against the population size N, linkability "
    "(exact expectation) and the ROCCH-EER of the pooled scores (mean over random "
    "candidate draws) against the number N' of enrolled candidates. Lengths for which "
    "no speaker has L trial utterances are skipped and listed. Prints one JSON object: "
    "lengths, n_draws, results (per L: linkability_vs_n [[N', value]], eer_vs_n "
    "[[N', eer, sd]], singling_out_vs_n [[N, value, sd]] or null), skipped."
)


def add_parser(subparsers: Any) -> None:
    """The ``legal`` command and its options."""
    p = subparsers.add_parser(
        "legal", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    p.add_argument("--embeddings", metavar="EMB", required=True, help="embeddings (NPZ/NPY)")
    p.add_argument("--metadata", metavar="META", help="metadata CSV of the embeddings")
    _options.add_embedding_options(p, "--embeddings")
    p.add_argument(
        "--lengths",
        default="1,3,30",
        help="conversation lengths L, comma-separated (default 1,3,30 as the paper)",
    )
    p.add_argument(
        "--n",
        metavar="N_LIST",
        help="numbers of speakers, comma-separated (default 2, 5, 10, 20, 50, ... and all)",
    )
    p.add_argument(
        "--draws", type=int, default=5, help="random draws per point (default 5, as the paper)"
    )
    _options.add_seed(p, "the draws")
    _options.add_split(p, "split to use")
    p.add_argument(
        "--label", default=None, help="name of the condition in the figure (default: EMB's name)"
    )
    p.add_argument(
        "--attacker",
        choices=list(ATTACKERS),
        default=None,
        help="attacker of the condition, shown in the figure's legend",
    )
    _options.add_json(p)
    _options.add_html(p, "write the figure as a self-contained HTML page")


def _int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise VoxMetricsInputError(
            f"{option} '{text}': give whole numbers separated by commas, e.g. 1,3,30."
        ) from None
    if not values:
        raise VoxMetricsInputError(f"{option} is empty; give e.g. 1,3,30.")
    bad = [v for v in values if v < 1]
    if bad:
        raise VoxMetricsInputError(
            f"{option} '{text}': {bad[0]} is not a count; give whole numbers of 1 or more, e.g. "
            "1,3,30 (leave the option out for the default)."
        )
    return values


def run(args: argparse.Namespace) -> int:
    """``legal``: print the JSON of the legal evaluation; ``--html`` writes its figure."""
    from voxmetrics.metrics.legal import legal_evaluation

    check_outputs([args.json, args.html])
    lengths = _int_list(args.lengths, "--lengths")
    n = _int_list(args.n, "--n") if args.n else None
    if args.draws < 1:
        raise VoxMetricsInputError("--draws must be >= 1.")
    check_count("--draws", "draws", args.draws, "max_replicates")
    es = read_embedding_file(args.embeddings, args.metadata, args.system, args.ark_root)
    result = legal_evaluation(
        es, lengths, n=n, n_draws=args.draws, seed=args.seed, split=args.split
    )
    print_json(result.to_dict(), args.json)
    if args.html:
        from voxmetrics.plots.linkage import legal_figure

        label = args.label or Path(args.embeddings).stem
        fig = legal_figure(
            {label: result}, attackers={label: args.attacker} if args.attacker else None
        )
        Path(args.html).write_text(fig.to_html(include_plotlyjs=True), encoding="utf-8")
    return EXIT_OK
