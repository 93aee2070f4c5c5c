"""Attacker back-ends (voxmetrics.embeddings.backends): each against its reference.

PLDA is held to SpeechBrain's ``PLDA_LDA`` (training and ``fast_PLDA_scoring``) on the same
data, LDA to scikit-learn's ``transform``, the other back-ends to their definitions written as
loops; and on embeddings an anonymiser has hidden the speaker in, a linear back-end trained on
the attacker's own anonymised data undoes it where cosine cannot.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends import (
    BACKENDS,
    EMBEDDING_BACKENDS,
    TrainingData,
    fit_backend,
    fit_lda,
    fit_plda,
    fit_wccn,
    max_scores,
    plda_scores,
)
from voxmetrics.embeddings.backends.linear import within_covariance
from voxmetrics.embeddings.backends.norm import cohort_statistics, normalise_scores
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics import eer


def _clusters(seed: int, n_spk: int = 15, d: int = 8, spread: float = 0.5):
    rng = np.random.default_rng(seed)
    spk = np.repeat(np.arange(n_spk), rng.integers(2, 6, n_spk))
    x = rng.normal(size=(n_spk, d))[spk] + spread * rng.normal(size=(spk.size, d))
    return x, np.array([f"s{i:02d}" for i in spk])


@pytest.mark.parametrize(("seed", "rank_f"), [(1, None), (2, 4), (3, None)])
def test_plda_equals_speechbrain_on_the_same_data(seed, rank_f):
    plda_lda = pytest.importorskip("speechbrain.processing.PLDA_LDA")
    x, speakers = _clusters(seed)
    n, d = x.shape
    ids = speakers.astype(object)
    none = np.array([None] * n)
    stat = plda_lda.StatObject_SB(
        modelset=ids,
        segset=np.array([f"u{i}" for i in range(n)], dtype=object),
        start=none,
        stop=none,
        stat0=np.ones((n, 1)),
        stat1=x.copy(),
    )
    ref = plda_lda.PLDA(rank_f=rank_f or d, nb_iter=10)
    ref.plda(stat)
    ours = fit_plda(x, speakers, rank_f=rank_f, n_iter=10)
    np.testing.assert_allclose(ours.mean, ref.mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.F @ ours.F.T, ref.F @ ref.F.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.Sigma, ref.Sigma, rtol=1e-9, atol=1e-12)
    # scoring: enrolment means (SpeechBrain's mean_stat_per_model) against trials
    rng = np.random.default_rng(seed + 10)
    enrol, trials = rng.normal(size=(6, d)), rng.normal(size=(9, d))
    models = np.array([f"m{j}" for j in range(6)], dtype=object)
    segs = np.array([f"t{i}" for i in range(9)], dtype=object)
    en = plda_lda.StatObject_SB(
        modelset=models, segset=models, start=np.array([None] * 6), stop=np.array([None] * 6),
        stat0=np.ones((6, 1)), stat1=enrol.copy(),
    )  # fmt: skip
    te = plda_lda.StatObject_SB(
        modelset=segs, segset=segs, start=np.array([None] * 9), stop=np.array([None] * 9),
        stat0=np.ones((9, 1)), stat1=trials.copy(),
    )  # fmt: skip
    ndx = plda_lda.Ndx(models=models, testsegs=segs)
    want = plda_lda.fast_PLDA_scoring(en, te, ndx, ref.mean, ref.F, ref.Sigma).scoremat
    got = plda_scores(ours, enrol, trials)
    np.testing.assert_allclose(got, want.T, rtol=1e-9, atol=1e-9)


def test_lda_projection_is_sklearns_transform():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    x, speakers = _clusters(4, n_spk=10, d=12)
    projection, dim = fit_lda(TrainingData(x, speakers))
    assert dim == 9
    u = unit_rows(x)
    centred = u - u.mean(axis=0)
    want = LinearDiscriminantAnalysis(n_components=dim).fit(centred, speakers).transform(centred)
    np.testing.assert_allclose(projection(x), unit_rows(want), atol=1e-10)
    with pytest.raises(VoxMetricsInputError, match="LDA dimension 10 is out of range"):
        fit_lda(TrainingData(x, speakers), dim=10)


def test_wccn_whitens_the_within_speaker_covariance():
    x, speakers = _clusters(5, n_spk=12, d=6)
    p = fit_wccn(TrainingData(x, speakers), shrinkage=0.0)
    u = unit_rows(x) - p.mean
    sw = within_covariance(u, speakers)
    b = p.matrix
    np.testing.assert_allclose(b @ b.T, np.linalg.inv(sw), rtol=1e-6)
    # the loop definition: mean over speakers of each one's population covariance
    loop = np.mean([np.cov(u[speakers == s].T, bias=True) for s in np.unique(speakers)], axis=0)
    np.testing.assert_allclose(sw, loop, atol=1e-14)


def test_max_scores_take_the_best_enrolment_utterance():
    rng = np.random.default_rng(6)
    enrol = unit_rows(rng.normal(size=(7, 4)))
    spk = np.array(["b", "a", "b", "c", "a", "a", "c"])
    trials = unit_rows(rng.normal(size=(5, 4)))
    names, got = max_scores(enrol, spk, trials)
    assert names.tolist() == ["a", "b", "c"]
    want = np.array([[max(t @ enrol[spk == s].T) for s in "abc"] for t in trials])
    np.testing.assert_allclose(got, want, atol=1e-15)


@pytest.mark.parametrize("top_n", [None, 3])
def test_score_normalisation_is_its_definition(top_n):
    rng = np.random.default_rng(7)
    cohort = unit_rows(rng.normal(size=(8, 5)))
    rows = unit_rows(rng.normal(size=(4, 5)))
    mu, sd = cohort_statistics(rows, cohort, top_n)
    for i, r in enumerate(rows):
        s = np.sort(cohort @ r)[::-1][: top_n or 8]
        assert mu[i] == pytest.approx(s.mean(), abs=1e-14)
        assert sd[i] == pytest.approx(s.std(), abs=1e-14)
    scores = rng.normal(size=(4, 3))
    e_stats = (np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 0.5]))
    t_stats = (np.array([0.0, 1.0, -1.0, 0.5]), np.array([1.0, 0.5, 2.0, 1.5]))
    got = normalise_scores(scores, e_stats, t_stats)
    for i in range(4):
        for j in range(3):
            z_e = (scores[i, j] - e_stats[0][j]) / e_stats[1][j]
            z_t = (scores[i, j] - t_stats[0][i]) / t_stats[1][i]
            assert got[i, j] == pytest.approx(0.5 * (z_e + z_t), abs=1e-14)


def test_asnorm_with_the_whole_cohort_is_snorm():
    anon, _ = attack_embeddings(0, n_train=10, n_dev=4, n_eval=5)
    train = TrainingData.of(anon)
    a = anon.score_matrix_with("eval", fit_backend("asnorm", train, top_n=10_000))
    s = anon.score_matrix_with("eval", fit_backend("snorm", train))
    np.testing.assert_allclose(a.scores, s.scores, atol=1e-12)


def test_cosine_backend_is_todays_scoring():
    anon, _ = attack_embeddings(1, n_train=5, n_dev=5, n_eval=8)
    got = anon.score_matrix_with("eval", fit_backend("cosine"))
    want = anon.score_matrix("eval")
    np.testing.assert_allclose(got.scores, want.scores, rtol=0, atol=1e-15)
    assert got.trial_ids.tolist() == want.trial_ids.tolist()
    assert got.enrol_speakers.tolist() == want.enrol_speakers.tolist()


def test_procrustes_undoes_a_rotation_and_ridge_a_nuisance():
    anon, orig = attack_embeddings(2, n_train=40, n_dev=5, n_eval=20, nuisance=4.0)
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(anon.dim, anon.dim)))
    rotated = type(anon).from_arrays(unit_rows(orig.embeddings) @ q, anon.meta)
    train = TrainingData.of(rotated, originals=orig)
    proc = fit_backend("procrustes", train)
    np.testing.assert_allclose(proc.weights @ q, np.eye(anon.dim), atol=1e-8)
    ridge = fit_backend("procrustes", TrainingData.of(anon, originals=orig), method="ridge")
    cosine_eer = eer(anon.score_matrix("eval").tar, anon.score_matrix("eval").non)
    mapped = anon.score_matrix_with("eval", ridge)
    assert eer(mapped.tar, mapped.non) < cosine_eer / 3
    with pytest.raises(VoxMetricsInputError, match="original embeddings"):
        fit_backend("procrustes", TrainingData.of(anon))


def test_a_linear_backend_trained_on_anonymised_data_undoes_the_anonymiser():
    anon, _ = attack_embeddings(0)
    cosine = anon.score_matrix("eval")
    train = TrainingData.of(anon)
    assert train.split == "train" and train.n_speakers == 60
    lda = anon.score_matrix_with("eval", fit_backend("lda", train))
    assert eer(cosine.tar, cosine.non) > 0.35  # near chance
    assert eer(lda.tar, lda.non) < 0.1  # far below
    for name in ("wccn", "plda"):
        sm = anon.score_matrix_with("eval", fit_backend(name, train))
        assert eer(sm.tar, sm.non) < 0.2, name


def test_training_data_is_never_eval_and_needs_two_speakers():
    anon, _ = attack_embeddings(0, n_train=1, n_dev=3, n_eval=3)
    with pytest.raises(VoxMetricsInputError, match="never trained on the eval split"):
        TrainingData.of(anon, "eval")
    with pytest.raises(VoxMetricsInputError, match="needs at least two"):
        TrainingData.of(anon)
    no_train, _ = attack_embeddings(0, n_dev=3, n_eval=3, with_train=False)
    assert TrainingData.of(no_train).split == "dev"


def test_backend_names_and_parameters_are_checked():
    assert BACKENDS[0] == "cosine" and "fusion" not in EMBEDDING_BACKENDS
    x, speakers = _clusters(8)
    with pytest.raises(VoxMetricsInputError, match="no parameter 'top_n'"):
        fit_backend("lda", TrainingData(x, speakers), top_n=3)
    with pytest.raises(VoxMetricsInputError, match="fusion combines"):
        fit_backend("fusion")
    with pytest.raises(VoxMetricsInputError, match="trained on the attacker's own data"):
        fit_backend("plda")
