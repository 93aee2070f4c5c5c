"""What the Linkage page computes per condition, on the demo generator's study of N speakers.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_linkage_page.py [--speakers 1000] [--conditions 1]
                                                      [--no-full] [--no-curves]

For each of the first ``--conditions`` conditions of ``demo_study(n_speakers=N)`` (the study's
settings: 200 bootstrap replicates), in CPU seconds (``time.process_time``, every thread):

- ``full report``: ``evaluate_condition`` (every metric, what the page asked for before) and
  ``linkage report``: ``evaluate_condition(parts=("linkability", "singling_out"))`` (the
  linkage numbers alone, what it asks for now), and whether their linkage numbers are equal
  (``==`` of the JSON values);
- ``eer_curve``: figure 1's 1 - EER row at L = 1 (5 draws per N'), the former implementation
  (the picks' scores pooled and sorted per draw, Floyd's draws compared with every column
  chosen before; copied here) and the current one (the picks' cells counted), and whether
  their values are equal;
- the curves the page draws on request beyond 200 speakers: singling out vs N, the
  conversation length and figure 1 (lengths 1, 3 and the longest the data allow).

The load average is printed before and after. Not a test: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's voxmetrics


def _former_other_candidates(rng, targets, n_enrolled, k):
    t = np.asarray(targets, dtype=np.int64).ravel()
    n = n_enrolled - 1
    if k <= 64:
        chosen = np.empty((t.size, k), dtype=np.int64)
        for i, j in enumerate(range(n - k, n)):
            draw = rng.integers(0, j + 1, size=t.size)
            taken = (chosen[:, :i] == draw[:, None]).any(axis=1)
            chosen[:, i] = np.where(taken, j, draw)
    else:
        chosen = np.argpartition(rng.random((t.size, n)), k - 1, axis=1)[:, :k]
    return chosen + (chosen >= t[:, None])


def _former_eer_curve(s, t, grid, n_draws=5, seed=0):
    """The former ``eer_curve``: every draw's picked scores pooled and sorted."""
    from voxmetrics.metrics.eer import eer_rocch
    from voxmetrics.metrics.ranks import row_blocks

    n_enrolled = s.shape[1]
    rows_all = np.arange(s.shape[0])
    tar = s[rows_all, t]
    rng = np.random.default_rng(seed)
    means = []
    for m in np.unique(grid):
        if m == n_enrolled:
            mask = np.ones(s.shape, dtype=bool)
            mask[rows_all, t] = False
            means.append(eer_rocch(tar, s[mask]))
            continue
        values = []
        for _ in range(n_draws):
            non = []
            for rows in row_blocks(*s.shape):
                picked = _former_other_candidates(rng, t[rows], n_enrolled, int(m) - 1)
                non.append(np.take_along_axis(s[rows], picked, axis=1).ravel())
            values.append(eer_rocch(tar, np.concatenate(non)))
        means.append(float(np.mean(values)))
    return means


def _cpu(fn, *args, **kwargs):
    c = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - c, out


def main() -> None:
    """Time each step on the first conditions of the demo study."""
    from voxmetrics.analysis import linkage
    from voxmetrics.evaluation import evaluate_condition
    from voxmetrics.metrics.legal import (
        average_consecutive,
        eer_curve,
        linkability_grid,
        speaker_profiles,
    )
    from voxmetrics.synth import demo_study

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--speakers", type=int, default=1000)
    parser.add_argument("--conditions", type=int, default=1)
    parser.add_argument("--no-full", action="store_true", help="skip the full report")
    parser.add_argument("--no-curves", action="store_true", help="skip the on-request curves")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    study = demo_study(n_speakers=args.speakers)
    options = study.settings.evaluate_options()
    for cond in study.conditions[: args.conditions]:
        es = cond.embeddings
        print(f"{cond.name} ({args.speakers} speakers), CPU s:", flush=True)
        c_link, ours = _cpu(
            evaluate_condition, cond, parts=("linkability", "singling_out"), **options
        )
        if not args.no_full:
            c_full, full = _cpu(evaluate_condition, cond, **options)
            a, b = ours.to_dict(), full.to_dict()
            keys = ("eer", "linkability", "linkability_vs_n", "singling_out")
            same = all(a[k] == b[k] for k in keys) and all(
                a["intervals"][k] == b["intervals"].get(k) for k in a["intervals"]
            )
            print(f"  full report {c_full:8.2f}   linkage report {c_link:6.2f}   equal {same}")
        else:
            print(f"  linkage report {c_link:6.2f}")
        enrol, trial = es.roles("eval")
        spk = es.meta["speaker"].to_numpy().astype(str)
        labels, profiles = speaker_profiles(es.embeddings[enrol], spk[enrol])
        t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], 1)
        ok = np.isin(t_spk, labels)
        s, t = t_emb[ok] @ profiles.T, np.searchsorted(labels, t_spk[ok])
        grid = linkability_grid(s.shape[1])
        c_new, new = _cpu(eer_curve, s, t)
        c_old, old = _cpu(_former_eer_curve, s, t, grid)
        print(
            f"  eer_curve L=1 {s.shape[0]:,} x {s.shape[1]:,}: former {c_old:6.2f}   "
            f"now {c_new:6.2f}   equal {new.eer.tolist() == old}"
        )
        if args.no_curves:
            continue
        c_vs_n, _ = _cpu(linkage.singling_out_vs_n, es)
        lengths = linkage.conversation_lengths(es)
        c_conv, _ = _cpu(linkage.conversation_curve, es, lengths)
        legal_lengths = linkage.default_lengths([es])
        c_legal, _ = _cpu(linkage.legal, es, legal_lengths)
        print(
            f"  on request: singling out vs N {c_vs_n:6.2f}   conversation length "
            f"{lengths} {c_conv:6.2f}   figure 1 L={legal_lengths} {c_legal:6.2f}",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
