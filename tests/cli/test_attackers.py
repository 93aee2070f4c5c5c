"""The attacker options of the command line (voxmetrics.cli._attackers): ``evaluate --backend``
and ``study build --backend``, through ``main``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.analysis.attackers import SELECT_METRICS
from voxmetrics.cli import main
from voxmetrics.cli._attackers import BACKEND_CHOICES, SELECT_CHOICES
from voxmetrics.data.writers import write_embeddings
from voxmetrics.embeddings.backends import BACKENDS, TRAINED_BACKENDS
from voxmetrics.evaluation import evaluate

TODAYS_KEYS = {
    *("n_trials", "n_enrolled", "n_excluded_trials", "n_pairs", "eer", "eer_rocch", "cllr"),
    *("min_cllr", "linkability", "lid", "srd", "srd_model", "zebra", "linkability_vs_n"),
    *("singling_out", "score_kind", "dcf", "d_prime", "ties", "linkability_rule"),
    *("trials_used", "intervals", "chance", "utility"),
}


def _write(tmp: Path, name: str, **data) -> tuple[list[str], list[str]]:
    anon, orig = attack_embeddings(0, **data)
    a = write_embeddings(anon, tmp / f"{name}_anon", format="npz")
    o = write_embeddings(orig, tmp / f"{name}_orig", format="npz")
    return [str(p) for p in a], [str(p) for p in o]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("attackers"), "hidden")


def _evaluate(capsys, *args: str) -> tuple[dict, str]:
    assert main(["evaluate", *args]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def test_the_choices_are_the_librarys():
    assert BACKEND_CHOICES == (*BACKENDS, "strongest")
    assert SELECT_CHOICES == tuple(SELECT_METRICS)


def test_strongest_is_chosen_on_dev_and_reported_on_eval(files, capsys):
    (emb, meta), _ = files
    cosine, _ = _evaluate(capsys, "--embeddings", emb, "--metadata", meta)
    strong, err = _evaluate(
        capsys, "--embeddings", emb, "--metadata", meta, "--backend", "strongest"
    )
    block = strong["attacker"]
    assert block["backend"] in (*TRAINED_BACKENDS, "fusion")
    assert block["trained_on"] == "train" and block["selected_by"] == "eer"
    chosen = {c["backend"]: c["dev_value"] for c in block["candidates"]}
    assert (
        block["dev_value"]
        == chosen[block["backend"]]
        == min(v for v in chosen.values() if v is not None)
    )
    assert cosine["eer"] > 0.35 and strong["eer"] < cosine["eer"] / 3
    assert strong["tar_at_far"]["0.01"] > cosine["tar_at_far"]["0.01"]
    assert "may be too weak" not in err


def test_cosine_is_todays_json_byte_for_byte(files, capsys):
    (emb, meta), _ = files
    main(["evaluate", "--embeddings", emb, "--metadata", meta])
    default = capsys.readouterr().out
    main(["evaluate", "--embeddings", emb, "--metadata", meta, "--backend", "cosine"])
    assert capsys.readouterr().out == default
    # today's keys hold today's numbers: those of the cosine score matrices, as before
    got = json.loads(default)
    assert set(got) == TODAYS_KEYS | {"tar_at_far", "attacker"}
    assert got["attacker"]["backend"] == "cosine" and got["attacker"]["trained_on"] == "none"
    from voxmetrics.data import read_embeddings

    es = read_embeddings(emb, metadata=meta)
    today = evaluate(
        es.score_matrix("eval"), dev=es.score_matrix("dev"), name=Path(emb).stem, embeddings=es
    ).to_dict()
    assert json.dumps({k: got[k] for k in TODAYS_KEYS}, sort_keys=True) == json.dumps(
        {k: today[k] for k in TODAYS_KEYS}, sort_keys=True
    )


def test_named_backend_params_calibration_and_mapping(files, capsys):
    (emb, meta), (oemb, ometa) = files
    lda, _ = _evaluate(
        capsys, "--embeddings", emb, "--metadata", meta, "--backend", "lda",
        "--backend-param", "lda.dim=6", "--calibrate",
    )  # fmt: skip
    assert lda["attacker"]["parameters"]["dim"] == 6 and lda["attacker"]["calibrated"]
    assert lda["attacker"]["selected_by"] is None
    assert lda["score_kind"] == "llr" and lda["dcf"]["0.01"]["act_dcf"] is not None
    ridge, _ = _evaluate(
        capsys, "--embeddings", emb, "--metadata", meta, "--backend", "procrustes",
        "--backend-param", "procrustes.method=ridge", "--original", oemb, ometa,
    )  # fmt: skip
    assert ridge["attacker"]["parameters"]["method"] == "ridge"
    assert ridge["eer"] < 0.15


def test_the_weak_attacker_warning_fires_on_an_undertrained_attacker(tmp_path, capsys):
    (emb, meta), (oemb, ometa) = _write(tmp_path, "weak", n_train=3, train_utts=2, nuisance=0.6)
    got, err = _evaluate(
        capsys, "--embeddings", emb, "--metadata", meta, "--backend", "lda",
        "--original", oemb, ometa,
    )  # fmt: skip
    block = got["attacker"]
    assert block["weak"] and "may be too weak: privacy may be overestimated" in err
    assert any("original (unprotected) speech" in c for c in block["cautions"])
    assert "privacy may be overestimated" in block["warning"]


def test_the_warning_stays_quiet_on_a_well_trained_attacker(files, capsys):
    (emb, meta), (oemb, ometa) = files
    got, err = _evaluate(
        capsys, "--embeddings", emb, "--metadata", meta, "--backend", "plda",
        "--original", oemb, ometa,
    )  # fmt: skip
    assert not got["attacker"]["weak"] and got["attacker"]["cautions"] == []
    assert "too weak" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--split", "dev"], "--split dev is for cosine only"),
        (["--dev", "x.npz"], "drop --dev"),
        (["--scheduler", "local"], "drop --scheduler"),
        (["--backend-param", "lda.top_n=3"], "no parameter 'top_n'"),
    ],
)
def test_refusals(files, capsys, extra, message):
    (emb, meta), _ = files
    code = main(["evaluate", "--embeddings", emb, "--metadata", meta, "--backend", "lda", *extra])
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_backend_needs_embeddings(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("trial_id,trial_speaker,enrol_speaker,score\nt,a,a,1\nt,a,b,0\n")
    assert main(["evaluate", str(path), "--backend", "lda"]) == 2
    assert "give --embeddings" in capsys.readouterr().err


def _setups(tmp: Path, *extra: str, semi: list[str] | None = None) -> tuple[int, str]:
    (emb, meta), (oemb, ometa) = _write(tmp, "small", n_train=30, n_dev=15, n_eval=15)
    out = tmp / "s.vxm"
    args = ["study", "build", str(out), "--original", oemb, ometa, "--anonymised", emb, meta]
    args += ["--setups", "ignorant", "lazy-informed", "semi-informed", *extra]
    if semi:
        args += ["--semi-informed", *semi]
    return main(args), str(out)


def test_study_build_keeps_the_strongest_attacker_of_each_setup(tmp_path, capsys):
    from voxmetrics.data import load_study
    from voxmetrics.evaluation import evaluate_condition

    code, out = _setups(tmp_path, "--backend", "strongest")
    assert code == 0
    err = capsys.readouterr().err
    study = load_study(out)
    assert study.names == ["original", "small_anon (ignorant)", "small_anon (lazy-informed)",
                           "small_anon (semi-informed)"]  # fmt: skip
    lazy = study.get("small_anon (lazy-informed)")
    assert lazy.recipe.backend in (*TRAINED_BACKENDS, "fusion")
    assert lazy.recipe.selected_by == "eer" and lazy.recipe.trained_on == "train"
    assert "attacker " + lazy.recipe.label in err
    block = evaluate_condition(lazy, parts=["pairwise"]).to_dict()["attacker"]
    assert block == lazy.recipe.to_dict()
    # the ignorant attacker trains on original speech: mismatched by definition, not flagged
    assert not study.get("small_anon (ignorant)").recipe.weak


def test_study_build_one_condition_per_backend(tmp_path, capsys):
    from voxmetrics.data import load_study

    code, out = _setups(tmp_path, "--backend", "cosine", "lda", "procrustes")
    assert code == 0
    names = load_study(out).names
    assert "small_anon (lazy-informed) [lda]" in names and "small_anon (lazy-informed)" in names
    assert "small_anon (semi-informed) [procrustes]" in names
    assert "small_anon (ignorant) [procrustes]" not in names  # the ignorant attacker maps nothing
    assert "procrustes left out" in capsys.readouterr().err


def test_study_build_flags_a_semi_informed_attacker_weaker_than_the_lazy_one(tmp_path, capsys):
    # a "retrained" encoder that lost the speaker: noise embeddings of the same utterances
    import numpy as np

    anon, _ = attack_embeddings(0, n_train=30, n_dev=15, n_eval=15)
    noise = type(anon).from_arrays(
        np.random.default_rng(9).standard_normal(anon.embeddings.shape), anon.meta
    )
    semi = [str(p) for p in write_embeddings(noise, tmp_path / "semi", format="npz")]
    code, out = _setups(tmp_path, "--backend", "lda", semi=semi)
    assert code == 0
    from voxmetrics.data import load_study

    recipe = load_study(out).get("small_anon (semi-informed)").recipe
    assert recipe.weak
    assert any("semi-informed attacker" in c and "weaker than the lazy-informed" in c
               for c in recipe.cautions)  # fmt: skip
    assert "may be too weak" in capsys.readouterr().err
