"""A sparse trial list keeps every listed pair for the pairwise metrics.

VoxCeleb-style Kaldi keys list some trial utterances in non-target lines only (their speaker is
not enrolled), and an utt2spk file may name trial speakers without enrolment. Their pairs are
all non-mated: the pairwise metrics (EER, ROCCH-EER, Cllr, ZEBRA, verification) count them, so
``n_pairs`` equals the key's length and the EER equals SpeechBrain's ``EER`` on the listed
pairs. The 1-to-N metrics still need each trial's speaker among the enrolled identities and
leave those trials out (:meth:`ScoreMatrix.complete_rows`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from metric_registry import forget_unimportable_modules

from voxmetrics.data import ScoreMatrix, read_scores
from voxmetrics.errors import ExcludedTrialsWarning
from voxmetrics.evaluation import evaluate
from voxmetrics.metrics.cllr import cllr
from voxmetrics.metrics.eer import eer_rocch
from voxmetrics.metrics.zebra import zebra, zebra_bootstrap

torch = pytest.importorskip("torch")
metric_stats = pytest.importorskip("speechbrain.utils.metric_stats")
forget_unimportable_modules()


def _speechbrain_eer(tar, non) -> float:
    eer, _ = metric_stats.EER(torch.tensor(tar), torch.tensor(non))
    return float(eer)


def _key(seed: int, *, p_enrolled: float, n_trials: int = 120, n_enrolled: int = 15):
    """(scores bytes, key bytes, utt2spk bytes, tar, non) of a sparse VoxCeleb-style list.

    A trial of an enrolled speaker is listed against its own speaker (90%) and a few others; a
    trial of an unenrolled speaker against a few enrolled identities, in non-target lines only.
    """
    rng = np.random.default_rng(seed)
    enrolled = [f"spk{i:02d}" for i in range(n_enrolled)]
    s_lines, k_lines, u_lines, tar, non = [], [], [], [], []
    for j in range(n_trials):
        known = rng.random() < p_enrolled
        spk = enrolled[rng.integers(n_enrolled)] if known else f"guest{j}"
        u_lines.append(f"utt{j} {spk}")
        others = [e for e in enrolled if e != spk]
        listed = list(rng.choice(others, size=int(rng.integers(2, 8)), replace=False))
        if known and rng.random() < 0.9:
            listed.append(spk)
        for e in listed:
            mated = e == spk
            score = float(np.round(rng.normal(1.2 if mated else 0.0, 1.0), 1))  # ties
            s_lines.append(f"{e} utt{j} {score}")
            k_lines.append(f"{e} utt{j} {'target' if mated else 'nontarget'}")
            (tar if mated else non).append(score)
    as_bytes = lambda lines: ("\n".join(lines) + "\n").encode()  # noqa: E731
    return as_bytes(s_lines), as_bytes(k_lines), as_bytes(u_lines), tar, non


@pytest.mark.parametrize("trials", ["key", "utt2spk"])
@pytest.mark.parametrize(("seed", "p_enrolled"), [(0, 0.8), (1, 0.5), (2, 0.95)])
def test_every_listed_pair_is_counted(seed, p_enrolled, trials):
    scores, key, utt2spk, tar, non = _key(seed, p_enrolled=p_enrolled)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExcludedTrialsWarning)  # nothing is excluded
        sm = read_scores(
            scores, trials=key if trials == "key" else utt2spk, name="s.txt", trials_name="t"
        )
    n_lines = scores.count(b"\n")
    assert sm.n_pairs == n_lines == len(tar) + len(non)
    assert sm.n_trials == 120 and sm.n_excluded_trials == 0
    assert sorted(sm.tar.tolist()) == sorted(tar)
    assert sorted(sm.non.tolist()) == sorted(non)
    r = evaluate(sm).to_dict()
    assert r["n_pairs"] == n_lines
    assert r["eer"] == pytest.approx(_speechbrain_eer(tar, non), abs=1e-7)
    assert r["eer_rocch"] == eer_rocch(tar, non)
    assert r["cllr"] == pytest.approx(cllr(tar, non), rel=1e-12)
    z = zebra(tar, non)
    assert (r["zebra"]["d_ece"], r["zebra"]["log10_l"]) == (z.d_ece, z.log10_l)
    # the 1-to-N metrics keep their rule: the trials of an unenrolled speaker are left out
    full = sm.complete_rows()
    unknown = ~sm.trial_enrolled
    assert unknown.any()
    if full is not None:
        assert not set(full.trial_ids) & set(sm.trial_ids[unknown])


def test_unenrolled_trials_have_only_non_mated_pairs():
    sm = ScoreMatrix.from_arrays(
        [[0.9, 0.1, np.nan], [0.2, np.nan, 0.4], [np.nan, 0.3, 0.8]],
        trial_ids=["t1", "t2", "t3"],
        trial_speakers=["a", "guest", "c"],
        enrol_speakers=["a", "b", "c"],
        nan_missing=True,
    )
    assert sm.trial_enrolled.tolist() == [True, False, True]
    assert sm.n_pairs == 6 and sm.n_excluded_trials == 0
    assert sm.target_listed.tolist() == [True, False, True]
    assert sm.tar.tolist() == [0.9, 0.8]
    assert sm.non.tolist() == [0.1, 0.2, 0.4, 0.3]
    assert int(sm.targets[1]) == 1  # its first unlisted column: neither mated nor non-mated
    assert sm.complete_rows() is None  # no trial listed against a, b and c
    # the speaker bootstrap resamples it as its own speaker, with its listed pairs
    ci = zebra_bootstrap(sm.scores, sm.targets, sm.trial_speakers, n_boot=10, seed=0, mask=sm.mask)
    assert ci["d_ece"].estimate == zebra(sm.tar, sm.non).d_ece


def test_an_unenrolled_trial_listed_against_everyone_counts_its_pairs():
    # no unlisted cell: the trial is held apart (its pairs all non-mated), as the challenge's
    # scripts count every key line; the 1-to-N metrics leave it out
    with pytest.warns(ExcludedTrialsWarning, match="the 1-to-N metrics leave them out"):
        sm = ScoreMatrix.from_arrays(
            [[0.9, np.nan], [0.2, 0.4], [0.1, 0.7]],
            trial_ids=["t1", "t2", "t3"],
            trial_speakers=["a", "guest", "b"],
            enrol_speakers=["a", "b"],
            nan_missing=True,
        )
    assert sm.trial_ids.tolist() == ["t1", "t3"] and sm.n_excluded_trials == 0
    assert sm.others is not None and sm.others.trial_ids.tolist() == ["t2"]
    view = sm.pairwise_view()
    assert view.n_pairs == 5 and view.n_trials == 3
    assert sorted(view.tar.tolist()) == [0.7, 0.9]
    assert sorted(view.non.tolist()) == [0.1, 0.2, 0.4]
    r = evaluate(sm).to_dict()
    assert r["n_pairs"] == 5 and r["n_trials"] == 3
    assert r["eer"] == pytest.approx(_speechbrain_eer([0.7, 0.9], [0.1, 0.2, 0.4]), abs=1e-7)
    assert r["trials_used"]["one_to_n"]["left_out"]["speaker_not_enrolled"] == 1


def test_a_key_trial_without_target_line_is_its_own_unknown_speaker():
    scores = b"a u1 0.9\nb u1 0.1\na u2 0.3\nb u3 0.2\nb u4 0.8\na u4 0.1\n"
    key = (
        b"a u1 target\nb u1 nontarget\na u2 nontarget\nb u3 nontarget\nb u4 target\n"
        b"a u4 nontarget\n"
    )
    sm = read_scores(scores, trials=key, name="s", trials_name="k")
    assert sm.n_pairs == 6 and sm.n_trials == 4
    spk = dict(zip(sm.trial_ids, sm.trial_speakers, strict=True))
    assert spk["u1"] == "a" and spk["u4"] == "b"
    assert spk["u2"] != spk["u3"]  # two unknown speakers, not one
    assert not sm.trial_enrolled[list(sm.trial_ids).index("u2")]
    assert sorted(sm.tar.tolist()) == [0.8, 0.9]
    assert sorted(sm.non.tolist()) == [0.1, 0.1, 0.2, 0.3]


def test_subset_attribute_ignores_the_column_of_an_unenrolled_trial():
    nan = np.nan
    sm = ScoreMatrix.from_arrays(
        # columns e, a, b, c, d; e has no trial of its own
        [
            [0.1, 0.9, 0.2, nan, nan],  # t1: a (F), also against e
            [nan, 0.3, 0.8, nan, nan],  # t2: b (F)
            [nan, nan, nan, 0.7, 0.1],  # t3: c (M)
            [nan, nan, nan, 0.2, 0.9],  # t4: d (M)
            [nan, 0.4, nan, 0.5, nan],  # t5: a guest (M): its unlisted first column is e's
        ],
        trial_ids=["t1", "t2", "t3", "t4", "t5"],
        trial_speakers=["a", "b", "c", "d", "guest"],
        enrol_speakers=["e", "a", "b", "c", "d"],
        attributes={"sex": ["F", "F", "M", "M", "M"]},
        nan_missing=True,
    )
    assert int(sm.targets[4]) == 0
    # e is no male speaker's identity: it stays in the female subset, listed with t1
    assert sm.subset_attribute("sex", "F").enrol_speakers.tolist() == ["e", "a", "b"]
    male = sm.subset_attribute("sex", "M")
    assert male.trial_ids.tolist() == ["t3", "t4", "t5"]
    # a's column (female) is left out, so t5 keeps its pair with c only
    assert male.enrol_speakers.tolist() == ["c", "d"]
    assert male.non.tolist() == [0.1, 0.2, 0.5] and male.tar.size == 2
