"""Shared helper of the blockwise tests (test_blockwise.py, test_sources.py)."""

from __future__ import annotations


def comparable(report) -> dict:
    """The whole JSON object of a report (compared with ==: exact, not approximately)."""
    return report.to_dict()
