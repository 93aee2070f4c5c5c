"""``extract``: speaker embeddings from audio (a zip or a folder, and a manifest)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxmetrics.cli import _options
from voxmetrics.cli._common import EXIT_OK, check_outputs
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_input_path

if TYPE_CHECKING:
    import pandas as pd

    from voxmetrics.embeddings import ExtractionResult, Extractor

HELP = "extract speaker embeddings from audio (zip or folder + manifest)"
DESCRIPTION = (
    "Embed every recording of a manifest CSV (utt_id, speaker, role, split, audio_path, "
    "optional system / sex / age_group) with ECAPA-TDNN or GE2E, each recording first "
    "brought to -30 LUFS as the VoicePrivacy 2024 evaluation does (--loudness, "
    "--no-loudness-norm; the summary's loudness_lufs says which), and write OUT.npz + "
    "OUT.csv for `evaluate --embeddings OUT.npz --metadata OUT.csv`. Files that cannot "
    "be used are listed with their reason (and in OUT.failures.csv); the rest proceed."
)
SCHEDULER = (
    "extract on Dask, one task per batch of files: 'local' (a cluster on this "
    "machine) or a scheduler address such as tcp://host:8786; every worker must see "
    "--audio-root and --cache-dir at the same paths (--zip only with 'local')"
)


def add_parser(subparsers: Any) -> None:
    """The ``extract`` command and its options."""
    p = subparsers.add_parser(
        "extract", parents=[_options.limit_option()], help=HELP, description=DESCRIPTION
    )
    p.add_argument("--manifest", metavar="CSV", required=True, help="the audio manifest")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--audio-root", metavar="DIR", help="folder audio_path is relative to")
    where.add_argument("--zip", metavar="FILE", help="zip archive audio_path is relative to")
    p.add_argument(
        "--model",
        default="ecapa",
        metavar="ecapa|ge2e|PATH",
        help="ecapa (speechbrain/spkrec-ecapa-voxceleb), ge2e (offline, Resemblyzer; a "
        "different attacker model), a local ECAPA folder or a hub id (default ecapa)",
    )
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--batch-size", type=int, default=16, help="recordings per batch (16)")
    p.add_argument("--cache-dir", metavar="DIR", help="embedding cache (~/.cache/voxmetrics)")
    p.add_argument("--max-zip-mb", type=float, default=4096, help="cap on the unzipped size")
    p.add_argument(
        "--loudness",
        type=float,
        default=-30.0,
        metavar="LUFS",
        help="bring every recording to this integrated loudness before embedding (ITU-R "
        "BS.1770-4, pyloudnorm), as the VoicePrivacy 2024 evaluation does (default -30)",
    )
    p.add_argument(
        "--no-loudness-norm",
        action="store_true",
        help="embed the audio as decoded, without loudness normalisation",
    )
    p.add_argument("--out", metavar="EMB.npz", required=True, help="output stem (.npz + .csv)")
    _options.add_dask_options(p, SCHEDULER)
    p.add_argument(
        "--files-per-task",
        type=int,
        default=None,
        help="recordings per Dask task with --scheduler (default 4 x --batch-size)",
    )


def _bar(fraction: float, message: str) -> None:
    filled = int(30 * fraction)
    print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {message}   ", end="", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """``extract``: embed the manifest's recordings, write OUT.npz + OUT.csv, print a summary."""
    from voxmetrics.data.writers import write_embeddings
    from voxmetrics.embeddings import load_extractor, read_manifest
    from voxmetrics.embeddings.extractors import check_extractor_installed

    check_extractor_installed(args.model)  # before any work, and before Dask workers start
    for p in (args.manifest, args.zip):
        if p is not None:
            check_input_path(p)
    check_outputs([str(Path(args.out).with_suffix(".npz"))])
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
    result = _embed(args, manifest, extractor)
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
    return EXIT_OK


def _embed(
    args: argparse.Namespace, manifest: pd.DataFrame, extractor: Extractor | None
) -> ExtractionResult:
    """The extraction result: here with ``extractor``, or on Dask with ``--scheduler``."""
    import tempfile

    from voxmetrics.embeddings import extract_embeddings, extract_zip

    with tempfile.TemporaryDirectory(prefix="voxmetrics-audio-") as tmp:
        root = args.audio_root or extract_zip(args.zip, tmp, max_bytes=int(args.max_zip_mb * 1e6))
        if extractor is not None:  # loaded here unless --scheduler
            return extract_embeddings(
                manifest,
                audio_root=root,
                extractor=extractor,
                batch_size=args.batch_size,
                cache_dir=args.cache_dir,
                progress=_bar,
                loudness=None if args.no_loudness_norm else args.loudness,
            )
        from voxmetrics.distributed import dask_client, extract_embeddings_blockwise

        with dask_client(
            args.scheduler, n_workers=args.workers, memory_limit=args.memory_limit
        ) as client:
            return extract_embeddings_blockwise(
                manifest,
                audio_root=root,
                model=args.model,
                client=client,
                device=args.device,
                batch_size=args.batch_size,
                files_per_task=args.files_per_task,
                cache_dir=args.cache_dir,
                progress=_bar,
                loudness=None if args.no_loudness_norm else args.loudness,
            )
