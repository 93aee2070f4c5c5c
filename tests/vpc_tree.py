"""Small VoicePrivacy 2024 evaluation trees, written by the tests (no download).

The layout is the one the challenge's ``run_evaluation.py`` leaves (``data/`` + ``exp/``, see
``evaluation/privacy/asv/asv.py``): score folders ``exp/<model>/<enrol set>-<trial set>/scores``
with ``enroll_id trial_id score`` lines (no header), keys ``data/<trial set>/trials``, and the
results summaries as ``save_result_summary`` prints them.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np

SPLITS = ("dev", "test")
SEXES = ("f", "m")

RESULTS_ORIG = """---- Time: 30-03-24_16:47 ----

---- SER results ----
   dataset split       ser      UAR  ACC_sad  ACC_neu  ACC_ang  ACC_hap
                               mean     mean     mean     mean     mean
0  IEMOCAP   dev      anon  {uar_dev}   0.2564  34.0306  78.8834  57.6706
1  IEMOCAP   dev  original  69.0796  63.6292  65.9652  79.7770  66.9476
2  IEMOCAP  test      anon  {uar}   2.7756  37.9746  72.5130  57.8536
3  IEMOCAP  test  original  71.0618  72.5706  71.6618  72.8246  67.1912

---- ASV_eval results ----
  dataset split gender enrollment     trial     EER
0   libri   dev      f   original  original  10.511
3   libri   dev      m   original  original   0.931
6   libri  test      f   original  original   8.761
9   libri  test      m   original  original   0.418

---- ASR results ----
  dataset split       asr    WER
0   libri   dev  original   1.807
4   libri   dev      anon   3.069
1   libri  test  original   1.844
5   libri  test      anon   {wer}
"""

RESULTS_ANON = """---- Time: 30-03-24_16:34 ----

---- ASV_eval^anon results ----
   dataset split gender enrollment trial     EER
2    libri   dev      f       anon  anon  10.937
5    libri   dev      m       anon  anon   7.454
8    libri  test      f       anon  anon   7.474
11   libri  test      m       anon  anon   4.675
"""


def speakers(split: str, sex: str, n: int = 3) -> list[str]:
    base = {"dev": 1000, "test": 2000}[split] + (0 if sex == "f" else 100)
    return [str(base + k) for k in range(n)]


def write_tree(
    root: Path,
    systems: dict[str, float] | None = None,
    *,
    n_speakers: int = 3,
    n_utts: int = 3,
    seed: int = 0,
    results: bool = True,
    decimals: int = 2,
    n_unenrolled: int = 0,
) -> Path:
    """A VPC tree under ``root``; ``systems`` maps each suffix to its separation (0 = chance).

    Scores are rounded to ``decimals`` so that ties occur (SpeechBrain's rule on ties is tested).
    ``n_unenrolled`` trial speakers of each gender are not enrolled, as in the challenge's
    LibriSpeech test set: their trials appear in the key only as non-target lines against
    every enrolled speaker of that gender.
    """
    systems = {"mcadams": 1.0, "sttts": 0.3} if systems is None else systems
    rng = np.random.default_rng(seed)
    data, exp = root / "data", root / "exp"
    for split in SPLITS:
        for sex in SEXES:
            trial_spk = speakers(split, sex, n_speakers + n_unenrolled)
            spk = trial_spk[:n_speakers]  # the enrolled ones
            utts = [f"{s}-{k:04d}" for s in trial_spk for k in range(n_utts)]
            for suffix in ["", *(f"_{s}" for s in systems)]:
                enr = data / f"libri_{split}_enrolls{suffix}"
                enr.mkdir(parents=True, exist_ok=True)
                with (enr / "spk2gender").open("a") as fh:
                    fh.writelines(f"{s} {sex}\n" for s in spk)
                tri = data / f"libri_{split}_trials_{sex}{suffix}"
                tri.mkdir(parents=True, exist_ok=True)
                (tri / "utt2spk").write_text("".join(f"{u} {u.split('-')[0]}\n" for u in utts))
                (tri / "spk2gender").write_text("".join(f"{s} {sex}\n" for s in trial_spk))
            key = [
                (e, u, "target" if u.split("-")[0] == e else "nontarget") for u in utts for e in spk
            ]
            (data / f"libri_{split}_trials_{sex}" / "trials").write_text(
                "".join(f"{e} {u} {lab}\n" for e, u, lab in key)
            )
            scenarios = [("asv_orig", "", "", 2.0)]
            for s, sep in systems.items():
                scenarios += [
                    ("asv_orig", "", f"_{s}", sep * 0.5),
                    ("asv_orig", f"_{s}", f"_{s}", sep),
                    (f"asv_anon_{s}", f"_{s}", f"_{s}", sep * 1.5),
                    (f"asv_anon_{s}", "", "", 2.0),  # oo of the retrained model: not an attacker
                ]
            for model, es, ts, sep in scenarios:
                folder = exp / model / f"libri_{split}_enrolls{es}-libri_{split}_trials_{sex}{ts}"
                folder.mkdir(parents=True, exist_ok=True)
                lines = []
                for e, u, lab in key:
                    s = rng.normal(sep if lab == "target" else 0.0, 1.0)
                    lines.append(f"{e} {u} {round(float(s), decimals)}\n")
                (folder / "scores").write_text("".join(lines))
    if results:
        for k, s in enumerate(systems):
            orig = exp / "results_summary" / f"eval_orig_{s}"
            orig.mkdir(parents=True, exist_ok=True)
            (orig / "results_orig.txt").write_text(
                RESULTS_ORIG.format(uar=f"{42.5 + k:.4f}", uar_dev="42.7104", wer=f"{2.9 + k:.3f}")
            )
            anon = exp / "results_summary" / f"eval_anon_{s}"
            anon.mkdir(parents=True, exist_ok=True)
            (anon / "results_anon.txt").write_text(RESULTS_ANON)
    return root


def zip_tree(root: Path, *, top: str = "vpc") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                zf.write(p, f"{top}/{p.relative_to(root).as_posix()}")
    return buf.getvalue()


def read_pairs(scores: Path, key: Path) -> tuple[list[float], list[float]]:
    """Positive and negative scores of a list, as the challenge's ``_split_scores`` forms them."""
    labels = {}
    for line in key.read_text().splitlines():
        e, t, lab = line.split()
        labels[(e, t)] = int(lab == "target")
    pos, neg = [], []
    for line in scores.read_text().splitlines():
        e, t, s = line.split()
        (pos if labels[(e, t)] else neg).append(float(s))
    return pos, neg


TITLES = {"orig": "ASV_eval results", "anon": "ASV_eval^anon results"}


def summaries_of_the_scores(root: Path, system: str, *, off: float = 0.0) -> None:
    """Results summaries whose per-gender EERs are the scores' (rounded as the challenge's),
    the male test EER of the retrained model moved by ``off`` percent."""
    from voxmetrics.data.vpc import read_vpc_tree
    from voxmetrics.metrics.eer import eer

    study = read_vpc_tree(root).study
    rows = {"orig": [], "anon": []}
    for which, name in (("orig", "original"), ("anon", f"{system} (semi-informed)")):
        cond = study.get(name)
        for split, sm in (("dev", cond.dev), ("test", cond.eval)):
            for sex in ("f", "m"):
                sub = sm.subset_attribute("sex", sex.upper())
                value = round(eer(sub.tar, sub.non) * 100, 3)
                if which == "anon" and (split, sex) == ("test", "m"):
                    value += off
                kind = "original" if which == "orig" else "anon"
                rows[which].append(f"0 libri {split} {sex} {kind} {kind} {value}")
    for which, title in TITLES.items():
        folder = root / "exp" / "results_summary" / f"eval_{which}_{system}"
        folder.mkdir(parents=True, exist_ok=True)
        head = (
            f"---- Time: 1 ----\n\n---- {title} ----\n  dataset split gender enrollment trial EER\n"
        )
        (folder / f"results_{which}.txt").write_text(head + "\n".join(rows[which]) + "\n")
