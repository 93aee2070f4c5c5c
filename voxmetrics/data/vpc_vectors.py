"""The speaker embeddings a VoicePrivacy evaluation saves (``speaker_vectors.pt``).

The challenge's ASV evaluation (``evaluation/privacy/asv/asv.py``, ``speaker_extraction.py``
and ``speaker_embeddings.py``) extracts the embeddings of every set it scores and saves them
under its results folder::

    exp/<asv model>/<distance>_out/emb_xvect/<set>/utt-level/   one vector per utterance
    exp/<asv model>/<distance>_out/emb_xvect/<set>/spk-level/   one vector per enrolled speaker
                                                                (the mean of its utterances')

each folder holding ``speaker_vectors.pt`` (``torch.save`` of an n x d tensor), ``id2idx``
(``id index``: the utterance, or the speaker at speaker level), ``idx2spk`` (``index
speaker``) and ``spk2gender`` (``speaker gender``). The challenge scores a trial by the cosine
of its utterance vector and the enrolled speaker's vector. :func:`read_speaker_vectors` reads
one folder; the tensor is loaded with ``torch.load(..., weights_only=True)`` (never
unpickled) and must be a plain tensor. Reading needs PyTorch (``pip install
'voxmetrics[audio]'``).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from voxmetrics.data.vpc_lists import read_mapping
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import read_file_bytes

__all__ = ["VECTORS_FILE", "SpeakerVectors", "load_vector_tensor", "read_speaker_vectors"]

VECTORS_FILE = "speaker_vectors.pt"
"""The name of the tensor file of a folder of the challenge's embeddings."""


@dataclass(frozen=True, eq=False)
class SpeakerVectors:
    """One folder of the challenge's embeddings."""

    ids: NDArray[np.str_]
    """The id of each vector: an utterance (``utt-level``) or a speaker (``spk-level``)."""
    speakers: NDArray[np.str_]
    """The speaker of each vector."""
    genders: NDArray[np.str_]
    """The gender of each vector's speaker (``F`` / ``M``), ``""`` where unknown."""
    vectors: NDArray[np.float64]
    """n x d vectors, in the order of :attr:`ids`."""
    level: str
    """``utt`` or ``spk``."""
    source: str = ""
    """The folder, for messages."""

    def speaker_of(self) -> dict[str, str]:
        """Id -> speaker."""
        return dict(zip(self.ids.tolist(), self.speakers.tolist(), strict=True))

    def gender_of(self) -> dict[str, str]:
        """Speaker -> gender, where known."""
        return {
            s: g for s, g in zip(self.speakers.tolist(), self.genders.tolist(), strict=True) if g
        }


def load_vector_tensor(data: bytes, where: str) -> NDArray[np.float64]:
    """The n x d tensor of a ``speaker_vectors.pt``, as float64.

    Loaded with ``torch.load(..., map_location="cpu", weights_only=True)``: nothing is
    unpickled, and anything but one plain tensor is refused.

    Raises
    ------
    VoxMetricsInputError
        PyTorch is not installed, the file is not a tensor saved by ``torch.save``, or the
        tensor is not a 2-D array of finite real numbers.
    """
    try:
        import torch
    except ImportError:
        raise VoxMetricsInputError(
            f"{where}: reading the challenge's {VECTORS_FILE} needs PyTorch, which is not "
            "installed; install it with pip install 'voxmetrics[audio]'."
        ) from None
    try:
        obj = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise VoxMetricsInputError(
            f"{where}: cannot be read as a tensor saved by torch.save ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:120] if str(exc) else 'no detail'}); VoxMetrics loads "
            f"{VECTORS_FILE} with torch.load(weights_only=True) and reads one plain tensor."
        ) from None
    if not isinstance(obj, torch.Tensor):
        raise VoxMetricsInputError(
            f"{where}: holds a {type(obj).__name__}, not a tensor; the challenge saves one n x d "
            "tensor of speaker vectors (torch.save(vectors, ...))."
        )
    if obj.is_sparse or obj.is_complex() or obj.dtype == torch.bool:
        raise VoxMetricsInputError(
            f"{where}: the tensor is {'sparse' if obj.is_sparse else obj.dtype}; speaker vectors "
            "are a dense tensor of real numbers."
        )
    t = obj.detach().to(torch.float64)
    if t.ndim == 1:
        t = t.unsqueeze(0)
    if t.ndim != 2 or t.shape[1] < 1:
        raise VoxMetricsInputError(
            f"{where}: the tensor has shape {tuple(obj.shape)}; speaker vectors are n x d."
        )
    out = t.numpy().copy()
    if not np.isfinite(out).all():
        row = int(np.flatnonzero(~np.isfinite(out).all(axis=1))[0])
        raise VoxMetricsInputError(
            f"{where}: vector {row} has NaN or infinite values; every value must be finite."
        )
    return out


def _id2idx(path: Path, n: int) -> dict[str, int]:
    """``id2idx`` as id -> index, each index an integer in [0, n)."""
    mapping = read_mapping(path, "id index")
    out: dict[str, int] = {}
    for k, raw in mapping.items():
        try:
            idx = int(raw)
        except ValueError:
            raise VoxMetricsInputError(
                f"{path}: '{raw}' is not an index; each line is `id index`."
            ) from None
        if not 0 <= idx < n:
            raise VoxMetricsInputError(
                f"{path}: index {idx} is outside the {n} vectors of {VECTORS_FILE}; the files "
                "of the folder must come from one run."
            )
        out[k] = idx
    return out


def read_speaker_vectors(folder: Path, *, label: str | None = None) -> SpeakerVectors:
    """One ``utt-level`` or ``spk-level`` folder of the challenge's embeddings.

    Parameters
    ----------
    folder : Path
        The folder holding ``speaker_vectors.pt``, ``id2idx``, ``idx2spk`` and (optionally)
        ``spk2gender``.
    label : str, optional
        How messages name the folder (default: its path).

    Raises
    ------
    VoxMetricsInputError
        A file missing, a tensor that is not one (:func:`load_vector_tensor`), or index files
        that do not cover the vectors one to one.
    """
    where = label or str(folder)
    level = "spk" if folder.name.startswith("spk") else "utt"
    for name in (VECTORS_FILE, "id2idx", "idx2spk"):
        if not (folder / name).is_file():
            raise VoxMetricsInputError(
                f"{where}: no {name}; the challenge saves {VECTORS_FILE}, id2idx, idx2spk and "
                "spk2gender together."
            )
    vectors = load_vector_tensor(
        read_file_bytes(folder / VECTORS_FILE, f"{where}/{VECTORS_FILE}"),
        f"{where}/{VECTORS_FILE}",
    )
    n = vectors.shape[0]
    id2idx = _id2idx(folder / "id2idx", n)
    idx2spk = read_mapping(folder / "idx2spk", "index speaker")
    by_index = {int(i): s for i, s in idx2spk.items() if str(i).lstrip("-").isdigit()}
    if len(by_index) != len(idx2spk):
        raise VoxMetricsInputError(
            f"{where}/idx2spk: every line is `index speaker` with an integer index."
        )
    ids = pd.Series(id2idx)
    if ids.size != n or sorted(ids.tolist()) != list(range(n)):
        raise VoxMetricsInputError(
            f"{where}/id2idx: it names {ids.nunique()} distinct row(s) of the {n} vectors; each "
            "vector needs exactly one id (the files of the folder must come from one run)."
        )
    if sorted(by_index) != list(range(n)):
        raise VoxMetricsInputError(
            f"{where}/idx2spk: it gives the speaker of {len(by_index)} of the {n} vectors; each "
            "vector needs one."
        )
    order = ids.sort_values()
    speakers = np.array([by_index[i] for i in range(n)], dtype=str)
    genders = np.full(n, "", dtype=object)
    if (folder / "spk2gender").is_file():
        g = read_mapping(folder / "spk2gender", "speaker gender")
        genders = np.array([str(g.get(s, "")).upper() for s in speakers], dtype=object)
    ids_out = [str(x) for x in order.index]
    bare = [x[:-4] if x.endswith(".wav") else x for x in ids_out]
    if len(set(bare)) == len(bare):  # the challenge looks an id up with or without ".wav"
        ids_out = bare
    return SpeakerVectors(
        ids=np.asarray(ids_out, dtype=str),
        speakers=speakers,
        genders=genders.astype(str),
        vectors=vectors,
        level=level,
        source=where,
    )
