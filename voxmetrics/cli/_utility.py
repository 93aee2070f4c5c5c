"""Utility inputs of ``study build``: ``--wer``, ``--uar``, ``--rho-f0`` and ``--utt2spk``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from voxmetrics.data.study import Study
    from voxmetrics.data.utility import Utility

UTILITY_HELP = (
    "Utility of a condition (WER, UAR, rho_F0 as fractions, with speaker-level bootstrap "
    "intervals of --bootstrap replicates): --wer TARGET REF HYP (reference transcripts and ASR "
    "hypotheses, Kaldi `text` files or CSV utt_id,text), --uar TARGET LABELS PREDICTIONS "
    "(emotion labels and a classifier's predictions, `utt_id label` or CSV utt_id,label), "
    "--rho-f0 TARGET ORIGINAL ANONYMISED (recordings: folders, wav.scp of plain paths or CSV "
    "utt_id,path). TARGET is a condition name, or a system name for all its conditions "
    "'SYSTEM (attacker)'. A speaker of an utterance is its id's prefix before '-' (Kaldi, "
    "LibriSpeech) unless --utt2spk gives it."
)


def add_utility_options(p: argparse.ArgumentParser) -> None:
    """``--wer``, ``--uar``, ``--rho-f0`` (repeatable) and ``--utt2spk``."""
    g = p.add_argument_group("utility", UTILITY_HELP)
    g.add_argument(
        "--wer",
        nargs=3,
        action="append",
        metavar=("TARGET", "REF", "HYP"),
        help="WER of TARGET from reference transcripts and ASR hypotheses (with jiwer)",
    )
    g.add_argument(
        "--uar",
        nargs=3,
        action="append",
        metavar=("TARGET", "LABELS", "PREDICTIONS"),
        help="UAR and per-class accuracy of TARGET from emotion labels and predictions",
    )
    g.add_argument(
        "--rho-f0",
        nargs=3,
        action="append",
        metavar=("TARGET", "ORIGINAL", "ANONYMISED"),
        help="pitch correlation of TARGET between original and anonymised recordings (pYIN)",
    )
    g.add_argument(
        "--utt2spk",
        metavar="FILE",
        help="speaker of each utterance (`utt_id speaker`), for the bootstrap intervals",
    )


def attach_utility(study: Study, args: argparse.Namespace) -> Study:
    """The study with the utility the options compute put on their target conditions.

    The computing is the library's (:mod:`voxmetrics.analysis.utility`, as the dashboard's
    Data page): here the options are read, and each condition's sources printed on stderr.
    """
    from voxmetrics.analysis.utility import (
        rho_f0_utility,
        study_with_utility,
        target_conditions,
        uar_utility,
        wer_utility,
    )
    from voxmetrics.data.transcripts import read_labels

    utt2spk = None
    if args.utt2spk:
        utt2spk = read_labels(args.utt2spk, name=Path(args.utt2spk).name)
    n_boot, seed = study.settings.bootstrap, study.settings.seed
    computed: dict[str, list[Utility]] = {}

    def put(option: str, target: str, utility: Utility) -> None:
        for name in target_conditions(study, target, where=f"{option} {target}"):
            computed.setdefault(name, []).append(utility)

    for target, ref, hyp in args.wer or []:
        wer = wer_utility(
            ref,
            hyp,
            utt2spk=utt2spk,
            n_boot=n_boot,
            seed=seed,
            reference_name=Path(ref).name,
            hypotheses_name=Path(hyp).name,
        )
        put("--wer", target, wer)
    for target, labels, predictions in args.uar or []:
        uar = uar_utility(
            labels,
            predictions,
            utt2spk=utt2spk,
            n_boot=n_boot,
            seed=seed,
            labels_name=Path(labels).name,
            predictions_name=Path(predictions).name,
        )
        put("--uar", target, uar)
    for target, original, anonymised in args.rho_f0 or []:
        rho = rho_f0_utility(
            original,
            anonymised,
            utt2spk=utt2spk,
            n_boot=n_boot,
            seed=seed,
            original_name=original,  # the paths as given, in messages and in the source
            anonymised_name=anonymised,
        )
        put("--rho-f0", target, rho)
    attached = study_with_utility(study, computed)
    for line in attached.lines:
        print(f"voxmetrics: {line}", file=sys.stderr)
    return attached.study
