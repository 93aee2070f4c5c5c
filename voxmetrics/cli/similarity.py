"""``similarity``: voice similarity matrices, DeID and G_VD of original vs anonymised voices."""

from __future__ import annotations

import argparse
from typing import Any

from voxmetrics.cli import _options
from voxmetrics.cli._common import EXIT_OK, check_outputs, print_json, read_embedding_file
from voxmetrics.limits import check_count

HELP = "voice similarity matrices, DeID and G_VD of original vs anonymised embeddings"
DESCRIPTION = (
    "Speaker-level voice similarity matrices (original-original, original-anonymised, "
    "anonymised-anonymised) over all utterances of one split, De-Identification and "
    "gain of voice distinctiveness (VoicePrivacy 2022). The anonymised utterances keep "
    "their originals' utt_id. Speakers with a single utterance in either set have no "
    "same-speaker pair: they are left out and counted (a line on stderr). Prints one "
    "JSON object: deid, g_vd, d_diag_oo, d_diag_oa, d_diag_aa, n_speakers_left_out, and "
    "with --bootstrap their 95% speaker-level `intervals`."
)


def add_parser(subparsers: Any) -> None:
    """The ``similarity`` command and its options."""
    p = subparsers.add_parser(
        "similarity", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    p.add_argument("--original", metavar="EMB_O", required=True, help="original embeddings")
    p.add_argument("--anonymised", metavar="EMB_A", required=True, help="anonymised embeddings")
    p.add_argument("--metadata", metavar="META", help="metadata CSV shared by both sets")
    _options.add_embedding_options(p, "--anonymised", original=True)
    p.add_argument(
        "--calibration",
        choices=["pav", "raw"],
        default="pav",
        help="LLRs from PAV + Laplace of the pair scores (VPC 2022, default) or raw scores",
    )
    _options.add_split(p, "split to use")
    _options.add_bootstrap_seed(
        p,
        "speaker-level bootstrap replicates for the 95%% intervals of every number "
        "(`intervals`; default 0: none)",
        "the bootstrap",
    )
    _options.add_json(p)


def run(args: argparse.Namespace) -> int:
    """``similarity``: print the JSON of the voice similarity (and its intervals)."""
    from voxmetrics.metrics.similarity import voice_similarity

    check_outputs([args.json])
    original = read_embedding_file(
        args.original, args.metadata, args.original_system, args.ark_root
    )
    anonymised = read_embedding_file(args.anonymised, args.metadata, args.system, args.ark_root)
    result = voice_similarity(original, anonymised, split=args.split, calibration=args.calibration)
    out = result.to_dict()
    check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
    if args.bootstrap > 0:
        from voxmetrics.metrics.embedding_intervals import similarity_intervals

        ci = similarity_intervals(result, n_boot=args.bootstrap, seed=args.seed)
        out["intervals"] = {k: [v.low, v.high] for k, v in ci.items()}
    print_json(out, args.json)
    return EXIT_OK
