"""Embeddings an anonymiser has hidden the speaker in, in a way a linear back-end undoes.

Each speaker is a point in the first ``k`` dimensions; each utterance of the original speech is
that point plus a little noise everywhere. The anonymiser adds, to every utterance, a large
random vector in the other ``d - k`` dimensions: cosine scoring is swamped by it (EER near
chance), while LDA, trained on the attacker's own anonymised speakers, finds the ``k``
speaker dimensions again (EER far below). Original and anonymised embeddings share their
utterance ids (paired), and the splits hold disjoint speakers: ``train`` (the attacker's
own), ``dev`` and ``eval``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from voxmetrics.data import EmbeddingSet


def attack_embeddings(
    seed: int = 0,
    *,
    n_train: int = 60,
    n_dev: int = 30,
    n_eval: int = 30,
    train_utts: int = 8,
    enrol: int = 3,
    trials: int = 5,
    d: int = 24,
    k: int = 6,
    nuisance: float = 5.0,
    noise: float = 0.3,
    with_train: bool = True,
) -> tuple[EmbeddingSet, EmbeddingSet]:
    """The anonymised and the original embeddings (same rows, same utterance ids)."""
    rng = np.random.default_rng(seed)
    rows, meta = [], []
    splits = [("train", n_train), ("dev", n_dev), ("eval", n_eval)]
    for split, n_spk in splits if with_train else splits[1:]:
        for s in range(n_spk):
            centre = np.zeros(d)
            centre[:k] = rng.standard_normal(k)
            layout = (
                [("trial", train_utts)]
                if split == "train"
                else [("enrol", enrol), ("trial", trials)]
            )
            for role, count in layout:
                for i in range(count):
                    rows.append(centre + noise * rng.standard_normal(d))
                    meta.append((f"{split}{s}_{role}{i}", f"{split}{s}", role, split))
    original = np.array(rows)
    hidden = original.copy()
    hidden[:, k:] += nuisance * rng.standard_normal((len(rows), d - k))
    frame = pd.DataFrame(meta, columns=["utt_id", "speaker", "role", "split"])
    return (
        EmbeddingSet.from_arrays(hidden, frame, source="anonymised"),
        EmbeddingSet.from_arrays(original, frame.copy(), source="original"),
    )


def with_backends(study, name: str, backends, *, cautions=()):
    """``study`` with condition ``name`` scored again by each of ``backends`` (one condition
    each, named ``"<name> [<back-end>]"``, with its recipe and the condition's utility), as the
    Attackers page and ``study build --backend`` add them."""
    from dataclasses import replace

    from voxmetrics.analysis.attackers import condition_attackers

    c = study.get(name)
    sweep = condition_attackers(c.embeddings, backends=list(backends))
    for b in backends:
        made = sweep.condition(
            f"{name} [{b}]", backend=b, attacker=c.attacker, embeddings=c.embeddings,
            cautions=cautions,
        )  # fmt: skip
        study = study.with_condition(replace(made, utility=c.utility))
    return study
