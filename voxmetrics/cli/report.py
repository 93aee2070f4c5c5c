"""``report``: the HTML / PDF / JSON / CSV / LaTeX / Markdown report of a study file."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from voxmetrics.cli import _options
from voxmetrics.cli._common import EXIT_FAIL_ON, EXIT_OK, check_outputs, progress_bar
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count, check_input_path

if TYPE_CHECKING:
    from voxmetrics.data.study import Study

HELP = "write the report of a study file (.vxm): HTML, PDF, JSON, CSV, LaTeX, Markdown"
DESCRIPTION = (
    "Evaluate every condition of a saved study (a .vxm file, from the dashboard or "
    "`demo --format vxm`) with the study's settings and write its report: one "
    "self-contained HTML page (tables and interactive figures, viewable offline), a "
    "PDF printed from it by headless Chromium (BROWSER_PATH or chromium on PATH), the "
    "JSON of every number, the tables as CSV files, and the results tables ready "
    "for a paper as LaTeX (booktabs; \\usepackage{booktabs}) and Markdown, with "
    "the bootstrap intervals as '0.47 [0.44, 0.50]'. Give at least one output. Every "
    "report records its provenance (the versions of VoxMetrics and of the libraries behind "
    "its numbers, the sha256 of the study file and of the files it was built from, the "
    "settings, seed and each condition's attacker); --verify R.json re-checks a report "
    "against the study file instead of writing one. "
    "Exit status: 0 success (verified), 1 a --verify check failed, 2 bad input (e.g. a "
    "damaged .vxm file, no Chromium for --pdf)."
)


def add_parser(subparsers: Any) -> None:
    """The ``report`` command and its options."""
    p = subparsers.add_parser(
        "report", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    p.add_argument("study", metavar="STUDY.vxm", help="the study file")
    _options.add_html(p, "write the HTML report to this file")
    p.add_argument("--pdf", metavar="OUT", help="write a PDF of the report (needs Chromium)")
    _options.add_json(p, "write every number as JSON to this file")
    p.add_argument("--csv", metavar="DIR", help="write the tables as CSV files into DIR")
    p.add_argument(
        "--latex",
        metavar="DIR",
        help="write the results tables as LaTeX (booktabs, with bootstrap intervals) into DIR",
    )
    p.add_argument(
        "--markdown",
        metavar="DIR",
        help="write the results tables as Markdown (with bootstrap intervals) into DIR",
    )
    p.add_argument(
        "--verdicts",
        metavar="DIR",
        help="write how firm the verdicts are (each card cell's share of bootstrap replicates "
        "keeping its level, the ranking's P(in band), rank intervals and P(rank 1)) and the "
        "most exposed speakers as CSV files into DIR",
    )
    p.add_argument(
        "--verify",
        metavar="REPORT.json",
        help="re-check a report's JSON against STUDY.vxm instead of writing a report: the "
        "study file's and the recorded input files' sha256, each condition's data, the "
        "library versions, and every number computed again with the recorded settings "
        "(exit 1 when a check fails)",
    )
    _options.add_bootstrap_seed(
        p,
        "bootstrap replicates of the intervals (default: the study's setting; 0 = none)",
        "folds and bootstrap",
        study=True,
    )
    _options.add_lid_variant(p, study=True)
    p.add_argument("--title", help="title of the HTML page (default: from the study's name)")
    p.add_argument(
        "--original",
        metavar="NAME",
        help="the condition holding the unprocessed voices, against which DeID and G_VD are "
        "measured (default: the study's first condition)",
    )
    p.add_argument(
        "--reference",
        metavar="NAME",
        help="the condition every other one is compared against in the paired comparisons "
        "(A of 'B vs A'; default: the study's first condition)",
    )
    _options.add_ties(p, study=True)
    p.add_argument(
        "--subset",
        metavar="ATTR=VALUE",
        help="report on the trials with this per-trial attribute only, e.g. sex=F (the "
        "per-gender results of a VoicePrivacy study)",
    )
    p.add_argument(
        "--by",
        metavar="ATTR",
        help="add each condition's results per value of this per-trial attribute to the JSON "
        '("by": {ATTR: {VALUE: {...}}}), e.g. sex: every per-gender result of a '
        "VoicePrivacy study in one report",
    )
    _options.add_linkability_rule(p, study=True)


def run(args: argparse.Namespace) -> int:
    """``report``: evaluate the study with its settings (or the options') and write the files."""
    from voxmetrics.data.provenance import InputFile
    from voxmetrics.report.export import require_chromium, write_report
    from voxmetrics.report.study import build_study_report
    from voxmetrics.report.verify import STUDY_FILE_ROLE

    if args.verify is not None:
        return _verify(args)
    outputs = (args.html, args.pdf, args.json, args.csv, args.latex, args.markdown)
    if not any(outputs) and not args.verdicts:
        raise VoxMetricsInputError(
            "nothing to write: give at least one of --html OUT, --pdf OUT, --json OUT, "
            "--csv DIR, --latex DIR, --markdown DIR, --verdicts DIR (or --verify R.json)."
        )
    check_input_path(args.study)
    check_outputs(
        [args.html, args.pdf, args.json], [args.csv, args.latex, args.markdown, args.verdicts]
    )
    study = _load(args)
    chromium = require_chromium() if args.pdf else None  # fail before the evaluation
    for option, name in (("--original", args.original), ("--reference", args.reference)):
        if name is not None and name not in study.names:
            raise VoxMetricsInputError(
                f"{option} {name!r}: no such condition; the study's conditions are "
                f"{', '.join(study.names)}."
            )
    by = {}
    if args.by is not None:
        if args.by not in study.subset_options():
            raise VoxMetricsInputError(
                f"--by {args.by!r}: not a per-trial attribute of every condition; the study's "
                f"are {', '.join(study.subset_options()) or 'none'}."
            )
        by = {"by": args.by}
    sr = build_study_report(
        study,
        progress=progress_bar,
        original=args.original,
        reference=args.reference,
        inputs=[InputFile.of(args.study, role=STUDY_FILE_ROLE)],
        subset=args.subset,
        **by,
    )
    print(file=sys.stderr)
    print("voxmetrics: writing the report", file=sys.stderr)
    written = write_report(
        sr,
        html=args.html,
        json=args.json,
        csv_dir=args.csv,
        pdf=args.pdf,
        latex_dir=args.latex,
        markdown_dir=args.markdown,
        chromium=chromium,
        title=args.title,
        verdicts_dir=args.verdicts,
    )
    for p in written:
        print(p)
    return EXIT_OK


def _verify(args: argparse.Namespace) -> int:
    """``report STUDY.vxm --verify R.json``: every check on stdout; 1 when one fails."""
    from voxmetrics.report.verify import verify_report

    check_input_path(args.study)
    check_input_path(args.verify)
    print("voxmetrics: verifying the report (it is computed again)", file=sys.stderr)
    result = verify_report(args.verify, args.study)
    for line in result.lines():
        print(line)
    return EXIT_OK if result.ok else EXIT_FAIL_ON


def _load(args: argparse.Namespace) -> Study:
    """The study file, its settings overridden by the options given."""
    from dataclasses import replace

    from voxmetrics.data.studyfile import load_study

    study = load_study(args.study)
    overrides = {
        k: v
        for k, v in (
            ("bootstrap", args.bootstrap),
            ("seed", args.seed),
            ("lid_variant", args.lid_variant),
            ("ties", args.ties),
            ("linkability_rule", args.linkability_rule),
        )
        if v is not None
    }
    check_count("--bootstrap", "replicates", args.bootstrap or 0, "max_replicates")
    if overrides:  # the report states the settings it was computed with
        study = replace(study, settings=replace(study.settings, **overrides))
    if args.subset is not None:
        attr, sep, value = args.subset.partition("=")
        if not sep or not attr.strip() or not value.strip():
            raise VoxMetricsInputError(
                f"--subset {args.subset!r}: give ATTR=VALUE, e.g. sex=F; the study's attributes "
                f"are {study.subset_options() or 'none'}."
            )
        study = study.subset(attr.strip(), value.strip())
    return study
