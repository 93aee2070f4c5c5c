from __future__ import annotations

import pytest

from voxmetrics import Condition, ScoreMatrix, Study, VoxMetricsInputError


def _sm(prefix: str = "") -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        [[1.0, 0.2], [0.1, 0.9]],
        trial_ids=[f"{prefix}t1", f"{prefix}t2"],
        trial_speakers=[f"{prefix}a", f"{prefix}b"],
        enrol_speakers=[f"{prefix}a", f"{prefix}b"],
    )


def test_add_rename_remove_keep_order():
    s = Study()
    s = s.with_condition(Condition("a", eval=_sm())).with_condition(Condition("b", eval=_sm()))
    assert s.names == ["a", "b"]
    s = s.renamed("a", "c")
    assert s.names == ["c", "b"]
    s = s.with_condition(Condition("c", eval=_sm(), attacker="ignorant"))
    assert s.names == ["c", "b"] and s.get("c").attacker == "ignorant"
    assert s.without("c").names == ["b"]


def test_rename_to_existing_or_empty_name_is_refused():
    s = Study().with_condition(Condition("a", eval=_sm()))
    s = s.with_condition(Condition("b", eval=_sm()))
    with pytest.raises(VoxMetricsInputError, match="already exists"):
        s.renamed("a", "b")
    with pytest.raises(VoxMetricsInputError, match="non-empty name"):
        s.renamed("a", "  ")
    with pytest.raises(VoxMetricsInputError, match="no condition 'zz'"):
        s.without("zz")


def test_dev_and_eval_must_have_disjoint_speakers():
    with pytest.raises(VoxMetricsInputError, match="share 2 speaker"):
        Condition("x", eval=_sm(), dev=_sm())
    Condition("x", eval=_sm(), dev=_sm("dev-"))


def test_unknown_attacker_is_refused():
    with pytest.raises(VoxMetricsInputError, match="attacker 'oracle' is unknown"):
        Condition("x", eval=_sm(), attacker="oracle")


@pytest.mark.parametrize(
    "attacker", ["original", "ignorant", "lazy-informed", "semi-informed", "informed"]
)
def test_every_attacker_label_of_both_taxonomies_is_accepted(attacker):
    # Vauquier et al. 2025 add original and informed to the VoicePrivacy names
    sm = ScoreMatrix.from_arrays(
        [[1.0, 0.0], [0.0, 1.0]],
        trial_ids=["t1", "t2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )
    assert Condition("x", eval=sm, attacker=attacker).attacker == attacker


def test_study_subset_of_the_demo():
    from voxmetrics.synth import demo_study

    study = demo_study(n_speakers=8)
    assert study.subset_options() == {"age_group": ["18-35", "36-55", "56+"], "sex": ["F", "M"]}
    female = study.subset("sex", "F")
    assert female.names == study.names and female.name == f"{study.name} [sex=F]"
    for full, sub in zip(study.conditions, female.conditions, strict=True):
        assert set(sub.eval.attributes["sex"].tolist()) == {"F"}
        assert sub.eval.n_trials == int((full.eval.attributes["sex"] == "F").sum())
        assert set(sub.eval.enrol_speakers) == set(sub.eval.trial_speakers)
        if full.embeddings is not None:
            keep = (full.embeddings.meta["sex"] == "F").to_numpy()
            assert "sex" not in sub.embeddings.meta  # constant: nothing for SBLS to infer
            assert sub.embeddings.meta["utt_id"].tolist() == (
                full.embeddings.meta["utt_id"][keep].tolist()
            )
        if full.dev is not None:
            assert set(sub.dev.attributes["sex"].tolist()) == {"F"}
    with pytest.raises(VoxMetricsInputError, match=r"Condition 'plain': .*no per-trial attribute"):
        study.subset("height", "1")
