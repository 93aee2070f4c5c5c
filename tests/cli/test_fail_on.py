"""``evaluate --fail-on`` (voxmetrics.cli._fail_on): a condition on the result, without ``eval``."""

from __future__ import annotations

import json

import pytest

from voxmetrics.cli import fail_on_holds
from voxmetrics.errors import VoxMetricsInputError

from .cli_cases import run as _run


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
