"""The option groups several sub-commands share, each written once.

A command whose setting defaults to its study file's (``report``, ``compare``) passes
``study=True``: the option then defaults to ``None`` and its help says so.
"""

from __future__ import annotations

import argparse
import functools
import re
from dataclasses import fields

from voxmetrics._types import DEFAULT_LID_VARIANT
from voxmetrics.limits import Limits

LID_VARIANTS = ["reference-code", "maximum-likelihood", "metrics"]
"""Choices of ``--lid-variant`` ('metrics' is the deprecated old name of maximum-likelihood)."""

_TIE_RULE = (
    "tie rule of the pooled metrics: reference (each number as its reference code: "
    "EER as SpeechBrain, ROCCH-EER and min Cllr as BOSARIS/PYLLR, ZEBRA as its authors' "
    "code) or attacker (every tie resolved for the attacker)"
)
_LID_VARIANT = (
    "LID calibration: reference-code (the default: the LID authors' public code, sample sd, "
    "balanced class weights, L2 penalty C = 1: the model of Šterns et al. 2025 Table 3, "
    "Table 4 and Figure 4, solved exactly; it stays finite when the dev pools separate) or "
    "maximum-likelihood (population sd, unweighted, unpenalised; its w is capped on "
    "separable dev pools and its LIDs then go to extreme values). 'metrics' is the "
    "deprecated old name of maximum-likelihood. Recorded as lid.variant"
)


@functools.cache
def limit_option() -> argparse.ArgumentParser:
    """The parent parser of ``--limit NAME=VALUE``, which every data command takes (one, shared)."""
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
    return limit


def add_bootstrap(p: argparse.ArgumentParser, help: str, *, default: int | None = None) -> None:
    """``--bootstrap B``: speaker-level bootstrap replicates."""
    p.add_argument("--bootstrap", metavar="B", type=int, default=default, help=help)


def seed(text: str) -> int:
    """A ``--seed`` value: a whole number >= 0 (numpy refuses negative seeds).

    Examples
    --------
    >>> seed("7")
    7
    """
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}': give a whole number >= 0, e.g. --seed 0")
    return value


def add_seed(p: argparse.ArgumentParser, of: str, *, study: bool = False) -> None:
    """``--seed``, the seed of ``of`` (default 0, or the study's)."""
    p.add_argument(
        "--seed",
        type=seed,
        default=None if study else 0,
        help=f"seed of {of} (default: the study's)" if study else f"seed of {of} (default 0)",
    )


def add_bootstrap_seed(
    p: argparse.ArgumentParser, bootstrap: str, seed_of: str, *, study: bool = False
) -> None:
    """``--bootstrap B`` (help ``bootstrap``) and ``--seed`` (of ``seed_of``)."""
    add_bootstrap(p, bootstrap, default=None if study else 0)
    add_seed(p, seed_of, study=study)


def add_ties(p: argparse.ArgumentParser, *, study: bool = False) -> None:
    """``--ties reference|attacker``, the tie rule of the pooled metrics."""
    if study:
        note = "default: the study's setting"
    else:
        note = "the SRD ranks follow it (attacker: a tie gives the best rank); default reference"
    p.add_argument(
        "--ties",
        choices=["reference", "attacker"],
        default=None if study else "reference",
        help=f"{_TIE_RULE}; {note}",
    )


def add_linkability_rule(p: argparse.ArgumentParser, *, study: bool = False) -> None:
    """``--linkability-rule code|strict``, when a trial is linked."""
    p.add_argument(
        "--linkability-rule",
        choices=["code", "strict"],
        default=None if study else "code",
        help=(
            "when a trial is linked: code = its own speaker scores at least every other "
            "identity, a tie is a link (the authors' public code); strict = strictly above "
            "every other (the paper's eq. 3); "
            + ("default: the study's setting" if study else "default code")
        ),
    )


def add_lid_variant(p: argparse.ArgumentParser, *, study: bool = False) -> None:
    """``--lid-variant``, the LID calibration."""
    if study:
        help = "LID calibration (default: the study's setting; see evaluate --help)"
        p.add_argument("--lid-variant", choices=LID_VARIANTS, help=help)
    else:
        p.add_argument(
            "--lid-variant", choices=LID_VARIANTS, default=DEFAULT_LID_VARIANT, help=_LID_VARIANT
        )


def add_split(p: argparse.ArgumentParser, help: str) -> None:
    """``--split eval|dev`` (default eval)."""
    p.add_argument("--split", choices=["eval", "dev"], default="eval", help=help)


def add_json(
    p: argparse.ArgumentParser, help: str = "also write the JSON object to this file"
) -> None:
    """``--json OUT``."""
    p.add_argument("--json", metavar="OUT", help=help)


def add_html(p: argparse.ArgumentParser, help: str) -> None:
    """``--html OUT``."""
    p.add_argument("--html", metavar="OUT", help=help)


def add_embedding_options(p: argparse.ArgumentParser, flag: str, *, original: bool = False) -> None:
    """``--system`` (of ``flag``), ``--original-system`` (with ``original``) and ``--ark-root``."""
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


def memory_size(text: str) -> str:
    """A ``--memory-limit`` value: a size such as 300MB or 2GiB, a fraction, or auto.

    Examples
    --------
    >>> memory_size("300MB"), memory_size("auto")
    ('300MB', 'auto')
    """
    size = re.fullmatch(r"\s*\d+(\.\d+)?(e\d+)?\s*([kmgt]i?b?|b)?\s*", text, flags=re.IGNORECASE)
    if text.strip().lower() != "auto" and size is None:
        raise argparse.ArgumentTypeError(
            f"'{text}': give a size such as 300MB or 2GiB (or auto, or a fraction such as 0.5)"
        )
    return text.strip()


def add_dask_options(p: argparse.ArgumentParser, scheduler: str) -> None:
    """``--scheduler ADDRESS`` (help ``scheduler``), ``--workers`` and ``--memory-limit``."""
    p.add_argument("--scheduler", metavar="ADDRESS", help=scheduler)
    p.add_argument(
        "--workers",
        type=int,
        default=2,
        help="workers of the --scheduler local cluster (default 2, one thread each)",
    )
    p.add_argument(
        "--memory-limit",
        metavar="SIZE",
        type=memory_size,
        default=None,
        help="memory limit per worker of the --scheduler local cluster, e.g. 300MB "
        "(default: Dask's, the machine's memory shared by the workers)",
    )
