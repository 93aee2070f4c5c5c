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
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from voxmetrics._types import ATTACKERS
from voxmetrics._version import __version__
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import (
    Limits,
    check_count,
    check_input_path,
    get_limits,
    parse_limit,
    use_limits,
)

__all__ = ["DASHBOARD_CONFIG", "dashboard_command", "dashboard_script", "evaluate_fail_on", "main"]

EXIT_OK, EXIT_FAIL_ON, EXIT_BAD_INPUT = 0, 1, 2
MAX_FAIL_ON_CHARS = 2000
"""Longest ``--fail-on`` expression accepted."""
MAX_FAIL_ON_DEPTH = 50
"""Deepest nesting of a ``--fail-on`` expression accepted."""

_COMPARE = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def _lookup(node: ast.expr, result: dict[str, Any], expr: str) -> Any:
    path: list[str] = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute):
            path.append(node.attr)
        elif isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str | int):
            path.append(str(node.slice.value))  # e.g. dcf["0.01"]
        else:
            raise VoxMetricsInputError(
                f"--fail-on '{expr}': unsupported index; index only with a quoted key, e.g. "
                'dcf["0.01"].min_dcf.'
            )
        node = node.value
    if not isinstance(node, ast.Name):
        raise VoxMetricsInputError(f"--fail-on '{expr}': only metric names like eer or lid.alid.")
    path.append(node.id)
    value: Any = result
    for depth, key in enumerate(reversed(path)):
        name = ".".join(reversed(path[len(path) - depth - 1 :]))
        if value is None:
            parent = ".".join(reversed(path[len(path) - depth :]))
            raise VoxMetricsInputError(
                f"--fail-on '{expr}': '{parent}' is null for this evaluation, so '{name}' has "
                "no value (e.g. the lid block needs --dev)."
            )
        if not isinstance(value, dict) or key not in value:
            keys = ", ".join(sorted(value)) if isinstance(value, dict) else "none"
            raise VoxMetricsInputError(
                f"--fail-on '{expr}': unknown metric '{name}'; available here: {keys}."
            )
        value = value[key]
    if value is None:
        raise VoxMetricsInputError(
            f"--fail-on '{expr}': '{'.'.join(reversed(path))}' is null for this evaluation."
        )
    return value


def _eval(node: ast.expr, result: dict[str, Any], expr: str) -> Any:
    if isinstance(node, ast.BoolOp):
        values = [bool(_eval(v, result, expr)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, result, expr)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, result, expr)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, result, expr)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, result, expr)
            if type(op) not in _COMPARE:
                raise VoxMetricsInputError(f"--fail-on '{expr}': use <, <=, >, >=, == or !=.")
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
        return node.value
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        return _lookup(node, result, expr)
    raise VoxMetricsInputError(
        f"--fail-on '{expr}': unsupported expression; write comparisons of metric names and "
        'numbers joined by and / or / not, e.g. "lid.lid_max > 1.0 or eer < 0.45".'
    )


def evaluate_fail_on(expr: str, result: dict[str, Any]) -> bool:
    """Whether a ``--fail-on`` expression holds for a result object (no Python ``eval``).

    Examples
    --------
    >>> evaluate_fail_on("eer < 0.45 or linkability > 0.5", {"eer": 0.3, "linkability": 0.1})
    True
    >>> evaluate_fail_on("not eer < 0.45", {"eer": 0.3})
    False
    >>> evaluate_fail_on('dcf["0.01"].min_dcf < 0.9', {"dcf": {"0.01": {"min_dcf": 0.5}}})
    True
    """
    return bool(_eval(_parse_fail_on(expr), result, expr))


def _parse_fail_on(expr: str) -> ast.expr:
    """The expression tree of ``expr``, refusing overlong or deeply nested expressions."""
    if len(expr) > MAX_FAIL_ON_CHARS:
        raise VoxMetricsInputError(
            f"--fail-on: the expression is {len(expr):,} characters long, over the limit of "
            f"{MAX_FAIL_ON_CHARS:,}; write a shorter condition."
        )
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, RecursionError, MemoryError):
        raise VoxMetricsInputError(
            f"--fail-on '{expr:.80}' is not a valid expression (or is nested too deeply); "
            'e.g. "eer < 0.45".'
        ) from None
    depth = _depth(tree.body)
    if depth > MAX_FAIL_ON_DEPTH:
        raise VoxMetricsInputError(
            f"--fail-on '{expr:.80}': nested more than {MAX_FAIL_ON_DEPTH} levels deep (the "
            "limit); write a flatter condition."
        )
    return tree.body


def _depth(node: ast.AST) -> int:
    """Nesting depth of an expression tree, counted without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > MAX_FAIL_ON_DEPTH:
            break
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return deepest


def _check_outputs(files: Sequence[str | None] = (), folders: Sequence[str | None] = ()) -> None:
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


DASHBOARD_CONFIG: dict[str, str] = {
    "theme.base": "light",
    "theme.primaryColor": "#2E6F95",
    "theme.backgroundColor": "#FFFFFF",
    "theme.secondaryBackgroundColor": "#F2F5F8",
    "theme.textColor": "#1E2A33",
    # the menu is drawn by voxmetrics.ui.page_setup with st.page_link
    "client.showSidebarNavigation": "false",
    "client.toolbarMode": "minimal",
    "browser.gatherUsageStats": "false",
    # a float32 NPZ of a 22,024 x 4,949 score matrix is ~440 MB; Streamlit's default is 200 MB
    "server.maxUploadSize": "1024",
}
"""The Streamlit settings ``voxmetrics app`` passes on the command line (the same as the
repository's ``.streamlit/config.toml``), so they hold from any working folder."""


def dashboard_script() -> Path:
    """The dashboard's ``app.py``: the wheel's ``voxmetrics/_dashboard/`` or the checkout's root."""
    package = Path(__file__).resolve().parent
    installed = package / "_dashboard" / "app.py"
    return installed if installed.is_file() else package.parent / "app.py"


def dashboard_command(
    *, port: int | None = None, dev: bool = False, streamlit_args: Sequence[str] = ()
) -> list[str]:
    """The ``streamlit run`` command line that ``voxmetrics app`` executes.

    Parameters
    ----------
    port : int, optional
        Server port (default: Streamlit's, 8501).
    dev : bool
        Watch the dashboard's files and rerun on save (for developing the pages); off by
        default, so the idle server touches no file and uses no CPU.
    streamlit_args : sequence of str
        More ``streamlit run`` options (e.g. ``--server.headless true``); they come last, so
        they override the ones above.

    Examples
    --------
    >>> cmd = dashboard_command(port=8600)
    >>> cmd[1:4], cmd[4].endswith("app.py")
    (['-m', 'streamlit', 'run'], True)
    >>> " ".join(cmd[cmd.index("--server.fileWatcherType") :][:4])
    '--server.fileWatcherType none --server.port 8600'
    """
    options = [f"--{key}={value}" for key, value in DASHBOARD_CONFIG.items()]
    options += ["--server.fileWatcherType", "auto" if dev else "none"]
    if dev:
        options += ["--server.runOnSave", "true"]
    if port is not None:
        options += ["--server.port", str(port)]
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(dashboard_script()),
        *options,
        *streamlit_args,
    ]


def _dask_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workers",
        type=int,
        default=2,
        help="workers of the --scheduler local cluster (default 2, one thread each)",
    )
    p.add_argument(
        "--memory-limit",
        metavar="SIZE",
        default=None,
        help="memory limit per worker of the --scheduler local cluster, e.g. 300MB "
        "(default: Dask's, the machine's memory shared by the workers)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m voxmetrics",
        description="Privacy metrics for anonymised speech (VoxMetrics).",
    )
    parser.add_argument("--version", action="version", version=f"voxmetrics {__version__}")
    limit = argparse.ArgumentParser(add_help=False)
    limit.add_argument(
        "--limit",
        metavar="NAME=VALUE",
        action="append",
        default=argparse.SUPPRESS,
        help="raise or lower an input limit, e.g. --limit max_member_bytes=4GiB (repeatable; "
        f"names: {', '.join(f.name for f in fields(Limits))}; also settable as "
        "VOXMETRICS_LIMITS=NAME=VALUE,...)",
    )
    parser.add_argument(
        "--limit", action="append", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser(
        "evaluate",
        parents=[limit],
        help="evaluate one condition and print its metrics as JSON",
        description=(
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
            "LID) and adds singling out. Besides the privacy metrics the JSON has the standard "
            "verification outputs: normalised minDCF (and actDCF with --llr) per target prior "
            "under 'dcf', and d'. Prints one JSON object. Exit status: 0 success, 1 a "
            "--fail-on condition holds, 2 bad input."
        ),
    )
    ev.add_argument(
        "eval", metavar="EVAL", nargs="?", help="score file of the evaluated (eval) set"
    )
    ev.add_argument(
        "--embeddings",
        metavar="EMB",
        help="utterance embeddings (NPZ/NPY, Kaldi ark/scp or HDF5 with --metadata, or "
        "Parquet) instead of EVAL",
    )
    ev.add_argument(
        "--metadata",
        metavar="META",
        help="metadata CSV of --embeddings (it may list a subset of them: the rest are ignored "
        "and counted on stderr)",
    )
    _embedding_options(ev, "--embeddings")
    ev.add_argument(
        "--split", choices=["eval", "dev"], default="eval", help="split of --embeddings to score"
    )
    ev.add_argument(
        "--trials",
        metavar="KEY",
        help="Kaldi key (enrol_id trial_id target|nontarget) or utt2spk file for EVAL",
    )
    ev.add_argument("--dev", metavar="DEV", help="score file of a calibration (dev) set")
    ev.add_argument("--dev-trials", metavar="DEV_KEY", help="Kaldi key or utt2spk file for DEV")
    ev.add_argument(
        "--format",
        choices=["auto", "csv", "parquet", "npz", "kaldi"],
        default="auto",
        help="score file format (default: detected from the content)",
    )
    kind = ev.add_mutually_exclusive_group()
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
    ev.add_argument(
        "--p-target",
        metavar="P[,P...]",
        default="0.01,0.001",
        help="target priors of minDCF / actDCF, comma-separated (default 0.01,0.001); "
        "their keys in the JSON dcf block, e.g. --fail-on 'dcf[\"0.01\"].min_dcf < 0.9'",
    )
    ev.add_argument("--c-miss", type=float, default=1.0, help="cost of a miss (default 1)")
    ev.add_argument("--c-fa", type=float, default=1.0, help="cost of a false alarm (default 1)")
    ev.add_argument(
        "--cross-calibrate",
        metavar="K",
        type=int,
        help="without --dev: calibrate LID by speaker-disjoint K-fold cross-calibration on EVAL",
    )
    ev.add_argument(
        "--lid-variant",
        choices=["maximum-likelihood", "reference-code", "metrics"],
        default="maximum-likelihood",
        help="LID calibration: maximum-likelihood (population sd, unweighted, unpenalised; "
        "default) or reference-code (the LID authors' public code: sample sd, balanced class "
        "weights, L2 penalty C = 1; reproduces Šterns et al. 2025 Table 3, Table 4 and "
        "Figure 4). 'metrics' is the deprecated old name of maximum-likelihood. Recorded as "
        "lid.variant",
    )
    ev.add_argument(
        "--bootstrap",
        metavar="B",
        type=int,
        default=0,
        help="speaker-level bootstrap replicates for the 95%% interval of every headline "
        "number (top-level and per-block `intervals`; default 0: none)",
    )
    ev.add_argument("--seed", type=int, default=0, help="seed of folds and bootstrap (default 0)")
    ev.add_argument(
        "--ties",
        choices=["reference", "attacker"],
        default="reference",
        help="tie rule of the pooled metrics: reference (each number as its reference code: "
        "EER as SpeechBrain, ROCCH-EER and min Cllr as BOSARIS/PYLLR, ZEBRA as its authors' "
        "code) or attacker (every tie resolved for the attacker); the SRD ranks follow it "
        "(attacker: a tie gives the best rank); default reference",
    )
    ev.add_argument(
        "--by",
        metavar="ATTR",
        help="also evaluate each value of this per-trial attribute (e.g. sex) on its own trials "
        'and enrolled identities; adds "by": {ATTR: {VALUE: {...}}} to the JSON',
    )
    ev.add_argument(
        "--trial-attributes",
        metavar="CSV",
        help="per-trial attributes for --by (e.g. for Kaldi scores): a CSV or Parquet with a "
        "trial_id column (one row per trial) or a speaker column (one row per speaker, e.g. "
        "speaker,sex) and the attribute columns; applied to EVAL, and to DEV when it covers it",
    )
    ev.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="evaluate block by block on Dask, never holding the score matrix: 'local' (a "
        "cluster on this machine) or a scheduler address such as tcp://host:8786. Takes "
        "--embeddings, or as EVAL a folder of score chunks (NPZ or Parquet score files, "
        "each with some of the trials; or one such file) or a Zarr store EVAL.zarr. Every "
        "number equals the in-memory JSON; --by needs --embeddings, and --bootstrap, "
        "--cross-calibrate, --trials, --trial-attributes and --distance are refused",
    )
    _dask_options(ev)
    ev.add_argument("--json", metavar="OUT", help="also write the JSON object to this file")
    ev.add_argument("--html", metavar="OUT", help="write an HTML report to this file")
    ev.add_argument(
        "--fail-on",
        metavar="EXPR",
        help='exit with status 1 when this holds, e.g. "eer < 0.45 or linkability > 0.1"',
    )

    sim = sub.add_parser(
        "similarity",
        parents=[limit],
        help="voice similarity matrices, DeID and G_VD of original vs anonymised embeddings",
        description=(
            "Speaker-level voice similarity matrices (original-original, original-anonymised, "
            "anonymised-anonymised) over all utterances of one split, De-Identification and "
            "gain of voice distinctiveness (VoicePrivacy 2022). The anonymised utterances keep "
            "their originals' utt_id. Speakers with a single utterance in either set have no "
            "same-speaker pair: they are left out and counted (a line on stderr). Prints one "
            "JSON object: deid, g_vd, d_diag_oo, d_diag_oa, d_diag_aa, n_speakers_left_out, and "
            "with --bootstrap their 95% speaker-level `intervals`."
        ),
    )
    sim.add_argument("--original", metavar="EMB_O", required=True, help="original embeddings")
    sim.add_argument("--anonymised", metavar="EMB_A", required=True, help="anonymised embeddings")
    sim.add_argument("--metadata", metavar="META", help="metadata CSV shared by both sets")
    _embedding_options(sim, "--anonymised", original=True)
    sim.add_argument(
        "--calibration",
        choices=["pav", "raw"],
        default="pav",
        help="LLRs from PAV + Laplace of the pair scores (VPC 2022, default) or raw scores",
    )
    sim.add_argument("--split", choices=["eval", "dev"], default="eval", help="split to use")
    sim.add_argument(
        "--bootstrap",
        metavar="B",
        type=int,
        default=0,
        help="speaker-level bootstrap replicates for the 95%% intervals of every number "
        "(`intervals`; default 0: none)",
    )
    sim.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    sim.add_argument("--json", metavar="OUT", help="also write the JSON object to this file")

    leg = sub.add_parser(
        "legal",
        parents=[limit],
        help="singling out, linkability and 1 - EER vs number of speakers per conversation length",
        description=(
            "The legally validated evaluation of Vauquier et al. 2025 (their figure 1) on one "
            "split of an embedding set: for each conversation length L (trial utterances "
            "averaged per speaker), singling out against the population size N, linkability "
            "(exact expectation) and the ROCCH-EER of the pooled scores (mean over random "
            "candidate draws) against the number N' of enrolled candidates. Lengths for which "
            "no speaker has L trial utterances are skipped and listed. Prints one JSON object: "
            "lengths, n_draws, results (per L: linkability_vs_n [[N', value]], eer_vs_n "
            "[[N', eer, sd]], singling_out_vs_n [[N, value, sd]] or null), skipped."
        ),
    )
    leg.add_argument("--embeddings", metavar="EMB", required=True, help="embeddings (NPZ/NPY)")
    leg.add_argument("--metadata", metavar="META", help="metadata CSV of the embeddings")
    _embedding_options(leg, "--embeddings")
    leg.add_argument(
        "--lengths",
        default="1,3,30",
        help="conversation lengths L, comma-separated (default 1,3,30 as the paper)",
    )
    leg.add_argument(
        "--n",
        metavar="N_LIST",
        help="numbers of speakers, comma-separated (default 2, 5, 10, 20, 50, ... and all)",
    )
    leg.add_argument(
        "--draws", type=int, default=5, help="random draws per point (default 5, as the paper)"
    )
    leg.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    leg.add_argument("--split", choices=["eval", "dev"], default="eval", help="split to use")
    leg.add_argument(
        "--label", default=None, help="name of the condition in the figure (default: EMB's name)"
    )
    leg.add_argument(
        "--attacker",
        choices=list(ATTACKERS),
        default=None,
        help="attacker of the condition, shown in the figure's legend",
    )
    leg.add_argument("--json", metavar="OUT", help="also write the JSON object to this file")
    leg.add_argument("--html", metavar="OUT", help="write the figure as a self-contained HTML page")

    sb = sub.add_parser(
        "sbls",
        parents=[limit],
        help="soft-biometric leakage score of an attacker's attribute predictions",
        description=(
            "Soft Biometric Leakage Score (Seo et al. 2025, docs, Methods > SBLS): attribute "
            "inference, systematic linkage and subgroup protection, each in [0, 1] with 1 = no "
            "leakage. The attacker is an uploaded predictions file (utt_id, attribute, class, "
            "score or utt_id, attribute, predicted) or the built-in logistic regression on "
            "--embeddings, trained on the dev split of the original (--original) or anonymised "
            "embeddings. True labels are the metadata's attribute columns. With --bootstrap B "
            "the JSON carries `intervals`, {sbls|p_attr|p_assoc|p_subgroup: [low, high]}."
        ),
    )
    sb.add_argument("--metadata", metavar="META", required=True, help="metadata CSV")
    sb_src = sb.add_mutually_exclusive_group(required=True)
    sb_src.add_argument("--predictions", metavar="PRED", help="attacker predictions CSV")
    sb_src.add_argument("--embeddings", metavar="EMB", help="anonymised embeddings")
    sb.add_argument(
        "--attacker",
        choices=["anonymised", "original"],
        default="anonymised",
        help="built-in attacker trained on the anonymised dev embeddings (informed; default, "
        "as in the study report and the dashboard) or on original ones (ignorant; needs "
        "--original). Recorded as attacker_trained_on",
    )
    sb.add_argument("--original", metavar="EMB_O", help="original embeddings (same metadata)")
    _embedding_options(sb, "--embeddings", original=True)
    sb.add_argument("--split", choices=["eval", "dev"], default="eval", help="split attacked")
    sb.add_argument("--lambda", dest="lam", type=float, default=0.7, help="P_subgroup lambda")
    sb.add_argument(
        "--weights", default="0.4,0.4,0.2", help="w_attr,w_assoc,w_sub (default 0.4,0.4,0.2)"
    )
    sb.add_argument("--min-group-size", type=int, default=30, help="smallest subgroup used")
    sb.add_argument(
        "--bootstrap",
        metavar="B",
        type=int,
        default=0,
        help="speaker-level bootstrap replicates for the 95%% `intervals` of sbls, p_attr, "
        "p_assoc and p_subgroup (the attacker trained once, the speakers resampled; needs a "
        "speaker column; default 0 = none)",
    )
    sb.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    sb.add_argument("--json", metavar="OUT", help="also write the JSON object to this file")

    rep = sub.add_parser(
        "report",
        parents=[limit],
        help="write the report of a study file (.vxm): HTML, PDF, JSON, CSV, LaTeX, Markdown",
        description=(
            "Evaluate every condition of a saved study (a .vxm file, from the dashboard or "
            "`demo --format vxm`) with the study's settings and write its report: one "
            "self-contained HTML page (tables and interactive figures, viewable offline), a "
            "PDF printed from it by headless Chromium (BROWSER_PATH or chromium on PATH), the "
            "JSON of every number, the tables as CSV files, and the results tables ready "
            "for a paper as LaTeX (booktabs; \\usepackage{booktabs}) and Markdown, with "
            "the bootstrap intervals as '0.47 [0.44, 0.50]'. Give at least one output. "
            "Exit status: 0 success, 2 bad input (e.g. a damaged .vxm file, no Chromium for "
            "--pdf)."
        ),
    )
    rep.add_argument("study", metavar="STUDY.vxm", help="the study file")
    rep.add_argument("--html", metavar="OUT", help="write the HTML report to this file")
    rep.add_argument("--pdf", metavar="OUT", help="write a PDF of the report (needs Chromium)")
    rep.add_argument("--json", metavar="OUT", help="write every number as JSON to this file")
    rep.add_argument("--csv", metavar="DIR", help="write the tables as CSV files into DIR")
    rep.add_argument(
        "--latex",
        metavar="DIR",
        help="write the results tables as LaTeX (booktabs, with bootstrap intervals) into DIR",
    )
    rep.add_argument(
        "--markdown",
        metavar="DIR",
        help="write the results tables as Markdown (with bootstrap intervals) into DIR",
    )
    rep.add_argument(
        "--bootstrap",
        metavar="B",
        type=int,
        help="bootstrap replicates of the intervals (default: the study's setting; 0 = none)",
    )
    rep.add_argument("--seed", type=int, help="seed of folds and bootstrap (default: the study's)")
    rep.add_argument(
        "--lid-variant",
        choices=["maximum-likelihood", "reference-code", "metrics"],
        help="LID calibration (default: the study's setting; see evaluate --help)",
    )
    rep.add_argument("--title", help="title of the HTML page (default: from the study's name)")
    rep.add_argument(
        "--original",
        metavar="NAME",
        help="the condition holding the unprocessed voices, against which DeID and G_VD are "
        "measured (default: the study's first condition)",
    )
    rep.add_argument(
        "--ties",
        choices=["reference", "attacker"],
        default=None,
        help="tie rule of the pooled metrics: reference (each number as its reference code: "
        "EER as SpeechBrain, ROCCH-EER and min Cllr as BOSARIS/PYLLR, ZEBRA as its authors' "
        "code) or attacker (every tie resolved for the attacker); default: the study's setting",
    )

    cmp_ = sub.add_parser(
        "compare",
        parents=[limit],
        help="paired comparison of two conditions of a study file (.vxm) sharing speakers",
        description=(
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
        ),
    )
    cmp_.add_argument("study", metavar="STUDY.vxm", help="the study file")
    cmp_.add_argument("a", metavar="A", help="name of the first condition")
    cmp_.add_argument("b", metavar="B", help="name of the second condition")
    cmp_.add_argument(
        "--bootstrap",
        metavar="B",
        type=int,
        help="paired replicates (default: the study's setting, at least 200)",
    )
    cmp_.add_argument("--seed", type=int, help="seed of the replicates (default: the study's)")
    cmp_.add_argument(
        "--original",
        metavar="NAME",
        help="the condition holding the unprocessed voices, for DeID and G_VD (default: the "
        "study's first condition, as in its report)",
    )
    cmp_.add_argument("--json", metavar="OUT", help="also write the JSON object to this file")

    app = sub.add_parser(
        "app",
        help="start the dashboard (needs the app extra: pip install 'voxmetrics[app]')",
        description=(
            "Start the Streamlit dashboard on http://localhost:PORT and open it in a browser. "
            "It runs the dashboard that ships inside the package with its own settings "
            "(theme, menu, 1 GB uploads, no usage statistics) and without a file watcher, so "
            "an idle server uses no CPU; --dev watches the dashboard's files instead. "
            "Options after -- go to `streamlit run`, e.g. `voxmetrics app -- "
            "--server.headless true --server.address 0.0.0.0`. Stop it with Ctrl+C."
        ),
    )
    app.add_argument("--port", type=int, help="server port (default 8501)")
    app.add_argument(
        "--dev",
        action="store_true",
        help="watch the dashboard's files and rerun on save (for editing the pages)",
    )
    app.add_argument(
        "streamlit_args",
        nargs="*",
        metavar="-- STREAMLIT_OPTION",
        help="options passed on to `streamlit run` (after --)",
    )

    study = sub.add_parser(
        "study",
        help="build a study file (.vxm) from many score files",
        description="Work with study files (.vxm) without the dashboard.",
    )
    study_sub = study.add_subparsers(dest="study_command", required=True)
    build = study_sub.add_parser(
        "build",
        help="a .vxm study from a folder layout or a manifest CSV",
        description=(
            "Build one study from a challenge's many systems and save it as OUT.vxm, for the "
            "report command and the dashboard. SOURCE is a folder laid out as "
            "<system>/<attacker>/eval.<ext> (+ optional dev.<ext>, eval.trials / dev.trials "
            "key files of Kaldi scores, embeddings.<ext> + metadata.csv), with <attacker> one "
            "of ignorant, lazy-informed, semi-informed; or a manifest CSV with columns "
            "condition, attacker, eval and optional dev, eval_trials (or trials), dev_trials, "
            "embeddings, metadata, system (a metadata system filter), score_kind (similarity, "
            "llr or distance), paths relative to the manifest. Prints the conditions found."
        ),
    )
    build.add_argument("out", metavar="OUT.vxm", help="the study file to write")
    build.add_argument("source", metavar="SOURCE", help="the root folder or the manifest CSV")
    build.add_argument(
        "--distance",
        action="store_true",
        help="the score files hold distances (lower = closer): negate them on reading",
    )
    build.add_argument("--name", help="name of the study (default: SOURCE's name)")
    build.add_argument("--bootstrap", metavar="B", type=int, help="bootstrap setting (200)")

    demo = sub.add_parser(
        "demo",
        parents=[limit],
        help="write the built-in demo study to score files and a .vxm study file",
        description=(
            "Write the dev and eval score files of every demo condition (see voxmetrics.synth) "
            "to OUTDIR, in one or all formats, and its utterance embeddings, for trying the "
            "evaluate and similarity commands; --format vxm (or all) also writes the whole "
            "study as OUTDIR/demo.vxm, for the report command and the dashboard."
        ),
    )
    demo.add_argument("outdir", metavar="OUTDIR", help="folder to write into (created)")
    demo.add_argument(
        "--format",
        choices=["csv", "parquet", "npz", "kaldi", "vxm", "all"],
        default="all",
        help="score file format, or vxm for the study file demo.vxm only (default: all, "
        "which includes demo.vxm)",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
    demo.add_argument(
        "--no-embeddings",
        dest="embeddings",
        action="store_false",
        help="skip the utterance embeddings (<name>_embeddings.npz + .csv metadata)",
    )

    ex = sub.add_parser(
        "extract",
        parents=[limit],
        help="extract speaker embeddings from audio (zip or folder + manifest)",
        description=(
            "Embed every recording of a manifest CSV (utt_id, speaker, role, split, audio_path, "
            "optional system / sex / age_group) with ECAPA-TDNN or GE2E, and write OUT.npz + "
            "OUT.csv for `evaluate --embeddings OUT.npz --metadata OUT.csv`. Files that cannot "
            "be used are listed with their reason (and in OUT.failures.csv); the rest proceed."
        ),
    )
    ex.add_argument("--manifest", metavar="CSV", required=True, help="the audio manifest")
    where = ex.add_mutually_exclusive_group(required=True)
    where.add_argument("--audio-root", metavar="DIR", help="folder audio_path is relative to")
    where.add_argument("--zip", metavar="FILE", help="zip archive audio_path is relative to")
    ex.add_argument(
        "--model",
        default="ecapa",
        metavar="ecapa|ge2e|PATH",
        help="ecapa (speechbrain/spkrec-ecapa-voxceleb), ge2e (offline, Resemblyzer; a "
        "different attacker model), a local ECAPA folder or a hub id (default ecapa)",
    )
    ex.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ex.add_argument("--batch-size", type=int, default=16, help="recordings per batch (16)")
    ex.add_argument("--cache-dir", metavar="DIR", help="embedding cache (~/.cache/voxmetrics)")
    ex.add_argument("--max-zip-mb", type=float, default=4096, help="cap on the unzipped size")
    ex.add_argument("--out", metavar="EMB.npz", required=True, help="output stem (.npz + .csv)")
    ex.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="extract on Dask, one task per batch of files: 'local' (a cluster on this "
        "machine) or a scheduler address such as tcp://host:8786; every worker must see "
        "--audio-root and --cache-dir at the same paths (--zip only with 'local')",
    )
    _dask_options(ex)
    ex.add_argument(
        "--files-per-task",
        type=int,
        default=None,
        help="recordings per Dask task with --scheduler (default 4 x --batch-size)",
    )
    return parser


def _embedding_options(p: argparse.ArgumentParser, flag: str, *, original: bool = False) -> None:
    p.add_argument(
        "--system",
        metavar="NAME",
        help=f"only the utterances of {flag} whose metadata 'system' column is NAME",
    )
    if original:
        p.add_argument(
            "--original-system",
            metavar="NAME",
            help="only the utterances of --original whose metadata 'system' column is NAME",
        )
    p.add_argument(
        "--ark-root",
        metavar="DIR",
        help="folder the ark paths of a Kaldi scp are relative to, and outside which no ark "
        "may lie (default: the scp's folder)",
    )


def _read(path: str, key: str | None, fmt: str, distance: bool = False) -> Any:
    from voxmetrics.data.readers import read_scores

    for p in (path, key):
        if p is not None:
            check_input_path(p)
    return read_scores(path, trials=key, format=fmt, distance=distance)  # type: ignore[arg-type]


def _read_embeddings(
    path: str, metadata: str | None, system: str | None = None, ark_root: str | None = None
) -> Any:
    from voxmetrics.data.readers import read_embeddings

    for p in (path, metadata):
        if p is not None:
            check_input_path(p)
    if ark_root is not None and not Path(ark_root).is_dir():
        raise VoxMetricsInputError(f"--ark-root {ark_root}: no such folder.")
    return read_embeddings(path, metadata=metadata, system=system, ark_root=ark_root)


def _priors(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise VoxMetricsInputError(
            f"--p-target '{text}': give numbers separated by commas, e.g. 0.01,0.001."
        ) from None


def _evaluate(args: argparse.Namespace) -> int:
    from voxmetrics.report import evaluate, report_html

    check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
    _check_outputs([args.json, args.html])
    if args.fail_on:  # a malformed or hostile expression is refused before any work
        _parse_fail_on(args.fail_on)
    if args.scheduler:
        return _evaluate_blockwise(args)
    embeddings = None
    if args.embeddings:
        if args.eval:
            raise VoxMetricsInputError("give either EVAL or --embeddings, not both.")
        if args.distance:
            raise VoxMetricsInputError(
                "--distance applies to score files; --embeddings are scored by cosine "
                "similarity (higher = closer)."
            )
        embeddings = _read_embeddings(args.embeddings, args.metadata, args.system, args.ark_root)
        eval_sm = embeddings.score_matrix(args.split)
        use_dev = args.split == "eval" and "dev" in embeddings.splits() and not args.dev
        dev_sm = embeddings.score_matrix("dev") if use_dev else None
    elif args.eval:
        for flag, value in (("--metadata", args.metadata), ("--system", args.system)):
            if value:
                raise VoxMetricsInputError(f"{flag} goes with --embeddings.")
        eval_sm = _read(args.eval, args.trials, args.format, args.distance)
        dev_sm = None
    else:
        raise VoxMetricsInputError("give a score file EVAL or --embeddings EMB.")
    if args.dev:
        dev_sm = _read(args.dev, args.dev_trials, args.format, args.distance)
    if args.dev_trials and not args.dev:
        raise VoxMetricsInputError("--dev-trials was given without --dev; add --dev DEV.")
    if args.trial_attributes:
        from voxmetrics.data import read_table

        check_input_path(Path(args.trial_attributes))
        table = read_table(args.trial_attributes)
        where = Path(args.trial_attributes).name
        eval_sm = eval_sm.with_attributes(table, where=where)
        if dev_sm is not None:
            with contextlib.suppress(VoxMetricsInputError):  # a table of eval speakers only
                dev_sm = dev_sm.with_attributes(table, where=where)
    if args.bootstrap < 0 or (args.cross_calibrate is not None and args.cross_calibrate < 2):
        raise VoxMetricsInputError("--bootstrap must be >= 0 and --cross-calibrate >= 2.")
    report = evaluate(
        eval_sm,
        dev=dev_sm,
        name=Path(args.eval or args.embeddings).stem,
        cross_calibrate=None if dev_sm is not None else args.cross_calibrate,
        lid_variant=args.lid_variant,
        bootstrap=args.bootstrap,
        seed=args.seed,
        embeddings=embeddings,
        split=args.split,
        score_kind="distance" if args.distance else "llr" if args.llr else "similarity",
        p_targets=_priors(args.p_target),
        c_miss=args.c_miss,
        c_fa=args.c_fa,
        ties=args.ties,
        by=args.by,
    )
    result = report.to_dict()
    text = json.dumps(result, indent=2)
    # check --fail-on before writing anything, so a bad expression leaves no partial output
    failed = evaluate_fail_on(args.fail_on, result) if args.fail_on else False
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    if args.html:
        subsets = [r for values in (report.by or {}).values() for r in values.values()]
        Path(args.html).write_text(report_html([report, *subsets]), encoding="utf-8")
    if failed:
        print(f"voxmetrics: --fail-on condition holds: {args.fail_on}", file=sys.stderr)
        return EXIT_FAIL_ON
    return EXIT_OK


def _score_chunks(root: Path, chunk: tuple[str, ...], name: str) -> Any:
    """The score chunk files of ``evaluate --scheduler EVAL`` (a folder, or one file)."""
    from voxmetrics.distributed import ChunkedScores

    files = (
        sorted(f for f in root.iterdir() if f.suffix.lower() in chunk) if root.is_dir() else [root]
    )
    for f in files:
        check_input_path(str(f))
    if not files or any(f.suffix.lower() not in chunk for f in files):
        raise VoxMetricsInputError(
            f"{name}: with --scheduler, EVAL is a folder of score chunks (or one chunk): NPZ "
            "score files (scores, trial_ids, trial_speakers, enrol_speakers) or long-format "
            "Parquet score files, each with some of the trials; a Zarr store (.zarr) of "
            "scores, trial_ids, trial_speakers and enrol_speakers; or use --embeddings."
        )
    return ChunkedScores.from_files(files)


_NOT_BLOCKWISE: tuple[tuple[str, Callable[[argparse.Namespace], bool], str], ...] = (
    (
        "--bootstrap",
        lambda a: a.bootstrap > 0,
        "the speaker-level replicates of the pooled metrics (EER, min Cllr, ZEBRA) reweight "
        "each speaker's counts of non-mated scores between every two mated scores, which for "
        "continuous scores are about as many as the scores themselves; evaluate in memory "
        "for intervals (on a sample of the speakers if the matrix is too large)",
    ),
    (
        "--cross-calibrate",
        lambda a: a.cross_calibrate is not None,
        "the folds fit LID on the eval scores themselves; give a dev set instead (--dev, or "
        "a dev split in the embeddings' metadata)",
    ),
    (
        "--trials",
        lambda a: a.trials is not None,
        "a trial list (sparse pairs) is not a chunked matrix; evaluate it in memory, whose "
        "size it already bounds",
    ),
    (
        "--distance",
        lambda a: a.distance,
        "the chunks are read as they are; store the negated distances (higher = closer)",
    ),
    (
        "--by",
        lambda a: a.by is not None and not a.embeddings,
        "score chunks carry no per-trial attributes; give --embeddings whose metadata has "
        "the attribute column",
    ),
    (
        "--trial-attributes",
        lambda a: a.trial_attributes is not None,
        "for --by on Dask, give --embeddings whose metadata has the attribute column",
    ),
)
"""Options of ``evaluate`` refused with ``--scheduler``, and why."""


def _evaluate_blockwise(args: argparse.Namespace) -> int:
    """``evaluate --scheduler``: every metric block by block on a Dask cluster."""
    from voxmetrics.distributed import dask_client, evaluate_blockwise
    from voxmetrics.report import report_html

    _check_outputs([args.json, args.html])
    if args.fail_on:
        _parse_fail_on(args.fail_on)
    for flag, given, why in _NOT_BLOCKWISE:
        if given(args):
            raise VoxMetricsInputError(
                f"{flag} cannot be used with --scheduler (blockwise evaluation): {why}."
            )
    if args.workers < 1:
        raise VoxMetricsInputError("--workers must be at least 1.")
    if args.embeddings:
        if args.eval:
            raise VoxMetricsInputError("give either EVAL or --embeddings, not both.")
        source: Any = _read_embeddings(args.embeddings, args.metadata, args.system, args.ark_root)
    elif args.eval:
        for flag, value in (("--metadata", args.metadata), ("--system", args.system)):
            if value:
                raise VoxMetricsInputError(f"{flag} goes with --embeddings.")
        root = Path(args.eval)
        chunk = (".npz", ".parquet")
        if root.suffix.lower() == ".zarr":
            from voxmetrics.distributed import ZarrScores

            source = ZarrScores.open(root)
        else:
            source = _score_chunks(root, chunk, args.eval)
    else:
        raise VoxMetricsInputError("give score chunks EVAL or --embeddings EMB.")
    dev = _read(args.dev, args.dev_trials, args.format) if args.dev else None
    if args.dev_trials and not args.dev:
        raise VoxMetricsInputError("--dev-trials was given without --dev; add --dev DEV.")
    with dask_client(
        args.scheduler, n_workers=args.workers, memory_limit=args.memory_limit
    ) as client:
        report = evaluate_blockwise(
            source,
            client=client,
            dev=dev,
            name=Path(args.eval or args.embeddings).stem,
            lid_variant=args.lid_variant,
            split=args.split,
            ties=args.ties,
            seed=args.seed,
            score_kind="llr" if args.llr else "similarity",
            p_targets=_priors(args.p_target),
            c_miss=args.c_miss,
            c_fa=args.c_fa,
            by=args.by,
            progress=_progress_bar,
        )
    print(file=sys.stderr)
    result = report.to_dict()
    text = json.dumps(result, indent=2)
    failed = evaluate_fail_on(args.fail_on, result) if args.fail_on else False
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    if args.html:
        subsets = [r for values in (report.by or {}).values() for r in values.values()]
        Path(args.html).write_text(report_html([report, *subsets]), encoding="utf-8")
    if failed:
        print(f"voxmetrics: --fail-on condition holds: {args.fail_on}", file=sys.stderr)
        return EXIT_FAIL_ON
    return EXIT_OK


def _similarity(args: argparse.Namespace) -> int:
    from voxmetrics.metrics.similarity import voice_similarity

    _check_outputs([args.json])
    original = _read_embeddings(args.original, args.metadata, args.original_system, args.ark_root)
    anonymised = _read_embeddings(args.anonymised, args.metadata, args.system, args.ark_root)
    result = voice_similarity(original, anonymised, split=args.split, calibration=args.calibration)
    out = result.to_dict()
    check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
    if args.bootstrap > 0:
        from voxmetrics.metrics.uncertainty import similarity_intervals

        ci = similarity_intervals(result, n_boot=args.bootstrap, seed=args.seed)
        out["intervals"] = {k: [v.low, v.high] for k, v in ci.items()}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return EXIT_OK


def _int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise VoxMetricsInputError(
            f"{option} '{text}': give whole numbers separated by commas, e.g. 1,3,30."
        ) from None
    if not values:
        raise VoxMetricsInputError(f"{option} is empty; give e.g. 1,3,30.")
    return values


def _legal(args: argparse.Namespace) -> int:
    from voxmetrics.metrics.legal import legal_evaluation

    _check_outputs([args.json, args.html])
    lengths = _int_list(args.lengths, "--lengths")
    n = _int_list(args.n, "--n") if args.n else None
    if args.draws < 1:
        raise VoxMetricsInputError("--draws must be >= 1.")
    check_count("--draws", "draws", args.draws, "max_replicates")
    es = _read_embeddings(args.embeddings, args.metadata, args.system, args.ark_root)
    result = legal_evaluation(
        es, lengths, n=n, n_draws=args.draws, seed=args.seed, split=args.split
    )
    text = json.dumps(result.to_dict(), indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    if args.html:
        from voxmetrics.plots.linkage import legal_figure

        label = args.label or Path(args.embeddings).stem
        fig = legal_figure(
            {label: result}, attackers={label: args.attacker} if args.attacker else None
        )
        Path(args.html).write_text(fig.to_html(include_plotlyjs=True), encoding="utf-8")
    return EXIT_OK


def _sbls(args: argparse.Namespace) -> int:
    from voxmetrics.analysis.sbls import (
        Attack,
        SBLSOptions,
        attack_sbls,
        embedding_set_attack,
        sbls_intervals,
    )
    from voxmetrics.data.predictions import join_predictions
    from voxmetrics.data.readers import read_table
    from voxmetrics.metrics.sbls import attribute_columns

    try:
        weights = tuple(float(w) for w in args.weights.split(","))
    except ValueError:
        raise VoxMetricsInputError(
            f"--weights '{args.weights}': give three numbers separated by commas."
        ) from None
    check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
    if args.bootstrap < 0:
        raise VoxMetricsInputError("--bootstrap must be >= 0 (0 = no intervals).")
    _check_outputs([args.json])
    options = SBLSOptions(weights, args.lam, args.min_group_size)  # type: ignore[arg-type]
    if args.predictions:
        for p in (args.metadata, args.predictions):
            check_input_path(p)
        meta = read_table(args.metadata)
        if "utt_id" not in meta.columns:
            raise VoxMetricsInputError(f"{args.metadata}: the metadata needs a utt_id column.")
        if "split" in meta.columns:
            meta = meta[meta["split"].astype(str) == args.split]
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
        attack = Attack(
            labels={a: meta[a].to_numpy() for a in names},
            predictions=predictions,
            speakers=speakers.astype(str).to_numpy(),
            utt_ids=utt,
            attacker="uploaded predictions",
            key=args.predictions,
        )
    else:
        anonymised = _read_embeddings(args.embeddings, args.metadata, args.system, args.ark_root)
        original = (
            _read_embeddings(args.original, args.metadata, args.original_system, args.ark_root)
            if args.original
            else None
        )
        attack = embedding_set_attack(
            anonymised, original=original, attacker=args.attacker, split=args.split
        )
    result = attack_sbls(attack, options)
    out = result.to_dict()
    if args.bootstrap:
        ivs = sbls_intervals(attack, options, n_boot=args.bootstrap, seed=args.seed, result=result)
        out["intervals"] = {k: [iv.low, iv.high] for k, iv in ivs.items()}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return EXIT_OK


def _progress_bar(fraction: float, message: str) -> None:
    filled = int(30 * fraction)
    print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {message:<40.40}", end="", file=sys.stderr)


def _report(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from voxmetrics.data.studyfile import load_study
    from voxmetrics.report.export import require_chromium, write_report
    from voxmetrics.report.study import build_study_report

    if not (args.html or args.pdf or args.json or args.csv or args.latex or args.markdown):
        raise VoxMetricsInputError(
            "nothing to write: give at least one of --html OUT, --pdf OUT, --json OUT, "
            "--csv DIR, --latex DIR, --markdown DIR."
        )
    check_input_path(args.study)
    _check_outputs([args.html, args.pdf, args.json], [args.csv, args.latex, args.markdown])
    study = load_study(args.study)
    overrides = {
        k: v
        for k, v in (
            ("bootstrap", args.bootstrap),
            ("seed", args.seed),
            ("lid_variant", args.lid_variant),
            ("ties", args.ties),
        )
        if v is not None
    }
    check_count("--bootstrap", "replicates", args.bootstrap or 0, "max_replicates")
    if overrides:  # the report states the settings it was computed with
        study = replace(study, settings=replace(study.settings, **overrides))
    chromium = require_chromium() if args.pdf else None  # fail before the evaluation
    if args.original is not None and args.original not in study.names:
        raise VoxMetricsInputError(
            f"--original {args.original!r}: no such condition; the study's conditions are "
            f"{', '.join(study.names)}."
        )
    sr = build_study_report(study, progress=_progress_bar, original=args.original)
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
    )
    for p in written:
        print(p)
    return EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    from voxmetrics.data.studyfile import load_study
    from voxmetrics.report import compare_conditions

    check_input_path(args.study)
    _check_outputs([args.json])
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
        ties=study.settings.ties,
        original=study.get(original),
    )
    text = json.dumps({k: c.to_dict() for k, c in result.items()}, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return EXIT_OK


def _app(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("streamlit") is None:
        raise VoxMetricsInputError(
            "the dashboard needs Streamlit, which is not installed: pip install "
            "'voxmetrics[app]' (or pip install -r requirements.txt in a checkout)."
        )
    if not dashboard_script().is_file():
        raise VoxMetricsInputError(
            f"the dashboard is missing from this installation ({dashboard_script()}); "
            "reinstall VoxMetrics."
        )
    if args.port is not None and not 0 < args.port < 65536:
        raise VoxMetricsInputError(f"--port {args.port}: give a port between 1 and 65535.")
    cmd = dashboard_command(port=args.port, dev=args.dev, streamlit_args=args.streamlit_args)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":  # Streamlit takes over this process: Ctrl+C and signals reach it
        os.execv(cmd[0], cmd)
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return EXIT_OK


def _study(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from voxmetrics.data.studybuild import build_study
    from voxmetrics.data.studyfile import save_study

    _check_outputs([args.out])
    if args.bootstrap is not None:
        check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
        if args.bootstrap < 0:
            raise VoxMetricsInputError("--bootstrap must be >= 0.")
    study = build_study(args.source, distance=args.distance, name=args.name)
    if args.bootstrap is not None:
        study = replace(study, settings=replace(study.settings, bootstrap=args.bootstrap))
    path = save_study(study, args.out)
    for c in study.conditions:
        parts = [f"eval {c.eval.n_trials} x {c.eval.n_enrolled}"]
        if c.dev is not None:
            parts.append(f"dev {c.dev.n_trials} x {c.dev.n_enrolled}")
        if c.embeddings is not None:
            parts.append(f"{len(c.embeddings.meta)} embeddings")
        if c.score_kind != "similarity":
            parts.append(f"scores: {c.score_kind}")
        print(f"voxmetrics: {c.name} ({c.attacker}): {', '.join(parts)}", file=sys.stderr)
    print(path)
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from voxmetrics.data.writers import write_embeddings, write_scores
    from voxmetrics.synth import demo_study

    _check_outputs(folders=[args.outdir])
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    if args.format == "all":
        formats = ["csv", "parquet", "npz", "kaldi"]
    else:
        formats = [] if args.format == "vxm" else [args.format]
    suffix = {"csv": ".csv", "parquet": ".parquet", "npz": ".npz", "kaldi": ".scores"}
    written: list[Path] = []
    study = demo_study(seed=args.seed)
    for cond in study.conditions if formats else ():
        for split, sm in (("dev", cond.dev), ("eval", cond.eval)):
            for fmt in formats:
                path = out / f"{cond.name}_{split}{suffix[fmt]}"
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


def _extract(args: argparse.Namespace) -> int:
    import tempfile

    from voxmetrics.data.writers import write_embeddings
    from voxmetrics.embeddings import extract_embeddings, extract_zip, load_extractor, read_manifest

    for p in (args.manifest, args.zip):
        if p is not None:
            check_input_path(p)
    _check_outputs([str(Path(args.out).with_suffix(".npz"))])
    if args.audio_root and not Path(args.audio_root).is_dir():
        raise VoxMetricsInputError(f"{args.audio_root}: no such folder.")
    manifest = read_manifest(args.manifest)
    if args.zip and args.scheduler not in (None, "local"):
        raise VoxMetricsInputError(
            "--zip is unpacked on this machine, which remote workers cannot read: unpack it "
            "to a shared folder and give --audio-root, or use --scheduler local."
        )
    extractor = None
    if not args.scheduler:
        extractor = load_extractor(args.model, device=args.device)
        print(f"voxmetrics: model {extractor.name} on {extractor.device}", file=sys.stderr)

    def bar(fraction: float, message: str) -> None:
        filled = int(30 * fraction)
        print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {message}   ", end="", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="voxmetrics-audio-") as tmp:
        root = args.audio_root or extract_zip(args.zip, tmp, max_bytes=int(args.max_zip_mb * 1e6))
        if args.scheduler:
            from voxmetrics.distributed import dask_client, extract_embeddings_blockwise

            with dask_client(
                args.scheduler, n_workers=args.workers, memory_limit=args.memory_limit
            ) as client:
                result = extract_embeddings_blockwise(
                    manifest,
                    audio_root=root,
                    model=args.model,
                    client=client,
                    device=args.device,
                    batch_size=args.batch_size,
                    files_per_task=args.files_per_task,
                    cache_dir=args.cache_dir,
                    progress=bar,
                )
        else:
            result = extract_embeddings(
                manifest,
                audio_root=root,
                extractor=extractor,
                batch_size=args.batch_size,
                cache_dir=args.cache_dir,
                progress=bar,
            )
    print(file=sys.stderr)
    stem = Path(args.out).with_suffix("")
    if not result.failures.empty:
        result.failures.to_csv(f"{stem}.failures.csv", index=False)
        for reason in result.failures["reason"]:
            print(f"voxmetrics: skipped: {reason}", file=sys.stderr)
    if result.embeddings is None:
        raise VoxMetricsInputError(
            f"{args.manifest}: none of the {len(manifest)} recordings could be embedded; see "
            f"{stem}.failures.csv."
        )
    files = write_embeddings(result.embeddings, stem, format="npz")
    summary = {**result.to_dict(), "files": [str(f) for f in files]}
    print(json.dumps(summary))
    return 0


@contextlib.contextmanager
def _no_huge_page_compaction() -> Any:
    """NumPy's large arrays on ordinary pages while the command runs (unless the user chose).

    NumPy asks the kernel for transparent huge pages on arrays of 4 MB and more; where the
    kernel then compacts memory to find them (``defrag = madvise``, a common default), the
    first touch of a score matrix or its sorted copy costs about 1 s of system time per
    400 MB, against 0.2 s on ordinary pages. ``NUMPY_MADVISE_HUGEPAGE`` set by the user wins.
    """
    try:
        from numpy._core.multiarray import _get_madvise_hugepage, _set_madvise_hugepage
    except ImportError:  # pragma: no cover - another NumPy layout: leave it as it is
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    with warnings.catch_warnings(record=True) as caught, contextlib.ExitStack() as stack:
        warnings.simplefilter("always")
        stack.enter_context(_no_huge_page_compaction())
        try:
            limits = get_limits()
            overrides = dict(parse_limit(text) for text in getattr(args, "limit", []))
            stack.enter_context(use_limits(limits.with_overrides(overrides)))
            command = {
                "evaluate": _evaluate,
                "similarity": _similarity,
                "legal": _legal,
                "sbls": _sbls,
                "report": _report,
                "compare": _compare,
                "study": _study,
                "demo": _demo,
                "extract": _extract,
                "app": _app,
            }
            status = command[args.command](args)
        except VoxMetricsInputError as exc:
            print(f"voxmetrics: error: {exc}", file=sys.stderr)
            status = EXIT_BAD_INPUT
        except OSError as exc:
            print(f"voxmetrics: error: {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
            status = EXIT_BAD_INPUT
        except (MemoryError, RecursionError) as exc:  # past every limit: still no traceback
            what = "memory" if isinstance(exc, MemoryError) else "nesting depth"
            print(
                f"voxmetrics: error: the input needs more {what} than this machine allows; "
                "check it is the intended file, or lower its size (see --limit).",
                file=sys.stderr,
            )
            status = EXIT_BAD_INPUT
    for w in caught:
        if issubclass(w.category, UserWarning):
            print(f"voxmetrics: warning: {w.message}", file=sys.stderr)
    return status
