"""``sbls``: the soft-biometric leakage score of an attacker's attribute predictions."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from voxmetrics.cli import _options
from voxmetrics.cli._common import EXIT_OK, check_outputs, print_json, read_embedding_file
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count, check_input_path

if TYPE_CHECKING:
    from voxmetrics.analysis.sbls import Attack

HELP = "soft-biometric leakage score of an attacker's attribute predictions"
DESCRIPTION = (
    "Soft Biometric Leakage Score (Seo et al. 2025, docs, Methods > SBLS): attribute "
    "inference, systematic linkage and subgroup protection, each in [0, 1] with 1 = no "
    "leakage. The attacker is an uploaded predictions file (utt_id, attribute, class, "
    "score or utt_id, attribute, predicted) or the built-in logistic regression on "
    "--embeddings, trained on the dev split of the original (--original) or anonymised "
    "embeddings. True labels are the metadata's attribute columns. With --bootstrap B "
    "the JSON carries `intervals`, {sbls|p_attr|p_assoc|p_subgroup: [low, high]}."
)


def add_parser(subparsers: Any) -> None:
    """The ``sbls`` command and its options."""
    p = subparsers.add_parser(
        "sbls", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    p.add_argument("--metadata", metavar="META", required=True, help="metadata CSV")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--predictions", metavar="PRED", help="attacker predictions CSV")
    source.add_argument("--embeddings", metavar="EMB", help="anonymised embeddings")
    p.add_argument(
        "--attacker",
        choices=["anonymised", "original"],
        default="anonymised",
        help="built-in attacker trained on the anonymised dev embeddings (informed; default, "
        "as in the study report and the dashboard) or on original ones (ignorant; needs "
        "--original). Recorded as attacker_trained_on",
    )
    p.add_argument("--original", metavar="EMB_O", help="original embeddings (same metadata)")
    _options.add_embedding_options(p, "--embeddings", original=True)
    _options.add_split(p, "split attacked")
    p.add_argument("--lambda", dest="lam", type=float, default=0.7, help="P_subgroup lambda")
    p.add_argument(
        "--weights", default="0.4,0.4,0.2", help="w_attr,w_assoc,w_sub (default 0.4,0.4,0.2)"
    )
    p.add_argument("--min-group-size", type=int, default=30, help="smallest subgroup used")
    _options.add_bootstrap_seed(
        p,
        "speaker-level bootstrap replicates for the 95%% `intervals` of sbls, p_attr, "
        "p_assoc and p_subgroup (the attacker trained once, the speakers resampled; needs a "
        "speaker column; default 0 = none)",
        "the bootstrap",
    )
    _options.add_json(p)


def run(args: argparse.Namespace) -> int:
    """``sbls``: print the JSON of the attack's SBLS (and its intervals)."""
    from voxmetrics.analysis.sbls import SBLSOptions, attack_sbls, sbls_intervals

    try:
        weights = tuple(float(w) for w in args.weights.split(","))
    except ValueError:
        raise VoxMetricsInputError(
            f"--weights '{args.weights}': give three numbers separated by commas."
        ) from None
    check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
    if args.bootstrap < 0:
        raise VoxMetricsInputError("--bootstrap must be >= 0 (0 = no intervals).")
    check_outputs([args.json])
    options = SBLSOptions(weights, args.lam, args.min_group_size)  # type: ignore[arg-type]
    attack = _uploaded_attack(args) if args.predictions else _embedding_attack(args)
    result = attack_sbls(attack, options)
    out = result.to_dict()
    if args.bootstrap:
        ivs = sbls_intervals(attack, options, n_boot=args.bootstrap, seed=args.seed, result=result)
        out["intervals"] = {k: [iv.low, iv.high] for k, iv in ivs.items()}
    print_json(out, args.json)
    return EXIT_OK


def _uploaded_attack(args: argparse.Namespace) -> Attack:
    """The attack of ``--predictions`` on the labels of ``--metadata``."""
    from voxmetrics.analysis.sbls import Attack
    from voxmetrics.data.predictions import join_predictions
    from voxmetrics.data.readers import read_table
    from voxmetrics.metrics.sbls import attribute_columns

    for p in (args.metadata, args.predictions):
        check_input_path(p)
    meta = read_table(args.metadata)
    if "utt_id" not in meta.columns:
        raise VoxMetricsInputError(f"{args.metadata}: the metadata needs a utt_id column.")
    if meta.empty:
        raise VoxMetricsInputError(
            f"{args.metadata}: the labels file has a header but no rows; add one row per "
            "utterance (utt_id and its attribute columns, e.g. sex)."
        )
    if "split" in meta.columns:
        splits = sorted(set(meta["split"].astype(str)))
        meta = meta[meta["split"].astype(str) == args.split]
        if meta.empty:
            raise VoxMetricsInputError(
                f"{args.metadata}: the labels file has no row of split '{args.split}' (its "
                f"splits: {', '.join(splits)}); choose one with --split."
            )
    if args.bootstrap and "speaker" not in meta.columns:
        raise VoxMetricsInputError(
            f"{args.metadata}: the bootstrap resamples speakers, so the metadata needs a "
            "speaker column; add one or leave out --bootstrap."
        )
    names = attribute_columns(meta)
    utt = meta["utt_id"].astype(str).to_numpy()
    predictions = join_predictions(args.predictions, utt, names, name=args.predictions)
    names = [a for a in names if a in predictions]
    speakers = meta["speaker"] if "speaker" in meta.columns else meta["utt_id"]
    return Attack(
        labels={a: meta[a].to_numpy() for a in names},
        predictions=predictions,
        speakers=speakers.astype(str).to_numpy(),
        utt_ids=utt,
        attacker="uploaded predictions",
        key=args.predictions,
    )


def _embedding_attack(args: argparse.Namespace) -> Attack:
    """The built-in attacker on ``--embeddings`` (trained on ``--original`` or on them)."""
    from voxmetrics.analysis.sbls import embedding_set_attack

    anonymised = read_embedding_file(args.embeddings, args.metadata, args.system, args.ark_root)
    original = (
        read_embedding_file(args.original, args.metadata, args.original_system, args.ark_root)
        if args.original
        else None
    )
    return embedding_set_attack(
        anonymised, original=original, attacker=args.attacker, split=args.split
    )
