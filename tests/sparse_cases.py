"""Sparse trial lists shaped like VoicePrivacy's, for the tests of the model, readers, evaluation.

A complete matrix of 12 enrolled speakers (6 F, 6 M, 3 trials each) and its block-diagonal trial
list (female trials against the female enrolled speakers only, male against male), written in
every score format.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from voxmetrics.data import ScoreMatrix

N_PER_SEX = 6
TRIALS_PER_SPEAKER = 3


def full_matrix(seed: int = 0) -> ScoreMatrix:
    """A complete matrix of 12 enrolled speakers (6 F, 6 M), 3 trials each, and their sex."""
    rng = np.random.default_rng(seed)
    speakers = [f"f{i}" for i in range(N_PER_SEX)] + [f"m{i}" for i in range(N_PER_SEX)]
    trial_spk = np.repeat(speakers, TRIALS_PER_SPEAKER)
    n = len(speakers)
    scores = rng.normal(size=(trial_spk.size, n))
    cols = np.searchsorted(speakers, trial_spk)
    scores[np.arange(trial_spk.size), cols] += 2.0
    return ScoreMatrix.from_arrays(
        np.round(scores, 6),
        trial_ids=[f"u{k:03d}" for k in range(trial_spk.size)],
        trial_speakers=trial_spk,
        enrol_speakers=speakers,
        attributes={"sex": np.where(np.char.startswith(trial_spk, "f"), "F", "M")},
    )


def with_mask(sm: ScoreMatrix, mask: np.ndarray) -> ScoreMatrix:
    """``sm`` (its scores, ids and attributes) listing only the pairs where ``mask`` is True."""
    return ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        attributes=sm.attributes,
        mask=mask,
    )


def block_mask(sm: ScoreMatrix) -> np.ndarray:
    """VoicePrivacy's trial list: each trial against the enrolled speakers of its own sex."""
    enrol_sex = np.where(np.char.startswith(sm.enrol_speakers, "f"), "F", "M")
    return sm.attributes["sex"][:, None] == enrol_sex[None, :]


def listed_rows(sm: ScoreMatrix, mask: np.ndarray) -> pd.DataFrame:
    df = sm.to_long_frame()
    return df.loc[mask.ravel()].reset_index(drop=True)


def kaldi_files(df: pd.DataFrame) -> tuple[bytes, bytes]:
    rows = zip(df.enrol_speaker, df.trial_id, df.score, strict=True)
    scores = "".join(f"{e} {t} {s!r}\n" for e, t, s in rows)
    label = np.where(df.trial_speaker == df.enrol_speaker, "target", "nontarget")
    lines = zip(df.enrol_speaker, df.trial_id, label, strict=True)
    key = "".join(f"{e} {t} {lab}\n" for e, t, lab in lines)
    return scores.encode(), key.encode()


def npz_bytes(sm: ScoreMatrix, mask: np.ndarray | None, *, nan: bool = False) -> bytes:
    scores = np.array(sm.scores)
    arrays = {
        "trial_ids": sm.trial_ids,
        "trial_speakers": sm.trial_speakers,
        "enrol_speakers": sm.enrol_speakers,
        "attr_sex": sm.attributes["sex"],
    }
    if nan:
        scores[~mask] = np.nan
    elif mask is not None:
        scores[~mask] = 0.0  # any value: unlisted cells are ignored
        arrays["mask"] = mask
    buf = io.BytesIO()
    np.savez(buf, scores=scores, **arrays)
    return buf.getvalue()
