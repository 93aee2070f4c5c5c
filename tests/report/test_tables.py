"""Paper-ready tables: exact LaTeX / Markdown, escaping, intervals, CLI and zip (issue 19)."""

from __future__ import annotations

import io
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from voxmetrics.cli import main
from voxmetrics.data.studyfile import save_study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.report.export import report_zip, write_report
from voxmetrics.report.study import build_study_report
from voxmetrics.report.tables import (
    TABLE_CAPTIONS,
    format_interval,
    format_value,
    latex_escape,
    results_tables,
    table_latex,
    table_markdown,
    write_tables,
)
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def sr():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_study_report(demo_study(n_speakers=8), bootstrap=30, seed=1)


def test_latex_exact_with_float_caption_label_and_escapes():
    df = pd.DataFrame(
        {
            "Condition": ["anon_mild", "a&b"],
            "EER": [0.4712, 0.05],
            "ALID (bits)": ["0.470 [0.440, 0.500]", "-0.120 [-0.250, 0.010]"],
            "N": [10, 12],
            "Note": ["50% #1", None],
        }
    )
    expected = "\n".join(
        [
            r"\begin{table}[t]",
            r"  \centering",
            r"  \caption{LID of anon\_mild (95 \% CI)}",
            r"  \label{tab:lid}",
            r"  \begin{tabular}{lrrrl}",
            r"    \toprule",
            r"    Condition & EER & ALID (bits) & N & Note \\",
            r"    \midrule",
            r"    anon\_mild & 0.471 & 0.470 [0.440, 0.500] & 10 & 50\% \#1 \\",
            r"    a\&b & 0.050 & $-$0.120 [$-$0.250, 0.010] & 12 & -- \\",
            r"    \bottomrule",
            r"  \end{tabular}",
            r"\end{table}",
        ]
    )
    assert table_latex(df, caption="LID of anon_mild (95 % CI)", label="tab:lid") == expected


def test_latex_tabular_alone_and_digits():
    df = pd.DataFrame({"x": [1.23456], "y": ["α − β"]})
    assert table_latex(df, float_env=False, digits=2) == "\n".join(
        [
            r"\begin{tabular}{rl}",
            r"  \toprule",
            r"  x & y \\",
            r"  \midrule",
            r"  1.23 & $\alpha$ $-$ $\beta$ \\",
            r"  \bottomrule",
            r"\end{tabular}",
        ]
    )


def test_markdown_exact():
    df = pd.DataFrame(
        {"Condition": ["a|b", "c"], "EER": [0.4712, float("nan")], "CI": ["0.4 [0.3, 0.5]", "x"]}
    )
    assert table_markdown(df) == "\n".join(
        [
            "| Condition | EER | CI |",
            "| :-- | --: | :-- |",
            r"| a\|b | 0.471 | 0.4 [0.3, 0.5] |",
            "| c | – | x |",
        ]
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a_b", r"a\_b"),
        ("100%", r"100\%"),
        ("R&D", r"R\&D"),
        ("#1", r"\#1"),
        ("$5", r"\$5"),
        ("{x}", r"\{x\}"),
        ("~", r"\textasciitilde{}"),
        ("^", r"\textasciicircum{}"),
        ("\\", r"\textbackslash{}"),
        ("<>", r"\textless{}\textgreater{}"),
        ("–", "--"),
        ("plain", "plain"),
    ],
)
def test_latex_escape_each_special(text, expected):
    assert latex_escape(text) == expected


@given(st.text(max_size=40))
def test_latex_escape_leaves_no_bare_special(text):
    out = latex_escape(text)
    # remove what the escaping writes; no special character may remain bare
    stripped = re.sub(
        r"\\(textbackslash|textasciitilde|textasciicircum|textless|textgreater)\{\}"
        r"|\\[&%$#_{}]|\$\\(alpha|beta|lambda|geq|leq)\$|\$-\$",
        "",
        out,
    )
    assert not set(stripped) & set("&%$#_{}~^\\<>")


@given(
    st.floats(-1e3, 1e3, allow_nan=False),
    st.floats(-1e3, 1e3, allow_nan=False),
    st.floats(-1e3, 1e3, allow_nan=False),
    st.integers(0, 6),
)
def test_format_interval_reads_back_within_rounding(v, a, b, digits):
    lo, hi = min(a, b), max(a, b)
    text = format_interval(v, lo, hi, digits)
    m = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", text)
    assert m is not None, text
    for got, want in zip(m.groups(), (v, lo, hi), strict=True):
        assert len(got.split(".")[1]) == digits if digits else "." not in got
        assert abs(float(got) - want) <= 0.5 * 10**-digits + 1e-9 * abs(want)


def test_format_interval_and_value_edge_cases():
    assert format_interval(0.47, 0.44, 0.5) == "0.470 [0.440, 0.500]"
    assert format_interval(0.47, float("nan"), 0.5) == "0.470"
    assert format_interval(None, 0.1, 0.2) == "–"
    assert format_value(np.float32(0.25), 2) == "0.25"
    assert format_value(np.int64(7)) == "7"
    assert format_value(pd.NA) == "–"


def test_bad_table_is_an_input_error():
    with pytest.raises(VoxMetricsInputError, match="DataFrame"):
        table_latex([[1, 2]])  # type: ignore[arg-type]
    with pytest.raises(VoxMetricsInputError, match="no columns"):
        table_markdown(pd.DataFrame())


def test_results_tables_carry_the_report_values_and_intervals(sr):
    tabs = results_tables(sr)
    assert list(tabs) == [k for k in TABLE_CAPTIONS if k in tabs]
    assert {"overview", "report_card", "lid", "srd", "zebra", "linkage"} <= set(tabs)
    lid, zebra, over = (tabs[k].set_index("Condition") for k in ("lid", "zebra", "overview"))
    for r in sr.reports:
        iv = r.lid_intervals["alid"]
        assert lid.loc[r.name, "ALID (bits)"] == f"{r.lid.alid:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
        assert over.loc[r.name, "ALID (bits)"] == lid.loc[r.name, "ALID (bits)"]
        # a maximum has no interval of its own; its 0.95 quantile carries one
        assert r.lid_intervals["lid_max"].low is None
        assert lid.loc[r.name, "LIDmax (bits)"] == f"{r.lid.lid_max:.2f}"
        iv = r.lid_intervals["lid_q95"]
        assert lid.loc[r.name, "LID q95 (bits)"] == (
            f"{iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}]"
        )
        iv = r.zebra_intervals["d_ece"]
        assert zebra.loc[r.name, "D_ECE (bits)"] == (
            f"{r.zebra.d_ece:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
        )
        assert zebra.loc[r.name, "Tag"] == r.zebra.tag
        assert over.loc[r.name, "EER"] == f"{r.baseline.eer:.3f}"
        # the bounds come out ordered
        low, high = re.findall(r"\[(\S+), (\S+)\]", lid.loc[r.name, "ALID (bits)"])[0]
        assert float(low) <= float(high)
    for df in tabs.values():
        assert all(isinstance(v, str) for v in df.to_numpy().ravel())


def test_results_tables_without_bootstrap_have_no_intervals(sr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = build_study_report(demo_study(n_speakers=6), bootstrap=0)
    tabs = results_tables(plain)
    assert not any("[" in v for v in tabs["lid"].to_numpy().ravel())
    assert not any("[" in v for v in tabs["zebra"].to_numpy().ravel())


def test_write_tables_and_report_outputs(sr, tmp_path):
    tex = write_tables(sr, tmp_path / "tex", "latex")
    md = write_tables(sr, tmp_path / "md", "markdown")
    assert [p.stem for p in tex] == [p.stem for p in md] == list(results_tables(sr))
    lid = (tmp_path / "tex" / "lid.tex").read_text(encoding="utf-8")
    assert lid.startswith("\\begin{table}[t]") and "\\label{tab:lid}" in lid
    assert "\\toprule" in lid and "\\bottomrule" in lid
    assert (
        (tmp_path / "md" / "zebra.md")
        .read_text(encoding="utf-8")
        .startswith("| Condition | EER | D_ECE (bits) |")
    )
    with pytest.raises(VoxMetricsInputError, match="latex"):
        write_tables(sr, tmp_path, "html")  # type: ignore[arg-type]
    written = write_report(sr, latex_dir=tmp_path / "a", markdown_dir=tmp_path / "b")
    assert {p.suffix for p in written} == {".tex", ".md"}


def test_report_zip_has_latex_and_markdown(sr):
    names = zipfile.ZipFile(io.BytesIO(report_zip(sr))).namelist()
    assert "latex/overview.tex" in names and "markdown/overview.md" in names


def test_cli_report_latex_and_markdown(tmp_path, capsys):
    path = tmp_path / "s.vxm"
    save_study(demo_study(n_speakers=6), path)
    status = main(
        [
            "report",
            str(path),
            "--bootstrap",
            "10",
            "--latex",
            str(tmp_path / "tex"),
            "--markdown",
            str(tmp_path / "md"),
        ]
    )
    assert status == 0
    out = capsys.readouterr().out.split()
    assert str(tmp_path / "tex" / "lid.tex") in out and str(tmp_path / "md" / "lid.md") in out
    text = (tmp_path / "tex" / "lid.tex").read_text(encoding="utf-8")
    assert re.search(r"\d\.\d{3} \[\$?-?\$?\d\.\d{3}, ", text)


def test_cli_report_needs_an_output(tmp_path, capsys):
    path = tmp_path / "s.vxm"
    save_study(demo_study(n_speakers=6), path)
    assert main(["report", str(path)]) == 2
    assert "--latex DIR" in capsys.readouterr().err


_cells = st.lists(
    st.lists(
        st.one_of(st.text(max_size=12), st.floats(allow_nan=True), st.none()),
        min_size=3,
        max_size=3,
    ),
    min_size=1,
    max_size=4,
)


@given(_cells)
def test_markdown_rows_keep_their_columns_whatever_the_cells(rows):
    df = pd.DataFrame(rows, columns=["a|b", "c", "d"])
    lines = table_markdown(df).split("\n")
    assert len(lines) == len(rows) + 2
    for line in lines:
        # unescaped pipes delimit the 3 cells
        assert len(re.findall(r"(?<!\\)\|", line.replace("\\\\", ""))) == 4


@given(_cells)
def test_latex_rows_keep_their_columns_whatever_the_cells(rows):
    df = pd.DataFrame(rows, columns=["a&b", "c", "d"])
    body = table_latex(df, float_env=False).split("\n")[2:-2]
    body = [line for line in body if line.strip() != r"\midrule"]
    assert len(body) == len(rows) + 1
    for line in body:
        assert line.endswith(r" \\")
        # unescaped ampersands separate the 3 cells; no line break inside a row
        assert len(re.findall(r"(?<!\\)&", line)) == 2


def test_line_breaks_in_cells_stay_inside_the_row():
    df = pd.DataFrame({"a": ["x\ny"], "b": ["p\r\nq"]})
    assert table_markdown(df).split("\n")[2] == "| x y | p q |"
    assert r"  x y & p q \\" in table_latex(df, float_env=False).split("\n")


# ----------------------------------------------------------------------------------------------
# The EER stands beside the SRD, ZEBRA and Linkage tables and in verification.csv
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def study():
    """The demo study of 6 speakers."""
    return demo_study(n_speakers=6)


def test_report_tables_carry_the_eer(study):
    sr = build_study_report(study, bootstrap=0)
    tabs = results_tables(sr)
    for name in ("srd", "zebra", "linkage"):
        assert "EER" in tabs[name].columns, name
    assert sr.tables()["verification.csv"].columns[1] == "EER"
