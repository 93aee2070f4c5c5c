"""CPU throughput of the embedding extractors, batched vs one recording at a time.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_embeddings.py [--files 32] [--seconds 3.0]
                                                     [--batch-size 16] [--model-dir DIR]

Synthesises ``--files`` voiced recordings of ``--seconds`` +- 30 % (seeded), then times
``Extractor.embed`` on them in batches of similar length (sorted, ``--batch-size``) and one at a
time, for GE2E (when resemblyzer is installed), a tiny random-weight ECAPA-TDNN (channels
[32, 32, 32, 32, 96], like the test fixture) and, with ``--model-dir``, a real ECAPA folder
(e.g. a local copy of speechbrain/spkrec-ecapa-voxceleb). Reports seconds of audio per second
of wall time (``time.perf_counter``, best of 2) and the torch thread count. No cache, no
decoding: the model alone. Not a test: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TINY_HPARAMS = """\
pretrained_path: unused
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: 24
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: 24
    channels: [32, 32, 32, 32, 96]
    attention_channels: 16
    lin_neurons: 16
classifier: !new:speechbrain.lobes.models.ECAPA_TDNN.Classifier
    input_size: 16
    out_neurons: 4
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
    classifier: !ref <classifier>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
    paths:
        embedding_model: !ref <pretrained_path>/embedding_model.ckpt
"""


def voices(n: int, seconds: float, seed: int = 0) -> list[np.ndarray]:
    """``n`` harmonic sounds of random pitch and length ``seconds`` +- 30 %, 16 kHz."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        t = np.arange(int(seconds * rng.uniform(0.7, 1.3) * 16000)) / 16000
        phase = 2 * np.pi * rng.uniform(90, 250) * t
        x = sum(np.sin(k * phase) / k for k in range(1, 10)) + 0.05 * rng.standard_normal(t.size)
        out.append((0.2 * x / np.abs(x).max()).astype(np.float32))
    return out


def tiny_ecapa(folder: Path) -> Path:
    import torch
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    (folder / "hyperparams.yaml").write_text(TINY_HPARAMS)
    torch.manual_seed(0)
    model = ECAPA_TDNN(24, channels=[32, 32, 32, 32, 96], attention_channels=16, lin_neurons=16)
    torch.save(model.state_dict(), folder / "embedding_model.ckpt")
    return folder


def best_of(fn, repeat: int = 2) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench(label: str, extractor, waves: list[np.ndarray], batch_size: int) -> None:
    audio = sum(w.size for w in waves) / 16000
    ordered = sorted(waves, key=len)
    batches = [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]
    extractor.embed(waves[:1])  # warm-up
    batched = best_of(lambda: [extractor.embed(b) for b in batches])
    single = best_of(lambda: [extractor.embed([w]) for w in waves])
    print(
        f"{label:<28} {audio:7.1f} s audio | batched x{batch_size}: {audio / batched:8.1f} s/s"
        f" | one at a time: {audio / single:8.1f} s/s | speed-up {single / batched:4.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--model-dir", help="a real ECAPA model folder (hyperparams.yaml + ckpt)")
    args = ap.parse_args()
    import torch

    from voxmetrics.embeddings import EcapaExtractor, Ge2eExtractor

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs")
    waves = voices(args.files, args.seconds)
    if importlib.util.find_spec("resemblyzer") is not None:
        bench("ge2e (resemblyzer weights)", Ge2eExtractor(device="cpu"), waves, args.batch_size)
    with tempfile.TemporaryDirectory() as tmp:
        ex = EcapaExtractor(tiny_ecapa(Path(tmp)), device="cpu")
        bench("ecapa tiny (random, padded)", ex, waves, args.batch_size)
    if args.model_dir:
        bench(
            "ecapa (--model-dir, padded)",
            EcapaExtractor(args.model_dir, device="cpu"),
            waves,
            args.batch_size,
        )


if __name__ == "__main__":
    main()
