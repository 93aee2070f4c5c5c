"""Fixtures of the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


@pytest.fixture
def worked_csv(tmp_path: Path) -> Path:
    """The worked example of the EER and Cllr (4 trials x 4 identities) as a long CSV file."""
    # metrics.md section 1 worked example (paper 000, eq. 1), in the long CSV format
    S = [[0.9, 0.8, 0.8, 0.8], [0.7, 0.6, 0.6, 0.6], [0.4, 0.5, 0.4, 0.4], [0.2, 0.2, 0.3, 0.2]]
    spk = ["a", "a", "b", "c"]
    enrol = ["a", "b", "c", "d"]
    rows = [(f"t{i}", spk[i], enrol[j], S[i][j]) for i in range(4) for j in range(4)]
    path = tmp_path / "worked.csv"
    pd.DataFrame(rows, columns=["trial_id", "trial_speaker", "enrol_speaker", "score"]).to_csv(
        path, index=False
    )
    return path
