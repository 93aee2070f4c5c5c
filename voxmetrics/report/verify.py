"""Re-check a study report against its inputs: ``voxmetrics report STUDY.vxm --verify R.json``.

What this is: :func:`verify_report` reads the provenance a report's JSON records (the
:func:`~voxmetrics.report.study.report_provenance` block) and checks, one line each, that the
study file is the one the report read (its sha256), that the files the study was built from are
unchanged where they are found, that each condition's data is the data evaluated (content
digests), which library versions differ from the report's, and finally that the report computed
again from the study with the recorded settings, seed and options gives the same numbers. What
this is not: a reader or a report writer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from voxmetrics.data.provenance import InputFile, file_sha256, library_versions
from voxmetrics.data.study import Study, StudySettings
from voxmetrics.data.studyfile import load_study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.report.html import json_safe
from voxmetrics.report.study import build_study_report

__all__ = ["STUDY_FILE_ROLE", "Check", "Verification", "verify_report"]

STUDY_FILE_ROLE = "study file"
"""The role of the ``.vxm`` file among a report's recorded inputs."""
_NOT_NUMBERS = ("created", "provenance")
"""Keys of the report's JSON that are not its numbers (they change with every run)."""
_MAX_DIFFERENCES = 10


@dataclass(frozen=True)
class Check:
    """One line of a verification."""

    what: str
    """What was checked."""
    ok: bool
    """Whether it holds (a note that does not fail the verification is ok)."""
    detail: str = ""
    """What was found."""

    def line(self) -> str:
        """``ok: what (detail)`` or ``FAILED: what (detail)``."""
        head = "ok" if self.ok else "FAILED"
        return f"{head}: {self.what}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Verification:
    """Every check of :func:`verify_report`, in order."""

    checks: tuple[Check, ...]
    """The checks."""

    @property
    def ok(self) -> bool:
        """Whether every check holds."""
        return all(c.ok for c in self.checks)

    def lines(self) -> list[str]:
        """One line per check."""
        return [c.line() for c in self.checks]


def _differences(a: Any, b: Any, path: str = "") -> Iterator[str]:
    """The paths where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            where = f"{path}.{k}" if path else str(k)
            if k not in a or k not in b:
                yield f"{where} (only in {'the report' if k in a else 'the recomputed one'})"
            else:
                yield from _differences(a[k], b[k], where)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, f"{path}[{k}]")
    elif a != b:
        yield f"{path}: {a!r:.40} in the report, {b!r:.40} recomputed"


def _input_checks(
    provenance: Mapping[str, Any], study_path: Path, base: Path | None
) -> list[Check]:
    """The study file's fingerprint and the fingerprints of the files it was built from."""
    recorded = [InputFile.from_dict(f) for f in provenance.get("inputs") or ()]
    own = [f for f in recorded if f.role == STUDY_FILE_ROLE]
    sha = file_sha256(study_path)
    checks = []
    if own:
        same = any(f.sha256 == sha for f in own)
        checks.append(
            Check(
                f"the study file {study_path.name} is the one the report read",
                same,
                "sha256 matches"
                if same
                else f"sha256 {sha[:12]}… is not the recorded {own[0].sha256[:12]}…",
            )
        )
    else:
        checks.append(Check("the study file", True, "the report records no study file"))
    for f in recorded:
        if f.role == STUDY_FILE_ROLE:
            continue
        why = f.check(base)
        missing = why is not None and why.endswith("not found")
        checks.append(
            Check(
                f"input {f.path} ({f.role})" if f.role else f"input {f.path}",
                why is None or missing,
                "unchanged" if why is None else ("not found here: not checked" if missing else why),
            )
        )
    return checks


def _data_checks(provenance: Mapping[str, Any], study: Study) -> list[Check]:
    """Each condition's content digest against the recorded one."""
    data = provenance.get("data") or {}
    checks = []
    for name, digest in data.items():
        if name not in study.names:
            checks.append(Check(f"condition {name!r}", False, "not in the study file"))
            continue
        same = study.get(name).content_hash == digest
        checks.append(
            Check(f"the data of {name!r}", same, "as evaluated" if same else "it changed")
        )
    extra = [n for n in study.names if n not in data]
    if data and extra:
        checks.append(Check("the study's conditions", False, f"not in the report: {extra}"))
    return checks


def _version_checks(provenance: Mapping[str, Any]) -> list[Check]:
    """Which versions differ from the report's (notes: the recomputation decides)."""
    now = library_versions()
    then = {"voxmetrics": provenance.get("voxmetrics"), **(provenance.get("libraries") or {})}
    differ = [f"{k} {then[k]} -> {now.get(k)}" for k in then if then[k] != now.get(k)]
    return [
        Check(
            "library versions",
            True,
            "the same as the report's" if not differ else "differ: " + ", ".join(differ),
        )
    ]


def verify_report(
    report: Mapping[str, Any] | str | os.PathLike[str],
    study_path: str | os.PathLike[str],
    *,
    base: str | os.PathLike[str] | None = None,
    recompute: bool = True,
) -> Verification:
    """Check a study report's JSON against the study file it was computed from.

    Parameters
    ----------
    report : mapping or path
        The report's JSON (as written by ``voxmetrics report --json``), or its file.
    study_path : path
        The ``.vxm`` file.
    base : path, optional
        Where the relative paths of the study's recorded input files are resolved (default:
        the working folder).
    recompute : bool
        Also compute the report again (recorded settings, seed and options) and compare every
        number.

    Returns
    -------
    Verification
        ``ok`` when the study file is the one recorded, no recorded input that is found has
        changed, each condition's data is the one evaluated and (``recompute``) every number is
        the same. Version differences are listed but decide nothing by themselves.

    Raises
    ------
    VoxMetricsInputError
        A report without provenance (written before VoxMetrics recorded it), or a damaged file.
    """
    if isinstance(report, Mapping):
        data: Any = report
    else:
        try:
            data = json.loads(Path(report).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise VoxMetricsInputError(f"{report}: not a report's JSON ({exc}).") from None
    provenance = data.get("provenance") if isinstance(data, Mapping) else None
    if not isinstance(provenance, Mapping):
        raise VoxMetricsInputError(
            "the report records no provenance (written by an older VoxMetrics): write it again "
            "with `voxmetrics report STUDY.vxm --json OUT` to verify it later."
        )
    path = Path(study_path)
    checks = _input_checks(provenance, path, None if base is None else Path(base))
    study = load_study(path)
    options = dict(provenance.get("options") or {})
    subset = options.pop("subset", None)
    if subset:
        attr, _, value = str(subset).partition("=")
        study = study.subset(attr, value)
    settings = StudySettings.from_dict(dict(provenance.get("settings") or {}))
    study = replace(study, settings=settings)
    checks += _data_checks(provenance, study)
    checks += _version_checks(provenance)
    if recompute:
        by = {"by": options["by"]} if options.get("by") else {}
        again = build_study_report(
            study, original=options.get("original"), reference=options.get("reference"), **by
        )
        fresh = json.loads(json.dumps(json_safe(again.to_dict())))
        given = {k: v for k, v in data.items() if k not in _NOT_NUMBERS}
        fresh = {k: v for k, v in fresh.items() if k not in _NOT_NUMBERS}
        diffs = list(_differences(given, fresh))
        shown = "; ".join(diffs[:_MAX_DIFFERENCES])
        more = (
            f" (and {len(diffs) - _MAX_DIFFERENCES} more)" if len(diffs) > _MAX_DIFFERENCES else ""
        )
        checks.append(
            Check(
                "every number, computed again",
                not diffs,
                "the same" if not diffs else f"{len(diffs)} differ: {shown}{more}",
            )
        )
    return Verification(tuple(checks))
