"""Hostile input, round two: the newer readers (HDF5, Zarr, Dask chunks, Kaldi arks, bzip2 /
LZMA members) get the old defences, and no broken score file passes as a result.

Every input is written here, small; each case asserts its refusal and message (or, where the
user asks for it with ``allow_incomplete``, the warning and the count).
"""

from __future__ import annotations

import functools
import io
import json
import struct
import tracemalloc
import warnings
import zipfile

import h5py
import numpy as np
import pytest
from hostile_inputs import small_study_bytes, with_declared_size, zip_of

from voxmetrics.cli import main
from voxmetrics.data.embedding_files import (
    read_hdf5_embeddings,
    read_kaldi_ark,
    read_kaldi_scp,
    sniff_embeddings,
)
from voxmetrics.data.readers import read_embeddings, read_scores
from voxmetrics.data.studyfile import study_from_bytes
from voxmetrics.errors import IncompleteScoresWarning, VoxMetricsInputError
from voxmetrics.limits import ArchiveReader, Limits, load_npz, use_limits

MiB = 1 << 20


def refused(fn, *args, match: str, **kwargs) -> str:
    """Assert ``fn`` raises one VoxMetricsInputError whose message matches ``match``."""
    import re

    with pytest.raises(VoxMetricsInputError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert re.search(match, message, flags=re.S), message
    return message


# ============================================================ 1. broken score files

T, N = 6, 8
SPK = [f"s{j}" for j in range(N)]


def _grid(trial_major: bool = True) -> tuple[list[str], list[str]]:
    """Kaldi score and key lines of a complete T x N grid (enrolled-major as Kaldi writes)."""
    rng = np.random.default_rng(7)
    scores, key = [], []
    pairs = (
        [(i, e) for i in range(T) for e in SPK]
        if trial_major
        else [(i, e) for e in SPK for i in range(T)]
    )
    for i, e in pairs:
        own = SPK[i % N] == e
        scores.append(f"{e} t{i} {rng.normal() + 3 * own:.4f}\n")
        key.append(f"{e} t{i} {'target' if own else 'nontarget'}\n")
    return scores, key


def test_kaldi_scores_cut_with_their_complete_key_are_refused():
    scores, key = _grid(trial_major=False)
    cut = "".join(scores[:29]).encode()  # 60 % of the lines
    msg = refused(
        read_scores,
        cut,
        trials="".join(key).encode(),
        name="scores",
        trials_name="trials",
        match=r"19 of the 48 pairs listed in the key have no score in scores",
    )
    assert "T x N" in msg and "allow_incomplete" in msg


def test_allow_incomplete_counts_the_pairs_left_out():
    scores, key = _grid(trial_major=False)
    with pytest.warns(IncompleteScoresWarning, match=r"19 pair\(s\) are left out"):
        sm = read_scores(
            "".join(scores[:29]).encode(), trials="".join(key).encode(), allow_incomplete=True
        )
    # trial t5 lost its pair with its own speaker (s5): its listed pairs stay, all non-mated
    assert sm.n_pairs == 29 and sm.n_excluded_trials == 0


def test_cli_refuses_a_cut_kaldi_file_and_reports_it_when_asked(tmp_path, capsys):
    scores, key = _grid(trial_major=False)
    (tmp_path / "scores").write_text("".join(scores[:29]))
    (tmp_path / "trials").write_text("".join(key))
    args = ["evaluate", str(tmp_path / "scores"), "--trials", str(tmp_path / "trials")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "have no score" in err and "Traceback" not in err
    assert main([*args, "--allow-incomplete"]) == 0
    out = capsys.readouterr()
    r = json.loads(out.out)
    assert any("19 pair(s) are left out" in w for w in r["input_warnings"])
    assert "left out" in out.err


def test_long_csv_cut_at_a_line_boundary_is_refused():
    lines = ["trial_id,trial_speaker,enrol_speaker,score\n"]
    lines += [f"t{i},{SPK[i % N]},{e},0.{j}\n" for i in range(T) for j, e in enumerate(SPK)]
    refused(
        read_scores,
        "".join(lines[:30]).encode(),
        name="s.csv",
        match=r"rows end early.*line 30.*trial 't3'.*29 listed pairs of T x N = 4 x 8 = 32",
    )


def test_kaldi_with_utt2spk_cut_inside_a_speaker_is_refused():
    scores, _ = _grid(trial_major=False)
    u2s = "".join(f"t{i} {SPK[i % N]}\n" for i in range(T)).encode()
    refused(
        read_scores,
        "".join(scores[:40]).encode(),
        trials=u2s,
        name="scores",
        match=r"rows end early.*enrolled speaker by enrolled speaker",
    )


def test_nan_in_an_npz_without_mask_is_refused_again():
    s = np.eye(3) + 0.1
    s[1, 2] = np.nan
    buf = io.BytesIO()
    labels = np.array(["a", "b", "c"])
    np.savez(buf, scores=s, trial_ids=labels, trial_speakers=labels, enrol_speakers=labels)
    refused(
        read_scores,
        buf.getvalue(),
        name="s.npz",
        match=r"1 NaN value\(s\) of T x N = 3 x 3 = 9 \(first: row 2, column 3\) and no 'mask'",
    )
    with pytest.warns(IncompleteScoresWarning):
        assert read_scores(buf.getvalue(), allow_incomplete=True).n_pairs == 8


def test_nan_score_rows_are_dropped_only_when_asked():
    text = (
        b"trial_id,trial_speaker,enrol_speaker,score\n"
        b"t1,a,a,0.9\nt1,a,b,nan\nt2,b,a,0.2\nt2,b,b,0.8\n"
    )
    refused(read_scores, text, name="s.csv", match=r"line 3: score is missing or NaN")
    with pytest.warns(IncompleteScoresWarning, match=r"1 of 4 rows have an empty or NaN score"):
        assert read_scores(text, name="s.csv", allow_incomplete=True).n_pairs == 3


def test_a_sparse_list_out_of_grid_order_is_still_read():
    text = (
        b"trial_id,trial_speaker,enrol_speaker,score\n"
        b"t1,a,a,0.9\nt1,a,b,0.1\nt2,b,b,0.8\nt3,c,c,0.7\nt3,c,a,0.3\n"
    )
    assert read_scores(text, name="s.csv").n_pairs == 5


# ============================================================ 2, 3. HDF5


def _h5(build, **kw) -> bytes:
    buf = io.BytesIO()
    with h5py.File(buf, "w", **kw) as f:
        build(f)
    return buf.getvalue()


def test_hdf5_external_storage_is_refused(tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(b"KEY=" + b"x" * 60)
    data = _h5(
        lambda f: f.create_dataset("u1", shape=(16,), dtype="f4", external=[(str(secret), 0, 64)])
    )
    refused(read_hdf5_embeddings, data, name="x.h5", match=r"'/u1' keeps its data in external")


def test_hdf5_declaring_a_huge_unwritten_matrix_is_refused_before_reading():
    def build(f):
        f.create_dataset("embeddings", shape=(1_000_000, 1000), dtype="i1")
        f.create_dataset("utt_ids", data=np.array([b"a"]))

    data = _h5(build)
    assert len(data) < 10_000
    refused(read_hdf5_embeddings, data, name="x.h5", match=r"1000000 x 1000.*max_array_bytes")


def test_hdf5_unwritten_data_read_as_fill_values_is_refused():
    def build(f):
        f.create_dataset("embeddings", shape=(20_000, 256), dtype="f4")  # 41 MB as float64
        f.create_dataset("utt_ids", data=np.array([b"a"] * 20_000))

    refused(read_hdf5_embeddings, _h5(build), name="x.h5", match=r"stores only .*max_ratio")


def test_hdf5_gzip_bomb_is_refused_by_its_ratio():
    def build(f):
        zeros = np.zeros((1000, 1000), "f4")
        d = f.create_dataset(
            "embeddings", shape=(20_000, 1000), dtype="f4", compression="gzip", chunks=(1000, 1000)
        )
        for k in range(20):
            d[k * 1000 : (k + 1) * 1000] = zeros
        f.create_dataset("utt_ids", data=np.array([b"u"] * 20_000))

    refused(read_hdf5_embeddings, _h5(build), name="x.h5", match=r"decompression bomb.*max_ratio")


def test_hdf5_unwritten_variable_length_ids_are_refused_before_reading():
    def build(f):
        f.create_dataset("embeddings", data=np.zeros((2, 3)))
        f.create_dataset("utt_ids", shape=(100_000_000,), dtype=h5py.string_dtype())

    refused(read_hdf5_embeddings, _h5(build), name="x.h5", match=r"'/utt_ids' \(100000000\)")


def test_hdf5_ids_of_another_length_are_refused_from_their_headers():
    def build(f):
        f.create_dataset("embeddings", data=np.ones((2, 3)))
        f.create_dataset("utt_ids", data=np.array([b"a", b"b", b"c"]))

    refused(read_hdf5_embeddings, _h5(build), name="x.h5", match=r"2 rows but 'utt_ids' holds 3")


def test_hdf5_with_a_user_block_is_recognised():
    def build(f):
        f.create_dataset("embeddings", data=np.eye(3)[[0, 1, 0, 1]])
        f.create_dataset("utt_ids", data=np.array([b"e1", b"e2", b"t1", b"t2"]))

    data = _h5(build, userblock_size=512)  # as MATLAB v7.3 writes
    assert data[:8] != b"\x89HDF\r\n\x1a\n" and sniff_embeddings(data) == "hdf5"
    meta = (
        b"utt_id,speaker,role,split\ne1,a,enrol,eval\ne2,b,enrol,eval\n"
        b"t1,a,trial,eval\nt2,b,trial,eval\n"
    )
    assert read_embeddings(data, metadata=meta).embeddings.shape == (4, 3)


# ============================================================ 3. Kaldi arks


def _ark_header(key: bytes, n: int, token: bytes = b"FV ") -> bytes:
    return key + b" \x00B" + token + b"\x04" + struct.pack("<i", n)


def test_ark_header_declaring_2_31_floats_is_refused():
    data = _ark_header(b"u1", 2**31 - 1) + b"\0" * 16
    refused(read_kaldi_ark, data, name="x.ark", match=r"'u1'.*2147483647 values.*only 16 bytes")


def test_scp_pointing_at_a_lying_ark_header_is_refused(tmp_path):
    (tmp_path / "a.ark").write_bytes(_ark_header(b"u1", 2**31 - 1) + b"\0" * 16)
    (tmp_path / "a.scp").write_text("u1 a.ark:3\n")
    refused(read_kaldi_scp, tmp_path / "a.scp", match=r"a.scp: line 1: 'a.ark'.*only 16 bytes")


def test_ark_entry_of_an_unread_type_is_named():
    data = _ark_header(b"u1", 4, token=b"CM ") + b"\0" * 16
    refused(read_kaldi_ark, data, name="x.ark", match=r"'u1' .* of type 'CM'")


# ============================================================ 3. Zarr and Dask chunks


@pytest.mark.parametrize(
    ("n", "match"),
    [(300_000_000, r"300,000,000 'trial_ids' labels.*max_rows"), (10_000_000, r"stores only")],
)
def test_zarr_store_declaring_1e8s_of_labels_is_refused(tmp_path, n, match):
    zarr = pytest.importorskip("zarr")
    from voxmetrics.evaluation.sources import ZarrScores

    path = tmp_path / "s.zarr"
    g = zarr.open_group(str(path), mode="w")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr: fixed-length strings have no v3 spec yet
        g.create_array("scores", shape=(3, 3), dtype="f8")[:] = np.eye(3)
        g.create_array("trial_ids", shape=(n,), dtype="<U4", chunks=(10**6,))
        for key in ("trial_speakers", "enrol_speakers"):
            g.create_array(key, shape=(3,), dtype="<U4")[:] = np.array(["a", "b", "c"])
    refused(ZarrScores.open, path, match=match)


def _chunk_npz(scores: bytes, labels: np.ndarray | None = None) -> bytes:
    lab = np.array(["a", "b"]) if labels is None else labels
    buf = io.BytesIO()
    np.save(buf, lab, allow_pickle=True)
    members = {"scores.npy": scores, "trial_ids.npy": buf.getvalue()}
    for key in ("trial_speakers", "enrol_speakers"):
        b = io.BytesIO()
        np.save(b, np.array(["a", "b"]))
        members[f"{key}.npy"] = b.getvalue()
    return zip_of(members)


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def test_dask_chunk_bomb_is_read_through_the_archive_limits(tmp_path):
    from voxmetrics.evaluation.sources import _chunk_scores

    path = tmp_path / "c.npz"
    path.write_bytes(_chunk_npz(_npy(np.zeros((2, 2_500_000)))))  # 40 MB of zeros in 40 KB
    refused(_chunk_scores, str(path), match=r"scores.*max_ratio")


def test_dask_chunk_with_pickled_labels_is_a_message(tmp_path):
    from voxmetrics.evaluation.sources import ChunkedScores

    path = tmp_path / "c.npz"
    path.write_bytes(_chunk_npz(_npy(np.eye(2)), np.array(["a", 1], dtype=object)))
    refused(ChunkedScores.from_files, [path], match=r"pickled arrays are refused")


# ============================================================ 3. bzip2 / LZMA with lying sizes


@functools.cache
def _lying_member(method: int, n_mib: int = 48) -> bytes:
    """A zip whose ``a.npy`` inflates to n_mib MiB of zeros but declares 1,000 bytes."""
    info = zipfile.ZipInfo("a.npy")
    info.compress_type = method
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, zf.open(info, "w") as f:
        zeros = b"\0" * MiB
        for _ in range(n_mib):
            f.write(zeros)
    return with_declared_size(buf.getvalue(), "a.npy", 1000)


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_bzip2_and_lzma_members_inflate_in_bounded_pieces(method):
    data = _lying_member(method)
    with use_limits(Limits(max_ratio=1e9)), ArchiveReader(data, "x.zip") as ar:
        tracemalloc.start()
        try:
            first = next(ar.chunks("a.npy"))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert len(first) <= MiB
    assert peak < 16 * MiB  # zipfile alone inflates the whole 48 MiB member in one call


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_bzip2_and_lzma_bombs_with_lying_sizes_are_refused(method):
    refused(load_npz, _lying_member(method), "x.npz", match=r"max_ratio|declares|NPY")


def test_genuine_bzip2_and_lzma_members_still_read():
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        data = zip_of({"x.npy": _npy(np.arange(1000.0))}, method)
        assert load_npz(data, "x.npz")["x"].sum() == 499500.0


def test_duplicated_member_of_a_study_file_is_refused():
    src = zipfile.ZipFile(io.BytesIO(small_study_bytes()))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(buf, "w") as zf:
            for info in src.infolist():
                zf.writestr(info.filename, src.read(info.filename))
            zf.writestr("manifest.json", src.read("manifest.json"))
    refused(study_from_bytes, buf.getvalue(), match=r"'manifest.json' appears more than once")


# ============================================================ 4, 5. --by and --fail-on


def _by_csv(path, sex_of_d: str) -> None:
    rng = np.random.default_rng(1)
    spk, sex = ["a", "b", "c", "d"], {"a": "F", "b": "F", "c": "M", "d": sex_of_d}
    lines = ["trial_id,trial_speaker,enrol_speaker,score,sex"]
    for i in range(8):
        s = spk[i % 4]
        for e in spk:
            lines.append(f"t{i},{s},{e},{rng.normal() + 2 * (e == s):.3f},{sex[s]}")
    path.write_text("\n".join(lines) + "\n")


def test_by_with_a_missing_value_is_refused_and_says_so(tmp_path, capsys):
    _by_csv(tmp_path / "s.csv", "")
    assert main(["evaluate", str(tmp_path / "s.csv"), "--by", "sex"]) == 2
    err = capsys.readouterr().err
    assert "the value of 'sex' is missing" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("eer < '0.45'", "cannot compare eer (a number) with '0.45' (text)"),
        ("dcf < 1", "cannot compare dcf (a block of metrics) with 1 (a number)"),
        ("eer", "eer is a number, not a condition"),
    ],
)
def test_fail_on_type_mistakes_exit_2(tmp_path, capsys, expr, message):
    _by_csv(tmp_path / "s.csv", "M")
    assert main(["evaluate", str(tmp_path / "s.csv"), "--fail-on", expr]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""  # nothing printed before the refusal


# ============================================================ 6. smaller


def test_a_blank_first_line_is_skipped_and_lines_keep_their_numbers():
    kaldi = b"\n\na t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n"
    key = b"\na t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n"
    assert read_scores(kaldi, trials=key).shape == (2, 2)
    csv = b"\ntrial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.9\nt1,a,b,x\n"
    refused(read_scores, csv, name="s.csv", match=r"s.csv: line 4: score 'x' is not a number")


def test_a_piped_scp_gets_the_piped_command_message(tmp_path):
    (tmp_path / "p.scp").write_text("u1 copy-vector ark:x.ark ark:- |\n")
    meta = b"utt_id,speaker,role,split\nu1,a,enrol,eval\n"
    refused(read_embeddings, tmp_path / "p.scp", metadata=meta, match=r"line 1: a piped command")


def test_a_text_ark_entry_without_its_bracket_is_named():
    refused(
        read_kaldi_ark,
        b"u1  [ 1 2 \nu2  [ 3 4 ]\n",
        name="x.ark",
        match=r"line 1: the vector of 'u1' has no closing '\]'",
    )


@pytest.mark.parametrize("value", [[1], {"a": 1}], ids=["list", "struct"])
def test_parquet_list_or_struct_column_is_a_message(value):
    import pandas as pd

    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["a", "a", "b", "b"],
            "enrol_speaker": ["a", "b", "a", "b"],
            "score": [0.9, 0.1, 0.2, 0.8],
            "sex": [value] * 4,
        }
    )
    buf = io.BytesIO()
    df.to_parquet(buf)
    refused(read_scores, buf.getvalue(), name="x.parquet", match=r"column 'sex' holds .* values")


def test_negative_seed_and_counts_are_refused(capsys):
    from voxmetrics.cli.legal import _int_list

    with pytest.raises(SystemExit) as info:
        main(["demo", "--seed", "-1"])
    assert info.value.code == 2
    assert "give a whole number >= 0" in capsys.readouterr().err
    refused(_int_list, "0,-5", "--n", match=r"--n '0,-5': 0 is not a count")


def test_extract_without_the_audio_extra_names_what_is_missing(tmp_path, monkeypatch, capsys):
    import sys

    for module in ("torch", "speechbrain"):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    (tmp_path / "m.csv").write_text("utt_id,speaker,role,split,audio_path\n")
    args = ["extract", "--manifest", str(tmp_path / "m.csv"), "--audio-root", str(tmp_path)]
    code = main([*args, "--out", str(tmp_path / "e"), "--model", "ecapa"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--model ecapa needs torch, speechbrain, which are not installed" in err
    assert "pip install 'voxmetrics[audio]'" in err and "huggingface" not in err


def test_exported_csv_cells_are_never_live_formulas():
    import pandas as pd

    from voxmetrics.report.export import _csv_bytes

    frame = pd.DataFrame(
        {"condition": ['=HYPERLINK("http://x","y")', "+1", "@SUM(A1)", "-x", "ok"], "eer": 0.1}
    )
    frame["eer"] = [0.1, -0.2, 0.3, 0.4, 0.5]
    text = _csv_bytes(frame).decode()
    for cell in ('"\'=HYPERLINK(""http://x"",""y"")"', "'+1", "'@SUM(A1)", "'-x"):
        assert cell in text, text
    assert ",-0.2" in text and "\nok," in text  # numbers and plain names unchanged


def test_memory_limit_that_is_not_a_size_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "x.npz", "--scheduler", "local", "--memory-limit", "lots"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "'lots': give a size such as 300MB" in err and "Traceback" not in err


def test_a_scores_file_cut_between_two_trials_is_refused():
    scores, key = _grid()
    cut = "".join(scores[: 2 * N]).encode()  # trial-major: stops exactly after trial t1
    with pytest.raises(VoxMetricsInputError) as info:
        read_scores(cut, trials="".join(key).encode(), name="scores", trials_name="key")
    msg = str(info.value)
    assert f"{T - 2:,} of the {T:,} trials listed in the key" in msg
    assert "no score at all in scores" in msg and "cut between two trials" in msg
    assert "allow_incomplete" in msg and "--allow-incomplete" in msg


def test_a_master_key_is_read_with_allow_incomplete_and_its_unscored_trials_counted():
    scores, key = _grid()
    extra = [f"s0 x{i} nontarget\n" for i in range(100)] + ["s0 x1 maybe\n"]  # never used
    with pytest.warns(IncompleteScoresWarning, match=r"no score at all"):
        sm = read_scores(
            "".join(scores[: 2 * N]).encode(),
            trials="".join(key + extra).encode(),
            allow_incomplete=True,
        )
    assert sm.shape == (2, N) and sm.n_pairs == 2 * N


def test_a_trial_boundary_cut_is_refused_on_the_command_line(tmp_path, capsys):
    scores, key = _grid()
    (tmp_path / "s.txt").write_text("".join(scores[: 3 * N]))
    (tmp_path / "k.txt").write_text("".join(key))
    code = main(["evaluate", str(tmp_path / "s.txt"), "--trials", str(tmp_path / "k.txt")])
    err = capsys.readouterr().err
    assert code == 2 and "no score at all" in err and "Traceback" not in err
    out = tmp_path / "out.json"
    code = main(
        [
            "evaluate",
            str(tmp_path / "s.txt"),
            "--trials",
            str(tmp_path / "k.txt"),
            "--allow-incomplete",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert "no score at all" in json.dumps(report["input_warnings"])


def test_sbls_with_hundreds_of_classes_visits_only_the_subgroups_that_occur():
    from voxmetrics.metrics.sbls import _groups

    rng = np.random.default_rng(0)
    ys = {a: rng.integers(0, 200, 300).astype(str) for a in ("a", "b")}
    groups = _groups(ys, ["a", "b"])  # not the 40,000 of the full product
    assert len(groups) <= 300 and sum(rows.size for _, rows in groups) == 300
    assert [g for g, _ in groups] == sorted(g for g, _ in groups)


# ============================================================ Dask extraction: bad input, one line


def test_dask_extraction_with_bad_input_stops_once_with_its_message(tmp_path, monkeypatch, caplog):
    pytest.importorskip("distributed")
    import pandas as pd
    from distributed import Client, LocalCluster

    import voxmetrics.embeddings as emb
    from voxmetrics.distributed import extract_embeddings_blockwise

    calls = []
    real = emb.load_extractor

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(emb, "load_extractor", counted)  # in-process workers see it
    (tmp_path / "model").mkdir()  # a model folder without its files
    manifest = pd.DataFrame(
        {"utt_id": ["u1", "u2"], "speaker": ["a", "b"], "audio_path": ["u1.wav", "u2.wav"]}
    )
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
        caplog.at_level("ERROR"),
    ):
        with pytest.raises(VoxMetricsInputError, match=r"hyperparams.yaml is missing"):
            extract_embeddings_blockwise(
                manifest,
                audio_root=tmp_path,
                model=str(tmp_path / "model"),
                client=client,
                device="cpu",
                files_per_task=1,
                cache_dir=tmp_path / "cache",
                retries=3,
            )
    assert 1 <= len(calls) <= 2  # not retried: at most the two tasks, once each
    assert not [r for r in caplog.records if "Compute Failed" in r.getMessage()]
