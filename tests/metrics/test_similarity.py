"""Voice similarity matrices, D_diag, DeID and G_VD (metrics.md section 5; VoicePrivacy 2022).

The matrices are recomputed here with explicit loops over speaker pairs and utterance pairs,
and the PAV + Laplace LLRs once with the library's ``pav_llrs`` and once with a from-scratch
pool-adjacent-violators written below.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from voxmetrics.data.model import EmbeddingSet
from voxmetrics.errors import LeftOutSpeakersWarning, VoxMetricsInputError
from voxmetrics.metrics.pav import pav_llrs
from voxmetrics.metrics.similarity import (
    d_diag,
    similarity_matrix,
    voice_distinctiveness,
    voice_similarity,
)

# metrics.md section 5 check (already similarities)
M_OO = [[0.9, 0.2, 0.1], [0.2, 0.8, 0.3], [0.1, 0.3, 0.85]]
M_OA = [[0.6, 0.3, 0.2], [0.3, 0.5, 0.35], [0.2, 0.35, 0.55]]
M_AA = [[0.7, 0.4, 0.3], [0.4, 0.65, 0.45], [0.3, 0.45, 0.7]]


# ---------------------------------------------------------------- independent references


def _unit(x):
    x = np.asarray(x, dtype=float)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _pairs(a_emb, a_spk, a_utt, b_emb, b_spk, b_utt):
    """Every ordered (k in A, l in B) with distinct utterance ids: (i, j, cosine)."""
    ea, eb = _unit(a_emb), _unit(b_emb)
    return [
        (a_spk[k], b_spk[l], float(ea[k] @ eb[l]))
        for k in range(len(a_spk))
        for l in range(len(b_spk))  # noqa: E741
        if a_utt[k] != b_utt[l]
    ]


def naive_pav_laplace_llrs(tar, non):
    """PAV + Laplace LLRs written from metrics.md section 3, one pair at a time.

    Sort pooled scores ascending with targets first at ties; prepend a dummy target then a
    dummy non-target and append the same; pool adjacent violators; drop the 4 dummies;
    LLR = logit(P) - ln(N_tar / N_non) with the real counts.
    """
    pooled = [(s, 0, 1.0, k) for k, s in enumerate(tar)] + [
        (s, 1, 0.0, k) for k, s in enumerate(non)
    ]
    pooled.sort(key=lambda r: (r[0], r[1]))  # at equal scores targets (0) first
    y = [1.0, 0.0] + [r[2] for r in pooled] + [1.0, 0.0]
    blocks: list[list[float]] = []  # [sum, count]
    for v in y:
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    p = [b[0] / b[1] for b in blocks for _ in range(int(b[1]))][2:-2]
    prior = math.log(len(tar) / len(non))
    llr_tar, llr_non = np.empty(len(tar)), np.empty(len(non))
    for (_, is_non, _, k), pk in zip(pooled, p, strict=True):
        llr = math.log(pk / (1 - pk)) - prior
        (llr_non if is_non else llr_tar)[k] = llr
    return llr_tar, llr_non


def reference_matrix(a, b, *, calibration, pav=pav_llrs):
    """sigmoid(mean LLR per speaker pair over distinct-id pairs), then (M + M^T) / 2."""
    pairs = _pairs(*a, *b)
    speakers = sorted(set(a[1]) & set(b[1]))
    if calibration == "pav":
        tar = [s for i, j, s in pairs if i == j]
        non = [s for i, j, s in pairs if i != j]
        lt, ln = pav(tar, non, laplace=True) if pav is pav_llrs else pav(tar, non)
        it_t, it_n = iter(lt), iter(ln)
        llrs = [(i, j, float(next(it_t) if i == j else next(it_n))) for i, j, _ in pairs]
    else:
        llrs = pairs
    m = np.empty((len(speakers), len(speakers)))
    for x, si in enumerate(speakers):
        for y, sj in enumerate(speakers):
            m[x, y] = expit(np.mean([v for i, j, v in llrs if i == si and j == sj]))
    return speakers, (m + m.T) / 2


def _random_sets(seed=0, n_speakers=3, per_speaker=(2, 3, 2), d=4, shared_ids=True):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_speakers, d))
    spk = [f"s{i}" for i in range(n_speakers) for _ in range(per_speaker[i])]
    utt = [f"u{k}" for k in range(len(spk))]
    idx = [int(s[1:]) for s in spk]
    a_emb = centres[idx] + 0.7 * rng.normal(size=(len(spk), d))
    b_emb = 0.5 * a_emb + rng.normal(size=(len(spk), d))  # "anonymised" copies
    b_utt = utt if shared_ids else [f"v{k}" for k in range(len(spk))]
    return (a_emb, spk, utt), (b_emb, spk, b_utt)


# ---------------------------------------------------------------- D_diag, DeID, G_VD


def test_d_diag_of_the_toy_matrices():
    # M_oo: diag mean (.9 + .8 + .85)/3 = .85, off-diag mean (.2 + .1 + .3)/3 = .2 -> .65
    # M_oa: .55 - (.3 + .2 + .35)/3 = .55 - .283333 = .266667
    # M_aa: .683333 - (.4 + .3 + .45)/3 = .683333 - .383333 = .3
    assert d_diag(M_OO) == pytest.approx(0.65)
    assert d_diag(M_OA) == pytest.approx(0.8 / 3)
    assert d_diag(M_AA) == pytest.approx(0.3)


def test_deid_and_gvd_of_the_toy_matrices():
    # DeID = 1 - .266667/.65 = 0.589744; G_VD = 10 log10(.3/.65) = -3.357921 dB (metrics.md 5)
    v = voice_distinctiveness(M_OO, M_OA, M_AA)
    assert round(v.deid, 6) == 0.589744
    assert round(v.g_vd, 6) == -3.357921
    assert (v.d_diag_oo, v.d_diag_oa, v.d_diag_aa) == pytest.approx((0.65, 0.8 / 3, 0.3))
    assert v.to_dict() == {
        "deid": v.deid,
        "g_vd": v.g_vd,
        "d_diag_oo": v.d_diag_oo,
        "d_diag_oa": v.d_diag_oa,
        "d_diag_aa": v.d_diag_aa,
    }


def test_d_diag_takes_the_absolute_difference():
    # diag .1, off-diag .7 -> |.1 - .7| = .6
    assert d_diag([[0.1, 0.7], [0.7, 0.1]]) == pytest.approx(0.6)


@pytest.mark.parametrize("m", [[[1.0]], [[1, 2, 3], [4, 5, 6]], [1, 2]])
def test_d_diag_needs_a_square_matrix(m):
    with pytest.raises(VoxMetricsInputError, match="square"):
        d_diag(m)


def test_no_diagonal_dominance_in_the_originals_is_an_error():
    flat = [[0.5, 0.5], [0.5, 0.5]]
    with pytest.raises(VoxMetricsInputError, match="D_diag = 0"):
        voice_distinctiveness(flat, [[0.6, 0.3], [0.3, 0.5]], [[0.7, 0.4], [0.4, 0.65]])


# ---------------------------------------------------------------- the matrices


def _es(a, split="eval", sex=None) -> EmbeddingSet:
    emb, spk, utt = a
    meta = pd.DataFrame(
        {"utt_id": utt, "speaker": spk, "role": ["enrol", "trial"] * (len(spk) // 2)
         + ["trial"] * (len(spk) % 2), "split": split}
    )  # fmt: skip
    if sex is not None:
        meta["sex"] = sex
    return EmbeddingSet.from_arrays(emb, meta)


@pytest.mark.parametrize("calibration", ["pav", "raw"])
def test_identical_original_and_anonymised_give_deid_zero_and_gvd_zero(calibration):
    # the anonymised copy keeps every utterance id, so M_oa skips the same pairs as M_oo and
    # all three matrices coincide: D_diag ratios 1 -> DeID 1 - 1 = 0, G_VD 10 log10 1 = 0
    a, _ = _random_sets(seed=1)
    es = _es(a)
    r = voice_similarity(es, es, calibration=calibration)
    np.testing.assert_array_equal(r.oa.matrix, r.oo.matrix)
    assert r.distinctiveness.deid == 0.0
    assert r.distinctiveness.g_vd == 0.0
    assert r.to_dict() == {**r.distinctiveness.to_dict(), "n_speakers_left_out": 0}


def test_pairs_with_equal_utterance_ids_are_never_used():
    # Speaker x: u1 = (1, 0), u2 = (0, 1) in A, and B holds the same two vectors under the
    # same ids. Distinct-id pairs of x with x are (u1, u2) and (u2, u1), cosine 0 each, so
    # the raw cell is sigmoid(0) = 0.5. Pairing u1 with u1 and u2 with u2 (cosine 1) would
    # give mean 0.5 and sigmoid(0.5) = 0.622.
    emb = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0.6, 0.8]]
    spk, utt = ["x", "x", "y", "y"], ["u1", "u2", "u3", "u4"]
    m = similarity_matrix(emb, spk, utt, emb, spk, utt, calibration="raw")
    assert m.speakers.tolist() == ["x", "y"]
    assert m.matrix[0, 0] == pytest.approx(0.5)
    assert m.mean_score[0, 0] == pytest.approx(0.0)
    # ordered pairs, both directions: 2 + 2 for (x, x); (x, y) 4 + (y, x) 4 = 8
    assert m.n_pairs.tolist() == [[4, 8], [8, 4]]
    # with other ids for B every pair counts: x-x mean cosine (1 + 0 + 0 + 1)/4 = 0.5
    other = similarity_matrix(emb, spk, utt, emb, spk, ["v1", "v2", "v3", "v4"],
                              calibration="raw")  # fmt: skip
    assert other.matrix[0, 0] == pytest.approx(expit(0.5))


@pytest.mark.parametrize("calibration", ["pav", "raw"])
def test_the_matrix_is_symmetric(calibration):
    a, b = _random_sets(seed=2)
    m = similarity_matrix(*a, *b, calibration=calibration)
    np.testing.assert_allclose(m.matrix, m.matrix.T, atol=0)
    np.testing.assert_allclose(m.mean_score, m.mean_score.T, atol=1e-15)
    np.testing.assert_array_equal(m.n_pairs, m.n_pairs.T)
    assert ((m.matrix > 0) & (m.matrix < 1)).all()
    assert m.calibration == calibration


def test_raw_option_is_the_sigmoid_of_the_mean_cosine_per_speaker_pair():
    a, b = _random_sets(seed=3)
    m = similarity_matrix(*a, *b, calibration="raw")
    speakers, expected = reference_matrix(a, b, calibration="raw")
    assert m.speakers.tolist() == speakers
    np.testing.assert_allclose(m.matrix, expected, atol=1e-12)
    assert m.d_diag == pytest.approx(d_diag(expected), abs=1e-12)


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_pav_option_uses_pav_laplace_llrs_of_the_pooled_pair_scores(seed):
    a, b = _random_sets(seed=seed, n_speakers=4, per_speaker=(3, 2, 4, 3))
    m = similarity_matrix(*a, *b, calibration="pav")
    _, expected = reference_matrix(a, b, calibration="pav")
    np.testing.assert_allclose(m.matrix, expected, atol=1e-12)


def test_pav_option_on_a_tiny_case_with_a_from_scratch_pav():
    # 2 speakers x 2 utterances, B keeps A's ids: 4 target and 4 non-target ordered pairs
    # per direction (12 valid ordered pairs in all); PAV + Laplace written out above
    a, b = _random_sets(seed=7, n_speakers=2, per_speaker=(2, 2), d=3)
    m = similarity_matrix(*a, *b, calibration="pav")
    _, expected = reference_matrix(a, b, calibration="pav", pav=naive_pav_laplace_llrs)
    np.testing.assert_allclose(m.matrix, expected, atol=1e-12)
    # and the independent PAV agrees with the library's on the same pooled scores
    pairs = _pairs(*a, *b)
    tar = [s for i, j, s in pairs if i == j]
    non = [s for i, j, s in pairs if i != j]
    for mine, lib in zip(naive_pav_laplace_llrs(tar, non), pav_llrs(tar, non, laplace=True),
                         strict=True):  # fmt: skip
        np.testing.assert_allclose(mine, lib, atol=1e-12)


def test_pav_and_raw_differ():
    a, b = _random_sets(seed=8)
    pav = similarity_matrix(*a, *b, calibration="pav").matrix
    raw = similarity_matrix(*a, *b, calibration="raw").matrix
    assert not np.allclose(pav, raw)


def test_voice_similarity_uses_every_utterance_of_the_split_and_only_that_split():
    # eval: 3 speakers with 2, 3, 2 utterances (enrolment and trial); dev: other utterances
    a, b = _random_sets(seed=9)
    dev_a, dev_b = _random_sets(seed=10)
    rename = lambda s: (s[0], s[1], [f"dev-{u}" for u in s[2]])  # noqa: E731
    both_a = tuple(list(x) + list(y) for x, y in zip(a, rename(dev_a), strict=True))
    both_b = tuple(list(x) + list(y) for x, y in zip(b, rename(dev_b), strict=True))
    split = ["eval"] * len(a[1]) + ["dev"] * len(dev_a[1])
    es_o = EmbeddingSet.from_arrays(
        np.asarray(both_a[0]),
        pd.DataFrame({"utt_id": both_a[2], "speaker": both_a[1], "role": "trial",
                      "split": split}),
    )  # fmt: skip
    es_a = EmbeddingSet.from_arrays(
        np.asarray(both_b[0]),
        pd.DataFrame({"utt_id": both_b[2], "speaker": both_b[1], "role": "trial",
                      "split": split}),
    )  # fmt: skip
    r = voice_similarity(es_o, es_a, calibration="raw")
    np.testing.assert_allclose(r.oo.matrix, reference_matrix(a, a, calibration="raw")[1])
    np.testing.assert_allclose(r.oa.matrix, reference_matrix(a, b, calibration="raw")[1])
    np.testing.assert_allclose(r.aa.matrix, reference_matrix(b, b, calibration="raw")[1])
    # M_oo diagonal: speaker s0 has 2 utterances -> 2 ordered distinct pairs, both directions 4
    assert r.oo.n_pairs[0, 0] == 4
    v = voice_distinctiveness(r.oo.matrix, r.oa.matrix, r.aa.matrix)
    assert r.distinctiveness == v


def test_bad_options_and_too_few_speakers_are_refused():
    a, b = _random_sets(seed=11)
    with pytest.raises(VoxMetricsInputError, match='"pav" or "raw"'):
        similarity_matrix(*a, *b, calibration="sigmoid")  # type: ignore[arg-type]
    one = ([[1, 0], [0, 1]], ["x", "x"], ["u1", "u2"])
    with pytest.raises(VoxMetricsInputError, match="at least 2 speakers"):
        similarity_matrix(*one, *one)
    single = ([[1, 0], [0, 1], [1, 1]], ["x", "y", "y"], ["u1", "u2", "u3"])
    with pytest.raises(VoxMetricsInputError, match="no utterance pair with distinct ids"):
        similarity_matrix(*single, *single, calibration="raw")
    with pytest.raises(VoxMetricsInputError, match="no utterance in split 'dev'"):
        es = _es(a)
        voice_similarity(es, es, split="dev")


@pytest.mark.parametrize("calibration", ["pav", "raw"])
def test_speakers_with_a_single_utterance_are_left_out_and_counted(calibration):
    # speakers s0..s2 have 2, 3, 2 utterances; s3 and s4 have one each (in both sets)
    a, b = _random_sets(seed=12, n_speakers=5, per_speaker=(2, 3, 2, 1, 1))
    with pytest.warns(LeftOutSpeakersWarning, match=r"2 speaker\(s\) with a single .*'s3', 's4'"):
        r = voice_similarity(_es(a), _es(b), calibration=calibration)
    assert r.left_out == ("s3", "s4")
    assert r.to_dict()["n_speakers_left_out"] == 2
    # equal to the result on the three speakers alone
    keep = 7
    a3 = tuple(x[:keep] for x in a)
    b3 = tuple(x[:keep] for x in b)
    r3 = voice_similarity(_es(a3), _es(b3), calibration=calibration)
    assert r3.left_out == () and r3.to_dict()["n_speakers_left_out"] == 0
    assert r.oo.speakers.tolist() == ["s0", "s1", "s2"]
    np.testing.assert_allclose(r.oo.matrix, r3.oo.matrix)
    np.testing.assert_allclose(r.oa.matrix, r3.oa.matrix)
    assert r.distinctiveness == r3.distinctiveness


# ------------------------------------------- the one-pass sums against the dense reference


def _dense_similarity_matrix(ea, sa, ua, eb, sb, ub, calibration):
    """The former implementation: one-hot speaker matrices, (S x U) @ (U x U) @ (U x S)."""
    ea, eb = _unit(ea), _unit(eb)
    sa, sb, ua, ub = (np.asarray(x).astype(str) for x in (sa, sb, ua, ub))
    speakers = np.intersect1d(sa, sb)
    keep_a, keep_b = np.isin(sa, speakers), np.isin(sb, speakers)
    ea, sa, ua, eb, sb, ub = ea[keep_a], sa[keep_a], ua[keep_a], eb[keep_b], sb[keep_b], ub[keep_b]
    ia, ib = np.searchsorted(speakers, sa), np.searchsorted(speakers, sb)
    scores = ea @ eb.T
    valid = ua[:, None] != ub[None, :]
    same = ia[:, None] == ib[None, :]
    if calibration == "pav":
        tar_mask, non_mask = valid & same, valid & ~same
        tar_llr, non_llr = pav_llrs(scores[tar_mask], scores[non_mask], laplace=True)
        llr = np.zeros_like(scores)
        llr[tar_mask], llr[non_mask] = tar_llr, non_llr
    else:
        llr = scores
    n_spk = speakers.size
    one_a = np.zeros((ia.size, n_spk))
    one_a[np.arange(ia.size), ia] = 1.0
    one_b = np.zeros((ib.size, n_spk))
    one_b[np.arange(ib.size), ib] = 1.0
    w = valid.astype(np.float64)
    counts = one_a.T @ w @ one_b
    sums = one_a.T @ (llr * w) @ one_b
    raw_sums = one_a.T @ (scores * w) @ one_b
    m = expit(sums / counts)
    sym = counts + counts.T
    return speakers, (m + m.T) / 2, (raw_sums + raw_sums.T) / sym, sym.astype(np.int64)


@pytest.mark.parametrize("calibration", ["pav", "raw"])
@pytest.mark.parametrize("seed", range(6))
def test_one_pass_sums_equal_the_dense_one_hot_reference(calibration, seed):
    rng = np.random.default_rng(seed)
    n_spk, d = int(rng.integers(2, 9)), int(rng.integers(2, 6))
    na, nb = int(rng.integers(3 * n_spk, 6 * n_spk)), int(rng.integers(3 * n_spk, 6 * n_spk))
    sa = np.array(
        [f"s{i}" for i in range(n_spk)] * 2
        + [f"s{i}" for i in rng.integers(0, n_spk, na - 2 * n_spk)]
    )
    sb = np.array(
        [f"s{i}" for i in range(n_spk)] * 2
        + [f"s{i}" for i in rng.integers(0, n_spk, nb - 2 * n_spk)]
    )
    rng.shuffle(sa), rng.shuffle(sb)
    ua = np.array([f"u{i}" for i in range(na)])
    ub = np.array([f"u{i}" for i in rng.permutation(max(na, nb) + 3)[:nb]])  # ids shared with A
    ea, eb = rng.normal(size=(na, d)), rng.normal(size=(nb, d))
    if seed % 2:  # ties in the pooled scores
        ea, eb = np.round(ea, 1), np.round(eb, 1)
    got = similarity_matrix(ea, sa, ua, eb, sb, ub, calibration=calibration)
    speakers, matrix, mean_score, n_pairs = _dense_similarity_matrix(
        ea, sa, ua, eb, sb, ub, calibration
    )
    np.testing.assert_array_equal(got.speakers, speakers)
    np.testing.assert_array_equal(got.n_pairs, n_pairs)
    np.testing.assert_allclose(got.matrix, matrix, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got.mean_score, mean_score, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("calibration", ["pav", "raw"])
def test_the_cache_computes_each_distinct_matrix_once_with_the_same_numbers(
    calibration, monkeypatch
):
    import voxmetrics.metrics.similarity as sim

    (o, a), (_, b) = _random_sets(seed=2), _random_sets(seed=3)
    eo, ea, eb = _es(o), _es(a), _es(b)
    fresh = [voice_similarity(eo, x, calibration=calibration) for x in (ea, eb, eo)]
    calls = []
    real = sim.similarity_matrix
    monkeypatch.setattr(sim, "similarity_matrix", lambda *a, **k: calls.append(1) or real(*a, **k))
    cache = {}
    cached = [voice_similarity(eo, x, calibration=calibration, cache=cache) for x in (ea, eb, eo)]
    # M_oo once, M_oa and M_aa of the two anonymised sets; the original against itself
    # reuses M_oo as its M_oa and M_aa
    assert len(calls) == len(cache) == 5
    for f, c in zip(fresh, cached, strict=True):
        for k in ("oo", "oa", "aa"):
            np.testing.assert_array_equal(getattr(c, k).matrix, getattr(f, k).matrix)
            np.testing.assert_array_equal(getattr(c, k).n_pairs, getattr(f, k).n_pairs)
        assert c.to_dict() == f.to_dict()
    assert cached[2].oa is cached[0].oo and cached[2].aa is cached[0].oo
    # another calibration is another matrix
    voice_similarity(eo, ea, calibration="raw" if calibration == "pav" else "pav", cache=cache)
    assert len(cache) == 8
