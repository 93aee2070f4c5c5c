"""Small VoicePrivacy evaluation trees, 2024 and 2026, written by the tests (no download).

The layout is the one the challenge's ``run_evaluation.py`` leaves (``data/`` + ``exp/``, see
``evaluation/privacy/asv/asv.py``): score folders ``exp/<model>/<enrol set>-<trial set>/scores``
with ``enroll_id trial_id score`` lines (no header), keys ``data/<trial set>/trials``, and the
results summaries as ``save_result_summary`` prints them. :func:`write_tree` writes a 2024
tree, :func:`write_tree_2026` a 2026 one (track 1 or 2, the mixed key as
``scripts/mixed_trials_librispeech.py`` writes it), :func:`add_embeddings` the challenge's
``speaker_vectors.pt`` folders (``torch.save``) with the scores made their cosines.
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


# ---------------------------------------------------------------- VoicePrivacy 2026


RESULTS_ORIG_2026 = """---- Time: 03-03-26_05:17 ----

---- SER results ----
   dataset split       ser      UAR  ACC_sad  ACC_ang  ACC_hap  ACC_neu
                               mean     mean     mean     mean     mean
0  {ser}   dev      anon  55.6590  33.1350  64.4438  67.0860  57.9720
1  {ser}   dev  original  69.0796  63.6292  79.7770  66.9476  65.9652
2  {ser}  test      anon  {uar}  32.7760  56.9720  57.9826  66.2338
3  {ser}  test  original  71.0618  72.5706  72.8246  67.1912  71.6618

---- ASV_eval results ----
   dataset split gender enrollment trial     EER
{asv}
---- ASR results ----
  dataset split       asr     WER
{asr}"""


def _mixed_key(
    rng: np.random.Generator, by_sex: dict[str, tuple[list[str], list[str]]], n_enrol_utts: int
) -> list[tuple[str, str, str]]:
    """The mixed key as ``scripts/mixed_trials_librispeech.py`` writes it.

    The script reads ``trials_f`` into ``male_trials`` and ``trials_m`` into
    ``female_trials``, so its "cross-gender" block pairs each trial with enrolled speakers of
    its own gender, all labelled ``nontarget`` (its own speaker included), before the female
    and male keys, which list those pairs again with their true labels: pairs repeat, and a
    pair may come first as ``nontarget`` and later as ``target``. Speakers are sampled from
    the list of enrolment utterances (one entry per utterance), so a line may repeat too.
    """
    per_sex = {}
    for sex, (enrolled, utts) in by_sex.items():
        per_sex[sex] = [
            (e, u, "target" if u.split("-")[0] == e else "nontarget")
            for u in utts
            for e in enrolled
        ]
    mixed = []
    for enrolled, utts in by_sex.values():
        pool = [e for e in enrolled for _ in range(n_enrol_utts)]
        k = max(1, len(enrolled) - 1)  # the average non-target count of the gender's list
        for u in utts:
            for e in rng.choice(pool, size=k, replace=False):
                mixed.append((str(e), u, "nontarget"))
    return mixed + per_sex["f"] + per_sex["m"]


def write_tree_2026(
    root: Path,
    systems: dict[str, float] | None = None,
    *,
    track: int = 1,
    languages: tuple[str, ...] = ("en", "de"),
    n_speakers: int = 3,
    n_utts: int = 3,
    n_unenrolled: int = 0,
    seed: int = 0,
    results: bool = True,
    decimals: int = 3,
) -> Path:
    """A VoicePrivacy 2026 tree: track 1 (``libri``) or track 2 (one dataset per language).

    One mixed trial list per dataset and split (``trials_mixed``, both genders, the key as the
    challenge's script writes it: :func:`_mixed_key`), the original model ``asv_ssl``, a model
    retrained per system (track 1: ``asv_anon_<system>``; track 2: one per language,
    ``asv_anon_track2_10_<lang>_<system>``), scores with one line per distinct pair (as
    ``asv.py`` writes them), and results summaries as the 2026 scripts print them
    (``ASV_eval`` = the lazy-informed attacker; track 2's per-language ``ASV_eval^anon``
    tables without the index column).
    """
    systems = {"mcadams": 1.0} if systems is None else systems
    rng = np.random.default_rng(seed)
    datasets = ("libri",) if track == 1 else languages
    data, exp = root / "data", root / "exp"
    for ds_k, ds in enumerate(datasets):
        for split in SPLITS:
            by_sex = {}
            all_utts, genders = [], {}
            for sex in SEXES:
                trial_spk = [f"{s}{ds_k}" for s in speakers(split, sex, n_speakers + n_unenrolled)]
                enrolled = trial_spk[:n_speakers]
                utts = [f"{s}-{k:04d}" for s in trial_spk for k in range(n_utts)]
                by_sex[sex] = (enrolled, utts)
                all_utts += utts
                genders.update(dict.fromkeys(trial_spk, sex))
            key = _mixed_key(rng, by_sex, 2)
            for suffix in ["", *(f"_{s}" for s in systems)]:
                enr = data / f"{ds}_{split}_enrolls{suffix}"
                enr.mkdir(parents=True, exist_ok=True)
                enrolled_all = by_sex["f"][0] + by_sex["m"][0]
                (enr / "spk2gender").write_text(
                    "".join(f"{s} {genders[s]}\n" for s in enrolled_all)
                )
                tri = data / f"{ds}_{split}_trials_mixed{suffix}"
                tri.mkdir(parents=True, exist_ok=True)
                (tri / "utt2spk").write_text("".join(f"{u} {u.split('-')[0]}\n" for u in all_utts))
                (tri / "spk2gender").write_text(
                    "".join(f"{s} {g}\n" for s, g in sorted(genders.items()))
                )
            (data / f"{ds}_{split}_trials_mixed" / "trials").write_text(
                "".join(f"{e} {u} {lab}\n" for e, u, lab in key)
            )
            labels: dict[tuple[str, str], str] = {}
            for e, u, lab in key:  # asv.py's dict: first appearance, last label
                labels[(e, u)] = lab
            scenarios = [("asv_ssl", "", "", 2.0)]
            for s, sep in systems.items():
                retrained = f"asv_anon_{s}" if track == 1 else f"asv_anon_track2_10_{ds}_{s}"
                scenarios += [
                    ("asv_ssl", "", f"_{s}", sep * 0.5),
                    ("asv_ssl", f"_{s}", f"_{s}", sep),
                    (retrained, f"_{s}", f"_{s}", sep * 1.5),
                    (retrained, "", "", 2.0),  # oo of the retrained model: not an attacker
                ]
            for model, es, ts, sep in scenarios:
                name = f"{ds}_{split}_enrolls{es}-{ds}_{split}_trials_mixed{ts}"
                folder = exp / model / name
                folder.mkdir(parents=True, exist_ok=True)
                lines = []
                for (e, u), lab in labels.items():
                    score = rng.normal(sep if lab == "target" else 0.0, 1.0)
                    lines.append(f"{e} {u} {round(float(score), decimals)}\n")
                (folder / "scores").write_text("".join(lines))
    if results:
        write_summaries_2026(root, systems, track=track, datasets=datasets)
    return root


def _challenge_eer(root: Path, model: str, name: str, key: Path) -> float:
    """SpeechBrain's EER of one score folder, as ``asv.py`` computes it (rounded as printed)."""
    import torch
    from speechbrain.utils.metric_stats import EER

    pos, neg = read_pairs(root / "exp" / model / name / "scores", key)
    value, _ = EER(torch.tensor(pos), torch.tensor(neg))
    return round(float(value) * 100, 3)


def write_summaries_2026(
    root: Path, systems: dict[str, float], *, track: int, datasets: tuple[str, ...]
) -> None:
    """The 2026 results summaries of a tree, their EERs computed from its scores."""
    base = root / "exp" / "results_summary"
    for k, s in enumerate(systems):
        asv, asr = [], []
        for ds in datasets:
            for i, split in enumerate(SPLITS):
                key = root / "data" / f"{ds}_{split}_trials_mixed" / "trials"
                name = f"{ds}_{split}_enrolls_{s}-{ds}_{split}_trials_mixed_{s}"
                eer = _challenge_eer(root, "asv_ssl", name, key)
                asv.append(f"{3 * i + 2}  {ds}  {split}  mixed  anon  anon  {eer}")
                asr.append(f"{i}  {ds}  {split}  original  1.8{i}")
                asr.append(f"{i + 4}  {ds}  {split}  anon  {9.5 + k + len(asr) / 10:.3f}")
        ser = "IEMOCAP" if track == 1 else "emodata"
        text = RESULTS_ORIG_2026.format(
            ser=ser, uar=f"{53.4914 + k:.4f}", asv="\n".join(asv) + "\n", asr="\n".join(asr) + "\n"
        )
        orig = base / f"eval_orig_{s}"
        orig.mkdir(parents=True, exist_ok=True)
        (orig / "results_orig.txt").write_text(text)
        for ds in datasets:
            rows = []
            for split in SPLITS:
                model = f"asv_anon_{s}" if track == 1 else f"asv_anon_track2_10_{ds}_{s}"
                key = root / "data" / f"{ds}_{split}_trials_mixed" / "trials"
                name = f"{ds}_{split}_enrolls_{s}-{ds}_{split}_trials_mixed_{s}"
                rows.append(
                    f"{ds} {split} mixed anon anon {_challenge_eer(root, model, name, key)}"
                )
            head = "---- Time: 06-06-26_05:22 ----\n\n---- ASV_eval^anon results ----\n"
            if track == 1:
                folder = base / f"eval_anon_{s}"
                body = "  dataset split gender enrollment trial EER\n" + "".join(
                    f"{2 + 3 * i} {r}\n" for i, r in enumerate(rows)
                )
            else:  # printed without the index column, one summary per language
                folder = base / "track2" / f"eval_anon_10_{ds}_{s}"
                body = "dataset split gender enrollment trial EER\n" + "".join(
                    f"{r}\n" for r in rows
                )
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "results_anon.txt").write_text(head + body)


# ---------------------------------------------------------------- the challenge's embeddings


def _set_parts(name: str) -> tuple[str, str]:
    """(set without its system suffix, suffix) of a set name such as libri_test_trials_f_x."""
    import re

    m = re.fullmatch(
        r"([A-Za-z0-9]+_(?:dev|test)_(?:enrolls|trials_mixed|trials_f|trials_m))(_.+)?", name
    )
    assert m, name
    return m.group(1), (m.group(2) or "")


def _pair_sets(name: str) -> tuple[str, str]:
    """(enrol set, trial set) of a score folder's name."""
    for i, ch in enumerate(name):
        if ch == "-" and name[:i].count("_enrolls") and "_trials" in name[i + 1 :]:
            return name[:i], name[i + 1 :]
    raise AssertionError(name)


def _genders(data: Path, set_name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for folder in (data / _set_parts(set_name)[0], data / set_name):
        path = folder / "spk2gender"
        if path.is_file():
            out.update(dict(ln.split() for ln in path.read_text().splitlines() if ln.strip()))
    return out


def _save_vectors(folder: Path, ids: list[str], spks: list[str], vecs: np.ndarray, g: dict) -> None:
    """One folder as the challenge's ``SpeakerEmbeddings.save_vectors`` writes it."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    torch.save(torch.tensor(vecs, dtype=torch.float32), folder / "speaker_vectors.pt")
    (folder / "id2idx").write_text(
        "".join(f"{i} {k}\n" for k, i in sorted(enumerate(ids), key=lambda x: x[1]))
    )
    (folder / "idx2spk").write_text("".join(f"{k} {s}\n" for k, s in enumerate(spks)))
    (folder / "spk2gender").write_text("".join(f"{s} {g.get(s, 'f')}\n" for s in sorted(set(spks))))


def add_embeddings(root: Path, *, dim: int = 8, seed: int = 0, separation: float = 2.0) -> Path:
    """Write the challenge's embeddings of every scored set and make the scores their cosines.

    Under each model, ``cosine_out/emb_xvect/<set>/utt-level/`` (one vector per utterance of
    a trial set, or per enrolment utterance) and ``spk-level/`` of the enrolment sets (the mean
    of the speaker's utterance vectors), each with ``speaker_vectors.pt`` (``torch.save`` of a
    float32 tensor), ``id2idx``, ``idx2spk`` and ``spk2gender`` as ``speaker_embeddings.py``
    saves them; every ``scores`` file is rewritten as the cosine of its trial's utterance
    vector and its enrolled speaker's vector, in the same order (``asv.py``'s scoring).
    """
    rng = np.random.default_rng(seed)
    exp, data = root / "exp", root / "data"
    files = sorted(exp.glob("*/*-*/scores"))
    members: dict[tuple[str, str], set[str]] = {}  # (model, set) -> enrolled or trial ids
    for scores in files:
        enrol_set, trial_set = _pair_sets(scores.parent.name)
        model = scores.parent.parent.name
        for ln in scores.read_text().splitlines():
            if ln.strip():
                e, u, _ = ln.split()
                members.setdefault((model, enrol_set), set()).add(e)
                members.setdefault((model, trial_set), set()).add(u)
    voices: dict[str, np.ndarray] = {}
    tables: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for (model, set_name), ids in sorted(members.items()):
        suffix = _set_parts(set_name)[1]
        a = (separation if not suffix else separation / 3) * (1.5 if "anon" in model else 1.0)
        genders = _genders(data, set_name)
        enrol = "_enrolls" in set_name
        utts = sorted(f"{s}-e{k}" for s in ids for k in range(2)) if enrol else sorted(ids)
        spks = [u.split("-")[0] for u in utts]
        for spk in spks:
            voices.setdefault(spk, rng.normal(size=dim))
        vecs = np.stack([a * voices[spk] + rng.normal(size=dim) for spk in spks])
        folder = exp / model / "cosine_out" / "emb_xvect" / set_name
        _save_vectors(folder / "utt-level", utts, spks, vecs, genders)
        table = dict(zip(utts, vecs, strict=True))
        if enrol:  # speaker level: the mean of each speaker's utterance vectors
            order = sorted(ids)
            mean = np.stack([vecs[[s == x for x in spks]].mean(axis=0) for s in order])
            _save_vectors(folder / "spk-level", order, order, mean, genders)
            table = dict(zip(order, mean, strict=True))
        tables[(model, set_name)] = table
    for scores in files:
        enrol_set, trial_set = _pair_sets(scores.parent.name)
        model = scores.parent.parent.name
        out = []
        for ln in scores.read_text().splitlines():
            if not ln.strip():
                continue
            e, u, _ = ln.split()
            x = tables[(model, enrol_set)][e].astype(np.float32)
            y = tables[(model, trial_set)][u].astype(np.float32)
            cos = float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))
            out.append(f"{e} {u} {cos!r}\n")
        scores.write_text("".join(out))
    return root


def _utts_of(folder: Path) -> list[str]:
    path = folder / "utt2spk"
    return (
        [ln.split()[0] for ln in path.read_text().splitlines() if ln.strip()]
        if path.is_file()
        else []
    )


def zip_exp_only(root: Path, *, top: str = "vpc") -> bytes:
    """The tree zipped without its data/ folder (exp/ only)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted((root / "exp").rglob("*")):
            if p.is_file():
                zf.write(p, f"{top}/{p.relative_to(root).as_posix()}")
    return buf.getvalue()
