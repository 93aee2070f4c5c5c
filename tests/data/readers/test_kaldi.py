"""Kaldi score files (voxmetrics.data.readers.kaldi): with a key or utt2spk; keys read in pieces."""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from hostile_inputs import GRID_ENROLLED as N
from hostile_inputs import GRID_SPEAKERS as SPK
from hostile_inputs import GRID_TRIALS as T
from hostile_inputs import kaldi_grid, refused
from hypothesis import given, settings

import voxmetrics.data.readers.kaldi as kaldi_reader
from tests.data.readers.input_error_cases import KALDI_KEY, KALDI_SCORES, input_error
from voxmetrics.cli import main
from voxmetrics.data import (
    read_scores,
    write_scores,
)
from voxmetrics.errors import ExcludedTrialsWarning, IncompleteScoresWarning, VoxMetricsInputError

from .round_trip_cases import assert_same_matrix, without_attributes
from .round_trip_cases import studies as _studies


def test_kaldi_round_trip_with_key(small_sm, tmp_path):
    path = tmp_path / "study.scores"
    written = write_scores(small_sm, path, format="kaldi")
    assert written == [path, tmp_path / "study.scores.key"]
    expected = without_attributes(small_sm)  # Kaldi files cannot hold attributes
    for got in (
        read_scores(path, trials=written[1]),
        read_scores(path, trials=written[1], format="kaldi"),
        read_scores(path.read_bytes(), trials=written[1].read_bytes()),
    ):
        assert_same_matrix(got, expected)
        assert got.attributes == {}
    lines = written[1].read_text().splitlines()
    assert len(lines) == small_sm.n_trials * small_sm.n_enrolled
    assert sum(ln.endswith(" target") for ln in lines) == small_sm.n_trials


def test_kaldi_round_trip_with_utt2spk(small_sm, tmp_path):
    path = tmp_path / "study.scores"
    write_scores(small_sm, path, format="kaldi")
    u2s = tmp_path / "utt2spk"
    u2s.write_text(
        "".join(
            f"{u} {s}\n" for u, s in zip(small_sm.trial_ids, small_sm.trial_speakers, strict=True)
        )
        + "enrol_only_utt spk0\n"  # utterances that are not trials are ignored
    )
    assert_same_matrix(read_scores(path, trials=u2s), without_attributes(small_sm))
    assert_same_matrix(
        read_scores(path.read_bytes(), trials=u2s.read_bytes(), format="kaldi"),
        without_attributes(small_sm),
    )


def test_kaldi_trial_without_target_line_counts_its_pairs_not_in_1_to_n(tmp_path):
    scores = b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\na t3 0.4\nb t3 0.3\n"
    key = b"a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\na t3 nontarget\n"
    with pytest.warns(ExcludedTrialsWarning, match="1 of 3 trials"):
        sm = read_scores(scores, trials=key)
    assert sm.n_excluded_trials == 0
    assert sm.trial_ids.tolist() == ["t1", "t2"]  # the 1-to-N trials
    assert sm.trial_speakers.tolist() == ["a", "b"]
    # every key line counts for the pairwise metrics, as the VoicePrivacy scripts count them
    assert sm.others.trial_ids.tolist() == ["t3"]
    view = sm.pairwise_view()
    assert view.n_pairs == 6 and sorted(view.non.tolist()) == [0.1, 0.2, 0.3, 0.4]


def test_kaldi_key_may_be_uppercase_and_crlf():
    scores = b"a t1 0.9\r\nb t1 0.1\r\na t2 0.2\r\nb t2 0.8\r\n"
    key = b"a t1 TARGET\r\nb t1 nontarget\r\n\r\nb t2 Target\r\n"
    sm = read_scores(scores, trials=key)
    assert sm.trial_speakers.tolist() == ["a", "b"]


@settings(max_examples=25, deadline=None)
@given(sm=_studies(whitespace=False))
def test_any_kaldi_labels_round_trip_exactly(sm):
    with tempfile.TemporaryDirectory() as tmp:
        scores, key = write_scores(sm, Path(tmp) / "s", format="kaldi")
        assert_same_matrix(read_scores(scores.read_bytes(), trials=key.read_bytes()), sm)


def test_numeric_looking_labels_stay_text():
    scores = b"007 1.0 0.9\n008 1.0 0.1\n007 2 0.2\n008 2 0.8\n"
    key = b"007 1.0 target\n008 2 target\n"
    sm = read_scores(scores, trials=key)
    assert sm.enrol_speakers.tolist() == ["007", "008"]
    assert sm.trial_ids.tolist() == ["1.0", "2"]
    assert sm.trial_speakers.tolist() == ["007", "008"]


_S = b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n"


_K = "a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n"


# a master key: 40 more trials listed enrolled by enrolled, so each recurs in several pieces
_MASTER = _K + "".join(
    f"{e} x{i} {'target' if e == 'a' else 'nontarget'}\n" for e in "ab" for i in range(40)
)


_OK = "".join(f"a x{i} nontarget\n" for i in range(30))


KEY_PIECE_CASES = {
    "master-key": (_S, _MASTER, True),
    "master-key-refused": (_S, _MASTER, False),
    "master-key-first": (_S, _MASTER[len(_K) :] + _K, True),
    "short-then-long": (_S, _K + "a x1\n" + _OK + "a x2 nontarget extra\n" + _OK, True),
    "short-only": (_S, _K + _OK + "a x1\n" + _OK + "b x3\n", True),
    "long-only": (_S, _OK + _K + "a x2 nontarget extra\n" + _OK, True),
    "wide-first-line": (_S, "\n \n" + "a t1 target extra\n" + _K + _OK, True),
    "wide-first-line-then-wider": (
        _S,
        "\n\n" + "a t1 target e\n" + _OK + "a x1 nontarget e f\n",
        True,
    ),
    "narrow-first-line": (_S, "\n" + "a t1\n" + _OK + _K, True),
    "one-field-line": (_S, _K + _OK + "lonely\n", True),
    "bom-crlf-cr-blank": (
        _S,
        "\ufeff\r\n\n" + _K.replace("\n", "\r\n", 2) + "\n  \n\t\n" + _OK.replace("\n", "\r") + _K,
        True,
    ),
    "first-line-ends-in-cr": (_S, "a t1 target\r" + "\n" * 5 + _OK + _K[12:], True),
    "blank-middle": (_S, _K + "\n" * 200 + " \t \n" * 50 + _OK, True),
    "tabs-and-spaces": (_S, _K.replace(" ", " \t  ") + "  " + _OK.replace(" ", "\t"), True),
    "numeric-ids": (
        b"007 1.0 0.9\n7 1.0 0.1\n007 12 0.2\n7 12 0.8\n",
        "".join(f"{e} {t} nontarget\n" for t in range(40) for e in ("007", "7"))
        + "007 1.0 target\n7 1.0 nontarget\n7 12 target\n007 12 nontarget\n",
        True,
    ),
    "bad-label-late": (_S, _MASTER + "a t1 maybe\n", True),
    "target-clash-across-pieces": (_S, _K + _OK + "b t1 target\n", True),
    "duplicate-lines": (_S, _K + _OK + _K + _OK, True),
    "unscored-pair": (_S, _K + "c t1 nontarget\n" + _K, True),
    "unscored-pair-refused": (_S, _K + "c t1 nontarget\n" + _K, False),
    "no-trial-matches": (_S, _OK, True),
    "no-target-line-matches": (_S, _K.replace("target", "nontarget") + _OK, True),
    "unknown-speaker": (_S, _K.replace("a t1 target", "a t1 nontarget") + _OK, True),
}


def _key_outcome(scores: bytes, key: str, allow: bool) -> tuple:
    """What reading ``scores`` with ``key`` gives: the matrix or the message, and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sm = read_scores(
                scores, trials=key.encode(), allow_incomplete=allow, name="s", trials_name="k"
            )
            got: tuple = (
                np.nan_to_num(sm.scores, nan=-9.0).tolist(),
                None if sm.mask is None else sm.mask.tolist(),
                sm.trial_ids.tolist(),
                sm.trial_speakers.tolist(),
                sm.enrol_speakers.tolist(),
            )
        except VoxMetricsInputError as exc:
            got = ("refused", str(exc))
    return (*got, [f"{type(w.message).__name__}: {w.message}" for w in caught])


@pytest.mark.parametrize("case", list(KEY_PIECE_CASES))
def test_a_key_read_in_pieces_reads_as_one_piece(monkeypatch, case):
    scores, key, allow = KEY_PIECE_CASES[case]
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 1 << 30)
    whole = _key_outcome(scores, key, allow)
    for size in (1, 5, 64, 300):
        monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", size)
        assert _key_outcome(scores, key, allow) == whole, size


def _random_key(seed: int) -> tuple[bytes, str, bool]:
    """A small scores file and a key with odd ids, blank lines, line ends and bad lines."""
    r = random.Random(seed)
    trials = r.sample(
        ["t1", "t2", "007", "7", "1.0", "x", "12", "abc", "0", "nan"], r.randint(1, 6)
    )
    enrol = r.sample(["a", "b", "007", "7", "d", "NA"], r.randint(2, 4))
    lines = []
    for t in trials + r.sample(["z1", "z2", "5", "05"], r.randint(0, 3)):
        own = r.choice([*enrol, "other"])
        for e in enrol:
            if r.random() > 0.1:
                label = "target" if e == own else "nontarget"
                lines.append(
                    [e, t, r.choice([label, "TARGET", "bogus"]) if r.random() < 0.05 else label]
                )
            if r.random() < 0.05:
                lines.append(lines[-1] if lines else [e, t, "target"])
    if r.random() < 0.3:
        r.shuffle(lines)
    bad = r.choice([0, 0, 0.03, 0.06])
    text = []
    for f in lines:
        x = r.random()
        f = f[:2] if x < bad else [*f, "extra"] if x < 2 * bad else f
        end = r.choice(["\n", "\n", "\n", "\r\n", "\r"]) if r.random() < 0.2 else "\n"
        text.append(r.choice([" ", "\t", "  ", " \t "]).join(f) + end)
        if r.random() < 0.07:
            text.append(r.choice(["\n", "  \n", "\r\n"]))
    key = r.choice(["", "", "\ufeff", "\n\n", " \n"]) + "".join(text)
    scored = trials if r.random() < 0.5 else trials[: max(1, len(trials) // 2)]
    scores = "".join(f"{e} {t} {r.random():.3f}\n" for t in scored for e in enrol)
    return scores.encode(), key, r.random() < 0.5


@pytest.mark.parametrize("seed", range(40))
def test_random_keys_read_in_pieces_read_as_one_piece(monkeypatch, seed):
    scores, key, allow = _random_key(seed)
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 1 << 30)
    whole = _key_outcome(scores, key, allow)
    for size in (1, 16):
        monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", size)
        assert _key_outcome(scores, key, allow) == whole, size


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("short-then-long", r"k: line 36 has 4 fields; every line must be `enrol_id trial_id"),
        ("short-only", r"k: line 35 has 2 fields"),
        ("one-field-line", r"k: line 35 has 1 field;"),
        ("bad-label-late", r"k: line 85: label 'maybe' is neither 'target' nor 'nontarget'"),
        (
            "target-clash-across-pieces",
            r"k: line 35: trial 't1' is marked target for enrolled 'b' but line 1",
        ),
        (
            "unscored-pair-refused",
            r"1 of the 9 pairs listed in the key have no score in s \(first: line 5,",
        ),
        (
            "master-key-refused",
            r"40 of the 42 trials listed in the key \(80 of its 84 lines\).*line 5, trial 'x0'",
        ),
        ("no-trial-matches", r"none of its trial ids appears in the scores"),
    ],
)
def test_a_key_read_in_pieces_keeps_its_messages(monkeypatch, case, message):
    scores, key, allow = KEY_PIECE_CASES[case]
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 7)
    with pytest.raises(VoxMetricsInputError, match=message):
        read_scores(scores, trials=key.encode(), allow_incomplete=allow, name="s", trials_name="k")


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("wide-first-line", "k: line 3 has 4 fields"),  # counted after the blank lines
        ("wide-first-line-then-wider", "k: line 1 has 4 fields"),  # as the parser says it
        ("narrow-first-line", "k: line 1 has 2 fields"),
    ],
)
def test_a_first_line_of_the_wrong_width_is_named_as_in_one_piece(monkeypatch, case, message):
    # detect_format refuses such a key before; the parser still says the same in pieces
    key = KEY_PIECE_CASES[case][1].encode()
    layout = "enrol_id trial_id target|nontarget"
    with pytest.raises(VoxMetricsInputError, match=message) as whole:
        kaldi_reader._read_fields(key, "k", 3, layout, numeric_last=False)
    for size in (1, 7, 1 << 30):
        monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", size)
        with pytest.raises(VoxMetricsInputError) as pieces:
            kaldi_reader._scan_key(key, "k", np.array(["t1"]))
        assert str(pieces.value) == str(whole.value)


def test_a_master_key_in_pieces_through_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 64)
    (tmp_path / "scores").write_bytes(_S)
    (tmp_path / "key").write_text(_MASTER)
    argv = ["evaluate", str(tmp_path / "scores"), "--trials", str(tmp_path / "key")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "key: 40 of the 42 trials listed in the key (80 of its 84 lines)" in err
    assert "first: line 5, trial 'x0'" in err and "Traceback" not in err
    assert main([*argv, "--allow-incomplete", "--json", str(tmp_path / "out.json")]) == 0
    assert "40 of the 42 trials" in capsys.readouterr().err


_MEMORY_CHILD = textwrap.dedent(
    """
    import sys, warnings
    import voxmetrics.data.readers.kaldi as kaldi
    from voxmetrics.data.readers import read_scores
    kaldi._PIECE_BYTES = 1 << 16  # the 1 MiB pieces of a 230 MB key, scaled to this one
    warnings.simplefilter("ignore")  # the unscored trials, counted (asked for)
    # the same path on a tiny key first: imports and first allocations are not the key's
    read_scores(b"a t1 0.9\\nb t1 0.1\\n", trials=b"a t1 target\\nb t1 nontarget\\nb t2 target\\n",
                allow_incomplete=True)
    def kib(field):  # VmHWM: this process's peak (ru_maxrss may hold the parent's, at fork)
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field))
    rss = kib("VmRSS")
    sm = read_scores(sys.argv[1], trials=sys.argv[2], allow_incomplete=True)
    print(kib("VmHWM") - rss, sm.n_pairs)
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_master_key_is_read_within_three_times_its_size(tmp_path):
    # the 10^7-line master key (2 lines per trial, 288 pairs scored) scaled to 2 x 10^5
    rng = np.random.default_rng(0)
    own = rng.integers(0, 10_000, 100_000)
    other = (own + 5_000) % 10_000
    key = "".join(
        f"spk{a} utt{i} target\nspk{b} utt{i} nontarget\n"
        for i, (a, b) in enumerate(zip(own, other, strict=True))
    )
    scores = "".join(f"spk{own[i]} utt{i} 0.9\nspk{other[i]} utt{i} 0.1\n" for i in range(144))
    (tmp_path / "key").write_text(key)
    (tmp_path / "scores").write_text(scores)
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, str(tmp_path / "scores"), str(tmp_path / "key")],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    peak_kib, pairs = map(int, out.stdout.split())
    assert pairs == 288
    size = (tmp_path / "key").stat().st_size
    assert peak_kib * 1024 <= 3 * size, (
        f"{peak_kib / 1024:.1f} MiB for a {size / 2**20:.1f} MiB key"
    )


KALDI_CASES = {
    "text-score": (b"a t1 high\nb t1 0.1\n", r"line 1"),
    "ragged": (b"a t1 0.9\nb t1\n", r"line 2"),
    "nul": (b"a t1 0.9\x00\n", r"not a recognised|binary"),
}


@pytest.mark.parametrize("case", list(KALDI_CASES))
def test_malformed_kaldi_gets_one_message(case):
    data, match = KALDI_CASES[case]
    key = b"a t1 target\nb t1 nontarget\n"
    refused(read_scores, data, trials=key, name="s.scores", match=r"s\.scores.*" + match)


def test_kaldi_scores_cut_with_their_complete_key_are_refused():
    scores, key = kaldi_grid(trial_major=False)
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
    scores, key = kaldi_grid(trial_major=False)
    with pytest.warns(IncompleteScoresWarning, match=r"19 pair\(s\) are left out"):
        sm = read_scores(
            "".join(scores[:29]).encode(), trials="".join(key).encode(), allow_incomplete=True
        )
    # trial t5 lost its pair with its own speaker (s5): its listed pairs stay, all non-mated
    assert sm.n_pairs == 29 and sm.n_excluded_trials == 0


def test_kaldi_with_utt2spk_cut_inside_a_speaker_is_refused():
    scores, _ = kaldi_grid(trial_major=False)
    u2s = "".join(f"t{i} {SPK[i % N]}\n" for i in range(T)).encode()
    refused(
        read_scores,
        "".join(scores[:40]).encode(),
        trials=u2s,
        name="scores",
        match=r"rows end early.*enrolled speaker by enrolled speaker",
    )


def test_a_blank_first_line_is_skipped_and_lines_keep_their_numbers():
    kaldi = b"\n\na t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n"
    key = b"\na t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n"
    assert read_scores(kaldi, trials=key).shape == (2, 2)
    csv = b"\ntrial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.9\nt1,a,b,x\n"
    refused(read_scores, csv, name="s.csv", match=r"s.csv: line 4: score 'x' is not a number")


def test_a_scores_file_cut_between_two_trials_is_refused():
    scores, key = kaldi_grid()
    cut = "".join(scores[: 2 * N]).encode()  # trial-major: stops exactly after trial t1
    with pytest.raises(VoxMetricsInputError) as info:
        read_scores(cut, trials="".join(key).encode(), name="scores", trials_name="key")
    msg = str(info.value)
    assert f"{T - 2:,} of the {T:,} trials listed in the key" in msg
    assert "no score at all in scores" in msg and "cut between two trials" in msg
    assert "allow_incomplete" in msg and "--allow-incomplete" in msg


def test_a_master_key_is_read_with_allow_incomplete_and_its_unscored_trials_counted():
    scores, key = kaldi_grid()
    extra = [f"s0 x{i} nontarget\n" for i in range(100)] + ["s0 x1 maybe\n"]  # never used
    with pytest.warns(IncompleteScoresWarning, match=r"no score at all"):
        sm = read_scores(
            "".join(scores[: 2 * N]).encode(),
            trials="".join(key + extra).encode(),
            allow_incomplete=True,
        )
    assert sm.shape == (2, N) and sm.n_pairs == 2 * N


# ----------------------------------------------------------------------------------------------
# Bad Kaldi scores, keys and utt2spk files: each message names the file, the line and the fix
# ----------------------------------------------------------------------------------------------


def test_kaldi_scores_without_trials_say_to_pass_the_key():
    with input_error(
        r"vpc\.scores: Kaldi / VoicePrivacy scores .* pass the key file .*trials=\.\.\. "
        r"\(command line: --trials KEY\)"
    ):
        read_scores(KALDI_SCORES, name="vpc.scores")


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
    with input_error(
        rf"vpc\.scores: line {line} has {fields} fields; every line must be "
        r"`enrol_id trial_id score` \(3 whitespace-separated fields\)"
    ):
        read_scores(scores, trials=KALDI_KEY, name="vpc.scores", format="kaldi")


def test_kaldi_non_numeric_score():
    with input_error(r"vpc\.scores: line 3: score 'oops' is not a number"):
        read_scores(
            b"a t1 0.9\nb t1 0.1\na t2 oops\nb t2 0.8\n", trials=KALDI_KEY, name="vpc.scores"
        )


def test_kaldi_key_label_other_than_target():
    key = b"a t1 target\nb t1 nontarget\na t2 maybe\nb t2 target\n"
    with input_error(
        r"key: line 3: label 'maybe' is neither 'target' nor 'nontarget'; each key line "
        r"is `enrol_id trial_id target\|nontarget`"
    ):
        read_scores(KALDI_SCORES, trials=key, trials_name="key")


def test_kaldi_key_with_two_targets_for_one_trial():
    key = KALDI_KEY + b"b t1 target\n"
    with input_error(
        r"key: line 5: trial 't1' is marked target for enrolled 'b' but line 1 marks it "
        "target for 'a'; .*mark only one target line per trial"
    ):
        read_scores(KALDI_SCORES, trials=key, trials_name="key")


def test_kaldi_key_that_does_not_match_the_scores():
    with input_error(
        r"key: the key file does not match vpc\.scores: none of its trial ids appears "
        "in the scores"
    ):
        read_scores(
            KALDI_SCORES, trials=b"a x1 target\nb x2 target\n", trials_name="key", name="vpc.scores"
        )


def test_kaldi_key_bad_field_count():
    with input_error(
        r"key: line 2 has 2 fields; every line must be `enrol_id trial_id "
        r"target\|nontarget`"
    ):
        read_scores(KALDI_SCORES, trials=b"a t1 target\nb t1\na t2 nontarget\n", trials_name="key")


def test_utt2spk_missing_trial_and_conflict():
    with input_error(
        r"u2s: 1 of 2 trial ids of vpc\.scores are not in this utt2spk file, e\.g\. "
        "'t2'; add a `utt_id speaker` line for every trial"
    ):
        read_scores(KALDI_SCORES, trials=b"t1 a\nt9 b\n", trials_name="u2s", name="vpc.scores")
    with input_error(r"u2s: line 3: utterance 't1' has speaker 'b' but line 1 gives 'a'"):
        read_scores(KALDI_SCORES, trials=b"t1 a\nt2 b\nt1 b\n", trials_name="u2s")


def test_trials_file_of_the_wrong_kind():
    with input_error(r"k: the trials file must be a Kaldi key .* but it looks like a kaldi file"):
        read_scores(KALDI_SCORES, trials=KALDI_SCORES, trials_name="k")
