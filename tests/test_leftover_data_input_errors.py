"""Bad input: one VoxMetricsInputError whose message says what is wrong, where and how to fix it.

Leftover of the metrics test reorganisation: these test the readers and writers of
``voxmetrics.data`` (their owner folds them into the data tests); the check of the metrics'
own input moved to ``tests/metrics/test_validation.py``.
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pandas as pd
import pytest

from voxmetrics.data import detect_format, read_embeddings, read_scores, read_table, write_scores
from voxmetrics.errors import IgnoredEmbeddingsWarning, VoxMetricsInputError

HEADER = "trial_id,trial_speaker,enrol_speaker,score\n"
GOOD_ROWS = "t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n"


def _csv(body: str, header: str = HEADER) -> bytes:
    return (header + body).encode()


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _raises(match: str):
    return pytest.raises(VoxMetricsInputError, match=match)


# ------------------------------------------------------------------ files and encodings


@pytest.mark.parametrize("data", [b"", b"  \n\n\t\n"])
def test_empty_file(data, tmp_path):
    with _raises(r"scores\.csv: the file is empty; upload the file that holds the data"):
        read_scores(data, name="scores.csv")
    (tmp_path / "empty.csv").write_bytes(data)
    with _raises(r"empty\.csv: the file is empty"):
        read_scores(tmp_path / "empty.csv")
    with _raises("the file is empty"):
        detect_format(data)
    with _raises(r"meta\.csv: the file is empty"):
        read_embeddings(
            _npz(embeddings=np.eye(2), utt_ids=np.array(["a", "b"])),
            metadata=data,
            metadata_name="meta.csv",
        )


def test_missing_file(tmp_path):
    with _raises(r"nope\.csv: no such file .*check the path"):
        read_scores(tmp_path / "nope.csv")


def test_non_utf8_text_says_offset_line_and_fix():
    with _raises(
        r"upload\.csv: not UTF-8 text: byte 0xff at byte offset 0 \(line 1\).*UTF-16"
        r".*Re-save the file with UTF-8 encoding"
    ):
        read_scores(b"\xff\xfe garbage", name="upload.csv")
    latin1 = _csv("t1,a,a,0.9\nt1,a,b,0.1\nt2,Jos\xe9,a,0.2\n".replace("\xe9", "é"))
    latin1 = latin1.replace("é".encode(), b"\xe9")
    offset = latin1.index(b"\xe9")
    with _raises(rf"byte 0xe9 at byte offset {offset} \(line 4\)"):
        read_scores(latin1, name="s.csv")
    with _raises(r"line 4"):
        detect_format(latin1)
    with _raises("not UTF-8"):
        read_scores(latin1, format="csv")
    with _raises(r"meta\.csv: not UTF-8"):
        read_table(b"utt_id,speaker\nu1,\xe9\n", name="meta.csv")


def test_garbage_binary_is_not_a_recognised_format():
    garbage = bytes(range(256)) * 8
    msg = (
        r"junk\.bin: not a recognised format \(binary content\); supported formats are: long "
        r"scores CSV or Parquet .*NPZ.*Kaldi.*utt2spk"
    )
    with _raises(msg):
        read_scores(garbage, name="junk.bin")
    with _raises("not a recognised format"):
        detect_format(garbage)
    with _raises("not a recognised format"):
        read_embeddings(garbage, metadata=b"x")
    with _raises(r"gzip-compressed data; decompress it first"):
        detect_format(b"\x1f\x8b\x08\x00" + bytes(200))
    with _raises(r"not a recognised format \(text whose first line is 'hello'\)"):
        detect_format(b"hello\nworld and more words here\n")


def test_zip_that_is_not_npz():
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("audio/a.wav", b"RIFF")
    with _raises(r"a zip archive that is not an NPZ \(it contains 'audio/a\.wav'\)"):
        read_scores(buf.getvalue())


def test_pickled_data_is_refused(tmp_path):
    with _raises(r"x\.pkl: pickled data is refused for safety.*save with numpy\.savez / to CSV"):
        read_scores(pickle.dumps({"scores": [1, 2]}), name="x.pkl")
    with _raises("pickled data is refused for safety"):
        detect_format(pickle.dumps([1]))


def test_pickled_arrays_are_refused(tmp_path):
    obj = np.array([{"a": 1}, None], dtype=object)
    np.save(tmp_path / "emb.npy", obj, allow_pickle=True)
    meta = b"utt_id,speaker,role,split\nu1,a,enrol,eval\nu2,b,trial,eval\n"
    with _raises(
        r"emb\.npy: the array is a Python object array; pickled arrays are refused "
        r"for safety.*Save plain numeric / string arrays"
    ):
        read_embeddings(tmp_path / "emb.npy", metadata=meta)
    np.savez(
        tmp_path / "s.npz",
        scores=np.eye(2),
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b"], dtype=object),
        enrol_speakers=np.array(["a", "b"]),
    )
    with _raises(
        r"s\.npz: array 'trial_speakers' is a Python object array; pickled arrays "
        "are refused"
    ):
        read_scores(tmp_path / "s.npz")
    with _raises("pickled arrays are refused"):
        read_embeddings(
            _npz(embeddings=np.eye(2), utt_ids=np.array(["u1", "u2"], dtype=object)), metadata=meta
        )


# ------------------------------------------------------------------ long CSV / Parquet


def test_missing_columns_are_listed_with_what_is_required():
    data = _csv("t1,a,0.9\n", header="trial_id,trial_speaker,value\n")
    with _raises(
        r"s\.csv: missing column\(s\) enrol_speaker, score in the header \(line 1\); a "
        r"long scores file needs columns trial_id, trial_speaker, enrol_speaker, "
        r"score\. Found: trial_id, trial_speaker, value\. Rename or add the columns"
    ):
        read_scores(data, name="s.csv")


def test_missing_columns_parquet():
    buf = io.BytesIO()
    pd.DataFrame({"trial_id": ["t1"], "score": [0.5]}).to_parquet(buf)
    with _raises(
        r"s\.parquet: missing column\(s\) trial_speaker, enrol_speaker among the "
        "columns; a long scores file needs columns"
    ):
        read_scores(buf.getvalue(), name="s.parquet")


def test_header_only():
    with _raises(r"s\.csv: has a header but no data rows; add one row per"):
        read_scores(_csv(""), name="s.csv")


def test_non_numeric_score_gives_line_and_value():
    data = _csv("t1,a,a,0.9\nt1,a,b,high\nt2,b,a,0.2\nt2,b,b,0.8\n")
    with _raises(
        r"s\.csv: line 3: score 'high' is not a number; write each score as a plain "
        r"number, e\.g\. 0\.73"
    ):
        read_scores(data, name="s.csv")
    data = _csv('t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,"0,2"\nt2,b,b,x\n')
    with _raises(
        r"line 4: score '0,2' is not a number \(2 non-numeric values in all\).*use "
        r"'\.' as the decimal separator"
    ):
        read_scores(data, name="s.csv")


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("nan", "missing or NaN"),
        ("NaN", "missing or NaN"),
        ("", "missing or NaN"),
        ("inf", r"infinite \(inf\)"),
        ("-Infinity", r"infinite \(-inf\)"),
    ],
)
def test_nan_or_infinite_score_gives_line(value, what):
    data = _csv(f"t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,{value}\nt2,b,b,0.8\n")
    with _raises(
        rf"s\.csv: line 4: score is {what}; every \(trial, enrolled\) pair needs a "
        "finite score, so fix the value or re-run the scoring"
    ):
        read_scores(data, name="s.csv")


def test_nan_score_parquet_gives_row():
    df = pd.read_csv(io.BytesIO(_csv(GOOD_ROWS)))
    df.loc[2, "score"] = np.nan
    buf = io.BytesIO()
    df.to_parquet(buf)
    with _raises(r"s\.parquet: row 3: score is missing or NaN"):
        read_scores(buf.getvalue(), name="s.parquet")


def test_duplicate_pair_gives_both_lines_and_the_pair():
    data = _csv(GOOD_ROWS + "t1,a,b,0.3\n")
    with _raises(
        r"s\.csv: line 6: duplicate \(trial, enrolled\) pair: trial 't1' x enrolled 'b' "
        r"already appears on line 3 .*keep one score per pair"
    ):
        read_scores(data, name="s.csv")


def test_incomplete_matrix_is_a_sparse_trial_list():
    rows = [
        (f"t{i}", f"spk{i}", f"spk{j}", 0.1 * i - 0.01 * j) for i in range(20) for j in range(20)
    ]
    drop = {(3, 7), (3, 8), *((5, j) for j in range(10))}
    df = pd.DataFrame(
        [r for k, r in enumerate(rows) if divmod(k, 20) not in drop],
        columns=["trial_id", "trial_speaker", "enrol_speaker", "score"],
    )
    sm = read_scores(df.to_csv(index=False).encode(), name="s.csv")
    assert sm.n_pairs == 388 and sm.shape == (20, 20)
    assert not sm.mask[3, 7] and not sm.mask[5, :10].any() and sm.mask[5, 10:].all()
    assert sm.complete_rows().n_trials == 18  # t3 and t5 miss pairs


def test_wrong_number_of_fields_in_a_csv_line():
    with _raises(r"s\.csv: line 3 has 5 fields but the header has 4"):
        read_scores(_csv("t1,a,a,0.9\nt1,a,b,0.1,extra\n"), name="s.csv")


def test_empty_label_cell():
    with _raises(
        r"s\.csv: line 3: column 'trial_speaker' is empty.*every row needs a "
        "trial_speaker"
    ):
        read_scores(_csv("t1,a,a,0.9\nt1,,b,0.1\n"), name="s.csv")


def test_trial_speaker_must_be_constant_per_trial():
    data = _csv("t1,a,a,0.9\nt1,b,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n")
    with _raises(
        r"s\.csv: line 3: trial 't1' has trial_speaker 'b' but line 2 gives 'a'.*same "
        "value on all the trial's rows"
    ):
        read_scores(data, name="s.csv")


def test_attribute_must_be_constant_per_trial():
    data = _csv(
        "t1,a,a,0.9,F\nt1,a,b,0.1,F\nt2,b,a,0.2,M\nt2,b,b,0.8,F\n", header=HEADER.strip() + ",sex\n"
    )
    with _raises(r"s\.csv: line 5: trial 't2' has sex 'F' but line 4 gives 'M'"):
        read_scores(data, name="s.csv")


def test_fewer_than_two_enrolled():
    with _raises(r"s\.csv: only 1 enrolled identity; a 1-to-N search needs at least 2"):
        read_scores(_csv("t1,a,a,0.9\nt2,b,a,0.1\n"), name="s.csv")


def test_no_trial_with_an_enrolled_speaker():
    data = _csv("t1,x,a,0.9\nt1,x,b,0.1\nt2,y,a,0.2\nt2,y,b,0.8\n")
    with _raises(r"s\.csv: none of the 2 trials has an enrolled speaker.*same labels"):
        read_scores(data, name="s.csv")


def test_wrong_explicit_format_and_stray_trials(tmp_path, small_sm):
    (path,) = write_scores(small_sm, tmp_path / "s.parquet", format="parquet")
    with _raises(r"s\.parquet: format='csv' was given but the file is PARQUET"):
        read_scores(path, format="csv")
    with _raises(
        r"s\.parquet: format='npz' was given but the file is PARQUET; pass the right "
        "format or format='auto'"
    ):
        read_scores(path, format="npz")
    with _raises(
        r"format='parquet' was given but the file does not start with the PARQUET "
        "signature"
    ):
        read_scores(_csv(GOOD_ROWS), format="parquet")
    with _raises(r"s\.parquet: a trials \(key\) file was given but the scores are parquet"):
        read_scores(path, trials=b"a t1 target\n")
    with _raises(r"unknown format 'xls'; use one of auto, csv, parquet, npz, kaldi"):
        read_scores(path, format="xls")  # type: ignore[arg-type]


def test_truncated_parquet(tmp_path, small_sm):
    (path,) = write_scores(small_sm, tmp_path / "s.parquet", format="parquet")
    with _raises(r"s\.parquet: starts like a Parquet file but has no Parquet footer"):
        read_scores(path.read_bytes()[:200], name="s.parquet")


# ------------------------------------------------------------------ NPZ


def test_npz_missing_arrays():
    with _raises(
        r"s\.npz: missing array\(s\) trial_speakers, enrol_speakers; a score NPZ needs "
        r"arrays scores, trial_ids, trial_speakers, enrol_speakers\. Found: scores, "
        "trial_ids"
    ):
        read_scores(_npz(scores=np.eye(2), trial_ids=np.array(["t1", "t2"])), name="s.npz")


def test_npz_inconsistent_lengths():
    data = _npz(
        scores=np.eye(3)[:, :2],
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b", "a"]),
        enrol_speakers=np.array(["a", "b"]),
        attr_sex=np.array(["F", "M"]),
    )
    with _raises(
        r"s\.npz: shape mismatch: NPZ arrays of inconsistent lengths: 'scores' is 3 x 2 "
        r"\(trials x enrolled\) but 'trial_ids' has shape \(2,\); 'attr_sex' has shape "
        r"\(2,\); give trial_ids, trial_speakers and every attr_<name> one entry per "
        r"row \(3\)"
    ):
        read_scores(data, name="s.npz")


def test_npz_non_numeric_scores():
    data = _npz(
        scores=np.array([["a", "b"], ["c", "d"]]),
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b"]),
        enrol_speakers=np.array(["a", "b"]),
    )
    with _raises(r"s\.npz: array 'scores' has dtype <U1; it must hold numbers"):
        read_scores(data, name="s.npz")


def test_npy_is_not_a_score_file():
    buf = io.BytesIO()
    np.save(buf, np.eye(3))
    with _raises(r"s\.npy: not a score file: an NPY file holds one bare array without labels"):
        read_scores(buf.getvalue(), name="s.npy")


# ------------------------------------------------------------------ Kaldi


SCORES = b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n"
KEY = b"a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n"


def test_kaldi_scores_without_trials_say_to_pass_the_key():
    with _raises(
        r"vpc\.scores: Kaldi / VoicePrivacy scores .* pass the key file .*trials=\.\.\. "
        r"\(command line: --trials KEY\)"
    ):
        read_scores(SCORES, name="vpc.scores")


@pytest.mark.parametrize(
    ("scores", "line", "fields"),
    [
        (b"a t1 0.9\nb t1 0.1 0.3\na t2 0.2\nb t2 0.8\n", 2, 4),
        (b"a t1 0.9\nb t1\na t2 0.2\nb t2 0.8\n", 2, 2),
        (b"a t1 0.9 x\nb t1 0.1\na t2 0.2\nb t2 0.8\n", 1, 4),
        (b"a t1 0.9\nb t1 0.1\n\na t2 0.2\nb t2 0.8 1 2\n", 5, 5),
    ],
)
def test_kaldi_scores_line_without_three_fields(scores, line, fields):
    with _raises(
        rf"vpc\.scores: line {line} has {fields} fields; every line must be "
        r"`enrol_id trial_id score` \(3 whitespace-separated fields\)"
    ):
        read_scores(scores, trials=KEY, name="vpc.scores", format="kaldi")


def test_kaldi_non_numeric_score():
    with _raises(r"vpc\.scores: line 3: score 'oops' is not a number"):
        read_scores(b"a t1 0.9\nb t1 0.1\na t2 oops\nb t2 0.8\n", trials=KEY, name="vpc.scores")


def test_kaldi_key_label_other_than_target():
    key = b"a t1 target\nb t1 nontarget\na t2 maybe\nb t2 target\n"
    with _raises(
        r"key: line 3: label 'maybe' is neither 'target' nor 'nontarget'; each key line "
        r"is `enrol_id trial_id target\|nontarget`"
    ):
        read_scores(SCORES, trials=key, trials_name="key")


def test_kaldi_key_with_two_targets_for_one_trial():
    key = KEY + b"b t1 target\n"
    with _raises(
        r"key: line 5: trial 't1' is marked target for enrolled 'b' but line 1 marks it "
        "target for 'a'; .*mark only one target line per trial"
    ):
        read_scores(SCORES, trials=key, trials_name="key")


def test_kaldi_key_that_does_not_match_the_scores():
    with _raises(
        r"key: the key file does not match vpc\.scores: none of its trial ids appears "
        "in the scores"
    ):
        read_scores(
            SCORES, trials=b"a x1 target\nb x2 target\n", trials_name="key", name="vpc.scores"
        )


def test_kaldi_key_bad_field_count():
    with _raises(
        r"key: line 2 has 2 fields; every line must be `enrol_id trial_id "
        r"target\|nontarget`"
    ):
        read_scores(SCORES, trials=b"a t1 target\nb t1\na t2 nontarget\n", trials_name="key")


def test_utt2spk_missing_trial_and_conflict():
    with _raises(
        r"u2s: 1 of 2 trial ids of vpc\.scores are not in this utt2spk file, e\.g\. "
        "'t2'; add a `utt_id speaker` line for every trial"
    ):
        read_scores(SCORES, trials=b"t1 a\nt9 b\n", trials_name="u2s", name="vpc.scores")
    with _raises(r"u2s: line 3: utterance 't1' has speaker 'b' but line 1 gives 'a'"):
        read_scores(SCORES, trials=b"t1 a\nt2 b\nt1 b\n", trials_name="u2s")


def test_trials_file_of_the_wrong_kind():
    with _raises(r"k: the trials file must be a Kaldi key .* but it looks like a kaldi file"):
        read_scores(SCORES, trials=SCORES, trials_name="k")


def test_key_file_given_as_the_scores():
    with _raises(
        r"key: not a score file: this is a Kaldi key file .*pass the scores file as "
        r"the source and this one as trials=\.\.\. \(command line: --trials\)"
    ):
        read_scores(KEY, name="key")


# ------------------------------------------------------------------ embeddings

META = b"utt_id,speaker,role,split\ne1,a,enrol,eval\ne2,b,enrol,eval\nt1,a,trial,eval\n"


def test_embeddings_need_metadata():
    with _raises(r"e\.npz: NPZ embeddings need a metadata file .*pass it with metadata=\.\.\."):
        read_embeddings(
            _npz(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "t1"])), name="e.npz"
        )


def test_npy_rows_vs_metadata_rows():
    buf = io.BytesIO()
    np.save(buf, np.eye(4))
    with _raises(
        r"e\.npy: shape mismatch: the NPY has 4 rows but meta\.csv has 3 utterance rows; "
        "the NPY's rows must follow the metadata's rows one to one"
    ):
        read_embeddings(buf.getvalue(), metadata=META, name="e.npy", metadata_name="meta.csv")


def test_npz_utt_ids_missing_or_extra():
    npz = _npz(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "t9"]))
    with _raises(
        r"meta\.csv: 1 of 3 utt_ids have no embedding in e\.npz, e\.g\. 't1'; remove "
        "those rows or add their embeddings"
    ):
        read_embeddings(npz, metadata=META, name="e.npz", metadata_name="meta.csv")
    # metadata listing a subset of the embeddings: the rest are ignored and counted
    npz = _npz(embeddings=np.eye(4), utt_ids=np.array(["e1", "x1", "e2", "t1"]))
    with pytest.warns(
        IgnoredEmbeddingsWarning,
        match=r"e\.npz: 1 of 4 embeddings have no row in meta\.csv, e\.g\. 'x1'",
    ):
        es = read_embeddings(npz, metadata=META, name="e.npz", metadata_name="meta.csv")
    assert es.meta["utt_id"].tolist() == ["e1", "e2", "t1"]
    np.testing.assert_array_equal(es.embeddings, np.eye(4)[[0, 2, 3]])


def test_npz_embeddings_inconsistent_lengths():
    npz = _npz(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2"]))
    with _raises(r"e\.npz: shape mismatch: 'embeddings' has shape \(3, 3\) and 'utt_ids' \(2,\)"):
        read_embeddings(npz, metadata=META, name="e.npz")


def test_metadata_problems_name_the_line():
    npz = _npz(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "t1"]))
    with _raises(
        r"meta\.csv: missing column\(s\) split in the header \(line 1\); embeddings "
        "metadata needs columns utt_id, speaker, role, split"
    ):
        read_embeddings(
            npz, metadata=b"utt_id,speaker,role\ne1,a,enrol\n", metadata_name="meta.csv"
        )
    bad_role = META.replace(b"t1,a,trial", b"t1,a,probe")
    with _raises(r"meta\.csv: line 4: role 'probe' is not allowed; use one of enrol, trial"):
        read_embeddings(npz, metadata=bad_role, metadata_name="meta.csv")
    dup = META + b"e2,b,enrol,eval\n"
    with _raises(r"meta\.csv: line 5: utt_id 'e2' already appears on line 3"):
        read_embeddings(npz, metadata=dup, metadata_name="meta.csv")


def test_metadata_given_as_the_embeddings():
    with _raises(
        r"m\.csv: not an embeddings file: this is the metadata; pass the embeddings "
        "file"
    ):
        read_embeddings(META, name="m.csv")


def test_parquet_embeddings_problems():
    buf = io.BytesIO()
    pd.DataFrame(
        {"utt_id": ["e1"], "speaker": ["a"], "role": ["enrol"], "split": ["eval"]}
    ).to_parquet(buf)
    with _raises(r"e\.parquet: no 'embedding' column; an embeddings Parquet needs columns"):
        read_embeddings(buf.getvalue(), name="e.parquet")
    buf = io.BytesIO()
    pd.DataFrame(
        {
            "utt_id": ["e1", "e2"],
            "speaker": ["a", "b"],
            "role": ["enrol"] * 2,
            "split": ["eval"] * 2,
            "embedding": [[1.0, 0.0], [0.0, 1.0, 0.0]],
        }
    ).to_parquet(buf)
    with _raises(
        r"e\.parquet: shape mismatch: row 2 has an embedding of length 3 but row 1 has "
        "2; all embeddings must have the same dimension"
    ):
        read_embeddings(buf.getvalue(), name="e.parquet")
    with _raises(r"e\.parquet: an embeddings Parquet file carries its own metadata"):
        read_embeddings(buf.getvalue(), name="e.parquet", metadata=META)


def test_kaldi_writer_refuses_labels_it_cannot_hold(tmp_path):
    from voxmetrics.data import ScoreMatrix

    sm = ScoreMatrix.from_arrays(
        np.eye(2), trial_ids=["t 1", "t2"], trial_speakers=["a", "b"], enrol_speakers=["a", "b"]
    )
    with _raises(
        r"trial id 't 1' is empty or contains whitespace or a quote, which the Kaldi "
        "format cannot hold; write CSV, Parquet or NPZ instead"
    ):
        write_scores(sm, tmp_path / "s", format="kaldi")


def test_bom_only_and_other_separators():
    with _raises(r"s\.csv: the file is empty \(only a byte-order mark or blank lines\)"):
        read_scores(b"\xef\xbb\xbf\n", name="s.csv")
    with _raises(r"s\.csv: not a recognised format \(semicolon-separated text; use commas"):
        read_scores(b"trial_id;trial_speaker;enrol_speaker;score\nt1;a;a;0,5\n", name="s.csv")
    with _raises(r"s\.tsv: not a recognised format \(tab-separated text; use commas"):
        read_scores(b"trial_id\ttrial_speaker\tenrol_speaker\tscore\n", name="s.tsv")


def test_boolean_scores_are_not_numbers():
    with _raises(r"s\.csv: line 2: score 'True' is not a number"):
        read_scores(_csv("t1,a,a,True\nt1,a,b,False\n"), name="s.csv")


def test_first_data_line_longer_than_the_header():
    with _raises(r"s\.csv: line 2 has 5 fields but the header has 4; give every line the same"):
        read_scores(_csv("t1,a,a,0.9,x\nt1,a,b,0.1\n"), name="s.csv")


# ------------------------------------------------------------------ NPZ scores that are not finite


def _npz_file(path, scores):
    t, n = scores.shape
    enrol = np.array([f"s{j}" for j in range(n)])
    np.savez(
        path,
        scores=scores,
        trial_ids=np.array([f"u{i}" for i in range(t)]),
        trial_speakers=enrol[np.arange(t) % n],
        enrol_speakers=enrol,
    )
    return path


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_npz_gives_the_same_message(tmp_path, bad):
    from voxmetrics.data import read_scores

    s = np.zeros((4, 3), dtype=np.float32)
    s[2, 1] = bad
    with pytest.raises(VoxMetricsInputError) as exc:
        read_scores(_npz_file(tmp_path / "x.npz", s))
    if np.isnan(bad):
        assert str(exc.value).startswith(
            "x.npz: array 'scores' holds 1 NaN value(s) of T x N = 4 x 3 = 12 (first: row 3, "
            "column 2) and no 'mask'"
        ), exc.value
    else:
        assert str(exc.value) == (
            f"x.npz: 1 score(s) are NaN or infinite (first: trial 'u2', enrolled 's1' = {bad}); "
            "every score must be a finite number."
        )
