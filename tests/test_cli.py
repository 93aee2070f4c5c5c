"""The command-line contract of design.md: JSON keys, exit codes 0 / 1 / 2, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voxmetrics.cli import fail_on_holds, main
from voxmetrics.errors import VoxMetricsInputError

ROOT = Path(__file__).resolve().parents[1]
CONTRACT_KEYS = {
    "n_trials",
    "n_enrolled",
    "n_excluded_trials",
    "eer",
    "eer_rocch",
    "cllr",
    "min_cllr",
    "linkability",
    "lid",
    "srd",
    "srd_model",
    "zebra",
    "linkability_vs_n",
    "singling_out",
    "ties",
    "n_pairs",
    "trials_used",
    "intervals",
    "chance",
    "linkability_rule",
    "score_kind",
    "dcf",
    "d_prime",
    "tar_at_far",
    "utility",
}


@pytest.fixture
def worked_csv(tmp_path: Path) -> Path:
    # metrics.md section 1 worked example (paper 000, eq. 1), in the long CSV format
    S = [[0.9, 0.8, 0.8, 0.8], [0.7, 0.6, 0.6, 0.6], [0.4, 0.5, 0.4, 0.4], [0.2, 0.2, 0.3, 0.2]]
    spk = ["a", "a", "b", "c"]
    enrol = ["a", "b", "c", "d"]
    rows = [(f"t{i}", spk[i], enrol[j], S[i][j]) for i in range(4) for j in range(4)]
    path = tmp_path / "worked.csv"
    pd.DataFrame(rows, columns=["trial_id", "trial_speaker", "enrol_speaker", "score"]).to_csv(
        path, index=False
    )
    return path


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(out), "--format", "all"]) == 0
    return out


def _run(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_evaluate_worked_example(worked_csv, capsys):
    status, out, err = _run(["evaluate", str(worked_csv)], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert set(result) == CONTRACT_KEYS
    assert result["eer"] == 0.5 and result["eer_rocch"] == 0.375 and result["linkability"] == 1.0
    assert (result["n_trials"], result["n_enrolled"], result["n_excluded_trials"]) == (4, 4, 0)
    assert result["n_pairs"] == 16 and result["trials_used"]["one_to_n"]["n_trials"] == 4
    assert result["lid"] is None  # no dev set, no cross-calibration
    # every trial is at rank 1 of 4: MeanD = MaxD = log2 4 = 2 bits, IdR = linkability = 1
    stats = {k: result["srd"][k] for k in ("mean_d", "idr", "std_d", "max_d", "spread")}
    assert stats == {"mean_d": 2.0, "idr": 1.0, "std_d": 0.0, "max_d": 2.0, "spread": 0.25}
    # chance: a random column of 4 wins its row; every row has exactly one strict winner
    assert result["chance"]["linkability"] == pytest.approx(1 / 4)
    assert result["intervals"] is None  # no bootstrap asked for
    assert result["srd_model"]["loss"] == "CLL"
    assert result["ties"] == "reference"


def test_evaluate_records_the_tie_rule(worked_csv, capsys):
    # the worked example has no target tied with a non-target: both rules agree
    status, out, err = _run(["evaluate", str(worked_csv), "--ties", "attacker"], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert result["ties"] == "attacker"
    assert (result["eer"], result["eer_rocch"]) == (0.5, 0.375)
    with pytest.raises(SystemExit) as exc:  # argparse rejects an unknown choice
        main(["evaluate", str(worked_csv), "--ties", "optimistic"])
    assert exc.value.code == 2 and "--ties" in capsys.readouterr().err


def test_every_score_format_gives_the_same_metrics(demo_dir, capsys):
    results = {}
    for fmt, name in [
        ("csv", "anon-leaky_eval.csv"),
        ("parquet", "anon-leaky_eval.parquet"),
        ("npz", "anon-leaky_eval.npz"),
        ("kaldi", "anon-leaky_eval.scores"),
    ]:
        argv = ["evaluate", str(demo_dir / name)]
        if fmt == "kaldi":
            keys = sorted(
                p for p in demo_dir.glob("anon-leaky_eval.scores*") if p.suffix != ".scores"
            )
            assert keys, "write_scores(format='kaldi') wrote no key file"
            argv += ["--trials", str(keys[0])]
        status, out, err = _run(argv, capsys)
        assert status == 0, err
        results[fmt] = json.loads(out)
    first = results["csv"]
    assert first["n_trials"] == 320 and first["n_enrolled"] == 40 and first["eer"] >= 0.45
    for fmt, r in results.items():
        assert r == first, fmt  # the writers round-trip scores exactly


def test_dev_set_is_read_and_checked(demo_dir, capsys):
    status, _, err = _run(
        ["evaluate", str(demo_dir / "plain_eval.npz"), "--dev", str(demo_dir / "plain_dev.npz")],
        capsys,
    )
    assert status == 0, err
    status, _, err = _run(
        ["evaluate", str(demo_dir / "plain_eval.npz"), "--dev", str(demo_dir / "random_eval.npz")],
        capsys,
    )
    assert status == 2 and "share 40 speaker" in err


def test_json_and_html_outputs(worked_csv, tmp_path, capsys):
    js, page = tmp_path / "r.json", tmp_path / "r.html"
    status, out, _ = _run(
        ["evaluate", str(worked_csv), "--json", str(js), "--html", str(page)], capsys
    )
    assert status == 0
    assert json.loads(js.read_text()) == json.loads(out)
    text = page.read_text()
    assert "<table" in text and "0.500" in text and "worked" in text
    # the styled page of `report --html`: report card, overview, methods, plotly.js once
    assert 'id="report-card"' in text and 'id="overview"' in text and 'id="methods"' in text
    assert text.count("plotly.js v") == 1


@pytest.mark.parametrize(
    ("expr", "status"),
    [
        ("eer < 0.6", 1),
        ("eer > 0.6", 0),
        ("linkability > 0.9 and not eer < 0.5", 1),
        ("eer >= 0.5 or n_trials < 2", 1),
        ("0.4 < eer < 0.45", 0),
    ],
)
def test_fail_on(worked_csv, capsys, expr, status):
    got, out, err = _run(["evaluate", str(worked_csv), "--fail-on", expr], capsys)
    assert got == status
    assert json.loads(out)["eer"] == 0.5
    assert ("--fail-on condition holds" in err) == (status == 1)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("eeer > 0.1", "unknown metric 'eeer'"),
        ("eer >", "not a valid expression"),
        ("lid.lid_max > 1", "'lid' is null"),
        ("__import__('os')", "unsupported expression"),
        ("eer + 1 > 0", "unsupported expression"),
    ],
)
def test_bad_fail_on_is_bad_input(worked_csv, capsys, expr, message):
    status, out, err = _run(["evaluate", str(worked_csv), "--fail-on", expr], capsys)
    assert status == 2 and message in err and out == ""


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ('-"x" > 0', "cannot apply - to 'x' (text): only a number can be negated"),
        ("eer < -'0.4'", "cannot apply - to '0.4' (text)"),
        ("-dcf > 0", "cannot apply - to dcf (a block of metrics)"),
        ("-(eer < 1) < 0", "cannot apply - to eer < 1 (true / false)"),
        ("not dcf", "cannot apply 'not' to dcf (a block of metrics)"),
        ("not eer or eer < 1", "cannot apply 'not' to eer (a number)"),
        ("eer < 1 and 'x'", "cannot apply 'and' to 'x' (text)"),
        ("-lid.lid_max > 1", "cannot apply - to lid.lid_max (null): 'lid' is null"),
        ("not lid", "cannot apply 'not' to lid (null): 'lid' is null"),
        ("'0.5' == eer", "cannot compare '0.5' (text) with eer (a number)"),
        ("dcf != 1", "cannot compare dcf (a block of metrics) with 1 (a number)"),
    ],
)
def test_fail_on_type_errors_exit_2_naming_the_operand(worked_csv, capsys, expr, message):
    status, out, err = _run(["evaluate", str(worked_csv), "--fail-on", expr], capsys)
    assert status == 2 and out == ""
    assert err.startswith(f"voxmetrics: error: --fail-on '{expr}': cannot ")
    assert message in err.splitlines()[0] and "Traceback" not in err


def test_fail_on_null_block_explains():
    with pytest.raises(VoxMetricsInputError, match="'lid' is null"):
        fail_on_holds("lid.lid_max > 1", {"lid": None})


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"\x00\x01\x02 this is not a score file \xff")
    status, out, err = _run(["evaluate", str(garbage)], capsys)
    assert status == 2 and out == ""
    assert err.startswith("voxmetrics: error: ") and "garbage.csv" in err
    assert "Traceback" not in err
    status, _, err = _run(["evaluate", str(tmp_path / "missing.csv")], capsys)
    assert status == 2 and "no such file" in err


def test_kaldi_scores_without_key_say_how_to_fix(demo_dir, capsys):
    status, _, err = _run(["evaluate", str(demo_dir / "plain_eval.scores")], capsys)
    assert status == 2 and "--trials" in err


def test_module_entry_point_has_no_traceback(tmp_path):
    garbage = tmp_path / "x.npz"
    garbage.write_bytes(b"PK\x03\x04 broken zip")
    proc = subprocess.run(
        [sys.executable, "-m", "voxmetrics", "evaluate", str(garbage)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    help_text = subprocess.run(
        [sys.executable, "-m", "voxmetrics", "evaluate", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    for flag in ("--trials", "--dev", "--dev-trials", "--format", "--json", "--html", "--fail-on"):
        assert flag in help_text


def test_commands_run_without_huge_page_compaction_unless_the_user_chose(monkeypatch):
    from numpy._core.multiarray import _get_madvise_hugepage, _set_madvise_hugepage

    from voxmetrics.cli import demo

    seen = []
    monkeypatch.setattr(demo, "run", lambda args: seen.append(_get_madvise_hugepage()) or 0)
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    before = _get_madvise_hugepage()
    try:
        _set_madvise_hugepage(True)
        assert main(["demo", "unused"]) == 0
        assert seen == [False] and _get_madvise_hugepage() is True  # restored afterwards
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
        assert main(["demo", "unused"]) == 0
        assert seen == [False, True]
    finally:
        _set_madvise_hugepage(before)


def test_by_many_small_subsets_is_fast_and_each_subset_is_its_own_report(
    tmp_path, capsys, monkeypatch
):
    """--by with 100 values of 2 speakers: the SRD fits of the subsets run in one batch.

    Each subset's report equals the subset evaluated alone, bit for bit (the fits before the
    batch took about 1 s each when the model could not represent the ranks).
    """
    import importlib
    import warnings

    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate

    srd_module = importlib.import_module("voxmetrics.metrics.srd")
    n = 200
    rng = np.random.default_rng(3)
    spk = np.array([f"s{i:03d}" for i in range(n)])
    scores = rng.normal(size=(n, n)) + 3 * np.eye(n)
    group = np.array([f"g{i // 2:03d}" for i in range(n)])
    tids = np.array([f"t{i}" for i in range(n)])
    np.savez(
        tmp_path / "s.npz", scores=scores, trial_ids=tids, trial_speakers=spk, enrol_speakers=spk
    )
    pd.DataFrame({"trial_id": tids, "group": group}).to_csv(tmp_path / "a.csv", index=False)
    fitted: list[int] = []
    real = srd_module.fit_beta_binomials

    def counted(h, **kw):
        fitted.append(len(h))
        return real(h, **kw)

    monkeypatch.setattr(srd_module, "fit_beta_binomials", counted)
    argv = ["evaluate", str(tmp_path / "s.npz"), "--trial-attributes", str(tmp_path / "a.csv")]
    status, out, err = _run([*argv, "--by", "group"], capsys)
    assert status == 0, err
    by = json.loads(out)["by"]["group"]
    assert len(by) == 100
    # the whole matrix's fit, and one batch of the subsets' distinct histograms (at most 3)
    assert len(fitted) == 2 and max(fitted) <= 3, fitted
    monkeypatch.undo()
    sm = ScoreMatrix.from_arrays(
        scores, trial_ids=tids, trial_speakers=spk, enrol_speakers=spk, attributes={"group": group}
    )
    shapes: dict[float, str] = {}
    for value, sub in by.items():  # one subset of each rank histogram (2 trials: idr 0, .5, 1)
        shapes.setdefault(sub["srd"]["idr"], value)
    assert len(shapes) >= 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in shapes.values():
            alone = evaluate(sm.subset_attribute("group", value)).to_dict()
            assert json.loads(json.dumps(alone)) == by[value], value


def test_by_refuses_more_subsets_than_the_limit(tmp_path, capsys):
    n = 24
    spk = np.array([f"s{i:02d}" for i in range(n)])
    tids = np.array([f"t{i}" for i in range(n)])
    np.savez(tmp_path / "s.npz", scores=np.eye(n), trial_ids=tids, trial_speakers=spk,
             enrol_speakers=spk)  # fmt: skip
    group = [f"g{i // 2:02d}" for i in range(n)]
    pd.DataFrame({"trial_id": tids, "group": group}).to_csv(tmp_path / "a.csv", index=False)
    argv = ["evaluate", str(tmp_path / "s.npz"), "--trial-attributes", str(tmp_path / "a.csv")]
    status, out, err = _run([*argv, "--by", "group", "--limit", "max_subsets=10"], capsys)
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith(
        "voxmetrics: error: --by group: 12 values of 'group', a subset each, over the limit "
        "max_subsets=10; "
    )
    assert "--limit max_subsets=VALUE" in err
    status, out, _ = _run([*argv, "--by", "group", "--limit", "max_subsets=12"], capsys)
    assert status == 0 and len(json.loads(out)["by"]["group"]) == 12
