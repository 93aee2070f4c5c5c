"""The package ``voxmetrics.report`` (voxmetrics/report/__init__.py): former names, lazy plotly."""

from __future__ import annotations

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
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
