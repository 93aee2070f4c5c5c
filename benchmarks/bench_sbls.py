"""Time SBLS, its speaker-level bootstrap (a reweighting) and the Soft biometrics page.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_sbls.py [--n-boot 200] [--ref-boot 50] [--repeat 3]
                                              [--speakers 200] [--per-speaker 50] [--no-page]

1. On the demo study's ``anon-mild`` condition (480 eval utterances, 40 speakers, sex x 3 age
   groups) and on a seeded synthetic attack (``--speakers`` x ``--per-speaker`` utterances,
   soft scores): times training the built-in attacker (demo only), the point estimate
   (``attack_sbls``), ``n_boot`` replicates of ``sbls_replicates`` (the reweighting) and
   ``ref_boot`` replicates of the former bootstrap, SBLS re-run on each resample (its time is
   scaled to ``n_boot``), best of ``repeat``; checks that both give the same replicates.
2. Unless ``--no-page``: the Soft biometrics page through Streamlit's AppTest with its default
   replicates: the first visit of a fresh session (the attackers trained, the intervals
   computed), the warm rerun (everything cached) and a rerun with another bootstrap seed (the
   attackers cached, every interval recomputed).

Ratios are to the point estimate measured in the same run. Not a test: pytest does not collect
it (no ``test_`` prefix, work under ``__main__``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]


def best_time(fn, repeat: int) -> tuple[object, float]:
    """(result of the last call, best wall time in seconds over ``repeat`` calls)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def rerun_replicates(attack, options, draws):
    """The former bootstrap: SBLS recomputed on each replicate's resampled utterances."""
    from voxmetrics.analysis.sbls import COMPONENTS
    from voxmetrics.data.predictions import AttributePrediction
    from voxmetrics.errors import VoxMetricsInputError
    from voxmetrics.metrics.sbls import sbls

    def take(p, idx):
        if p.scores is not None:
            return AttributePrediction(p.classes, scores=p.scores[idx])
        return AttributePrediction(p.classes, predicted=p.predicted[idx])

    inv = draws.index(attack.speakers)
    rows_of = [np.flatnonzero(inv == j) for j in range(draws.speakers.size)]
    out = {k: np.empty(draws.n_boot) for k in COMPONENTS}
    for b in range(draws.n_boot):
        idx = np.concatenate([np.tile(rows_of[j], c) for j, c in enumerate(draws.counts[b]) if c])
        try:
            r = sbls(
                {a: y[idx] for a, y in attack.labels.items()},
                {a: take(p, idx) for a, p in attack.predictions.items()},
                **options.kwargs(),
            )
            values = {k: getattr(r, k) for k in COMPONENTS}
        except VoxMetricsInputError:
            values = dict.fromkeys(COMPONENTS)
        for k, v in values.items():
            out[k][b] = np.nan if v is None else v
    return out


def synthetic_attack(n_spk: int, per_spk: int, seed: int):
    """Speakers of fixed sex and age group; noisy soft scores of a fair attacker."""
    from voxmetrics.analysis.sbls import Attack
    from voxmetrics.data.predictions import AttributePrediction

    rng = np.random.default_rng(seed)
    spk = np.repeat([f"s{i:04d}" for i in range(n_spk)], per_spk)
    who = np.arange(n_spk).repeat(per_spk)
    labels = {
        "sex": rng.choice(["F", "M"], size=n_spk)[who],
        "age_group": rng.choice(["18-35", "36-55", "56+"], size=n_spk)[who],
    }
    predictions = {}
    for a, y in labels.items():
        classes = tuple(sorted(set(y.tolist())))
        logits = (y[:, None] == np.array(classes)).astype(float) + rng.normal(
            0, 1.2, size=(y.size, len(classes))
        )
        p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        predictions[a] = AttributePrediction(classes, scores=p)
    return Attack(labels, predictions, spk, np.arange(spk.size).astype(str), "synthetic", "syn")


def bench_attack(name, attack, args, train_s=None):
    from voxmetrics.analysis.sbls import COMPONENTS, SBLSOptions, attack_sbls, sbls_replicates
    from voxmetrics.metrics.uncertainty import SpeakerDraws

    options = SBLSOptions()
    draws = SpeakerDraws.draw(attack.speakers, n_boot=args.n_boot, seed=0)
    ref_draws = SpeakerDraws(draws.speakers, draws.counts[: args.ref_boot], 0)
    _, point = best_time(lambda: attack_sbls(attack, options), args.repeat)
    fast, boot = best_time(lambda: sbls_replicates(attack, options, draws), args.repeat)
    slow, ref = best_time(lambda: rerun_replicates(attack, options, ref_draws), 1)
    diff = max(float(np.nanmax(np.abs(fast[k][: args.ref_boot] - slow[k]))) for k in COMPONENTS)
    ref_scaled = ref * args.n_boot / args.ref_boot
    n_spk = np.unique(attack.speakers).size
    print(f"\n{name}: {attack.n:,} utterances, {n_spk:,} speakers")
    if train_s is not None:
        print(f"  train the built-in attacker      {train_s * 1e3:10.1f} ms")
    print(f"  point estimate (attack_sbls)     {point * 1e3:10.1f} ms")
    print(
        f"  bootstrap, {args.n_boot} replicates (reweighting) {boot * 1e3:8.1f} ms"
        f"   = {boot / point:.2f}x the point estimate"
        + (f", {boot / (train_s + point):.2f}x with the training" if train_s else "")
    )
    print(
        f"  bootstrap, re-run per replicate  {ref_scaled * 1e3:10.1f} ms (measured on "
        f"{args.ref_boot}, scaled to {args.n_boot})   = {ref_scaled / boot:.1f}x the reweighting"
    )
    print(f"  max |reweighting - re-run| over {args.ref_boot} replicates: {diff:.1e}")


def bench_page(args) -> None:
    from streamlit.testing.v1 import AppTest

    from voxmetrics.ui.computing import clear_caches

    app = str(REPO_ROOT / "app.py")
    page = "pages/7_Soft_biometrics.py"
    clear_caches()
    at = AppTest.from_file(app, default_timeout=600)
    at.run()
    start = time.perf_counter()
    at.switch_page(page).run()
    first = time.perf_counter() - start
    assert not at.exception, at.exception
    n_boot = at.session_state["vm_sbls_boot"]
    warm = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        at.run()
        warm.append(time.perf_counter() - start)
    seeds = []
    for seed in range(1, args.repeat + 1):
        at.session_state["vm_sbls_seed"] = seed
        start = time.perf_counter()
        at.run()
        seeds.append(time.perf_counter() - start)
    assert not at.exception, at.exception
    print(f"\nSoft biometrics page (AppTest, demo study, {n_boot} replicates by default):")
    print(f"  first visit (attackers trained, intervals computed) {first:6.2f} s")
    print(f"  warm rerun (cached), best of {args.repeat}                  {min(warm):6.2f} s")
    print(f"  new bootstrap seed (intervals of 5 conditions), best {min(seeds):6.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--ref-boot", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--speakers", type=int, default=200)
    parser.add_argument("--per-speaker", type=int, default=50)
    parser.add_argument("--no-page", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO_ROOT))
    os.chdir(REPO_ROOT)
    from voxmetrics.analysis.sbls import embeddings_attack
    from voxmetrics.synth import demo_study

    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    demo = demo_study()
    attack, train = best_time(lambda: embeddings_attack(demo.get("anon-mild")), args.repeat)
    bench_attack("demo anon-mild", attack, args, train_s=train)
    bench_attack("synthetic", synthetic_attack(args.speakers, args.per_speaker, 0), args)
    if not args.no_page:
        bench_page(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
