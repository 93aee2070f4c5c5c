"""Blockwise evaluation on Dask (voxmetrics.evaluation.blockwise) equals the in-memory path on
every metric; with it the command line's ``--scheduler``.

The blocks are made tiny (a few rows, ``small_blocks`` in conftest.py) so that every test
crosses many block and score-chunk boundaries; ties are forced by rounding the embeddings /
scores. The score sources' own cases (chunk files, Parquet, Zarr) are in test_sources.py,
extraction on Dask in tests/embeddings/test_distributed.py.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("distributed")

import pytest

import voxmetrics.distributed as dist
import voxmetrics.evaluation.blockwise as bw
import voxmetrics.evaluation.sources as sources
import voxmetrics.metrics.ranks as ranks_mod
from voxmetrics.cli import main
from voxmetrics.data import EmbeddingSet, ScoreMatrix
from voxmetrics.data.writers import write_embeddings, write_scores
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError
from voxmetrics.evaluation import evaluate
from voxmetrics.metrics.pools import SortedPools, _eer_point
from voxmetrics.synth import demo_study

from .blockwise_cases import comparable

pytestmark = pytest.mark.usefixtures("small_blocks")


def embedding_set(
    seed: int,
    *,
    n_spk: int = 40,
    trials: int = 6,
    decimals: int = 1,
    dev: bool = True,
    stranger: bool = False,
) -> EmbeddingSet:
    rng = np.random.default_rng(seed)
    d = 6
    rows, meta = [], []
    for split in ("dev", "eval") if dev else ("eval",):
        centres = rng.standard_normal((n_spk, d))
        for s in range(n_spk):
            for role, k in (("enrol", 2), ("trial", trials)):
                for i in range(k):
                    rows.append(centres[s] + 0.8 * rng.standard_normal(d))
                    meta.append((f"{split}{s}_{role}{i}", f"{split}{s}", role, split))
        if stranger:  # trials of a speaker with no enrolment: excluded
            for i in range(5):
                rows.append(rng.standard_normal(d))
                meta.append((f"{split}x_{i}", f"{split}x", "trial", split))
    emb = np.round(np.array(rows), decimals).astype(np.float32)
    frame = pd.DataFrame(meta, columns=["utt_id", "speaker", "role", "split"])
    return EmbeddingSet.from_arrays(emb, frame, source="test embeddings")


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_embeddings_equal_in_memory_on_every_metric(client, ties):
    es = embedding_set(1, stranger=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the blockwise evaluation leaves the stranger's trials out, as without_others()
        ref = evaluate(
            es.score_matrix("eval").without_others(), dev=es.score_matrix("dev"), ties=ties,
            embeddings=es,
        )  # fmt: skip
        got = dist.evaluate_blockwise(es, client=client, ties=ties)
    with pytest.warns(ExcludedTrialsWarning, match="5 of 245 trials"):
        source = dist.EmbeddingBlocks.from_embeddings(es)
    assert len(bw._row_blocks(*source.shape)) > 10
    assert got.lid is not None and got.n_excluded_trials == 5
    assert got.singling_out is not None and got.chance is not None
    assert got.verification is not None
    assert comparable(got) == comparable(ref)  # exact, not approximately
    np.testing.assert_array_equal(got.srd.ranks, ref.srd.ranks)
    np.testing.assert_array_equal(got.lid.lid, ref.lid.lid)


def test_a_failing_block_is_retried_and_finished_blocks_are_kept(client, monkeypatch):
    es = embedding_set(2, dev=False)
    real = bw.block_scores
    calls = []

    def counting(piece, shared):
        calls.append(1)
        return real(piece, shared)

    monkeypatch.setattr(bw, "block_scores", counting)
    clean = dist.evaluate_blockwise(es, client=client)
    n_clean = len(calls)
    calls.clear()

    def flaky(piece, shared):
        calls.append(1)
        if len(calls) == 3:  # the third task fails once, as on a lost worker
            raise OSError("worker lost")
        return real(piece, shared)

    monkeypatch.setattr(bw, "block_scores", flaky)
    seen = []
    got = dist.evaluate_blockwise(
        es, client=client, progress=lambda f, m: seen.append(f), retries=2
    )
    ref = evaluate(es.score_matrix("eval"), embeddings=es)
    assert comparable(got) == comparable(clean) == comparable(ref)
    assert len(calls) == n_clean + 1  # only the failed block ran again
    assert seen == sorted(seen) and seen[-1] == 1.0


def test_scan_window_equals_the_in_memory_eer_point_and_asks_for_more_when_short():
    rng = np.random.default_rng(5)
    for trial in range(200):
        n_tar, n_non = rng.integers(1, 60), rng.integers(1, 400)
        levels = rng.integers(2, 50)
        tar = (rng.integers(0, levels, n_tar) + rng.integers(0, 3)).astype(np.float64) / 4
        non = rng.integers(0, levels, n_non).astype(np.float64) / 4
        pooled = np.sort(np.concatenate([tar, non]))
        tar_sorted = np.sort(tar)
        u, cnt = np.unique(pooled, return_counts=True)
        for attacker in (False, True):
            want = _eer_point(pooled, tar_sorted, n_non, attacker=attacker)
            got = bw._scan_window(u, cnt, 0, pooled.size, tar_sorted, n_non, attacker=attacker)
            assert got == want, trial
            # a sub-range: either the same point or a request for a wider range
            i, j = sorted(rng.integers(0, u.size + 1, 2))
            if j > i:
                below = int(cnt[:i].sum())
                part = bw._scan_window(
                    u[i:j], cnt[i:j], below, pooled.size, tar_sorted, n_non, attacker=attacker
                )
                assert part is None or part == want


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(-6, 6), min_size=1, max_size=30),
    st.lists(st.integers(-6, 6), min_size=1, max_size=120),
)
def test_scan_window_property(tar_list, non_list):
    tar = np.array(tar_list, dtype=np.float32) / 2
    non = np.array(non_list, dtype=np.float32) / 2
    pooled = np.sort(np.concatenate([tar, non]))
    u, cnt = np.unique(pooled, return_counts=True)
    for attacker in (False, True):
        want = _eer_point(pooled, np.sort(tar), non.size, attacker=attacker)
        got = bw._scan_window(u, cnt, 0, pooled.size, np.sort(tar), non.size, attacker=attacker)
        assert got == want


def test_pools_from_blocks_equal_sorted_pools(client):
    """The run counts, cell minima and EER points themselves, on data with a wide window."""
    rng = np.random.default_rng(9)
    t, n = 400, 12
    scores = np.round(rng.normal(size=(t, n)), 3)
    targets = rng.integers(0, n, size=t)
    enrol = np.array([f"s{j}" for j in range(n)])
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"u{i}" for i in range(t)],
        trial_speakers=enrol[targets],
        enrol_speakers=enrol,
    )
    ref = SortedPools.from_matrix(sm.scores, sm.targets)
    got = evaluate(sm)
    es_like = dist.evaluate_blockwise(_as_chunks(sm, client), client=client)
    assert comparable(es_like) == comparable(got)
    assert es_like.baseline.eer_threshold == ref.eer_points["reference"].threshold


def _as_chunks(sm, client, tmp=None):
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="vxm-chunks-"))
    write_scores(sm, folder / "all.npz", format="npz")
    return dist.ChunkedScores.from_files([folder / "all.npz"])


def test_cli_evaluate_scheduler_local_equals_in_memory(tmp_path, capsys):
    es = embedding_set(4)
    write_embeddings(es, tmp_path / "emb", format="npz")
    argv = [
        "evaluate",
        "--embeddings",
        str(tmp_path / "emb.npz"),
        "--metadata",
        str(tmp_path / "emb.csv"),
    ]
    assert main(argv) == 0
    ref = json.loads(capsys.readouterr().out)
    assert main([*argv, "--scheduler", "local", "--workers", "2", "--memory-limit", "1GB"]) == 0
    captured = capsys.readouterr()
    got = json.loads(captured.out)
    assert "block" in captured.err  # progress on stderr
    assert got["singling_out"] is not None and got["dcf"] is not None
    assert got["chance"] is not None and got["d_prime"] is not None
    assert got == ref


def test_cli_scheduler_by_and_costs_equal_in_memory(tmp_path, capsys):
    es = with_sex(embedding_set(8, n_spk=12, trials=4))
    write_embeddings(es, tmp_path / "emb", format="npz")
    argv = [
        "evaluate",
        "--embeddings",
        str(tmp_path / "emb.npz"),
        "--metadata",
        str(tmp_path / "emb.csv"),
        "--by",
        "sex",
        "--llr",
        "--p-target",
        "0.05,0.5",
        "--c-miss",
        "2",
        "--seed",
        "3",
    ]
    assert main(argv) == 0
    ref = json.loads(capsys.readouterr().out)
    assert (
        main([*argv, "--scheduler", "local", "--workers", "1", "--html", str(tmp_path / "r.html")])
        == 0
    )
    got = json.loads(capsys.readouterr().out)
    assert set(got["by"]["sex"]) == {"F", "M"} and got["dcf"]["0.05"]["act_dcf"] is not None
    assert got == ref
    assert "sex=M" in (tmp_path / "r.html").read_text()


def test_cli_scheduler_refusals(tmp_path, capsys):
    sm = ScoreMatrix.from_arrays(
        [[1.0, 0.0], [0.0, 1.0]],
        trial_ids=["t1", "t2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )
    write_scores(sm, tmp_path / "s.csv", format="csv")
    assert main(["evaluate", str(tmp_path / "s.csv"), "--scheduler", "local"]) == 2
    assert "folder of score chunks" in capsys.readouterr().err
    write_scores(sm, tmp_path / "s.npz", format="npz")
    assert (
        main(["evaluate", str(tmp_path / "s.npz"), "--scheduler", "local", "--bootstrap", "5"]) == 2
    )
    assert "--bootstrap cannot be used with --scheduler" in capsys.readouterr().err
    for extra, why in (
        (["--cross-calibrate", "3"], "give a dev set instead"),
        (["--distance"], "store the negated distances"),
        (["--by", "sex"], "give --embeddings whose metadata has"),
        (["--trials", str(tmp_path / "s.csv")], "evaluate it in memory"),
    ):
        assert main(["evaluate", str(tmp_path / "s.npz"), "--scheduler", "local", *extra]) == 2
        err = capsys.readouterr().err
        assert f"{extra[0]} cannot be used with --scheduler" in err and why in err
        assert "Traceback" not in err


def with_sex(es: EmbeddingSet) -> EmbeddingSet:
    """The set with a per-speaker 'sex' column (about half F, half M)."""
    meta = es.meta.copy()
    meta["sex"] = np.where(meta["speaker"].str[-1].isin(list("02468")), "F", "M")
    return EmbeddingSet.from_arrays(es.embeddings, meta, source=es.source)


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_by_attribute_on_embeddings_equals_in_memory(client, ties):
    es = with_sex(embedding_set(6, n_spk=24, stranger=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = evaluate(
            es.score_matrix("eval").without_others(), dev=es.score_matrix("dev"), embeddings=es,
            by="sex", ties=ties,
        )  # fmt: skip
        got = dist.evaluate_blockwise(es, client=client, by="sex", ties=ties)
    assert set(got.by["sex"]) == {"F", "M"}
    for value, sub in got.by["sex"].items():  # each subset is its own matrix: 12 identities
        assert sub.baseline.n_enrolled == 12 and sub.lid is not None
        assert sub.name == ref.by["sex"][value].name
    assert comparable(got) == comparable(ref)  # the subsets' JSON too ("by")
    with pytest.raises(VoxMetricsInputError, match=r"no per-trial attribute 'age'.*sex"):
        dist.evaluate_blockwise(es, client=client, by="age")
    source = _as_chunks(es.score_matrix("eval"), client)
    with pytest.raises(VoxMetricsInputError, match="score chunks carry no per-trial attributes"):
        dist.evaluate_blockwise(source, client=client, by="sex")


def test_verification_block_equals_in_memory_with_llrs_and_costs(client, tmp_path, monkeypatch):
    """DCFs (actual ones too), the DET and APE curves and d' of the blocks, exactly."""
    monkeypatch.setattr(ranks_mod, "BLOCK_ELEMENTS", 80)  # blocks of 10 rows
    rng = np.random.default_rng(17)
    t, n = 120, 8
    enrol = np.array([f"s{j}" for j in range(n)])
    cols = rng.integers(0, n, size=t)
    scores = np.round(rng.normal(size=(t, n)) * 3, 1)  # LLR-like, with ties
    scores[np.arange(t), cols] += 4.0
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"u{i}" for i in range(t)],
        trial_speakers=enrol[cols],
        enrol_speakers=enrol,
    )
    for k, (a, b) in enumerate([(0, 50), (50, 120)]):
        np.savez(
            tmp_path / f"c{k}.npz",
            scores=scores[a:b],
            trial_ids=sm.trial_ids[a:b],
            trial_speakers=sm.trial_speakers[a:b],
            enrol_speakers=enrol,
        )
    source = dist.ChunkedScores.from_files(sorted(tmp_path.glob("*.npz")))
    options = {"score_kind": "llr", "p_targets": (0.01, 0.2, 0.5), "c_miss": 2.0, "c_fa": 0.5}
    ref = evaluate(sm, **options)
    got = dist.evaluate_blockwise(source, client=client, **options)
    assert len(bw._row_blocks(*source.shape)) > 5
    assert comparable(got) == comparable(ref)
    assert got.to_dict()["dcf"]["0.2"]["act_dcf"] is not None
    # the TAR at low FARs comes from the shared assemble step: equal, and present
    assert got.to_dict()["tar_at_far"] == ref.to_dict()["tar_at_far"] is not None
    np.testing.assert_array_equal(
        got.verification.tar_at_far.thresholds, ref.verification.tar_at_far.thresholds
    )
    rv, gv = ref.verification, got.verification
    for curve in ("det", "ape"):
        a, b = getattr(rv, curve).__dict__, getattr(gv, curve).__dict__
        for key, value in a.items():
            if key == "n_points":  # distinct pooled scores: an upper bound on Dask
                assert b[key] >= value
                assert b[key] <= scores.size + 1
            elif value is None:
                assert b[key] is None
            else:
                np.testing.assert_array_equal(b[key], value)
    assert gv.d_prime == rv.d_prime


def test_det_operating_points_are_exact_when_no_score_repeats_across_blocks(client):
    rng = np.random.default_rng(23)
    t, n = 60, 5
    scores = rng.normal(size=(t, n))  # continuous: no repeats
    enrol = np.array([f"s{j}" for j in range(n)])
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"u{i}" for i in range(t)],
        trial_speakers=enrol[rng.integers(0, n, size=t)],
        enrol_speakers=enrol,
    )
    got = dist.evaluate_blockwise(_as_chunks(sm, client), client=client)
    assert got.verification.det.n_points == evaluate(sm).verification.det.n_points == t * n + 1


def test_bad_input_in_a_task_is_one_line_not_worker_error_blocks(client, tmp_path, capsys):
    import logging

    scores = np.array([[0.9, 0.1], [0.2, np.nan]])
    ids = {"trial_ids": ["t1", "t2"], "trial_speakers": ["a", "b"], "enrol_speakers": ["a", "b"]}
    np.savez(tmp_path / "a.npz", scores=scores, **ids)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    worker_log = logging.getLogger("distributed.worker")
    worker_log.addHandler(handler)
    try:  # the library: the task returns its bad input, the client raises it (no retry)
        with pytest.raises(VoxMetricsInputError, match="NaN or infinite scores"):
            dist.evaluate_blockwise(
                dist.ChunkedScores.from_files([tmp_path / "a.npz"]), client=client
            )
        assert not [r for r in records if r.levelno >= logging.ERROR], records
        status = main(["evaluate", str(tmp_path), "--scheduler", client.scheduler.address])
    finally:
        worker_log.removeHandler(handler)
    err = capsys.readouterr().err.strip()
    assert status == 2 and err.startswith("voxmetrics: error: ") and "\n" not in err, err


def test_a_dev_set_sharing_speakers_is_refused(client):
    es = embedding_set(6, dev=False)
    with pytest.raises(VoxMetricsInputError, match="share"):
        dist.evaluate_blockwise(es, client=client, dev=es.score_matrix("eval"))


@settings(max_examples=12, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(-3, 3), min_size=n, max_size=n), min_size=1, max_size=40),
            st.lists(st.integers(0, n - 1), min_size=40, max_size=40),
            st.sampled_from([np.float32, np.float64]),
        )
    )
)
def test_blockwise_equals_in_memory_on_random_tied_matrices(client, data):
    rows, cols, dtype = data
    scores = np.array(rows, dtype=dtype) / 2
    t, n = scores.shape
    enrol = np.array([f"s{j}" for j in range(n)])
    spk = enrol[np.array(cols[:t])]
    sm = ScoreMatrix.from_arrays(
        scores, trial_ids=[f"u{i}" for i in range(t)], trial_speakers=spk, enrol_speakers=enrol
    )
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        cut = t // 2
        for k, (a, b) in enumerate([(0, cut), (cut, t)]):
            if b > a:
                np.savez(
                    Path(tmp) / f"c{k}.npz",
                    scores=scores[a:b],
                    trial_ids=sm.trial_ids[a:b],
                    trial_speakers=spk[a:b],
                    enrol_speakers=enrol,
                )
        source = dist.ChunkedScores.from_files(sorted(Path(tmp).glob("*.npz")))
        saved = ranks_mod.BLOCK_ELEMENTS
        ranks_mod.BLOCK_ELEMENTS = 3 * n  # blocks of 3 rows, across the two files
        try:
            for ties in ("reference", "attacker"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = comparable(evaluate(sm, ties=ties))
                    got = comparable(dist.evaluate_blockwise(source, client=client, ties=ties))
                assert got == ref
        finally:
            ranks_mod.BLOCK_ELEMENTS = saved


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("decimals", [1, 6])
def test_a_crowded_eer_window_is_narrowed_by_histograms_exactly(
    client, monkeypatch, dtype, decimals
):
    """Few targets, many non-targets between them: the window is narrowed before fetching."""
    monkeypatch.setattr(bw, "WINDOW_CAP", 40)
    monkeypatch.setattr(bw, "_BINS", 4)
    monkeypatch.setattr(bw, "_WINDOW_MARGIN", 8)
    calls = []
    real = bw._narrow
    monkeypatch.setattr(bw, "_narrow", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(decimals)
    t, n = 30, 40
    enrol = np.array([f"s{j}" for j in range(n)])
    cols = rng.integers(0, n, size=t)
    scores = np.round(rng.normal(size=(t, n)), decimals).astype(dtype)
    scores[np.arange(t), cols] += dtype(1.0)
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"u{i}" for i in range(t)],
        trial_speakers=enrol[cols],
        enrol_speakers=enrol,
    )
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        np.savez(
            Path(tmp) / "a.npz",
            scores=scores,
            trial_ids=sm.trial_ids,
            trial_speakers=sm.trial_speakers,
            enrol_speakers=enrol,
        )
        source = dist.ChunkedScores.from_files([Path(tmp) / "a.npz"])
        for ties in ("reference", "attacker"):
            got = dist.evaluate_blockwise(source, client=client, ties=ties)
            assert comparable(got) == comparable(evaluate(sm, ties=ties))
    assert calls  # the histogram passes ran


def test_blockwise_pools_count_and_sum_the_non_targets_as_in_memory(client, tmp_path):
    rng = np.random.default_rng(21)
    t, n = 50, 6
    enrol = np.array([f"s{j}" for j in range(n)])
    cols = rng.integers(0, n, size=t)
    scores = np.round(rng.normal(size=(t, n)), 2).astype(np.float32)
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"u{i}" for i in range(t)],
        trial_speakers=enrol[cols],
        enrol_speakers=enrol,
    )
    np.savez(
        tmp_path / "a.npz",
        scores=scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=enrol,
    )
    source = dist.ChunkedScores.from_files([tmp_path / "a.npz"])
    blocks = bw._row_blocks(*source.shape)
    runner = bw._Runner(client, source, blocks, None, 0)
    args = [(None, "reference", np.zeros((1, b.stop - b.start), np.int64), True) for b in blocks]
    rows = runner.run(bw._task_rows, args, "", (0, 1), per_block=True)
    tar = np.concatenate([r["tar"] for r in rows])
    values = np.unique(tar)
    parts = runner.run(bw._task_pools, values, "", (0, 1))
    sizes = [(b.stop - b.start) * (n - 1) for b in blocks]
    got = bw._pools_from_counts(runner, tar, values, parts, t * (n - 1), sizes)
    ref = SortedPools.from_matrix(sm.scores, sm.targets)
    np.testing.assert_array_equal(got.cell_last, ref.cell_last)
    np.testing.assert_array_equal(got.cell_first, ref.cell_first)
    x = np.array([-np.inf, -0.5, 0.0, 0.1000000001, 0.25, 3.0])
    np.testing.assert_array_equal(got.count_non_le(x), ref.count_non_le(x))
    assert got.non_sums(0.1) == ref.non_sums(0.1)
    # d''s sums taken in passes 1 and 2 (no pass of their own): the same floats as in memory
    total = sum(r["non_sum"] for r in rows)
    assert total == ref.non_sums(math.nan)[0]
    mean = total / (t * (n - 1))
    parts = runner.run(functools.partial(bw._task_pools, mean=mean), values, "", (0, 1))
    known = (total, mean, sum(p["non_sq"] for p in parts))
    got = bw._pools_from_counts(runner, tar, values, parts, t * (n - 1), sizes, known)
    assert got.non_sums(mean) == ref.non_sums(mean) == (total, known[2])
    assert got.non_sums(math.nan)[0] == total and math.isnan(got.non_sums(math.nan)[1])
    assert got.non_sums(0.1) == ref.non_sums(0.1)  # another centre: a pass, as before
    assert got.moments == ref.moments


def test_the_workers_preload_leaves_out_what_their_tasks_never_use():
    """A local cluster's forkserver imports the tasks' code once for every worker: without
    pandas, pyarrow, scikit-learn or SciPy's optimize, special and sparse (about 1 s of CPU per
    run), which only the client's steps use."""
    code = (
        "import json, sys\n"
        f"for m in {list(bw._WORKER_IMPORTS)!r}: __import__(m)\n"
        "heavy = ('pandas', 'pyarrow', 'sklearn', 'scipy.optimize', 'scipy.special', "
        "'scipy.sparse')\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
    assert "voxmetrics.evaluation.blockwise" in bw._WORKER_IMPORTS


def test_a_lost_worker_loses_no_block(monkeypatch):
    """A worker that goes away mid-run: its blocks are recomputed on the other one (each task
    carries its own block; nothing it needs was only on the lost worker), the result exact."""
    import time

    from distributed import Client, LocalCluster, get_worker

    es = embedding_set(2, dev=False)
    ref = evaluate(es.score_matrix("eval"), embeddings=es)
    real = bw.block_scores
    calls = []

    def losing_a_worker(piece, shared):
        calls.append(1)
        if len(calls) == 5:  # this worker closes while its task runs
            worker = get_worker()
            worker.loop.add_callback(worker.close)
            time.sleep(1.0)
        return real(piece, shared)

    monkeypatch.setattr(bw, "block_scores", losing_a_worker)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster) as c,
    ):
        got = dist.evaluate_blockwise(es, client=c)
        assert len(c.scheduler_info()["workers"]) == 1
    assert comparable(got) == comparable(ref)


def _chunk_files(tmp_path, sm: ScoreMatrix, n_files: int) -> list:
    """``sm`` as ``n_files`` NPZ score chunks (consecutive rows)."""
    paths = []
    for i, rows in enumerate(np.array_split(np.arange(sm.scores.shape[0]), n_files)):
        path = tmp_path / f"chunk{i}.npz"
        np.savez(
            path,
            scores=sm.scores[rows],
            trial_ids=sm.trial_ids[rows],
            trial_speakers=sm.trial_speakers[rows],
            enrol_speakers=sm.enrol_speakers,
        )
        paths.append(path)
    return paths


@pytest.mark.parametrize("decimals", [None, 1])
def test_blockwise_json_equals_in_memory_with_ties_and_many_pav_runs(
    client, tmp_path, monkeypatch, decimals
):
    """The JSON of the Dask path == the in-memory JSON, every number. Continuous scores of
    12,000 trials give over 10,000 PAV runs of each label, where a BLAS dot (D_ECE) takes two
    threads unless limited as in memory; rounded scores give ties across blocks."""
    monkeypatch.setattr(ranks_mod, "BLOCK_ELEMENTS", 6_000)  # 1,500 rows a block: 8 blocks
    rng = np.random.default_rng(5)
    t, n = 12_000, 4
    enrol = np.array([f"s{j}" for j in range(n)])
    cols = rng.integers(0, n, size=t)
    scores = rng.normal(size=(t, n))
    scores[np.arange(t), cols] += 0.3  # mated and non-mated scores interleave closely
    if decimals is not None:
        scores = np.round(scores, decimals)
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"u{i}" for i in range(t)],
        trial_speakers=enrol[cols],
        enrol_speakers=enrol,
    )
    source = dist.ChunkedScores.from_files(_chunk_files(tmp_path, sm, 3))
    ref = json.loads(json.dumps(evaluate(sm).to_dict()))
    got = json.loads(json.dumps(dist.evaluate_blockwise(source, client=client).to_dict()))
    assert got == ref


def test_each_block_is_scored_once_and_dropped_at_the_end(client, monkeypatch):
    """A worker keeps the blocks it scored for the later passes (the same floats: the result
    equals the run that scores every block in every pass), and drops them when the run ends."""
    es = embedding_set(3, dev=False)
    real = bw.block_scores
    calls = []

    def counting(piece, shared):
        calls.append(1)
        return real(piece, shared)

    monkeypatch.setattr(bw, "block_scores", counting)
    monkeypatch.setattr(bw, "_CACHE", type(bw._CACHE)())  # not the blocks other tests left
    n_blocks = len(bw._row_blocks(*sources.EmbeddingBlocks.from_embeddings(es).shape))
    cached = dist.evaluate_blockwise(es, client=client)
    assert len(calls) == n_blocks  # each block scored once, then read from the cache
    assert not bw._CACHE  # dropped at the end
    calls.clear()
    monkeypatch.setattr(bw, "_CACHE_FRACTION", 0.0)  # no room: every pass scores again
    again = dist.evaluate_blockwise(es, client=client)
    assert len(calls) >= 4 * n_blocks
    ref = evaluate(es.score_matrix("eval"), embeddings=es)
    assert comparable(cached) == comparable(again) == comparable(ref)


def test_blockwise_report_carries_the_utility_it_is_given():
    pytest.importorskip("distributed")
    from voxmetrics.distributed import dask_client
    from voxmetrics.evaluation.blockwise import evaluate_blockwise

    cond = demo_study(n_speakers=6).get("random")
    with dask_client("local", n_workers=1, processes=False) as client:
        r = evaluate_blockwise(cond.embeddings, client=client, utility=cond.utility)
    assert r.utility == cond.utility
    assert r.to_dict()["utility"]["wer"] == pytest.approx(0.85)
