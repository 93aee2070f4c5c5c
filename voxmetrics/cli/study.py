"""``study build``: a study file (.vxm) from a folder of score files or a manifest."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from voxmetrics.cli import _options
from voxmetrics.cli._attackers import add_attacker_options, check_backend_options, report_check
from voxmetrics.cli._common import EXIT_OK, check_outputs
from voxmetrics.cli._utility import add_utility_options, attach_utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count, check_input_path

if TYPE_CHECKING:
    from voxmetrics.data.model import EmbeddingSet
    from voxmetrics.data.study import Study

HELP = "build a study file (.vxm) from many score files"
BUILD_DESCRIPTION = (
    "Build one study from a challenge's many systems and save it as OUT.vxm, for the "
    "report command and the dashboard. SOURCE is a folder laid out as "
    "<system>/<attacker>/eval.<ext> (+ optional dev.<ext>, eval.trials / dev.trials "
    "key files of Kaldi scores, embeddings.<ext> + metadata.csv), with <attacker> one "
    "of ignorant, lazy-informed, semi-informed; or a manifest CSV with columns "
    "condition, attacker, eval and optional dev, eval_trials (or trials), dev_trials, "
    "embeddings, metadata, system (a metadata system filter), score_kind (similarity, "
    "llr or distance), paths relative to the manifest; or a VoicePrivacy Challenge evaluation "
    "tree, 2024 or 2026 track 1 or 2 (the data/ and exp/ folders of its run_evaluation.py, or "
    "exp/ alone): one condition per (anonymisation system, attacker: original, ignorant, "
    "lazy-informed, semi-informed), a split's trial lists joined with the trial attributes sex "
    "(report --subset sex=F) and, in track 2, language, the test split as eval set and the dev "
    "split as dev set, WER and UAR from the results summaries, the challenge's embeddings "
    "(speaker_vectors.pt) where saved. Prints what was read, notes and what is missing. "
    "Embedding metadata that mix several system values are refused (pick one with the "
    "manifest's system column). "
    "Or, instead of SOURCE, build the VoicePrivacy attacker set-ups of one anonymiser "
    "from two embedding files: --original EMB [META] and --anonymised EMB [META] give "
    "'original' (unprotected) and '<system> (ignorant)' (original enrolment, anonymised "
    "trials), '<system> (lazy-informed)' and '<system> (semi-informed)' (both "
    "anonymised; --setups picks them). Prints the conditions found. --backend scores the "
    "conditions scored from embeddings with other attacker back-ends, each trained on its "
    "attacker's own data (the 'train' split, else dev): one condition per back-end, or "
    "the strongest on dev (--backend strongest); the set-ups train the original and "
    "ignorant attackers on the original embeddings and the informed ones on the "
    "anonymised, and check whether an attacker may be too weak (on the original speech, "
    "against cosine on dev, and across the set-ups)."
)


def add_parser(subparsers: Any) -> None:
    """The ``study`` command, its ``build`` sub-command and its options."""
    study = subparsers.add_parser(
        "study", help=HELP, description="Work with study files (.vxm) without the dashboard."
    )
    study_sub = study.add_subparsers(dest="study_command", required=True)
    p = study_sub.add_parser(
        "build",
        help="a .vxm study from a folder layout or a manifest CSV",
        description=BUILD_DESCRIPTION,
    )
    p.add_argument("out", metavar="OUT.vxm", help="the study file to write")
    p.add_argument(
        "source",
        metavar="SOURCE",
        nargs="?",
        help="the root folder or the manifest CSV (or give --original and --anonymised)",
    )
    _add_setup_options(p)
    p.add_argument(
        "--distance",
        action="store_true",
        help="the score files hold distances (lower = closer): negate them on reading",
    )
    p.add_argument("--name", help="name of the study (default: SOURCE's name)")
    _options.add_bootstrap(p, "bootstrap setting (200); also the utility intervals' replicates")
    add_utility_options(p)
    add_attacker_options(p, several=True)


def _add_setup_options(p: argparse.ArgumentParser) -> None:
    """The options of the attacker set-ups built from two embedding files."""
    from voxmetrics.data.setups import SETUPS

    g = p.add_argument_group(
        "attacker set-ups from embedding files (instead of SOURCE)",
        "Embeddings as NPZ, NPY, Kaldi ark / scp, HDF5 (each with a metadata CSV: utt_id, "
        "speaker, role, split) or Parquet (metadata inside).",
    )
    for which in ("original", "anonymised"):
        g.add_argument(
            f"--{which}",
            nargs="+",
            metavar=("EMB", "META"),
            help=f"embeddings of the {which} utterances and their metadata CSV",
        )
    g.add_argument(
        "--semi-informed",
        nargs="+",
        metavar=("EMB", "META"),
        help="embeddings of the anonymised utterances by a speaker encoder retrained on "
        "anonymised speech (the semi-informed attacker's; default: --anonymised's)",
    )
    g.add_argument(
        "--system",
        metavar="NAME",
        help="keep the anonymised metadata rows of this system (required when they mix "
        "several) and name the conditions after it (default: the anonymised file's name)",
    )
    g.add_argument(
        "--original-system",
        metavar="NAME",
        help="keep the original metadata rows of this system (when they mix several, e.g. "
        "one metadata file for every system)",
    )
    g.add_argument(
        "--setups",
        nargs="+",
        choices=SETUPS,
        default=["ignorant", "lazy-informed"],
        help="the attacker set-ups to build (default: ignorant lazy-informed)",
    )
    g.add_argument(
        "--strip-suffix",
        metavar="SUFFIX",
        help="map anonymised utterance ids to their originals by removing SUFFIX (e.g. "
        "_mcadams08), for the pairing behind DeID and G_VD",
    )
    g.add_argument(
        "--utt-map",
        metavar="CSV",
        help="map anonymised utterance ids to their originals with a CSV of columns utt_id, "
        "original",
    )


def _inputs(args: argparse.Namespace, study: Study) -> tuple[Any, ...]:
    """The fingerprints of every file the options read (the study's provenance)."""
    from voxmetrics.data.provenance import fingerprint_paths

    paths: list[tuple[str, str]] = [(f.path, f.role) for f in study.inputs]
    if getattr(args, "source", None) and not study.inputs:  # a VoicePrivacy tree
        paths.append((args.source, "study source"))
    for option in ("original", "anonymised", "semi_informed"):
        paths += [(p, f"--{option.replace('_', '-')}") for p in getattr(args, option, None) or []]
    if getattr(args, "utt_map", None):
        paths.append((args.utt_map, "--utt-map"))
    for option in ("wer", "uar", "rho_f0"):
        for _target, *files in getattr(args, option, None) or []:
            paths += [(p, f"--{option.replace('_', '-')}") for p in files]
    if getattr(args, "utt2spk", None):
        paths.append((args.utt2spk, "--utt2spk"))
    known = {f.path: f for f in study.inputs}
    fresh = fingerprint_paths([(p, r) for p, r in paths if p not in known])
    return (*study.inputs, *fresh)


def _setup_study(args: argparse.Namespace) -> tuple[Study, dict[str, EmbeddingSet]]:
    """The study of the attacker set-ups of ``--original`` and ``--anonymised``, and the sets.

    The sets (``original``, ``anonymised``, ``semi-informed``, their utterance ids mapped to
    the originals') train the set-ups' attacker back-ends.
    """
    from pathlib import Path

    from voxmetrics.data.readers import read_embeddings
    from voxmetrics.data.setups import (
        attacker_setups,
        map_utterance_ids,
        one_system,
        read_utterance_map,
    )
    from voxmetrics.data.study import Study

    if args.source is not None:
        raise VoxMetricsInputError("give SOURCE or --original and --anonymised, not both.")
    if args.original is None or args.anonymised is None:
        raise VoxMetricsInputError(
            "the attacker set-ups need both --original EMB [META] and --anonymised EMB [META]."
        )

    def read(files: list[str], option: str, system: str | None, how: str) -> EmbeddingSet:
        if len(files) > 2:
            raise VoxMetricsInputError(f"{option} takes EMB and optionally META, not more.")
        for f in files:
            check_input_path(f)
        meta = files[1] if len(files) == 2 else None
        es = read_embeddings(files[0], metadata=meta, system=system)
        return one_system(es, where=f"{option} {Path(files[-1]).name}", how=how)

    original = read(args.original, "--original", args.original_system, "--original-system")
    anonymised = read(args.anonymised, "--anonymised", args.system, "--system")
    semi = None
    if args.semi_informed is not None:
        semi = read(args.semi_informed, "--semi-informed", args.system, "--system")
    utt_map = None
    if args.utt_map is not None:
        check_input_path(args.utt_map)
        utt_map = read_utterance_map(args.utt_map)
    system = args.system or Path(args.anonymised[0]).stem
    study = Study(name=args.name or system)
    for c in attacker_setups(
        original,
        anonymised,
        system=system,
        setups=args.setups,
        semi_informed=semi,
        strip_suffix=args.strip_suffix,
        utt_map=utt_map,
    ):
        study = study.with_condition(c)
    sets = {"original": original}
    for key, es in (("anonymised", anonymised), ("semi-informed", semi)):
        if es is not None:
            sets[key] = map_utterance_ids(es, strip_suffix=args.strip_suffix, mapping=utt_map)
    return study, sets


def _attack(study: Study, args: argparse.Namespace, sets: dict[str, EmbeddingSet]) -> Study:
    """``--backend``: the study's embedding conditions under the back-ends asked for."""
    from voxmetrics.analysis.attacker_conditions import study_attackers
    from voxmetrics.analysis.attackers import parse_backend_params
    from voxmetrics.data.study import Study

    training: dict[str, EmbeddingSet] = {}
    if sets:  # the set-ups: each attacker trains on the speech it knows
        knows = {
            "original": sets["original"],
            "ignorant": sets["original"],
            "lazy-informed": sets.get("anonymised"),
            "semi-informed": sets.get("semi-informed", sets.get("anonymised")),
        }
        for c in study.conditions:
            known = knows.get(c.attacker)
            if known is not None:
                training[c.name] = known
    result = study_attackers(
        study.conditions,
        backends=args.backend,
        select_by=args.select_by,
        training=training,
        originals=sets.get("original"),
        original_speech=sets.get("original"),
        reference_eer=args.reference_eer,
        calibrate=args.calibrate,
        params=parse_backend_params(args.backend_param),
    )
    for note in result.notes:
        print(f"voxmetrics: {note}", file=sys.stderr)
    for c in result.conditions:
        if c.name in result.checks and c.recipe is not None:
            report_check(c.name, c.recipe.backend, result.checks[c.name])
    return Study(tuple(result.conditions), name=study.name, settings=study.settings)


def run(args: argparse.Namespace) -> int:
    """``study build``: save the study found in SOURCE; list its conditions on stderr."""
    from dataclasses import replace

    from voxmetrics.analysis.vpc import check_summary_eers
    from voxmetrics.data.studybuild import build_study
    from voxmetrics.data.studyfile import save_study
    from voxmetrics.data.vpc import is_vpc_tree, read_vpc_tree

    check_outputs([args.out])
    check_backend_options(args, args.backend)
    if args.bootstrap is not None:
        check_count("--bootstrap", "replicates", args.bootstrap, "max_replicates")
        if args.bootstrap < 0:
            raise VoxMetricsInputError("--bootstrap must be >= 0.")
    sets: dict[str, EmbeddingSet] = {}
    if args.original is not None or args.anonymised is not None:
        study, sets = _setup_study(args)
    elif args.source is None:
        raise VoxMetricsInputError(
            "give SOURCE (a folder or a manifest CSV), or --original and --anonymised."
        )
    elif is_vpc_tree(args.source):
        if args.distance:
            raise VoxMetricsInputError(
                f"{args.source}: the scores of a VoicePrivacy tree are cosine "
                "similarities; drop --distance."
            )
        tree = read_vpc_tree(args.source, name=args.name)
        study = tree.study
        print(f"voxmetrics: a VoicePrivacy {tree.edition} evaluation tree", file=sys.stderr)
        for line in tree.found:
            print(f"voxmetrics: found {line}", file=sys.stderr)
        for line in tree.notes:
            print(f"voxmetrics: note: {line}", file=sys.stderr)
        for line in tree.missing:
            print(f"voxmetrics: missing: {line}", file=sys.stderr)
        for line in check_summary_eers(tree).lines:
            print(f"voxmetrics: {line}", file=sys.stderr)
    else:
        study = build_study(args.source, distance=args.distance, name=args.name)
    if args.backend != ["cosine"]:
        study = _attack(study, args, sets)
    if args.bootstrap is not None:
        study = replace(study, settings=replace(study.settings, bootstrap=args.bootstrap))
    study = attach_utility(study, args)
    study = replace(study, inputs=_inputs(args, study))
    path = save_study(study, args.out)
    for c in study.conditions:
        parts = [f"eval {c.eval.n_trials} x {c.eval.n_enrolled}"]
        if c.dev is not None:
            parts.append(f"dev {c.dev.n_trials} x {c.dev.n_enrolled}")
        if c.embeddings is not None:
            parts.append(f"{len(c.embeddings.meta)} embeddings")
        if c.score_kind != "similarity":
            parts.append(f"scores: {c.score_kind}")
        if c.recipe is not None and c.recipe.backend != "cosine":
            parts.append(f"attacker {c.recipe.label}")
        if c.recipe is not None and c.recipe.weak:
            parts.append("the attacker may be too weak")
        if c.utility is not None:
            u = c.utility
            parts += [
                f"{label} {value:.2%}"
                for label, value in (("WER", u.wer), ("UAR", u.uar), ("rho_F0", u.rho_f0))
                if value is not None
            ]
        # a name that already ends with its attacker ("b1 (ignorant)") is not repeated
        named = c.name == c.attacker or c.name.endswith(f"({c.attacker})")
        label = c.name if named else f"{c.name} ({c.attacker})"
        print(f"voxmetrics: {label}: {', '.join(parts)}", file=sys.stderr)
    print(path)
    return EXIT_OK
