"""Shared data of the extractor tests: a tiny ECAPA-TDNN's hyperparameters and a crude voice.

Used by tests/embeddings/test_extractors.py, the CLI's and the dashboard's extraction tests and
the extraction on Dask (tests/embeddings/test_distributed.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import soundfile as sf

HPARAMS = """\
# Tiny ECAPA-TDNN (random weights) in the layout of speechbrain/spkrec-ecapa-voxceleb.
pretrained_path: speechbrain/spkrec-ecapa-voxceleb
n_mels: 24
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    channels: [32, 32, 32, 32, 96]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
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


def write_tiny_ecapa(folder: Path, seed: int) -> Path:
    """A model folder of the HPARAMS model with random weights drawn from ``seed``.

    SpeechBrain's own ECAPA_TDNN class in the layout of speechbrain/spkrec-ecapa-voxceleb
    (hyperparams.yaml + embedding_model.ckpt), loaded like a downloaded model; SpeechBrain's
    lazy modules are forgotten afterwards, so hypothesis' module scan still works in later tests.
    """
    import torch
    from metric_registry import forget_unimportable_modules
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hyperparams.yaml").write_text(HPARAMS)
    torch.manual_seed(seed)
    model = ECAPA_TDNN(24, channels=[32, 32, 32, 32, 96], attention_channels=16, lin_neurons=16)
    torch.save(model.state_dict(), folder / "embedding_model.ckpt")
    forget_unimportable_modules()
    return folder


def voice(seconds: float, seed: int, f0: float = 120.0) -> np.ndarray:
    """A crude voiced sound: harmonics of f0 with vibrato plus a little noise, 16 kHz."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.03 * np.sin(2 * np.pi * 5 * t))) / 16000
    x = sum(np.sin(k * phase) / k for k in range(1, 12))
    x = x * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t) ** 2) + 0.01 * rng.standard_normal(t.size)
    return (0.2 * x / np.abs(x).max()).astype(np.float32)


def make_study(root):
    """2 speakers x (enrol, trial) x (original, anonymised B1): 8 short recordings."""
    rows = []
    for k, (spk, f0) in enumerate((("a", 110.0), ("b", 210.0))):
        for role in ("enrol", "trial"):
            for system in ("original", "B1"):
                utt = f"{system}_{spk}_{role}"
                rel = f"{system}/{spk}_{role}.wav"
                (root / system).mkdir(parents=True, exist_ok=True)
                shift = 1.0 if system == "original" else 1.3
                sf.write(root / rel, voice(0.6, seed=k, f0=f0 * shift), 16000)
                rows.append((utt, spk, role, "eval", rel, system))
    cols = ["utt_id", "speaker", "role", "split", "audio_path", "system"]
    manifest = root / "manifest.csv"
    pd.DataFrame(rows, columns=cols).to_csv(manifest, index=False)
    return manifest
