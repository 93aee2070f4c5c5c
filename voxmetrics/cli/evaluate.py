"""``evaluate``: one condition's metrics as one JSON object (in memory; on Dask: ``_blockwise``)."""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxmetrics.cli import _options
from voxmetrics.cli._attackers import add_attacker_options, attack_condition, check_backend_options
from voxmetrics.cli._common import (
    check_outputs,
    check_source,
    finish,
    priors,
    read_embedding_file,
    read_score_file,
)
from voxmetrics.cli._fail_on import parse_fail_on
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count, check_input_path

if TYPE_CHECKING:
    from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
    from voxmetrics.data.study import Condition

HELP = "evaluate one condition and print its metrics as JSON"
DESCRIPTION = (
    "Evaluate one condition. EVAL and DEV are score files in any supported format: "
    "long CSV or Parquet (trial_id, trial_speaker, enrol_speaker, score), NPZ (scores, "
    "trial_ids, trial_speakers, enrol_speakers) or Kaldi / VoicePrivacy scores "
    "(enrol_id trial_id score) with their key file. A sparse trial list (not every "
    "trial scored against every enrolled identity: missing long rows or Kaldi lines, an "
    "NPZ 'mask' array or NaN) is accepted: EER, ROCCH-EER, Cllr, min Cllr, ZEBRA and the "
    "DCFs use every listed pair, the 1-to-N metrics the trials listed against every "
    "enrolled identity (null when there are none); 'trials_used' in the JSON says which. "
    "Instead of EVAL, --embeddings "
    "scores utterance embeddings (NPZ / NPY, Kaldi ark / scp or HDF5 with --metadata, "
    "or Parquet; cosine against enrolment profiles; a dev split, if present, calibrates "
    "LID) and adds singling out; --backend scores them with another attacker back-end "
    "trained on the attacker's own data (a 'train' split, else dev), or with the strongest "
    "of them chosen on dev (--backend strongest), and says which in the JSON's 'attacker' "
    "block, with a warning when the attacker may be too weak. Besides the privacy metrics "
    "the JSON has the standard verification outputs: normalised minDCF (and actDCF with "
    "--llr) per target prior under 'dcf', d', and the true-accept rate at false-accept "
    "rates of 1 % and 0.1 % under 'tar_at_far'. Prints one JSON object. Exit status: 0 "
    "success, 1 a --fail-on condition holds, 2 bad input."
)
SCHEDULER = (
    "evaluate block by block on Dask, never holding the score matrix: 'local' (a "
    "cluster on this machine) or a scheduler address such as tcp://host:8786. Takes "
    "--embeddings, or as EVAL a folder of score chunks (NPZ or Parquet score files, "
    "each with some of the trials; or one such file) or a Zarr store EVAL.zarr. Every "
    "number equals the in-memory JSON; --by needs --embeddings, and --bootstrap, "
    "--cross-calibrate, --trials, --trial-attributes and --distance are refused"
)


def add_parser(subparsers: Any) -> None:
    """The ``evaluate`` command and its options."""
    p = subparsers.add_parser(
        "evaluate", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    _add_inputs(p)
    add_attacker_options(p)
    _add_metric_options(p)
    _add_subsets(p)
    _options.add_dask_options(p, SCHEDULER)
    _options.add_json(p)
    _options.add_html(p, "write an HTML report to this file")
    p.add_argument(
        "--fail-on",
        metavar="EXPR",
        help='exit with status 1 when this holds, e.g. "eer < 0.45 or linkability > 0.1"',
    )


def _add_inputs(p: argparse.ArgumentParser) -> None:
    """EVAL or --embeddings, DEV, their key files, their format and score kind."""
    p.add_argument("eval", metavar="EVAL", nargs="?", help="score file of the evaluated (eval) set")
    p.add_argument(
        "--embeddings",
        metavar="EMB",
        help="utterance embeddings (NPZ/NPY, Kaldi ark/scp or HDF5 with --metadata, or "
        "Parquet) instead of EVAL",
    )
    p.add_argument(
        "--metadata",
        metavar="META",
        help="metadata CSV of --embeddings (it may list a subset of them: the rest are ignored "
        "and counted on stderr)",
    )
    p.add_argument(
        "--original",
        nargs="+",
        metavar=("EMB", "META"),
        help="original (unprotected) embeddings of the same speaker encoder, with their "
        "metadata: the originals of the attacker's training utterances (same utt_id) for "
        "--backend procrustes, and original enrolment and trials (eval split) for the "
        "weak-attacker check",
    )
    _options.add_embedding_options(p, "--embeddings")
    _options.add_split(p, "split of --embeddings to score")
    p.add_argument(
        "--trials",
        metavar="KEY",
        help="Kaldi key (enrol_id trial_id target|nontarget) or utt2spk file for EVAL",
    )
    p.add_argument("--dev", metavar="DEV", help="score file of a calibration (dev) set")
    p.add_argument("--dev-trials", metavar="DEV_KEY", help="Kaldi key or utt2spk file for DEV")
    p.add_argument(
        "--format",
        choices=["auto", "csv", "parquet", "npz", "kaldi"],
        default="auto",
        help="score file format (default: detected from the content)",
    )
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="evaluate a broken score file instead of refusing it: Kaldi key pairs or whole "
        "key trials without a score (also a master key listing more trials than the scores), "
        "NaN scores and rows that end early are left out, counted in a warning and in the "
        "JSON's 'input_warnings'",
    )
    kind = p.add_mutually_exclusive_group()
    kind.add_argument(
        "--distance",
        action="store_true",
        help="the score files hold distances (lower = closer): they are negated on reading and "
        "the JSON says score_kind 'distance (negated)'",
    )
    kind.add_argument(
        "--llr",
        action="store_true",
        help="the scores are calibrated natural-log LLRs: adds the actual DCFs (act_dcf)",
    )


def _add_metric_options(p: argparse.ArgumentParser) -> None:
    """The DCF costs and priors, the LID calibration, the bootstrap and the tie rule."""
    p.add_argument(
        "--p-target",
        metavar="P[,P...]",
        default="0.01,0.001",
        help="target priors of minDCF / actDCF, comma-separated (default 0.01,0.001); "
        "their keys in the JSON dcf block, e.g. --fail-on 'dcf[\"0.01\"].min_dcf < 0.9'",
    )
    p.add_argument("--c-miss", type=float, default=1.0, help="cost of a miss (default 1)")
    p.add_argument("--c-fa", type=float, default=1.0, help="cost of a false alarm (default 1)")
    p.add_argument(
        "--cross-calibrate",
        metavar="K",
        type=int,
        help="without --dev: calibrate LID by speaker-disjoint K-fold cross-calibration on EVAL",
    )
    _options.add_lid_variant(p)
    _options.add_bootstrap_seed(
        p,
        "speaker-level bootstrap replicates for the 95%% interval of every headline "
        "number (top-level and per-block `intervals`; default 0: none)",
        "folds and bootstrap",
    )
    _options.add_ties(p)
    _options.add_linkability_rule(p)


def _add_subsets(p: argparse.ArgumentParser) -> None:
    """``--by`` and its ``--trial-attributes``."""
    p.add_argument(
        "--by",
        metavar="ATTR",
        help="also evaluate each value of this per-trial attribute (e.g. sex) on its own trials "
        'and enrolled identities; adds "by": {ATTR: {VALUE: {...}}} to the JSON',
    )
    p.add_argument(
        "--trial-attributes",
        metavar="CSV",
        help="per-trial attributes for --by (e.g. for Kaldi scores): a CSV or Parquet with a "
        "trial_id column (one row per trial) or a speaker column (one row per speaker, e.g. "
        "speaker,sex) and the attribute columns; applied to EVAL, and to DEV when it covers it",
    )


def run(args: argparse.Namespace) -> int:
    """``evaluate``: read the inputs, evaluate in memory (or on Dask), print the JSON."""
    from voxmetrics.evaluation import evaluate

    check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
    check_outputs([args.json, args.html])
    if args.fail_on:  # a malformed or hostile expression is refused before any work
        parse_fail_on(args.fail_on)
    check_backend_options(args, [args.backend], original=bool(args.original))
    if args.scheduler:
        from voxmetrics.cli._blockwise import run_blockwise

        return run_blockwise(args)
    inputs = _read_inputs(args)
    dev_sm = inputs.dev
    if args.bootstrap < 0 or (args.cross_calibrate is not None and args.cross_calibrate < 2):
        raise VoxMetricsInputError("--bootstrap must be >= 0 and --cross-calibrate >= 2.")
    options = {
        "cross_calibrate": None if dev_sm is not None else args.cross_calibrate,
        "lid_variant": args.lid_variant,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "p_targets": priors(args.p_target),
        "c_miss": args.c_miss,
        "c_fa": args.c_fa,
        "ties": args.ties,
        "by": args.by,
        "linkability_rule": args.linkability_rule,
    }
    if inputs.condition is not None:  # an attacker back-end: the engine evaluates its condition
        from voxmetrics.evaluation import evaluate_condition

        report = evaluate_condition(inputs.condition, **options)
        return finish(args, report, inputs.input_warnings)
    report = evaluate(
        inputs.eval,
        dev=dev_sm,
        name=Path(args.eval or args.embeddings).stem,
        embeddings=inputs.embeddings,
        split=args.split,
        score_kind="distance" if args.distance else "llr" if args.llr else "similarity",
        **options,
    )
    if inputs.embeddings is not None:  # today's attacker: cosine of the given embeddings
        from dataclasses import replace

        from voxmetrics.data.recipe import AttackerRecipe

        report = replace(report, recipe=AttackerRecipe("cosine"))
    return finish(args, report, inputs.input_warnings)


@dataclass(frozen=True)
class Inputs:
    """What ``evaluate`` read: the score matrices, the embeddings and what was left out."""

    eval: ScoreMatrix
    """The evaluated (eval) set's scores."""
    dev: ScoreMatrix | None = None
    """The calibration (dev) set's scores, if any."""
    embeddings: EmbeddingSet | None = None
    """The embeddings scored, with ``--embeddings``."""
    input_warnings: tuple[str, ...] = ()
    """What ``--allow-incomplete`` left out of the score files, for the JSON."""
    condition: Condition | None = None
    """The condition of an attacker back-end (``--backend``, or ``--original`` for the
    weak-attacker check), None for today's scoring."""


def _read_inputs(args: argparse.Namespace) -> Inputs:
    """The eval and dev score matrices and the embeddings (or None) of ``evaluate``."""
    check_source(args, "a score file")
    embeddings = dev_sm = None
    notes: tuple[str, ...] = ()
    if args.embeddings:
        if args.distance:
            raise VoxMetricsInputError(
                "--distance applies to score files; --embeddings are scored by cosine "
                "similarity (higher = closer)."
            )
        embeddings = read_embedding_file(args.embeddings, args.metadata, args.system, args.ark_root)
        if args.backend != "cosine" or args.original:
            if args.trial_attributes:
                raise VoxMetricsInputError(
                    "--trial-attributes goes with score files; with --backend give the "
                    "attributes as metadata columns of --embeddings."
                )
            originals = _read_originals(args)
            condition, _ = attack_condition(
                args, embeddings, name=Path(args.embeddings).stem, originals=originals
            )
            return Inputs(condition.eval, condition.dev, embeddings, condition=condition)
        eval_sm = embeddings.score_matrix(args.split)
        if args.split == "eval" and "dev" in embeddings.splits() and not args.dev:
            dev_sm = embeddings.score_matrix("dev")
    else:
        if args.original or args.backend != "cosine":
            raise VoxMetricsInputError(
                "--backend and --original score embeddings: give --embeddings (imported scores "
                "are the attacker that made them)."
            )
        eval_sm, notes = read_score_file(
            args.eval,
            args.trials,
            args.format,
            args.distance,
            allow_incomplete=args.allow_incomplete,
        )
    if args.dev:
        dev_sm, dev_notes = read_score_file(
            args.dev,
            args.dev_trials,
            args.format,
            args.distance,
            allow_incomplete=args.allow_incomplete,
        )
        notes += dev_notes
    if args.dev_trials and not args.dev:
        raise VoxMetricsInputError("--dev-trials was given without --dev; add --dev DEV.")
    if args.trial_attributes:
        eval_sm, dev_sm = _with_attributes(args.trial_attributes, eval_sm, dev_sm)
    return Inputs(eval_sm, dev_sm, embeddings, notes)


def _read_originals(args: argparse.Namespace) -> EmbeddingSet | None:
    """``--original EMB [META]``: the original embeddings (None when not given)."""
    if not args.original:
        return None
    if len(args.original) > 2:
        raise VoxMetricsInputError("--original takes EMB and optionally META, not more.")
    meta = args.original[1] if len(args.original) == 2 else None
    return read_embedding_file(args.original[0], meta, None, args.ark_root)


def _with_attributes(
    path: str, eval_sm: ScoreMatrix, dev_sm: ScoreMatrix | None
) -> tuple[ScoreMatrix, ScoreMatrix | None]:
    """``--trial-attributes``: the table's columns on EVAL, and on DEV when it covers it."""
    from voxmetrics.data import read_table

    check_input_path(Path(path))
    table = read_table(path)
    where = Path(path).name
    eval_sm = eval_sm.with_attributes(table, where=where)
    if dev_sm is not None:
        with contextlib.suppress(VoxMetricsInputError):  # a table of eval speakers only
            dev_sm = dev_sm.with_attributes(table, where=where)
    return eval_sm, dev_sm
