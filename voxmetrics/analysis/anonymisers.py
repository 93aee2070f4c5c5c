"""Which anonymiser a condition applies, and whose embeddings stand for its voices.

What this is: a condition is one anonymisation system under one attacker, so several
conditions share an anonymiser (``sttts (ignorant)``, ``sttts (lazy-informed)``, ``sttts
(semi-informed)``). The numbers that describe what the anonymiser did to the voices (DeID and
G_VD, from the original and the anonymised embeddings) belong to the anonymiser, not to the
attacker: :func:`anonymiser_of` names it, :func:`voice_sources` picks, for each anonymiser, the
one condition whose embeddings are its anonymised voices, so that every attacker set-up of it
shows the same DeID and G_VD. What this is not: the similarity matrices themselves
(:func:`voxmetrics.metrics.similarity.voice_similarity`).

**Whose embeddings.** The anonymised voices are the utterances a condition's embeddings hold
(enrolment and trials of the split). Preferred, in :data:`VOICE_SOURCE_ORDER`: the
lazy-informed condition (enrolment and trials anonymised, embedded by the original speaker
model, as VoicePrivacy 2022 measured DeID and G_VD), then the semi-informed and informed ones
(anonymised enrolment and trials, a speaker model of the attacker's), then the ignorant one,
whose enrolment is original speech (its set mixes original and anonymised voices, which is why
its DeID came out lower than the lazy-informed one's for the same system).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["VOICE_SOURCE_ORDER", "anonymiser_of", "anonymisers", "shared", "voice_sources"]

VOICE_SOURCE_ORDER: tuple[str, ...] = ("lazy-informed", "semi-informed", "informed", "ignorant")
"""Which attacker's embeddings stand for an anonymiser's voices, first choice first."""

_SEPARATORS = (" ({attacker})", " / {attacker}")
"""How the study builders name a condition of several attackers: ``system (attacker)`` (the
VoicePrivacy tree, ``study build``) or ``system / scenario`` (conditions from embeddings)."""


def anonymiser_of(name: str, attacker: str) -> str:
    """The anonymiser of a condition: its name without the attacker it names.

    Examples
    --------
    >>> anonymiser_of("sttts (semi-informed)", "semi-informed")
    'sttts'
    >>> anonymiser_of("mcadams / lazy-informed", "lazy-informed")
    'mcadams'
    >>> anonymiser_of("anon-mild", "semi-informed")
    'anon-mild'
    """
    for pattern in _SEPARATORS:
        suffix = pattern.format(attacker=attacker)
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def voice_sources(conditions: Iterable[tuple[str, str, bool]]) -> dict[str, str | None]:
    """For each condition, the condition whose embeddings are its anonymiser's voices.

    Parameters
    ----------
    conditions : iterable of (name, attacker, has embeddings)
        The study's conditions.

    Returns
    -------
    dict
        Condition name -> the name of the condition (of the same anonymiser, with embeddings)
        first in :data:`VOICE_SOURCE_ORDER` (a condition of an unlisted attacker after those;
        ties: study order); None when no condition of its anonymiser has embeddings. A
        condition under attacker ``original`` is its own source.

    Examples
    --------
    >>> voice_sources([("sttts (ignorant)", "ignorant", True),
    ...                ("sttts (lazy-informed)", "lazy-informed", True),
    ...                ("orig", "original", True), ("x", "semi-informed", False)])
    ... # doctest: +NORMALIZE_WHITESPACE
    {'sttts (ignorant)': 'sttts (lazy-informed)', 'sttts (lazy-informed)': 'sttts (lazy-informed)',
     'orig': 'orig', 'x': None}
    """
    conds = list(conditions)
    rank = {a: k for k, a in enumerate(VOICE_SOURCE_ORDER)}
    best: dict[str, tuple[int, int, str]] = {}
    for k, (name, attacker, embedded) in enumerate(conds):
        if not embedded or attacker == "original":
            continue
        key = anonymiser_of(name, attacker)
        cand = (rank.get(attacker, len(rank)), k, name)
        if key not in best or cand < best[key]:
            best[key] = cand
    out: dict[str, str | None] = {}
    for name, attacker, embedded in conds:
        if attacker == "original":
            out[name] = name if embedded else None
            continue
        chosen = best.get(anonymiser_of(name, attacker))
        out[name] = None if chosen is None else chosen[2]
    return out


def anonymisers(conditions: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Anonymiser -> its conditions, in study order (the original speech apart).

    Examples
    --------
    >>> anonymisers([("a (ignorant)", "ignorant"), ("a (lazy-informed)", "lazy-informed")])
    {'a': ['a (ignorant)', 'a (lazy-informed)']}
    """
    out: dict[str, list[str]] = {}
    for name, attacker in conditions:
        if attacker != "original":
            out.setdefault(anonymiser_of(name, attacker), []).append(name)
    return out


def shared(values: Mapping[str, object], sources: Mapping[str, str | None]) -> dict[str, object]:
    """Each condition's value, read off its voice source (conditions without one left out).

    Examples
    --------
    >>> shared({"a (lazy-informed)": 0.19}, {"a (ignorant)": "a (lazy-informed)", "b": None})
    {'a (ignorant)': 0.19}
    """
    return {n: values[s] for n, s in sources.items() if s is not None and s in values}
