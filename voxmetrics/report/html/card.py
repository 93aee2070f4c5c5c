"""Under the report card: the rule's notes, the levels that flip, and how firm each level is.

The card's cells carry "≈ chance", "uninformative at N = n" and the flip mark ⇅ in their text;
:func:`card_notes_block` says why, one line per cell, with each cell's share of the
speaker-bootstrap replicates keeping its level (the JSON's ``report_card`` ``note``,
``stability``, ``n_replicates`` and ``flips``).
"""

from __future__ import annotations

from voxmetrics._types import MISSING
from voxmetrics.evaluation.card import FLIP_MARK, FLIP_SHARE, REPORT_CARD_THRESHOLDS, ReportCard
from voxmetrics.report.html.blocks import esc

__all__ = ["card_notes_block"]

_FLIP = f"{FLIP_SHARE * 100:.0f} %"
"""The flip threshold in words (80 %)."""


def _rule_notes(card: ReportCard) -> str:
    notes = [
        f"<li><b>{esc(name)}</b>, {esc(label)}: {esc(note)}</li>"
        for name, label, note in card.notes()
    ]
    flips = [
        f"<li><b>{esc(name)}</b>, {esc(label)}: {FLIP_MARK} the level ({esc(cell.level)}) holds "
        f"in {cell.stability:.1%} of {cell.n_replicates} replicates (below {_FLIP})</li>"
        for name, label, cell in card.flipping()
        if cell.stability is not None
    ]
    body = (
        f"<ul class='card-notes'>{''.join(notes)}</ul>"
        if notes
        else "<p>Every level is read off its thresholds: no cell is at chance or "
        "uninformative at its N.</p>"
    )
    if flips:
        body += f"<p>Levels that flip often:</p><ul class='card-notes'>{''.join(flips)}</ul>"
    elif any(c.stability is not None for row in card.cells for c in row):
        body += (
            f"<p>No level flips: every cell with replicates keeps its level in at least "
            f"{_FLIP} of them.</p>"
        )
    return body


def _stability_table(card: ReportCard) -> str:
    """Each cell's share of replicates keeping its level ("–" without one), flips marked."""
    counts = {c.n_replicates for row in card.cells for c in row if c.stability is not None}
    labels = [t.label for t in REPORT_CARD_THRESHOLDS.values()]
    head = "<th>Condition</th>" + "".join(f"<th>{esc(lab)}</th>" for lab in labels)
    rows = []
    for name, row in zip(card.conditions, card.cells, strict=True):
        cells = [f"<td>{esc(name)}</td>"]
        for c in row:
            if c.stability is None:
                cells.append(f'<td class="num">{MISSING}</td>')
                continue
            of = f" of {c.n_replicates}" if len(counts) > 1 else ""
            mark = f" {FLIP_MARK}" if c.flips else ""
            cls = "num flips" if c.flips else "num"
            cells.append(f'<td class="{cls}">{c.stability:.1%}{of}{mark}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    replicates = f"the {counts.pop()}" if len(counts) == 1 else "each number's"
    return (
        f"<p>The share of {replicates} speaker-bootstrap replicates whose number has the "
        f"cell's level (100 % = the level never changes; below {_FLIP} it flips "
        f"often, {FLIP_MARK}). –: an uninformative or n/a cell (no level to keep), or a number "
        "without replicates (SBLS here; a utility known only as a number is taken as fixed; "
        "utility is resampled over its own speakers).</p>"
        f'<div class="table-wrap"><table class="card-stability"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def card_notes_block(card: ReportCard) -> str:
    """The rule's notes and the flip marks of the card, and each cell's stability share."""
    body = (
        '<div class="block" id="card-notes"><h3>Why some cells read as they do, and which levels '
        'flip</h3><p>One rule for every cell, whatever the metric. "≈ chance": the number\'s '
        '95 % interval is not beyond its chance level. "Uninformative at N = n": with n '
        "enrolled identities the data cannot tell ok from risk (the interval spans both, chance "
        f"itself is unsafe, or even the ceiling is safe): small N, never green. {FLIP_MARK}: the "
        f"level is kept by fewer than {_FLIP} of the speaker-bootstrap replicates.</p>"
        + _rule_notes(card)
    )
    if any(c.stability is not None for row in card.cells for c in row):
        body += "<h3>How firm each level is</h3>" + _stability_table(card)
    else:
        body += (
            "<p class='note'>No bootstrap: nothing says how firm each level is (set the "
            "study's bootstrap replicates above 0).</p>"
        )
    return body + "</div>"
