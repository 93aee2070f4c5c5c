"""The results summaries of the VoicePrivacy challenges' ``run_evaluation.py`` (2024 and 2026).

``save_result_summary`` of ``run_evaluation.py`` prints each table with pandas' ``to_string``
under a ``---- <section> ----`` heading: ``SER results`` (UAR and per-emotion accuracy, the
mean over folds: a second header row says ``mean``), ``ASV_eval results`` and
``ASV_eval^anon results`` (EER per dataset, split, gender, enrolment and trial data) and
``ASR results`` (WER). A published ``result_for_rank_<system>`` file is the two summaries of a
system one after the other; the 2026 track 2 file adds one ``ASV_eval^anon`` section per
language, printed without the index column.

The rows an ``ASV_eval`` section keeps differ between the editions: 2024 prints the original
speech's EERs (``original`` enrolment and trials, per gender ``f`` / ``m``), 2026 prints the
lazy-informed attacker's (``anon`` enrolment and trials, one ``mixed`` list per dataset).
:func:`summary_scenario` names the scenario of a row from its columns, whatever the edition.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import read_file_bytes

__all__ = ["SECTIONS", "read_results_summary", "summary_scenario", "utility_from_summary"]

SECTIONS = {
    "SER results": "ser",
    "ASV_eval results": "asv",
    "ASV_eval^anon results": "asv_anon",
    "ASR results": "asr",
}
"""The sections of a results summary, and the key of their table."""

_TEXT_COLUMNS = ("dataset", "split", "gender", "enrollment", "trial", "ser", "asr", "fold")
_AGGREGATES = {"mean", "min", "max", "std"}


def _table(lines: list[str], where: str) -> pd.DataFrame:
    """One table printed by pandas' ``to_string``, with or without its index column.

    A second header row of aggregate names such as ``mean`` is dropped.
    """
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return pd.DataFrame()
    header = lines[0].split()
    body = lines[1:]
    if body and set(body[0].split()) <= _AGGREGATES:
        body = body[1:]
    rows = []
    for ln in body:
        fields = ln.split()
        if len(fields) == len(header) + 1:  # index=True: the index comes first
            rows.append(fields[1:])
        elif len(fields) == len(header):  # index=False (2026 track 2's per-language tables)
            rows.append(fields)
        else:
            raise VoxMetricsInputError(
                f"{where}: the row '{ln.strip()}' has {len(fields)} field(s) for the "
                f"{len(header)} columns {', '.join(header)}; keep the table as the challenge's "
                "scripts print it."
            )
    df = pd.DataFrame(rows, columns=header)
    for c in df.columns:
        if c in _TEXT_COLUMNS:
            continue
        values = pd.to_numeric(df[c], errors="coerce")
        if values.isna().any():
            raise VoxMetricsInputError(
                f"{where}: column {c} holds '{df[c][values.isna()].iloc[0]}', not a number."
            )
        df[c] = values
    return df


def read_results_summary(path: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of a results summary of the challenge's ``run_evaluation.py``.

    ``results_orig.txt``, ``results_anon.txt`` or a published ``result_for_rank_*`` file, which
    holds both (2024 and 2026, tables printed with or without their index column).

    Parameters
    ----------
    path : str or Path
        The summary the challenge's ``run_evaluation.py`` wrote.

    Returns
    -------
    dict of str to DataFrame
        ``"ser"`` (dataset, split, ser, UAR, ACC_<emotion>), ``"asv"`` and ``"asv_anon"``
        (dataset, split, gender, enrollment, trial, EER), ``"asr"`` (dataset, split, asr, WER);
        numbers in percent, as printed. A section printed several times is one table.

    Raises
    ------
    VoxMetricsInputError
        An unknown section, a malformed row or a non-numeric value.
    """
    p = Path(path)
    data = read_file_bytes(p, str(p))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise VoxMetricsInputError(f"{p}: is not UTF-8 text; a results summary is text.") from None
    sections: dict[str, list[pd.DataFrame]] = {}
    current: str | None = None
    block: list[str] = []

    def close() -> None:
        if current is not None:
            table = _table(block, f"{p.name}, section '{current}'")
            sections.setdefault(SECTIONS[current], []).append(table)

    for line in text.splitlines():
        m = re.fullmatch(r"\s*----\s*(.*?)\s*----\s*", line)
        if m:
            close()
            block = []
            title = m.group(1)
            if title.startswith("Time:"):
                current = None
                continue
            if title not in SECTIONS:
                raise VoxMetricsInputError(
                    f"{p}: unknown section '---- {title} ----'; a VoicePrivacy results "
                    f"summary has the sections {', '.join(SECTIONS)}."
                )
            current = title
        elif current is not None:
            block.append(line)
        elif line.strip():
            raise VoxMetricsInputError(
                f"{p}: the line '{line.strip()[:60]}' is outside any section; a results "
                "summary is made of '---- <section> ----' headings followed by tables."
            )
    close()
    if not sections:
        raise VoxMetricsInputError(
            f"{p}: no section found; a VoicePrivacy results summary has the sections "
            f"{', '.join(SECTIONS)}."
        )
    return {k: pd.concat(v, ignore_index=True) for k, v in sections.items()}


def summary_scenario(section: str, enrollment: str, trial: str) -> str | None:
    """The attacker scenario of an ASV row of a results summary, None when it is none.

    ``section`` is ``"asv"`` (the original ASV model, ``ASV_eval``) or ``"asv_anon"`` (the
    model retrained on anonymised speech, ``ASV_eval^anon``).

    Examples
    --------
    >>> summary_scenario("asv", "original", "original"), summary_scenario("asv", "anon", "anon")
    ('original', 'lazy-informed')
    >>> summary_scenario("asv_anon", "anon", "anon"), summary_scenario("asv_anon", "original", "x")
    ('semi-informed', None)
    """
    pair = (str(enrollment), str(trial))
    if section == "asv":
        return {
            ("original", "original"): "original",
            ("original", "anon"): "ignorant",
            ("anon", "anon"): "lazy-informed",
        }.get(pair)
    if section == "asv_anon" and pair == ("anon", "anon"):
        return "semi-informed"
    return None


def fraction(values: pd.Series, what: str, where: str, *, bounded: bool) -> pd.Series:
    """Percent -> fraction, refusing negative values (and over 100 % when ``bounded``)."""
    v = values.astype(float)
    if (v < 0).any() or (bounded and (v > 100).any()):
        bad = float(v[(v < 0) | ((v > 100) if bounded else False)].iloc[0])
        raise VoxMetricsInputError(
            f"{where}: {what} is {bad:g} %, outside 0-100 %; the summary must hold percentages "
            "as the challenge's scripts print them."
        )
    return (v / 100.0).round(12)  # percent / 100 without binary noise (2.9 -> 0.029)


def _pick(df: pd.DataFrame, column: str, value: str) -> tuple[pd.DataFrame, str]:
    """The rows of ``column == value`` of the test split (the dev split when there is none)."""
    rows = df[df[column].astype(str) == value]
    for split in ("test", "dev"):
        chosen = rows[rows["split"].astype(str) == split]
        if len(chosen):
            return chosen, split
    return rows.iloc[:0], ""


def utility_from_summary(
    tables: dict[str, pd.DataFrame], *, anonymised: bool, source: str
) -> Utility | None:
    """The utility of the anonymised (or the original) speech in a results summary.

    The test split's WER (ASR rows ``asr = anon`` or ``original``, the mean over datasets:
    LibriSpeech, or 2026 track 2's four languages) and UAR with per-emotion accuracy (SER rows
    ``ser = anon`` or ``original``), percent / 100; the dev split's when the summary has no test
    rows. None when the summary has neither. The UAR is the challenge's: the mean of its
    per-fold UARs (``uar_method = "fold_mean"``), as its SER evaluation prints it.

    Raises
    ------
    VoxMetricsInputError
        A UAR or accuracy outside 0-100 %, or a negative WER.
    """
    which = "anon" if anonymised else "original"
    wer = uar = None
    per_class: dict[str, float] = {}
    notes = []
    if "asr" in tables and {"split", "asr", "WER"} <= set(tables["asr"].columns):
        rows, split = _pick(tables["asr"], "asr", which)
        if len(rows):
            wer = float(fraction(rows["WER"], "a WER", source, bounded=False).mean())
            datasets = rows["dataset"].nunique() if "dataset" in rows.columns else 1
            notes.append(
                f"WER: {split}" + (f", mean of {datasets} datasets" if datasets > 1 else "")
            )
    if "ser" in tables and {"split", "ser", "UAR"} <= set(tables["ser"].columns):
        rows, split = _pick(tables["ser"], "ser", which)
        if len(rows):
            uar = float(fraction(rows["UAR"], "a UAR", source, bounded=True).mean())
            for c in rows.columns:
                if c.startswith("ACC_"):
                    acc = fraction(rows[c], f"the accuracy {c}", source, bounded=True)
                    per_class[c[4:]] = float(acc.mean())
            notes.append(f"UAR: {split}")
    if wer is None and uar is None:
        return None
    return Utility(
        wer=wer,
        uar=uar,
        per_class=per_class,
        source=f"{source} ({', '.join(notes)} split)",
        uar_method="fold_mean" if uar is not None else "",
    )
