"""The linkage blocks of ``evaluate``: linkability_vs_n and singling_out (design.md contract)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voxmetrics.cli import main
from voxmetrics.data.readers import read_embeddings
from voxmetrics.metrics.legal import linkability_curve, singling_out_embeddings

from .cli_cases import run as _run


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("linkage_demo")
    assert main(["demo", str(out)]) == 0
    return out


def test_evaluate_gives_linkability_vs_n_on_the_demo_grid(demo_dir, capsys):
    status, out, err = _run(["evaluate", str(demo_dir / "anon-mild_eval.csv")], capsys)
    assert status == 0, err
    result = json.loads(out)
    curve = result["linkability_vs_n"]
    # N = 40 enrolled demo speakers: 2, 5, 10, 20 below N, then N (metrics.md 5)
    assert [n for n, _ in curve] == [2, 5, 10, 20, 40]
    values = [v for _, v in curve]
    assert all(0 <= v <= 1 for v in values)
    assert values == sorted(values, reverse=True)  # more candidates, harder linkage
    # at N' = N the candidate set is everyone: the expectation is linkability itself
    assert values[-1] == pytest.approx(result["linkability"], abs=1e-12)
    assert values[0] > 0.5  # anon-mild keeps 45 % of identity: better than a coin at N' = 2
    assert result["singling_out"] is None  # a score file has no embeddings


def test_evaluate_embeddings_adds_singling_out_and_lid(demo_dir, capsys):
    emb, meta = demo_dir / "anon-leaky_embeddings.npz", demo_dir / "anon-leaky_embeddings.csv"
    status, out, err = _run(["evaluate", "--embeddings", str(emb), "--metadata", str(meta)],
                            capsys)  # fmt: skip
    assert status == 0, err
    result = json.loads(out)
    so = result["singling_out"]
    assert set(so) == {"value", "chance", "n_speakers", "folds", "n_draws", "n_excluded_speakers"}
    # 40 eval speakers with 8 trial utterances each: 8 folds, chance (39/40)^39 = 0.372546
    assert so["n_speakers"] == 40 and so["folds"] == 8
    assert so["chance"] == pytest.approx((39 / 40) ** 39)
    expected = singling_out_embeddings(read_embeddings(emb, metadata=meta)).value
    assert so["value"] == pytest.approx(expected, abs=1e-12)
    # the embeddings carry a dev split, which calibrates LID
    assert result["lid"] is not None and result["lid"]["lid_max"] is not None
    assert [n for n, _ in result["linkability_vs_n"]] == [2, 5, 10, 20, 40]
    assert result["linkability_vs_n"][-1][1] == pytest.approx(result["linkability"])


def test_linkability_vs_n_matches_the_library(demo_dir, capsys):
    status, out, _ = _run(["evaluate", str(demo_dir / "plain_eval.npz")], capsys)
    assert status == 0
    from voxmetrics.data.readers import read_scores

    sm = read_scores(demo_dir / "plain_eval.npz")
    assert json.loads(out)["linkability_vs_n"] == linkability_curve(sm.scores, sm.targets).to_list()


def test_singling_out_is_null_when_speakers_have_one_trial(demo_dir, tmp_path, capsys):
    # keep one trial utterance per eval speaker: singling out has nothing to hold out, so the
    # report says null (with a warning) instead of failing the whole evaluation
    import pandas as pd

    meta = pd.read_csv(demo_dir / "plain_embeddings.csv")
    first = ~meta.duplicated(["speaker", "role"]) | (meta["role"] == "enrol")
    keep = meta[first | (meta["split"] == "dev")]
    keep.to_csv(tmp_path / "meta.csv", index=False)
    with np.load(demo_dir / "plain_embeddings.npz") as z:
        rows = np.isin(z["utt_ids"], keep["utt_id"])
        np.savez(tmp_path / "emb.npz", embeddings=z["embeddings"][rows], utt_ids=z["utt_ids"][rows])
    status, out, err = _run(["evaluate", "--embeddings", str(tmp_path / "emb.npz"),
                             "--metadata", str(tmp_path / "meta.csv")], capsys)  # fmt: skip
    assert status == 0, err
    assert json.loads(out)["singling_out"] is None
    assert "singling out skipped" in err and "at least 2 trial embeddings" in err
