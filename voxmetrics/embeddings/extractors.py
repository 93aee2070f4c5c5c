"""Speaker-embedding extractors behind one small interface, and the extraction pipeline.

Two attacker models:

* ``ecapa`` — SpeechBrain's ECAPA-TDNN (``EncoderClassifier``) from a local model directory
  (``hyperparams.yaml`` + checkpoints) or a Hugging Face hub id (default
  ``speechbrain/spkrec-ecapa-voxceleb``, 192-d). Hub ids are resolved to a local snapshot first,
  so both go through the same loader. Checkpoints are loaded weights-only (``torch.load``
  with ``weights_only=True``). The hyperparams file is executable configuration: only load
  trusted ones.
* ``ge2e`` — the GE2E speaker encoder of Resemblyzer (Wan et al., 2018; 3-layer LSTM on 40 mel
  bands, 256-d), whose pretrained weights ship inside the ``resemblyzer`` wheel, so it works
  offline with no download. It is a *different attacker model* than ECAPA: its EERs are not
  comparable with ECAPA's. This re-implementation averages 1.6 s partial windows like
  Resemblyzer but skips its webrtcvad silence trimming.

All embeddings are L2-normalised.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from voxmetrics._types import Progress
from voxmetrics.data.model import META_COLUMNS, EmbeddingSet
from voxmetrics.embeddings.audio import (
    DEFAULT_LOUDNESS,
    AudioDecodeError,
    decode_audio,
    normalise_loudness,
    resolve_audio_path,
)
from voxmetrics.embeddings.cache import EmbeddingCache, audio_hash, default_cache_dir
from voxmetrics.errors import VoxMetricsInputError

if TYPE_CHECKING:
    import torch

__all__ = [
    "DEFAULT_ECAPA",
    "EcapaExtractor",
    "ExtractionResult",
    "Extractor",
    "Ge2eExtractor",
    "extract_embeddings",
    "load_extractor",
    "select_device",
]

DEFAULT_ECAPA = "speechbrain/spkrec-ecapa-voxceleb"
"""Hub id of the default ECAPA-TDNN model."""
Device = Literal["auto", "cpu", "cuda"]


class Extractor(Protocol):
    """What the pipeline needs from a speaker-embedding model."""

    name: str
    """Short label shown to users (``ecapa``, ``ge2e``)."""
    identity: str
    """Stable identity of weights + preprocessing; the cache key."""
    sample_rate: int
    """Input rate in Hz."""
    device: str
    """``cpu`` or ``cuda``."""
    padding_invariant: bool
    """Whether zero padding in a batch leaves the embeddings unchanged."""

    def embed(self, waves: list[NDArray[np.float32]]) -> NDArray[np.float32]:
        """Embed a batch of mono waveforms at :attr:`sample_rate`; returns (n, d), unit norm."""
        ...


def select_device(device: str = "auto") -> str:
    """``cuda`` when available (for ``auto``), else ``cpu``; refuses ``cuda`` without a GPU."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise VoxMetricsInputError(
            "device 'cuda' was requested but no CUDA GPU is available; use --device cpu or auto."
        )
    if device not in ("cpu", "cuda"):
        raise VoxMetricsInputError(f"device '{device}' is unknown; use auto, cpu or cuda.")
    return device


def _pad(waves: list[NDArray[np.float32]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Zero-pad to the longest wave; returns (batch, time) and relative lengths."""
    import torch

    longest = max(w.size for w in waves)
    batch = torch.zeros(len(waves), longest)
    for i, w in enumerate(waves):
        batch[i, : w.size] = torch.from_numpy(w)
    rel = torch.tensor([w.size / longest for w in waves], dtype=torch.float32)
    return batch, rel


def _unit(e: NDArray[np.floating]) -> NDArray[np.float32]:
    e = np.asarray(e, dtype=np.float64)
    n = np.linalg.norm(e, axis=1, keepdims=True)
    return (e / np.where(n > 0, n, 1.0)).astype(np.float32)


@contextlib.contextmanager
def _weights_only_load() -> Iterator[None]:
    """Force ``torch.load(..., weights_only=True)`` for code (SpeechBrain) that does not pass it."""
    import torch

    original = torch.load

    def safe_load(*args: Any, **kwargs: Any) -> Any:
        kwargs["weights_only"] = True
        return original(*args, **kwargs)

    torch.load = safe_load
    try:
        yield
    finally:
        torch.load = original


def _hash_files(paths: list[Path], salt: str) -> str:
    h = hashlib.sha256(salt.encode())
    for p in sorted(paths):
        h.update(p.name.encode())
        with p.open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _hub_snapshot(repo_id: str, *, timeout: float = 3.0) -> Path:
    """A local snapshot of a hub model: the local HF cache, else a download when online."""
    hint = (
        f"download it on a machine with network (e.g. `hf download {repo_id} --local-dir DIR`) "
        "and pass that folder as the model (--model DIR)."
    )
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:  # pragma: no cover - speechbrain depends on huggingface_hub
        raise VoxMetricsInputError(
            f"model '{repo_id}': huggingface_hub is missing; {hint}"
        ) from None
    with contextlib.suppress(LocalEntryNotFoundError, OSError, ValueError):
        return Path(snapshot_download(repo_id, local_files_only=True))
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        raise VoxMetricsInputError(
            f"model '{repo_id}' is not cached and HF_HUB_OFFLINE is set; {hint}"
        )
    try:
        socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
    except OSError:
        raise VoxMetricsInputError(
            f"model '{repo_id}' is not cached locally and huggingface.co cannot be reached; {hint}"
        ) from None
    try:
        return Path(snapshot_download(repo_id))
    except Exception as exc:  # network and hub errors of many kinds
        raise VoxMetricsInputError(
            f"model '{repo_id}' could not be downloaded ({exc}); {hint}"
        ) from None


class EcapaExtractor:
    """SpeechBrain ECAPA-TDNN speaker encoder from a local directory or a hub id.

    Parameters
    ----------
    source : str or os.PathLike
        A directory with ``hyperparams.yaml`` and its checkpoints (``embedding_model.ckpt``...),
        or a hub id such as ``speechbrain/spkrec-ecapa-voxceleb``.
    device : {"auto", "cpu", "cuda"}
        Where to run the model.
    """

    sample_rate = 16000
    padding_invariant = False  # convolutions see the zero padding

    def __init__(
        self, source: str | os.PathLike[str] = DEFAULT_ECAPA, *, device: str = "auto"
    ) -> None:
        local = Path(source).expanduser()
        if not local.is_dir():
            if not re.fullmatch(r"[\w.-]+/[\w.-]+", str(source)) or str(source).startswith("."):
                raise VoxMetricsInputError(
                    f"model '{source}': no such directory; pass a folder with hyperparams.yaml and "
                    "embedding_model.ckpt, or a hub id like speechbrain/spkrec-ecapa-voxceleb."
                )
            local = _hub_snapshot(str(source))
        hparams = local / "hyperparams.yaml"
        if not hparams.is_file():
            raise VoxMetricsInputError(
                f"model '{source}': {hparams} is missing; an ECAPA model folder needs "
                "hyperparams.yaml and embedding_model.ckpt."
            )
        self.device = select_device(device)
        self.name = "ecapa"
        self.source = str(source)
        self.identity = "ecapa-v1:" + _hash_files(
            [hparams, *local.glob("*.ckpt")], salt=f"sr={self.sample_rate}"
        )
        from speechbrain.inference.classifiers import EncoderClassifier
        from speechbrain.utils.fetching import LocalStrategy

        overrides = {}
        if "pretrained_path" in hparams.read_text(encoding="utf-8"):
            overrides["pretrained_path"] = str(local.resolve())
        try:
            with _weights_only_load():
                self.model = EncoderClassifier.from_hparams(
                    source=str(local.resolve()),
                    savedir=None,
                    overrides=overrides,
                    local_strategy=LocalStrategy.NO_LINK,
                    # SpeechBrain parses "cuda:<index>"; a bare "cuda" logs a warning
                    run_opts={"device": "cuda:0" if self.device == "cuda" else self.device},
                )
        except VoxMetricsInputError:
            raise
        except Exception as exc:  # yaml, missing checkpoint, unpickling refused...
            raise VoxMetricsInputError(
                f"model '{source}': could not load the ECAPA model ({type(exc).__name__}: {exc})."
            ) from None
        self.model.eval()

    def embed(self, waves: list[NDArray[np.float32]]) -> NDArray[np.float32]:
        """Embed a batch (padded, with relative lengths); returns (n, d) unit vectors."""
        import torch

        batch, rel = _pad(waves)
        with torch.inference_mode():
            e = self.model.encode_batch(batch.to(self.device), rel.to(self.device))
        return _unit(e.reshape(len(waves), -1).float().cpu().numpy())


def _resemblyzer_weights() -> Path:
    spec = importlib.util.find_spec("resemblyzer")
    if spec is None or not spec.submodule_search_locations:
        raise VoxMetricsInputError(
            "model 'ge2e' needs the resemblyzer package, which ships its weights: "
            "pip install resemblyzer."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "pretrained.pt"
    if not path.is_file():
        raise VoxMetricsInputError(f"model 'ge2e': {path} is missing; reinstall resemblyzer.")
    return path


class Ge2eExtractor:
    """GE2E speaker encoder (Resemblyzer's pretrained weights), a different attacker than ECAPA.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda"}
        Where to run the model.
    weights : str or os.PathLike, optional
        A Resemblyzer ``pretrained.pt`` (default: the one inside the installed wheel).
    """

    sample_rate = 16000
    padding_invariant = True  # fixed 1.6 s windows: batching never pads
    n_frames = 160  # 1.6 s partial windows
    frame_step = 77  # round(16000 / 1.3 / 160), Resemblyzer's rate 1.3
    hop = 160

    def __init__(
        self, *, device: str = "auto", weights: str | os.PathLike[str] | None = None
    ) -> None:
        import torch
        import torchaudio

        path = Path(weights) if weights is not None else _resemblyzer_weights()
        self.device = select_device(device)
        self.name = "ge2e"
        self.identity = "ge2e-v1:" + _hash_files([path], salt="resemblyzer-partials-no-vad")
        state = torch.load(path, map_location="cpu", weights_only=True)
        state = state.get("model_state", state)
        self.lstm = torch.nn.LSTM(40, 256, num_layers=3, batch_first=True)
        self.linear = torch.nn.Linear(256, 256)
        self.lstm.load_state_dict({k[5:]: v for k, v in state.items() if k.startswith("lstm.")})
        self.linear.load_state_dict({k[7:]: v for k, v in state.items() if k.startswith("linear.")})
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=16000,
            n_fft=400,
            hop_length=self.hop,
            n_mels=40,
            power=2.0,
            norm="slaney",
            mel_scale="slaney",
            center=True,
            pad_mode="constant",
        )
        for m in (self.lstm, self.linear, self.mel):
            m.to(self.device).eval()

    def _partials(self, wave: NDArray[np.float32]) -> torch.Tensor:
        """(n_partials, 160, 40) mel windows of one utterance, as Resemblyzer slices them."""
        import torch

        rms = float(np.sqrt(np.mean(wave.astype(np.float64) ** 2)))
        gain = 10 ** ((-30 - 20 * np.log10(max(rms, 1e-12))) / 20)
        wave = wave * np.float32(max(gain, 1.0))  # raise quiet audio to -30 dBFS, never lower
        n_frames = int(np.ceil((wave.size + 1) / self.hop))
        starts = list(
            range(0, max(1, n_frames - self.n_frames + self.frame_step + 1), self.frame_step)
        )
        last = starts[-1] * self.hop
        coverage = (wave.size - last) / (self.n_frames * self.hop)
        if coverage < 0.75 and len(starts) > 1:
            starts = starts[:-1]
        needed = (starts[-1] + self.n_frames) * self.hop
        padded = np.pad(wave, (0, max(0, needed - wave.size)))
        mel = self.mel(torch.from_numpy(padded).to(self.device)).T  # frames x 40
        return torch.stack([mel[s : s + self.n_frames] for s in starts])

    def embed(self, waves: list[NDArray[np.float32]]) -> NDArray[np.float32]:
        """Embed a batch: all 1.6 s partials in one LSTM pass, averaged per utterance."""
        import torch

        with torch.inference_mode():
            parts = [self._partials(w) for w in waves]
            _, (hidden, _) = self.lstm(torch.cat(parts))
            e = torch.relu(self.linear(hidden[-1]))
            e = e / e.norm(dim=1, keepdim=True).clamp_min(1e-12)
            means = torch.stack([chunk.mean(0) for chunk in e.split([len(p) for p in parts])])
        return _unit(means.cpu().numpy())


_NEEDS = {"ge2e": ("torch", "resemblyzer"), "ecapa": ("torch", "torchaudio", "speechbrain")}
"""The packages (of the ``audio`` extra) each kind of extractor imports."""


def check_extractor_installed(model: str = "ecapa") -> None:
    """Refuse, naming them, when the packages the extractor ``model`` needs are not installed."""
    need = _NEEDS["ge2e" if model == "ge2e" else "ecapa"]
    missing = []
    for module in need:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise VoxMetricsInputError(
            f"--model {model} needs {', '.join(missing)}, which {verb} not installed; install "
            "the audio extra: pip install 'voxmetrics[audio]'."
        )


def load_extractor(model: str = "ecapa", *, device: str = "auto") -> Extractor:
    """``ecapa`` (default hub model), ``ge2e``, a local ECAPA directory or a hub id."""
    check_extractor_installed(model)
    if model == "ge2e":
        return Ge2eExtractor(device=device)
    return EcapaExtractor(DEFAULT_ECAPA if model == "ecapa" else model, device=device)


@dataclass(frozen=True)
class ExtractionResult:
    """Embeddings of the recordings that could be used, and why the others could not."""

    embeddings: EmbeddingSet | None
    """One L2-normalised embedding per usable recording with the manifest's columns; None when
    no recording could be used."""
    failures: pd.DataFrame = field(repr=False)
    """Columns ``utt_id, audio_path, reason``: one row per recording left out."""
    model: str = ""
    """The extractor's name (``ecapa`` / ``ge2e``)."""
    n_cached: int = 0
    """How many embeddings came from the on-disk cache."""
    seconds: float = 0.0
    """Wall-clock time of the extraction."""
    loudness: float | None = None
    """The integrated loudness (LUFS) recordings were brought to before embedding (None:
    not normalised)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary."""
        return {
            "model": self.model,
            "loudness_lufs": self.loudness,
            "n_embedded": 0 if self.embeddings is None else len(self.embeddings.meta),
            "n_failed": len(self.failures),
            "n_cached": self.n_cached,
            "seconds": self.seconds,
        }


def extract_embeddings(
    manifest: pd.DataFrame,
    *,
    audio_root: str | os.PathLike[str],
    extractor: Extractor,
    batch_size: int = 16,
    cache_dir: str | os.PathLike[str] | Literal[False] | None = None,
    exact: bool = True,
    progress: Progress | None = None,
    loudness: float | None = DEFAULT_LOUDNESS,
) -> ExtractionResult:
    """Embed every recording of a manifest.

    Recordings are read under ``audio_root``, hashed (cache lookup), sorted by length and
    embedded in batches of similar length; a file that is missing, outside the root or not
    decodable becomes a failure row and the others proceed.

    Parameters
    ----------
    manifest : pandas.DataFrame
        From :func:`~voxmetrics.embeddings.audio.read_manifest`.
    audio_root : str or os.PathLike
        The folder (or extracted zip) the ``audio_path`` column is relative to.
    extractor : Extractor
        From :func:`load_extractor`.
    batch_size : int
        Recordings per forward pass.
    cache_dir : str, os.PathLike, None or False
        On-disk cache folder (None: :func:`~voxmetrics.embeddings.cache.default_cache_dir`;
        False: no cache).
    exact : bool
        ECAPA-TDNN is not padding-invariant (its convolutions see the zero padding: one padded
        frame moves a random-weight embedding by ~1e-2), so by default recordings are batched
        only with recordings of the same length and every embedding equals the one-at-a-time
        result. ``False`` pads each batch of similar length (relative lengths passed to the
        model): faster, approximately equal. GE2E is padding-invariant and always batches.
    progress : callable, optional
        Called as ``progress(fraction, message)``; the message includes an ETA.
    loudness : float or None
        Bring every recording to this integrated loudness (LUFS) before embedding
        (:func:`~voxmetrics.embeddings.audio.normalise_loudness`; -30 LUFS by default, as the
        VoicePrivacy 2024 evaluation); None embeds the audio as decoded. Recorded in the
        result, the embeddings' source (saved with a study) and the cache key.

    Returns
    -------
    ExtractionResult
    """
    if batch_size < 1:
        raise VoxMetricsInputError(f"batch_size must be at least 1, got {batch_size}.")
    missing = [c for c in (*META_COLUMNS, "audio_path") if c not in manifest.columns]
    if missing:
        raise VoxMetricsInputError(f"the manifest lacks column(s) {', '.join(missing)}.")
    start = time.monotonic()
    cache = None
    if cache_dir is not False:
        cache = EmbeddingCache(
            cache_dir or default_cache_dir(), cache_identity(extractor, loudness)
        )
    n = len(manifest)
    embs: dict[int, NDArray[np.float32]] = {}
    failures: list[tuple[str, str, str]] = []
    pending: list[tuple[int, str, str, float]] = []  # row, path, digest, approximate seconds
    utt = manifest["utt_id"].astype(str).to_numpy()
    paths = manifest["audio_path"].astype(str).to_numpy()
    import soundfile as sf

    for i in range(n):
        try:
            full = resolve_audio_path(audio_root, paths[i])
            data = full.read_bytes()
        except AudioDecodeError as exc:
            failures.append((utt[i], paths[i], str(exc)))
            continue
        except OSError:
            failures.append(
                (utt[i], paths[i], f"{paths[i]}: file not found in the audio folder or zip.")
            )
            continue
        digest = audio_hash(data)
        hit = cache.get(digest) if cache is not None else None
        if hit is not None:
            embs[i] = hit
            continue
        try:
            info = sf.info(full)
            seconds = info.frames / info.samplerate
        except Exception:  # decode_audio will give the per-file reason
            seconds = 0.0
        pending.append((i, str(full), digest, seconds))
    n_cached = len(embs)
    pending.sort(key=lambda p: p[3])
    done = n - len(pending)

    def report() -> None:
        if progress is None:
            return
        elapsed = time.monotonic() - start
        rate = (done - n_cached - len(failures)) / elapsed if elapsed > 0 else 0
        left = n - done
        eta = f", ETA {left / rate:.0f} s" if rate > 0 and left else ""
        progress(done / n if n else 1.0, f"{done}/{n} recordings{eta}")

    report()
    for b in range(0, len(pending), batch_size):
        chunk = pending[b : b + batch_size]
        ok: list[tuple[int, str, NDArray[np.float32]]] = []
        for i, resolved, digest, _ in chunk:
            try:
                wave = decode_audio(resolved, sample_rate=extractor.sample_rate, name=paths[i])
                if loudness is not None:
                    wave = normalise_loudness(wave, extractor.sample_rate, target=loudness)
                ok.append((i, digest, wave))
            except AudioDecodeError as exc:
                failures.append((utt[i], paths[i], str(exc)))
        groups: dict[int, list[tuple[int, str, NDArray[np.float32]]]] = {}
        for item in ok:  # exact: one forward pass per length, so no padding reaches the model
            key = (
                item[2].size if exact and not getattr(extractor, "padding_invariant", False) else 0
            )
            groups.setdefault(key, []).append(item)
        for group in groups.values():
            out = extractor.embed([w for _, _, w in group])
            for (i, digest, _), e in zip(group, out, strict=True):
                embs[i] = e
                if cache is not None:
                    cache.put(digest, e)
        done += len(chunk)
        report()
    fail = pd.DataFrame(failures, columns=["utt_id", "audio_path", "reason"])
    rows = sorted(embs)
    es = None
    if rows:
        es = EmbeddingSet.from_arrays(
            np.stack([embs[i] for i in rows]).astype(np.float64),
            manifest.iloc[rows].reset_index(drop=True),
            source=extraction_source(extractor.name, loudness),
        )
    return ExtractionResult(
        embeddings=es,
        failures=fail,
        model=extractor.name,
        n_cached=n_cached,
        seconds=time.monotonic() - start,
        loudness=loudness,
    )


def cache_identity(extractor: Extractor, loudness: float | None) -> str:
    """The cache key of ``extractor``'s embeddings of audio at ``loudness`` LUFS (or as is)."""
    return extractor.identity if loudness is None else f"{extractor.identity}|lufs{loudness:g}"


def extraction_source(model: str, loudness: float | None) -> str:
    """The source of extracted embeddings, naming the model and the loudness normalisation.

    Examples
    --------
    >>> extraction_source("ecapa", -30.0), extraction_source("ge2e", None)
    ('embeddings (ecapa, -30 LUFS)', 'embeddings (ge2e, no loudness normalisation)')
    """
    level = "no loudness normalisation" if loudness is None else f"{loudness:g} LUFS"
    return f"embeddings ({model}, {level})"
