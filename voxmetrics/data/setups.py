"""VoicePrivacy attacker set-ups from existing embeddings: one system per condition, utt-id maps.

The VoicePrivacy Challenge (Tomashenko et al. 2024) evaluates an anonymiser under attackers
who know more or less about it. From the embeddings of the original utterances and of their
anonymised copies (one speaker encoder, one anonymiser), :func:`attacker_setups` builds:

``original`` (unprotected)
    Enrolment and trials original: the reference, and the original voices of DeID and G_VD.
``ignorant``
    Enrolment original, trials anonymised: the attacker does not know the speech was
    anonymised.
``lazy-informed``
    Enrolment and trials anonymised by the same system, scored by the speaker encoder of the
    original speech.
``semi-informed``
    Enrolment and trials anonymised, scored by a speaker encoder retrained on anonymised
    speech: the same rows as lazy-informed, with the embeddings of that retrained encoder
    (``semi_informed=``; without them the anonymised embeddings are taken as those of the
    retrained encoder, and the description says so).

Metadata that mix several ``system`` values are refused (:func:`one_system`): pooled into one
condition they would average original and anonymised enrolment into one profile. Anonymised
utterance ids that carry a suffix (``1272-128104-0000_mcadams08``) are mapped to their
originals' ids (:func:`map_utterance_ids`), so the voice similarity never pairs an utterance
with its own anonymised version.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from voxmetrics._lazy import lazy_module
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.readers import read_table
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.study import Condition
from voxmetrics.errors import VoxMetricsInputError

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "SETUPS",
    "attacker_setups",
    "map_utterance_ids",
    "one_system",
    "read_utterance_map",
]

SETUPS = ("ignorant", "lazy-informed", "semi-informed")
"""The attacker set-ups :func:`attacker_setups` builds (besides the unprotected original)."""


def one_system(es: EmbeddingSet, *, where: str = "", how: str = "a system filter") -> EmbeddingSet:
    """``es`` unchanged when its metadata hold one ``system`` value (or no such column).

    Raises
    ------
    VoxMetricsInputError
        When the ``system`` column holds several values: the message lists them and says to
        pick one with ``how`` (e.g. "the manifest's system column").

    Examples
    --------
    >>> meta = pd.DataFrame({"utt_id": ["a", "b"], "speaker": ["s", "s"],
    ...     "role": ["enrol", "trial"], "split": ["eval", "eval"], "system": ["original", "B1"]})
    >>> one_system(EmbeddingSet.from_arrays(np.eye(2), meta), where="meta.csv", how="--system")
    Traceback (most recent call last):
    ...
    voxmetrics.errors.VoxMetricsInputError: meta.csv: the metadata mix 2 systems (B1: 1 rows, \
original: 1 rows); one condition holds one system, else original and anonymised enrolment are \
averaged into one profile. Pick one with --system (e.g. 'original'), or build the attacker \
set-ups (ignorant, lazy-informed, semi-informed) from an original and an anonymised \
embedding file.
    """
    if "system" not in es.meta.columns:
        return es
    counts = es.meta["system"].astype(str).value_counts().sort_index()
    if len(counts) <= 1:
        return es
    listed = ", ".join(f"{s}: {n} rows" for s, n in counts.items())
    first = "original" if "original" in counts.index else str(counts.index[0])
    raise VoxMetricsInputError(
        f"{where or es.source or 'embeddings'}: the metadata mix {len(counts)} systems "
        f"({listed}); one condition holds one system, else original and anonymised enrolment "
        f"are averaged into one profile. Pick one with {how} (e.g. '{first}'), or build "
        "the attacker set-ups (ignorant, lazy-informed, semi-informed) from an original and "
        "an anonymised embedding file."
    )


def read_utterance_map(source: str | os.PathLike[str] | bytes, *, name: str = "") -> dict[str, str]:
    r"""An anonymised -> original utterance-id map from a CSV with columns ``utt_id``, ``original``.

    Examples
    --------
    >>> read_utterance_map(b"utt_id,original\nu1_mcadams08,u1\n")
    {'u1_mcadams08': 'u1'}
    """
    df = read_table(source, name=name or None)
    where = name or (str(source) if not isinstance(source, bytes) else "utterance map")
    if not {"utt_id", "original"} <= set(df.columns):
        raise VoxMetricsInputError(
            f"{where}: an utterance map needs the columns utt_id (the anonymised utterance's id) "
            f"and original (its original's id); it has {', '.join(map(str, df.columns))}."
        )
    ids = df["utt_id"].astype(str)
    if ids.duplicated().any():
        raise VoxMetricsInputError(
            f"{where}: utt_id '{ids[ids.duplicated()].iloc[0]}' is mapped twice; map each once."
        )
    return dict(zip(ids, df["original"].astype(str), strict=True))


def map_utterance_ids(
    es: EmbeddingSet,
    *,
    strip_suffix: str | None = None,
    mapping: Mapping[str, str] | None = None,
) -> EmbeddingSet:
    """``es`` with its utterance ids mapped to their originals' (for the pairing behind DeID).

    ``strip_suffix`` removes a suffix from every id that ends with it (``"_mcadams08"``);
    ``mapping`` maps ids to original ids (ids it does not list stay). Both may be given
    (the suffix goes first). The mapped ids must stay unique.

    Examples
    --------
    >>> meta = pd.DataFrame({"utt_id": ["u1_mc", "u2_mc"], "speaker": ["s", "s"],
    ...     "role": ["enrol", "trial"], "split": ["eval", "eval"]})
    >>> es = map_utterance_ids(EmbeddingSet.from_arrays(np.eye(2), meta), strip_suffix="_mc")
    >>> es.meta["utt_id"].tolist()
    ['u1', 'u2']
    """
    if not strip_suffix and not mapping:
        return es
    ids = es.meta["utt_id"].astype(str)
    if strip_suffix:
        ends = ids.str.endswith(strip_suffix)
        if not ends.any():
            raise VoxMetricsInputError(
                f"{es.source or 'embeddings'}: no utterance id ends with '{strip_suffix}' (e.g. "
                f"'{ids.iloc[0]}'); check the suffix to strip."
            )
        ids = ids.where(~ends, ids.str.slice(0, -len(strip_suffix)))
    if mapping:
        ids = ids.map(lambda u: mapping.get(u, u))
    if ids.duplicated().any():
        twice = ids[ids.duplicated()].iloc[0]
        raise VoxMetricsInputError(
            f"{es.source or 'embeddings'}: after mapping, utterance id '{twice}' occurs twice; "
            "each anonymised utterance must map to its own original."
        )
    meta = es.meta.copy()
    meta["utt_id"] = ids.to_numpy()
    return EmbeddingSet.from_arrays(es.embeddings, meta, source=es.source)


def _rows(es: EmbeddingSet, role: str) -> tuple[np.ndarray, pd.DataFrame]:
    keep = (es.meta["role"] == role).to_numpy()
    return es.embeddings[keep], es.meta.loc[keep]


def _combine(enrol: EmbeddingSet, trials: EmbeddingSet, source: str) -> EmbeddingSet:
    """The enrolment rows of ``enrol`` and the trial rows of ``trials`` as one set."""
    (e_emb, e_meta), (t_emb, t_meta) = _rows(enrol, "enrol"), _rows(trials, "trial")
    if e_emb.shape[1] != t_emb.shape[1]:
        raise VoxMetricsInputError(
            f"{source}: the enrolment embeddings have {e_emb.shape[1]} dimensions and the trial "
            f"embeddings {t_emb.shape[1]}; both must come from the same speaker encoder."
        )
    meta = pd.concat([e_meta, t_meta], ignore_index=True)
    return EmbeddingSet.from_arrays(np.vstack([e_emb, t_emb]), meta, source=source)


def _condition(name: str, es: EmbeddingSet, attacker: str, description: str) -> Condition:
    return Condition(
        name,
        eval=es.score_matrix("eval"),
        dev=es.score_matrix("dev") if "dev" in es.splits() else None,
        attacker=attacker,  # type: ignore[arg-type]
        embeddings=es,
        description=description,
        recipe=AttackerRecipe("cosine"),  # today's attacker: cosine of the embeddings
    )


def attacker_setups(
    original: EmbeddingSet,
    anonymised: EmbeddingSet,
    *,
    system: str = "anonymised",
    setups: Iterable[str] = ("ignorant", "lazy-informed"),
    semi_informed: EmbeddingSet | None = None,
    include_original: bool = True,
    strip_suffix: str | None = None,
    utt_map: Mapping[str, str] | None = None,
) -> list[Condition]:
    """The VoicePrivacy attacker conditions of one anonymiser from two embedding files.

    Parameters
    ----------
    original : EmbeddingSet
        Embeddings of the original utterances (enrolment and trials, metadata with ``role``
        and ``split``), one system only (:func:`one_system`).
    anonymised : EmbeddingSet
        Embeddings of their anonymised copies, same metadata layout, one system only.
    system : str
        The anonymiser's name: conditions are named ``"<system> (<set-up>)"``.
    setups : iterable of str
        Any of :data:`SETUPS` (module docstring).
    semi_informed : EmbeddingSet, optional
        The anonymised utterances embedded by a speaker encoder retrained on anonymised speech
        (the semi-informed attacker's). Without it, "semi-informed" uses ``anonymised``.
    include_original : bool
        Also build ``"original"``, the unprotected condition (enrolment and trials original),
        first: the reference of the comparisons and the original voices of DeID and G_VD.
    strip_suffix, utt_map :
        Map the anonymised utterance ids to their originals' (:func:`map_utterance_ids`).

    Returns
    -------
    list of Condition
        Cosine-scored conditions with their embeddings and a dev matrix when there are dev rows.

    Examples
    --------
    >>> from voxmetrics.synth import demo_embeddings
    >>> sets = demo_embeddings(n_speakers=4, n_enrol=2, n_trial=4)
    >>> [(c.name, c.attacker) for c in attacker_setups(sets["plain"], sets["anon-mild"],
    ...     system="mild", setups=SETUPS)]  # doctest: +NORMALIZE_WHITESPACE
    [('original', 'original'), ('mild (ignorant)', 'ignorant'),
     ('mild (lazy-informed)', 'lazy-informed'), ('mild (semi-informed)', 'semi-informed')]
    """
    setups = tuple(dict.fromkeys(setups))
    unknown = [s for s in setups if s not in SETUPS]
    if unknown or not (setups or include_original):
        raise VoxMetricsInputError(
            f"attacker set-up '{unknown[0] if unknown else ''}' is unknown; use any of "
            f"{', '.join(SETUPS)}."
        )
    one_system(original, where=original.source or "the original embeddings", how="a system filter")
    one_system(
        anonymised, where=anonymised.source or "the anonymised embeddings", how="a system filter"
    )
    anonymised = map_utterance_ids(anonymised, strip_suffix=strip_suffix, mapping=utt_map)
    if semi_informed is not None:
        one_system(semi_informed, where=semi_informed.source or "the semi-informed embeddings")
        semi_informed = map_utterance_ids(semi_informed, strip_suffix=strip_suffix, mapping=utt_map)
    out = []
    if include_original:
        out.append(
            _condition(
                "original",
                original,
                "original",
                "Unprotected: original enrolment and trials.",
            )
        )
    descriptions: dict[str, tuple[EmbeddingSet, EmbeddingSet, str]] = {
        "ignorant": (
            original,
            anonymised,
            f"Ignorant attacker: original enrolment, trials anonymised by {system}.",
        ),
        "lazy-informed": (
            anonymised,
            anonymised,
            f"Lazy-informed attacker: enrolment and trials anonymised by {system}, scored by "
            "the original speaker encoder.",
        ),
        "semi-informed": (
            semi_informed or anonymised,
            semi_informed or anonymised,
            f"Semi-informed attacker: enrolment and trials anonymised by {system}, scored by "
            + (
                "a speaker encoder retrained on anonymised speech."
                if semi_informed is not None
                else "the encoder of the anonymised embeddings given (taken as retrained on "
                "anonymised speech)."
            ),
        ),
    }
    for setup in setups:
        enrol, trials, text = descriptions[setup]
        name = f"{system} ({setup})"
        out.append(_condition(name, _combine(enrol, trials, name), setup, text))
    return out
