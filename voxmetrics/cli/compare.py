"""``compare``: two conditions of a study file, paired on their shared speakers."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, cast

from voxmetrics.cli import _options
from voxmetrics.cli._common import EXIT_OK, check_outputs, print_json
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count, check_input_path

if TYPE_CHECKING:
    from voxmetrics.metrics.legal import LinkabilityRule
    from voxmetrics.metrics.pools import Ties

HELP = "paired comparison of two conditions of a study file (.vxm) sharing speakers"
DESCRIPTION = (
    "Compare conditions A and B of a saved study on the same trial speakers (two "
    "anonymisers, or two attackers on one): for every headline number, its value in A "
    "and B, the difference B - A, the difference's 95% interval and a two-sided "
    "p-value, both from a paired speaker-level bootstrap (the same speakers drawn for "
    "both), and p_adjusted, Holm's adjustment over all numbers compared (family-wise "
    "error control). Prints one JSON object {metric: {a, b, difference, interval, "
    "p_value, p_adjusted}}. Sample maxima (lid_max, max_d, log10_l) get no interval: "
    "compare their q95 quantiles. Singling out, DeID and G_VD need utterance "
    "embeddings (DeID and G_VD: against the original voices, --original); without "
    "them their difference is null and a 'reason' key says why; Holm's adjustment "
    "runs over these three on their own. When both conditions have embeddings with "
    "attribute columns, sbls, p_attr, p_assoc and p_subgroup are compared too (the "
    "default attacker of each, trained once), with Holm's adjustment over these four. "
    "Exit status: 0 success, 2 bad input."
)


def add_parser(subparsers: Any) -> None:
    """The ``compare`` command and its options."""
    p = subparsers.add_parser(
        "compare", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    p.add_argument("study", metavar="STUDY.vxm", help="the study file")
    p.add_argument("a", metavar="A", help="name of the first condition")
    p.add_argument("b", metavar="B", help="name of the second condition")
    _options.add_bootstrap_seed(
        p,
        "paired replicates (default: the study's setting, at least 200)",
        "the replicates",
        study=True,
    )
    p.add_argument(
        "--original",
        metavar="NAME",
        help="the condition holding the unprocessed voices, for DeID and G_VD (default: the "
        "study's first condition, as in its report)",
    )
    _options.add_json(p)


def run(args: argparse.Namespace) -> int:
    """``compare``: print the JSON of the paired comparison of conditions A and B."""
    from voxmetrics.data.studyfile import load_study
    from voxmetrics.evaluation import compare_conditions

    check_input_path(args.study)
    check_outputs([args.json])
    study = load_study(args.study)
    original = study.conditions[0].name if args.original is None else args.original
    for name in (args.a, args.b, original):
        if name not in study.names:
            raise VoxMetricsInputError(
                f"{args.study}: no condition named {name!r}; its conditions are "
                f"{', '.join(study.names)}."
            )
    n_boot = args.bootstrap if args.bootstrap is not None else max(200, study.settings.bootstrap)
    check_count("--bootstrap", "replicates", n_boot, "max_replicates")
    if n_boot < 1:
        raise VoxMetricsInputError("--bootstrap must be >= 1 for a comparison.")
    result = compare_conditions(
        study.get(args.a),
        study.get(args.b),
        n_boot=n_boot,
        seed=study.settings.seed if args.seed is None else args.seed,
        cross_calibrate=study.settings.cross_calibrate,
        lid_variant=study.settings.lid_variant,
        # StudySettings accepts only the rules' names (checked when the study is built)
        ties=cast("Ties", study.settings.ties),
        linkability_rule=cast("LinkabilityRule", study.settings.linkability_rule),
        original=study.get(original),
    )
    print_json({k: c.to_dict() for k, c in result.items()}, args.json)
    return EXIT_OK
