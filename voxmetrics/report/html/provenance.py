"""The Provenance section: what the numbers came from, and how to check them.

The JSON's ``provenance`` block (:func:`voxmetrics.report.study.report_provenance`): the versions
of VoxMetrics and of the libraries that shape its numbers (beside those that wrote the study
file), the sha256 of every input file, the settings, seed and options, and each condition's
attacker and recipe with its data digest; then the command that re-checks a report against
its study file.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from voxmetrics._types import MISSING
from voxmetrics.report.html.blocks import esc, section

__all__ = ["provenance_section"]

_STUDY_FILE = "study file"
"""The role of the ``.vxm`` file among the recorded inputs."""


def _text(value: Any) -> str:
    """A recorded value in words: None as "–", a mapping as ``key: value; ...``."""
    if value is None:
        return MISSING
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_text(v)}" for k, v in value.items()) or MISSING
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value) or MISSING
    return str(value)


def _versions(p: Mapping[str, Any]) -> str:
    saved = dict(p.get("study_saved_by") or {})
    libraries = {"voxmetrics": p.get("voxmetrics"), **dict(p.get("libraries") or {})}
    rows = "".join(
        f"<tr><td>{esc(name)}</td><td>{esc(v or 'not installed')}</td>"
        f"<td>{esc(saved.get(name) or MISSING) if saved else MISSING}</td></tr>"
        for name, v in libraries.items()
    )
    return (
        '<div class="table-wrap"><table class="provenance"><thead><tr><th>Package</th>'
        "<th>Version (this report)</th><th>Version (wrote the study file)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def _inputs(p: Mapping[str, Any]) -> str:
    inputs = list(p.get("inputs") or [])
    if not inputs:
        return (
            "<p>No input file recorded: the study was built in memory (e.g. the demo, or a "
            "study assembled in Python), so its data digests below are the fingerprint.</p>"
        )
    rows = "".join(
        f"<tr><td>{esc(f.get('role') or MISSING)}</td><td class='path'>{esc(f.get('path'))}</td>"
        f"<td class='num'>{int(f.get('size') or 0):,}</td>"
        f"<td class='hash'><code>{esc(f.get('sha256'))}</code></td></tr>"
        for f in inputs
    )
    return (
        '<div class="table-wrap"><table class="provenance"><thead><tr><th>Role</th><th>Path</th>'
        f"<th>Size (bytes)</th><th>sha256</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _digest(value: str | None) -> str:
    """A condition's data digest, each of its parts cut to 12 hex digits (whole in the title)."""
    if not value:
        return MISSING
    short = ":".join(p if len(p) <= 12 else f"{p[:12]}…" for p in str(value).split(":"))
    return f'<code title="{esc(value)}">{esc(short)}</code>'


def _conditions(p: Mapping[str, Any]) -> str:
    attackers: Mapping[str, Any] = p.get("attackers") or {}
    data: Mapping[str, Any] = p.get("data") or {}
    rows = []
    for name in dict.fromkeys([*attackers, *data]):
        rec = dict(attackers.get(name) or {})
        attacker, kind = rec.pop("attacker", None), rec.pop("score_kind", None)
        rows.append(
            f"<tr><td>{esc(name)}</td><td>{esc(_text(attacker))}</td><td>{esc(_text(kind))}</td>"
            f"<td>{esc(_text(rec) if rec else MISSING)}</td><td>{_digest(data.get(name))}</td></tr>"
        )
    return (
        '<div class="table-wrap"><table class="provenance"><thead><tr><th>Condition</th>'
        "<th>Attacker</th><th>Scores</th><th>Recipe</th><th>Data digest (sha256)</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _check(p: Mapping[str, Any], json_name: str) -> str:
    study = next(
        (f.get("path") for f in p.get("inputs") or [] if f.get("role") == _STUDY_FILE), None
    )
    command = (
        f"python -m voxmetrics report {shlex.quote(study or 'STUDY.vxm')} "
        f"--verify {shlex.quote(json_name)}"
    )
    where = (
        'the study file this report read (the input of role "study file" above)'
        if study
        else "the study saved as a .vxm file (this report read none: its data digests above "
        "say whether a study file holds the same data)"
    )
    return (
        "<h3>How to check it</h3>"
        f"<pre class='command'><code>{esc(command)}</code></pre>"
        f"<p>The study file is {esc(where)}; {esc(json_name)} is this report's JSON (the "
        "<a href='#data'>Data</a> section's download, or what <code>report --json</code> "
        "wrote). The command checks, one line "
        "each: that the study file is the one this report read (its sha256), that the recorded "
        "input files are unchanged where they are found, that each condition's data is the "
        "data evaluated (its digest), which library versions differ from those above, and that "
        "every number computed again with the recorded settings, seed and options is the same. "
        "Exit status 0 when every check holds, 1 when one fails.</p>"
    )


def provenance_section(provenance: Mapping[str, Any], *, json_name: str = "REPORT.json") -> str:
    """Versions, input fingerprints, settings, seed, attackers; how to verify (``--verify``)."""
    p = provenance
    if not p:
        return section("provenance", "<p>This report records no provenance.</p>")
    settings = dict(p.get("settings") or {})
    options = {k: v for k, v in dict(p.get("options") or {}).items()}
    meta = "".join(
        f"<dt>{esc(k)}</dt><dd>{esc(_text(v))}</dd>"
        for k, v in (
            ("Seed", p.get("seed")),
            ("Settings", settings),
            ("Options", options),
        )
    )
    return section(
        "provenance",
        "<p>What the numbers of this report came from, as its JSON records it (its "
        "<code>provenance</code> block): the versions that computed them, the fingerprint "
        "(sha256) of every input file, the settings, the seed and each condition's attacker. "
        "The same inputs, versions and settings give the same numbers; the command below "
        "computes them again and compares every one.</p>"
        f'<dl class="meta">{meta}</dl>'
        "<h3>Versions</h3>" + _versions(p) + "<h3>Input files</h3>" + _inputs(p)
        + "<h3>Conditions: attacker, recipe, data</h3>"
        "<p class='note'>Scores: what the condition's scores are (similarity, distance or "
        "LLR). Data digest: the content digest of its score matrices (eval, dev) and "
        "embeddings as evaluated (- when it has none), each part cut to 12 hex digits here "
        "(whole in the JSON and in the cell's tooltip).</p>"
        + _conditions(p) + _check(p, json_name),
    )  # fmt: skip
