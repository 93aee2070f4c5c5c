from __future__ import annotations

import json

import numpy as np


def test_the_tie_rule_reaches_the_srd_ranks_and_the_linkability_curve():
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate

    # trial t0 ties its own speaker with another one
    sm = ScoreMatrix.from_arrays(
        [[0.5, 0.5, 0.1], [0.9, 0.2, 0.1], [0.1, 0.8, 0.3]],
        trial_ids=["t0", "t1", "t2"],
        trial_speakers=["a", "a", "b"],
        enrol_speakers=["a", "b", "c"],
    )
    ref, att = evaluate(sm), evaluate(sm, ties="attacker")
    assert ref.baseline.linkability == att.baseline.linkability == 1.0
    assert ref.srd.ranks.tolist() == [2, 1, 1] and att.srd.ranks.tolist() == [1, 1, 1]
    assert att.srd.stats.idr == att.baseline.linkability
    assert ref.linkability_curve.to_list() == att.linkability_curve.to_list()


def test_evaluate_on_threads_gives_the_serial_json(monkeypatch):
    """Row blocks on parallel threads, and the sort on its own, change no number: the JSON of
    several blocks run on 1 or 3 threads is the same, byte for byte (LID, chance levels, d')."""
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate
    from voxmetrics.metrics import ranks

    def matrix(t: int, n: int, seed: int, prefix: str) -> ScoreMatrix:
        rng = np.random.default_rng(seed)
        s = np.round(rng.normal(size=(t, n)), 2).astype(np.float32)  # ties
        own = np.arange(t) % n
        s[np.arange(t), own] += 1.0
        spk = [f"{prefix}{j}" for j in range(n)]
        return ScoreMatrix.from_arrays(
            s,
            trial_ids=[f"{prefix}u{i}" for i in range(t)],
            trial_speakers=[spk[j] for j in own],
            enrol_speakers=spk,
        )

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 300)  # 25 row blocks
    out = {}
    for n in ("1", "3"):
        monkeypatch.setenv("VOXMETRICS_THREADS", n)
        # fresh matrices: the pools (and d') of a matrix are cached with it
        eval_, dev = matrix(300, 24, 0, "e"), matrix(120, 12, 1, "d")
        out[n] = evaluate(eval_, dev=dev, seed=5).to_json()
    assert out["1"] == out["3"]
    assert json.loads(out["1"])["lid"]["alid"] is not None
