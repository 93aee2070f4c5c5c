"""The documentation site: it builds strictly, stays self-contained, and its examples are real.

CI runs pytest, so the strict MkDocs build runs here (skipped, with the reason, where MkDocs is
not installed: ``pip install -r requirements-dev.txt`` brings it).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import voxmetrics as vm
from voxmetrics.cli import _parser
from voxmetrics.embeddings.audio import read_manifest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
TEXT_SUFFIXES = {".md", ".yml", ".yaml", ".js", ".css", ".py", ".csv", ".txt", ".key", ""}

# Files a user of the site never has: internal design notes and paper numbering.
FORBIDDEN = ("metrics.md", "design.md", "style.md", "sbls.md", "shared/", "../seeds", "paper 00")

MKDOCS_MISSING = [
    m
    for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
    if importlib.util.find_spec(m.split(".")[0]) is None
    or (m == "mkdocstrings_handlers.python" and importlib.util.find_spec(m) is None)
]


def _doc_files() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*") if p.is_file())


def _nav_pages() -> list[str]:
    """The .md paths named in mkdocs.yml's nav, read as text (no YAML tags to resolve)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"([\w/.-]+\.md)\s*$", nav, flags=re.M)


# ---------------------------------------------------------------- the build


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if MKDOCS_MISSING:
        pytest.skip(
            f"MkDocs is not installed ({', '.join(MKDOCS_MISSING)} missing); "
            "`pip install -r requirements-dev.txt` installs it"
        )
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def test_strict_build_writes_every_page(site: Path):
    for page in _nav_pages():
        target = page[: -len(".md")]
        target = target[: -len("index")] if target.endswith("index") else target + "/"
        assert (site / target / "index.html").is_file(), page


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(v for k, v in attrs if k == "id" and v)


@pytest.mark.parametrize(
    "module",
    [
        "voxmetrics", "voxmetrics.report.export",
        "voxmetrics.synth", "voxmetrics.embeddings", "voxmetrics.plots",
        "voxmetrics.analysis.linkage", "voxmetrics.evaluation", "voxmetrics.evaluation.card",
        "voxmetrics.evaluation.threat", "voxmetrics.distributed", "voxmetrics.report",
        "voxmetrics.report.html", "voxmetrics.analysis.utility", "voxmetrics.analysis.vpc",
        "voxmetrics.dashboard",
    ],
)  # fmt: skip
def test_api_reference_documents_the_public_surface(site: Path, module: str):
    parser = _Ids()
    for page in (site / "api").rglob("index.html"):
        parser.feed(page.read_text(encoding="utf-8"))
    documented = {i.rsplit(".", 1)[-1] for i in parser.ids if i.startswith("voxmetrics.")}
    mod = importlib.import_module(module)
    public = {
        name
        for name in mod.__all__
        if not name.startswith("_") and not isinstance(getattr(mod, name), type(vm))
    }
    missing = sorted(public - documented)
    assert not missing, f"public names of {module} without an API reference entry: {missing}"


def test_every_display_equation_is_typeset(site: Path):
    # A \[ ... \] block that Markdown swallows (e.g. not set off by blank lines inside a list
    # item) loses its backslashes and shows as broken text, without any build warning.
    for md in sorted(DOCS.rglob("*.md")):
        blocks = sum(line.strip() == r"\[" for line in md.read_text(encoding="utf-8").splitlines())
        page = md.relative_to(DOCS).with_suffix("")
        page = page.parent if page.name == "index" else page
        html = (site / page / "index.html").read_text(encoding="utf-8")
        assert html.count('<div class="arithmatex">') == blocks, md.relative_to(ROOT)


def test_maths_and_rst_roles_render(site: Path):
    lid = (site / "methods" / "lid" / "index.html").read_text(encoding="utf-8")
    assert 'class="arithmatex"' in lid
    api = (site / "api" / "data" / "index.html").read_text(encoding="utf-8")
    assert "read_scores" in api and ":class:" not in api and ":func:" not in api


def test_hook_strips_sphinx_roles():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    html = "see :func:<code>lid</code> and :class:<code>~voxmetrics.data.ScoreMatrix</code>"
    assert hooks.on_page_content(html) == "see <code>lid</code> and <code>ScoreMatrix</code>"


# ---------------------------------------------------------------- self-contained


def test_docs_do_not_point_outside_the_repository():
    hits = []
    for path in [ROOT / "mkdocs.yml", *_doc_files()]:
        if path.suffix not in TEXT_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8").lower()
        hits += [f"{path.relative_to(ROOT)}: {word!r}" for word in FORBIDDEN if word in text]
    assert not hits, "internal references in the docs:\n" + "\n".join(hits)


def test_every_page_is_in_the_nav_and_every_nav_entry_exists():
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    nav = _nav_pages()
    assert len(nav) == len(set(nav))
    assert set(nav) == pages


def test_screenshots_are_the_readme_screenshots():
    for png in (ROOT / "assets").glob("*.png"):
        copy = DOCS / "assets" / png.name
        assert copy.is_file(), f"docs/assets lacks {png.name}"
        assert copy.read_bytes() == png.read_bytes(), f"docs/assets/{png.name} is out of date"


def test_cli_page_documents_every_command_and_option():
    text = (DOCS / "user-guide" / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, parser in sub.choices.items():
        if f"\n## {name}\n" not in text:
            missing.append(f"a `## {name}` section")
            continue
        section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        missing += [
            f"{option} in the `{name}` section"
            for action in parser._actions
            for option in action.option_strings
            if option.startswith("--") and option != "--help" and option not in section
        ]
    assert not missing, "docs/user-guide/cli.md lacks:\n" + "\n".join(missing)


# ---------------------------------------------------------------- example files

SCORE_EXAMPLES = {
    "scores.csv": {},
    "scores.parquet": {},
    "scores.npz": {},
    "scores.kaldi.txt (key)": {"trials": "trials.key"},
    "scores.kaldi.txt (utt2spk)": {"trials": "utt2spk"},
}
EMBEDDING_EXAMPLES = {
    "embeddings.npz": "embeddings.csv",
    "embeddings.npy": "embeddings.csv",
    "embeddings.parquet": None,
}
OTHER_EXAMPLES = {"predictions_scores.csv", "predictions_labels.csv", "manifest.csv"}


def test_every_example_file_is_tested_and_shown():
    tested = {k.split(" ")[0] for k in SCORE_EXAMPLES} | {"trials.key", "utt2spk"}
    tested |= set(EMBEDDING_EXAMPLES) | {"embeddings.csv"} | OTHER_EXAMPLES
    present = {p.name for p in EXAMPLES.iterdir() if p.is_file()}
    assert present == tested
    formats = (DOCS / "user-guide" / "input-formats.md").read_text(encoding="utf-8")
    for name in present:
        assert f"(../examples/{name})" in formats, f"input-formats.md does not link {name}"


@pytest.mark.parametrize("example", sorted(SCORE_EXAMPLES))
def test_score_examples_read_to_the_same_matrix(example: str):
    file = example.split(" ")[0]
    options = {k: EXAMPLES / v for k, v in SCORE_EXAMPLES[example].items()}
    sm = vm.read_scores(EXAMPLES / file, **options)
    # The matrix of the input-formats page: 4 trials x 3 enrolled, trial t4 spoken by spk1.
    np.testing.assert_allclose(
        sm.scores, [[0.82, 0.11, 0.25], [0.05, 0.64, 0.31], [0.20, 0.38, 0.71], [0.47, 0.52, 0.09]]
    )
    assert sm.trial_ids.tolist() == ["t1", "t2", "t3", "t4"]
    assert sm.trial_speakers.tolist() == ["spk1", "spk2", "spk3", "spk1"]
    assert sm.enrol_speakers.tolist() == ["spk1", "spk2", "spk3"]
    assert sm.targets.tolist() == [0, 1, 2, 0]
    assert sm.n_excluded_trials == 0
    if not file.startswith("scores.kaldi"):
        assert sm.attributes["sex"].tolist() == ["F", "M", "F", "F"]


def test_getting_started_numbers_are_those_of_the_example():
    sm = vm.read_scores(EXAMPLES / "scores.csv")
    assert vm.eer(sm.tar, sm.non) == pytest.approx(0.0625)
    assert vm.eer_rocch(sm.tar, sm.non) == pytest.approx(1 / 12)
    assert vm.linkability(sm.scores, sm.targets) == 0.75  # t4 ranks spk2 above spk1
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    assert '"eer": 0.0625' in page and '"linkability": 0.75' in page


@pytest.mark.parametrize("example", sorted(EMBEDDING_EXAMPLES))
def test_embedding_examples_read_to_the_same_set(example: str):
    meta = EMBEDDING_EXAMPLES[example]
    es = vm.read_embeddings(EXAMPLES / example, metadata=None if meta is None else EXAMPLES / meta)
    reference = np.load(EXAMPLES / "embeddings.npy", allow_pickle=False)
    np.testing.assert_allclose(es.embeddings, reference)
    assert es.meta["utt_id"].tolist()[:3] == ["spk1_01", "spk1_02", "spk1_03"]
    assert {"sex", "age_group"} <= set(es.meta.columns)
    sm = es.score_matrix("eval")
    assert sm.shape == (6, 3)


@pytest.mark.parametrize("example", ["predictions_scores.csv", "predictions_labels.csv"])
def test_prediction_examples_join_the_metadata(example: str):
    es = vm.read_embeddings(EXAMPLES / "embeddings.npz", metadata=EXAMPLES / "embeddings.csv")
    utt = es.meta["utt_id"].to_numpy().astype(str)
    attributes = ["sex"] if example == "predictions_scores.csv" else ["sex", "age_group"]
    joined = vm.join_predictions(EXAMPLES / example, utt, attributes)
    assert set(joined) == set(attributes)
    labels = {a: es.meta[a].to_numpy().astype(str) for a in attributes}
    result = vm.sbls(labels, joined, min_group_size=1)
    assert 0.0 <= result.sbls <= 1.0


def test_manifest_example_reads():
    manifest = read_manifest(EXAMPLES / "manifest.csv")
    assert manifest["system"].tolist().count("original") == 4
    assert manifest["utt_id"].is_unique


# ---------------------------------------------------------------- worked examples of the Methods


def _page(path: str) -> str:
    return (DOCS / path).read_text(encoding="utf-8")


def test_methods_4x4_example_numbers_are_the_library_numbers():
    sm = vm.threat.paper_matrix()
    page = _page("methods/eer-cllr.md")
    assert vm.eer(sm.tar, sm.non) == 0.5 and "the EER is **0.50** exactly" in page
    assert vm.eer_rocch(sm.tar, sm.non) == pytest.approx(0.375) and "**0.375**" in page
    assert vm.linkability(sm.scores, sm.targets) == 1.0 and "**linkability is 1.0**" in page


def test_methods_lid_example_is_the_library_number():
    from voxmetrics.metrics.lid import LIDCalibration

    cal = LIDCalibration(w=1.5, b=-1.0, prior_log_odds=np.log(1 / 5), n_pairs=0)
    result = vm.lid([[0.9, 0.7, 0.4, 1.1, 1.2, 0.4]], [3], cal)
    assert f"{result.lid[0]:.3f}" == "0.900"
    assert r"\(\mathrm{LID} = \log_2(6 \times 0.31) = 0.900\)" in _page("methods/lid.md")


def test_methods_zebra_example_is_the_library_number():
    z = vm.zebra([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    assert (f"{z.d_ece:.4f}", f"{z.log10_l:.3f}", z.tag) == ("0.7213", "0.602", "A")
    page = _page("methods/zebra.md")
    assert "0.7213" in page and r"\log_{10} 4 = 0.602\), tag A" in page


def test_methods_similarity_example_is_the_library_number():
    m_oo = [[0.9, 0.2, 0.1], [0.2, 0.8, 0.3], [0.1, 0.3, 0.85]]
    m_oa = [[0.6, 0.3, 0.2], [0.3, 0.5, 0.35], [0.2, 0.35, 0.55]]
    m_aa = [[0.7, 0.4, 0.3], [0.4, 0.65, 0.45], [0.3, 0.45, 0.7]]
    v = vm.voice_distinctiveness(m_oo, m_oa, m_aa)
    page = _page("methods/similarity.md")
    assert f"{v.deid:.6f}" in page and f"{v.g_vd:.6f}" in page


def test_methods_sbls_weights_are_the_library_defaults():
    page = _page("methods/soft-biometric-leakage.md")
    assert tuple(vm.DEFAULT_WEIGHTS) == (0.4, 0.4, 0.2) and "(0.4, 0.4, 0.2)" in page
    assert vm.DEFAULT_LAMBDA == 0.7 and "default 0.7" in page
    assert vm.DEFAULT_MIN_GROUP_SIZE == 30 and "(default 30" in page


def test_report_card_page_has_the_library_thresholds():
    from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS as T
    from voxmetrics.evaluation.threat import (
        CALLOUT_EER,
        CALLOUT_LID_MAX,
        CALLOUT_LINKABILITY_FACTOR,
    )

    rows = {
        line.split("|")[1].strip(): line
        for line in _page("methods/report-card.md").splitlines()
        if line.startswith("| ")
    }
    link = "Linkability / chance 1/*N* (lower is safer)"
    expected = {
        "EER (higher is safer)": ("eer", "≥ {c:.2f}", "< {r:.2f}"),
        "LIDmax, bits (lower is safer)": ("lid_max", "< {c:g}", "≥ {r:g}"),
        link: ("linkability_ratio", "≤ {c:g}×", "> {r:g}×"),
        "SBLS (higher is safer)": ("sbls", "≥ {c:g}", "< {r:g}"),
    }
    for label, (key, ok, risk) in expected.items():
        t = T[key]
        assert ok.format(c=t.caution) in rows[label], label
        assert risk.format(r=t.risk) in rows[label], label
    callout = "EER ≥ {:g} **and** (LIDmax ≥ {:g} bit **or** linkability above twice chance)"
    assert CALLOUT_LINKABILITY_FACTOR == 2.0
    assert callout.format(CALLOUT_EER, CALLOUT_LID_MAX) in _page("methods/report-card.md")


def test_input_limits_page_names_every_limit():
    from dataclasses import fields

    from voxmetrics.limits import Limits

    page = _page("user-guide/input-limits.md")
    missing = [f.name for f in fields(Limits) if f"`{f.name}`" not in page]
    assert not missing, f"docs/user-guide/input-limits.md lacks {missing}"
