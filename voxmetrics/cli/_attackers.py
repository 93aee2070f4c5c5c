"""The attacker options of ``evaluate`` and ``study build``, and the conditions they make.

``--backend NAME`` scores embeddings with an attacker back-end trained on the attacker's own
data (``strongest``: every back-end, the strongest chosen on dev and reported on eval);
``--select-by``, ``--backend-param``, ``--calibrate`` and ``--reference-eer`` tune it. The
library does the work (:func:`voxmetrics.analysis.attackers.condition_attackers`,
:func:`voxmetrics.analysis.weak_attacker.check_attacker`); this module reads the options, asks
it and prints the weak-attacker findings on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from voxmetrics.errors import VoxMetricsInputError

if TYPE_CHECKING:
    from voxmetrics.analysis.weak_attacker import WeakAttackerCheck
    from voxmetrics.data.model import EmbeddingSet
    from voxmetrics.data.study import Condition

BACKEND_CHOICES = (
    "cosine",
    "lda",
    "wccn",
    "plda",
    "snorm",
    "asnorm",
    "procrustes",
    "fusion",
    "max",
    "strongest",
)
"""The names ``--backend`` takes: the back-ends (``voxmetrics.embeddings.backends.BACKENDS``,
written out so that the command line loads no embedding code to list them) and ``strongest``."""

SELECT_CHOICES = ("eer", "eer_rocch", "min_cllr", "min_dcf", "tar_at_far", "linkability")
"""The dev metrics ``--select-by`` takes."""

_BACKEND_HELP = (
    "the attacker's scoring back-end, trained on the attacker's own data (the metadata's "
    "'train' split of anonymised embeddings, else dev; never eval): cosine (today's "
    "scoring), lda, wccn, plda, snorm, asnorm (cohort: the training embeddings), "
    "procrustes (a mapping to the original embeddings, needs --original), fusion "
    "(logistic-regression fusion of the others on dev), max (the best enrolment "
    "utterance), or strongest (every one tried, the strongest chosen on dev and reported "
    "on eval). The JSON's 'attacker' block says which, what it was trained on and the dev "
    "figure it was chosen by"
)


def add_attacker_options(p: argparse.ArgumentParser, *, several: bool = False) -> None:
    """``--backend`` (a list with ``several``), ``--select-by``, ``--backend-param``, ...

    ... ``--calibrate`` and ``--reference-eer``.
    """
    g = p.add_argument_group("attackers (embeddings only)")
    if several:
        g.add_argument(
            "--backend",
            nargs="+",
            choices=BACKEND_CHOICES,
            default=["cosine"],
            metavar="NAME",
            help=f"{_BACKEND_HELP}; several names make one condition per back-end; applies "
            "to the conditions scored from embeddings; default cosine",
        )
    else:
        g.add_argument(
            "--backend",
            choices=BACKEND_CHOICES,
            default="cosine",
            metavar="NAME",
            help=f"{_BACKEND_HELP}; default cosine",
        )
    g.add_argument(
        "--select-by",
        choices=SELECT_CHOICES,
        default="eer",
        help="the dev metric the strongest attacker is chosen by (default eer: the lowest dev "
        "EER; tar_at_far and linkability: the highest)",
    )
    g.add_argument(
        "--backend-param",
        action="append",
        default=[],
        metavar="NAME.PARAM=VALUE",
        help="a back-end parameter, e.g. asnorm.top_n=100, lda.dim=50, plda.rank_f=100, "
        "wccn.shrinkage=0.1, procrustes.method=ridge (repeatable)",
    )
    g.add_argument(
        "--calibrate",
        action="store_true",
        help="calibrate the attacker's scores to natural-log LLRs by logistic regression on "
        "dev (actual DCF and Cllr then mean something); fusion is always calibrated",
    )
    g.add_argument(
        "--reference-eer",
        type=float,
        metavar="EER",
        help="what a well-trained verifier reaches on the original speech of --original (a "
        "fraction, e.g. 0.02); the weak-attacker check compares the attacker with it "
        "(default: cosine scoring of that speech)",
    )


def check_backend_options(
    args: argparse.Namespace, backends: list[str], *, original: bool = False
) -> None:
    """Refuse the options that a back-end (or ``original`` embeddings) cannot go with."""
    if backends == ["cosine"] and not original:
        return
    if getattr(args, "scheduler", None):
        raise VoxMetricsInputError(
            "--scheduler evaluates cosine scores block by block; an attacker back-end needs "
            "the whole embedding set in memory: drop --scheduler or use --backend cosine."
        )
    if getattr(args, "split", "eval") != "eval":
        raise VoxMetricsInputError(
            "--backend is chosen on dev and reported on eval: --split dev is for cosine only."
        )
    if getattr(args, "dev", None):
        raise VoxMetricsInputError(
            "--dev gives imported dev scores, but a back-end scores the dev split of "
            "--embeddings itself; drop --dev."
        )


def attack_condition(
    args: argparse.Namespace,
    es: EmbeddingSet,
    *,
    name: str,
    originals: EmbeddingSet | None = None,
) -> tuple[Condition, WeakAttackerCheck]:
    """The condition ``--backend`` makes of ``es`` and its weak-attacker check.

    The findings are printed on stderr and kept in the condition's recipe (``cautions``).
    """
    from voxmetrics.analysis.attackers import condition_attackers, parse_backend_params
    from voxmetrics.analysis.weak_attacker import check_attacker
    from voxmetrics.embeddings.backends import BACKENDS

    backend = args.backend
    sweep = condition_attackers(
        es,
        backends=BACKENDS if backend == "strongest" else (backend,),
        select_by=args.select_by,
        originals=originals,
        calibrate=args.calibrate,
        params=parse_backend_params(args.backend_param),
        seed=getattr(args, "seed", 0) or 0,
    )
    check = check_attacker(sweep, original=originals, reference_eer=args.reference_eer)
    report_check(name, sweep.chosen, check)
    condition = sweep.condition(name, embeddings=es, cautions=check.reasons)
    return condition, check


def report_check(name: str, backend: str, check: WeakAttackerCheck) -> None:
    """The weak-attacker findings of ``name`` on stderr (nothing when none fired)."""
    if check.weak:
        print(f"voxmetrics: {name} ({backend}): {check.message}", file=sys.stderr)
