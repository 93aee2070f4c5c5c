"""Long score tables (voxmetrics.data.readers.long): one row per listed pair, CSV or Parquet."""

from __future__ import annotations

import pytest

from voxmetrics.data import read_scores
from voxmetrics.errors import VoxMetricsInputError


def test_sparse_csv_keeps_refusing_duplicates_and_nan():
    text = "trial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.9\nt1,a,b,0.1\nt2,b,b,0.8\n"
    sm = read_scores(text.encode(), name="s.csv")
    assert sm.mask.tolist() == [[True, True], [False, True]]
    with pytest.raises(VoxMetricsInputError, match=r"duplicate"):
        read_scores((text + "t2,b,b,0.7\n").encode(), name="s.csv")
    with pytest.raises(VoxMetricsInputError, match=r"line 4.*missing or NaN"):
        read_scores(text.replace("0.8", "nan").encode(), name="s.csv")
    only_mated = "trial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.9\nt2,b,b,0.8\n"
    with pytest.raises(VoxMetricsInputError, match=r"s\.csv: no non-mated pair is listed"):
        read_scores(only_mated.encode(), name="s.csv")
