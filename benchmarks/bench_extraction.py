"""Real-time factor and peak GPU memory of the embedding extractors, batched, CPU and CUDA.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_extraction.py [--files 64] [--seconds 4.0]
                                                    [--batch-size 16] [--devices auto]
                                                    [--models ge2e,ecapa] [--model-dir DIR]
                                                    [--repeat 2] [--json OUT.json]

No network and no data set: it synthesises ``--files`` voiced recordings of ``--seconds``
+- 30 % (seeded, 16 kHz) and times ``Extractor.embed`` on them in batches of similar length
(sorted by length, ``--batch-size`` a batch), the model alone (no decoding, no cache):

* ``ge2e``: the offline GE2E (Resemblyzer's weights, shipped inside the resemblyzer wheel);
* ``ecapa``: ECAPA-TDNN loaded from a local folder through ``EcapaExtractor``. With
  ``--model-dir`` that folder (e.g. a local copy of speechbrain/spkrec-ecapa-voxceleb);
  without it, a folder written here with the same architecture as that model (80 mel bands,
  channels [1024, 1024, 1024, 1024, 3072], 192-dimensional embeddings) and seeded random
  weights: the same computation and memory as the real model, other embeddings.

``--devices auto`` runs the CPU and, when ``torch.cuda.is_available()``, the GPU. For each model
and device it reports the best of ``--repeat`` passes over all batches (after one warm-up
batch): real-time factor RTF = processing wall time / seconds of audio (below 1 is faster than
real time), the CPU time of this process per second of audio (``time.process_time``) and, on
CUDA, the peak memory PyTorch allocated and reserved during the passes
(``torch.cuda.max_memory_allocated`` / ``max_memory_reserved``). GPU timings synchronise the
device before reading the clock. ``--json`` also writes the rows. Not a test: pytest does not
collect it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_embeddings import voices

FULL_HPARAMS = """\
pretrained_path: unused
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: 80
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: 80
    channels: [1024, 1024, 1024, 1024, 3072]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
    attention_channels: 128
    lin_neurons: 192
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
    paths:
        embedding_model: !ref <pretrained_path>/embedding_model.ckpt
"""


def full_size_ecapa(folder: Path) -> Path:
    """A local ECAPA folder with spkrec-ecapa-voxceleb's architecture and seeded weights."""
    import torch
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    (folder / "hyperparams.yaml").write_text(FULL_HPARAMS)
    torch.manual_seed(0)
    model = ECAPA_TDNN(
        80,
        channels=[1024, 1024, 1024, 1024, 3072],
        kernel_sizes=[5, 3, 3, 3, 1],
        dilations=[1, 2, 3, 4, 1],
        attention_channels=128,
        lin_neurons=192,
    )
    torch.save(model.state_dict(), folder / "embedding_model.ckpt")
    return folder


def run_passes(extractor: Any, batches: list[list[np.ndarray]], device: str, repeat: int):
    """(best wall, its CPU time, peak allocated bytes, peak reserved bytes) over ``repeat``."""
    import torch

    cuda = device == "cuda"
    extractor.embed(batches[0])  # warm-up: kernels, allocator, caches
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    best = (float("inf"), 0.0)
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        for batch in batches:
            extractor.embed(batch)  # returns numpy: the batch has left the GPU
        if cuda:
            torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    peak = (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()) if cuda else None
    return best[0], best[1], *(peak or (None, None))


def make_extractor(model: str, device: str, ecapa_dir: Path):
    from voxmetrics.embeddings import EcapaExtractor, Ge2eExtractor

    if model == "ge2e":
        return Ge2eExtractor(device=device)
    return EcapaExtractor(ecapa_dir, device=device)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--devices", default="auto", help="auto (cpu + cuda if available), cpu, cuda")
    ap.add_argument("--models", default="ge2e,ecapa")
    ap.add_argument("--model-dir", help="a real local ECAPA folder (hyperparams.yaml + ckpt)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    import torch

    cuda_ok = torch.cuda.is_available()
    devices = (["cpu", "cuda"] if cuda_ok else ["cpu"]) if args.devices == "auto" else []
    devices = devices or args.devices.split(",")
    models = args.models.split(",")
    if "ge2e" in models and importlib.util.find_spec("resemblyzer") is None:
        print("resemblyzer is not installed: skipping ge2e", file=sys.stderr)
        models.remove("ge2e")
    gpu = torch.cuda.get_device_name(0) if cuda_ok else "none"
    print(
        f"Python {platform.python_version()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, {os.cpu_count()} CPUs, GPU: {gpu}; load average "
        f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    waves = voices(args.files, args.seconds)
    audio = sum(w.size for w in waves) / 16000
    ordered = sorted(waves, key=len)
    batches = [ordered[i : i + args.batch_size] for i in range(0, len(ordered), args.batch_size)]
    print(
        f"{len(waves)} recordings, {audio:.1f} s of audio, batches of {args.batch_size}, "
        f"best of {args.repeat}"
    )
    header = (
        f"{'model':<22} {'device':<6} {'load':>6} {'wall':>8} {'RTF':>8} {'x real time':>11} "
        f"{'CPU s/s':>8} {'GPU peak alloc':>14} {'reserved':>9}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ecapa_dir = Path(args.model_dir) if args.model_dir else full_size_ecapa(Path(tmp))
        ecapa_label = "ecapa (--model-dir)" if args.model_dir else "ecapa (full, random)"
        for model in models:
            for device in devices:
                t0 = time.perf_counter()
                ex = make_extractor(model, device, ecapa_dir)
                load = time.perf_counter() - t0
                wall, cpu, alloc, reserved = run_passes(ex, batches, device, args.repeat)
                label = ecapa_label if model == "ecapa" else "ge2e (resemblyzer)"
                row = {
                    "model": label,
                    "device": device,
                    "load_s": load,
                    "audio_s": audio,
                    "wall_s": wall,
                    "rtf": wall / audio,
                    "cpu_s_per_audio_s": cpu / audio,
                    "gpu_peak_allocated_bytes": alloc,
                    "gpu_peak_reserved_bytes": reserved,
                    "batch_size": args.batch_size,
                }
                rows.append(row)
                mem = (
                    f"{alloc / 2**20:11.0f} MB {reserved / 2**20:6.0f} MB"
                    if alloc is not None
                    else f"{'-':>14} {'-':>9}"
                )
                print(
                    f"{label:<22} {device:<6} {load:5.1f}s {wall:7.2f}s {wall / audio:8.4f} "
                    f"{audio / wall:10.1f}x {cpu / audio:8.3f} {mem}"
                )
                del ex
                if device == "cuda":
                    torch.cuda.empty_cache()
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": gpu, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
