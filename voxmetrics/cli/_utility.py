"""Utility inputs of ``study build``: ``--wer``, ``--uar``, ``--rho-f0`` and ``--utt2spk``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxmetrics.errors import VoxMetricsInputError

if TYPE_CHECKING:
    from voxmetrics.data.study import Condition, Study

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


def _targets(study: Study, target: str, option: str) -> list[Condition]:
    if target in study.names:
        return [study.get(target)]
    found = [c for c in study.conditions if c.name.startswith(f"{target} (")]
    if not found:
        raise VoxMetricsInputError(
            f"{option} {target}: no condition or system of that name; the conditions are "
            f"{', '.join(study.names)}."
        )
    return found


def _contours(folder: str, ids: list[str]) -> list[Any]:
    from voxmetrics.data.transcripts import read_audio_list
    from voxmetrics.embeddings.audio import decode_audio
    from voxmetrics.metrics.utility import f0_contour

    files = read_audio_list(folder)
    out = []
    for utt in ids:
        wave = decode_audio(files[utt], sample_rate=16000, name=Path(files[utt]).name)
        out.append(f0_contour(wave, 16000))
    return out


def attach_utility(study: Study, args: argparse.Namespace) -> Study:
    """The study with the utility the options compute put on their target conditions."""
    from voxmetrics.data.transcripts import (
        paired,
        read_audio_list,
        read_labels,
        read_transcripts,
        speakers_of,
    )
    from voxmetrics.metrics.utility import (
        combine_utility,
        mean_pitch_correlation,
        unweighted_average_recall,
        word_error_rate,
    )

    utt2spk = None
    if args.utt2spk:
        utt2spk = read_labels(args.utt2spk, name=Path(args.utt2spk).name)
    boot = {"n_boot": study.settings.bootstrap, "seed": study.settings.seed}
    computed: dict[str, dict[str, Any]] = {}
    for target, ref, hyp in args.wer or []:
        pair = paired(
            read_transcripts(ref),
            read_transcripts(hyp),
            reference_name=Path(ref).name,
            system_name=Path(hyp).name,
        )
        spk = speakers_of(pair.index, utt2spk)
        result = word_error_rate(pair["reference"], pair["system"], speakers=spk, **boot)
        for c in _targets(study, target, "--wer"):
            computed.setdefault(c.name, {})["wer"] = (result, f"WER of {Path(hyp).name}")
    for target, labels, predictions in args.uar or []:
        pair = paired(
            read_labels(labels),
            read_labels(predictions),
            reference_name=Path(labels).name,
            system_name=Path(predictions).name,
        )
        spk = speakers_of(pair.index, utt2spk)
        result = unweighted_average_recall(pair["reference"], pair["system"], speakers=spk, **boot)
        for c in _targets(study, target, "--uar"):
            computed.setdefault(c.name, {})["uar"] = (result, f"UAR of {Path(predictions).name}")
    for target, original, anonymised in args.rho_f0 or []:
        orig, anon = read_audio_list(original), read_audio_list(anonymised)
        pair = paired(orig, anon, reference_name=original, system_name=anonymised)
        ids = list(pair.index)
        contours = list(zip(_contours(original, ids), _contours(anonymised, ids), strict=True))
        spk = speakers_of(pair.index, utt2spk)
        result = mean_pitch_correlation(contours, speakers=spk, **boot)
        for c in _targets(study, target, "--rho-f0"):
            computed.setdefault(c.name, {})["rho_f0"] = (result, f"rho_F0 of {anonymised}")
    for name, parts in computed.items():
        cond = study.get(name)
        source = "; ".join(src for _, src in parts.values())
        utility = combine_utility(
            cond.utility, **{k: r for k, (r, _) in parts.items()}, source=source
        )
        study = study.with_condition(replace(cond, utility=utility))
        print(f"voxmetrics: {name}: utility from {source}", file=sys.stderr)
    return study
