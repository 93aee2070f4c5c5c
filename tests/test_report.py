from __future__ import annotations

import html
import json

import numpy as np

from voxmetrics.evaluation import evaluate_study
from voxmetrics.report import report_html
from voxmetrics.report.frames import OVERVIEW_COLUMNS, overview_frame
from voxmetrics.synth import demo_study


def test_overview_has_one_row_per_condition_and_matches_reports():
    study = demo_study(n_speakers=10)
    seen = []
    reports = evaluate_study(study, progress=lambda f, m: seen.append(f))
    df = overview_frame(reports)
    assert list(df.columns) == list(OVERVIEW_COLUMNS)
    assert list(df["condition"]) == study.names
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    for r, row in zip(reports, df.itertuples(index=False), strict=True):
        assert row.eer == r.baseline.eer and row.linkability == r.baseline.linkability
        assert np.isclose(row.chance_linkability, 1 / 10)
        json.loads(r.to_json())
    page = report_html(reports)  # the styled page: one overview row per condition
    overview = page.split('id="overview"')[1].split("</table>")[0]
    assert overview.count("<tr") == len(study) + 1


def test_the_study_setting_chooses_the_lid_variant_of_every_condition():
    import dataclasses

    from voxmetrics.data.study import StudySettings
    from voxmetrics.metrics.lid import calibrate_lid
    from voxmetrics.report.study import build_study_report

    study = dataclasses.replace(
        demo_study(n_speakers=12),
        settings=StudySettings(bootstrap=0, lid_variant="reference-code"),
    )
    d = build_study_report(study).to_dict()
    assert d["settings"]["lid_variant"] == "reference-code"
    for name, block in d["conditions"].items():
        lid_block = block["lid"]
        assert lid_block["variant"] == "reference-code"
        dev = study.get(name).dev
        expected = calibrate_lid(dev.scores, dev.targets, variant="reference-code")
        assert lid_block["w"] == expected.w
        assert block["sbls"]["attacker_trained_on"] == "anonymised"  # one default attacker


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


FORMER_REPORT_NAMES = (
    "COMPARISON_COLUMNS", "INTERVALS_COLUMNS", "INTERVAL_LABELS", "LINKAGE_COMPARE_KEYS",
    "OVERVIEW_COLUMNS", "SIMILARITY_MAX_UTTERANCES", "ConditionReport", "LinkageInputs",
    "TrialsUsed", "compare_conditions", "compare_conditions_sbls", "compare_linkage",
    "comparison_frame", "evaluate", "evaluate_condition", "evaluate_study", "headline_values",
    "intervals_frame", "labelled", "linkage_inputs",
    "overview_frame", "replicate_condition", "report_html", "verification_frame",
)  # fmt: skip
"""What ``voxmetrics.report`` exported before the engine moved to ``voxmetrics.evaluation``."""


def test_the_former_import_paths_still_work():
    import voxmetrics
    import voxmetrics.evaluation as evaluation
    import voxmetrics.report as report
    from voxmetrics.distributed import (  # noqa: F401
        ChunkedScores,
        EmbeddingBlocks,
        ZarrScores,
        dask_client,
        evaluate_blockwise,
        extract_embeddings_blockwise,
    )
    from voxmetrics.evaluation.threat import threat_callouts
    from voxmetrics.report.html import report_html as html_page

    assert set(FORMER_REPORT_NAMES) <= set(report.__all__)
    assert all(getattr(report, name) is not None for name in FORMER_REPORT_NAMES)
    assert report.evaluate is evaluation.evaluate is voxmetrics.evaluate
    assert report.report_html is html_page
    assert voxmetrics.threat.threat_callouts is threat_callouts


def test_importing_the_package_draws_no_figure():
    """Plotly loads with the HTML pages, not with ``import voxmetrics``."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, voxmetrics, voxmetrics.report; assert 'plotly' not in sys.modules; "
        "from voxmetrics.report import report_html; assert 'plotly' in sys.modules"
    )
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_study_report_progress_moves_through_the_similarity_and_comparisons():
    """The bar keeps moving after the conditions: the similarity matrices and the pairs."""
    from voxmetrics.report.study import build_study_report

    seen = []
    build_study_report(
        demo_study(n_speakers=6), bootstrap=5, progress=lambda f, m: seen.append((f, m))
    )
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    messages = [m for _, m in seen]
    assert any(m.startswith("Voice similarity of") for m in messages)
    assert messages.index("Paired comparisons") > max(
        i for i, m in enumerate(messages) if m.startswith("Evaluating")
    )
    assert all(f < 1.0 for f, m in seen if m != "Done")


