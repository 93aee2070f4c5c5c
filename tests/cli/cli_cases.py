"""Shared helpers of the command line's tests: run ``voxmetrics`` in-process, VPC-style files."""

from __future__ import annotations

from pathlib import Path

import kaldiio
import numpy as np
import pandas as pd

from voxmetrics.cli import main


def run(argv, capsys) -> tuple[int, str, str]:
    """``voxmetrics ARGV`` in this process: its exit status, stdout and stderr.

    What was printed before (e.g. by a fixture) is dropped; a traceback on stderr fails the test.
    """
    capsys.readouterr()
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return status, out, err


def kaldi_files(sm, folder: Path, stem: str, *, negate: bool = False) -> tuple[Path, Path]:
    """A VPC scores file (enrol_id trial_id score) and its key (enrol_id trial_id target)."""
    rows, key = [], []
    for i, tid in enumerate(sm.trial_ids):
        for j, spk in enumerate(sm.enrol_speakers):
            s = -sm.scores[i, j] if negate else sm.scores[i, j]
            rows.append(f"{spk} {tid} {float(s)!r}")
            target = "target" if spk == sm.trial_speakers[i] else "nontarget"
            key.append(f"{spk} {tid} {target}")
    scores, trials = folder / f"{stem}.scores", folder / f"{stem}.trials"
    scores.write_text("\n".join(rows) + "\n")
    trials.write_text("\n".join(key) + "\n")
    return scores, trials


def vpc_xvectors(tmp_path: Path, demo):
    """The demo's plain embeddings as a VPC x-vector ark + scp, with a two-system metadata."""
    es = demo.get("plain").embeddings
    ids = es.meta["utt_id"].tolist()
    kaldiio.save_ark(
        str(tmp_path / "xvector.ark"),
        {u: es.embeddings[k].astype(np.float32) for k, u in enumerate(ids)},
        scp=str(tmp_path / "xvector.scp"),
    )
    meta = es.meta[["utt_id", "speaker", "role", "split"]]
    both = pd.concat(
        [meta.assign(system="original"), meta.assign(system="b1", utt_id="b1-" + meta.utt_id)]
    )
    both.to_csv(tmp_path / "meta.csv", index=False)
    return es
