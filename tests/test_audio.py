"""Audio decoding, safe zips, the manifest, the pipeline's per-file failures and conditions.

No torch here: the pipeline runs with a stand-in extractor so these tests stay fast.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import soundfile as sf

from voxmetrics.data.model import EmbeddingSet
from voxmetrics.embeddings import (
    AudioDecodeError,
    conditions_frame,
    conditions_from_embeddings,
    decode_audio,
    extract_embeddings,
    extract_zip,
    read_manifest,
    resolve_audio_path,
    study_conditions,
)
from voxmetrics.errors import VoxMetricsInputError


def tone(seconds: float = 0.5, rate: int = 16000, freq: float = 220.0, channels: int = 1):
    t = np.arange(int(seconds * rate)) / rate
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    return np.stack([x, 0.5 * x], axis=1)[:, :channels] if channels > 1 else x


def encode(x: np.ndarray, rate: int, fmt: str, subtype: str | None = None) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, x, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("fmt", "subtype"),
    [("WAV", "PCM_16"), ("FLAC", None), ("OGG", "VORBIS"), ("MP3", "MPEG_LAYER_III")],
)
def test_each_format_decodes_to_mono_16k(fmt, subtype):
    if fmt not in sf.available_formats():
        pytest.skip(f"libsndfile {sf.__libsndfile_version__} cannot write {fmt}")
    w = decode_audio(encode(tone(0.5), 16000, fmt, subtype), sample_rate=16000, name=f"x.{fmt}")
    assert w.dtype == np.float32 and w.ndim == 1
    assert abs(w.size - 8000) <= 1200  # mp3 adds encoder delay / padding
    assert 0.1 < np.abs(w).max() <= 1.0


def test_stereo_is_mixed_down():
    w = decode_audio(encode(tone(0.5, channels=2), 16000, "WAV", "FLOAT"), sample_rate=16000)
    np.testing.assert_allclose(w, 0.75 * tone(0.5), atol=1e-6)


@pytest.mark.parametrize("rate", [8000, 44100])
def test_resampling_keeps_duration_and_pitch(rate):
    w = decode_audio(encode(tone(1.0, rate=rate), rate, "WAV", "FLOAT"), sample_rate=16000)
    assert w.size == 16000
    peak_hz = np.argmax(np.abs(np.fft.rfft(w))) * 16000 / w.size
    assert abs(peak_hz - 220) <= 2


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (encode(np.zeros(16000), 16000, "WAV"), "silent"),
        (encode(tone(0.1), 16000, "WAV"), "too short (0.10 s)"),
        (encode(tone(0.5), 16000, "WAV")[:30], "not a readable audio file"),
        (b"name,speaker\nu1,a\n" * 50, "not a readable audio file"),
        (b"", "not a readable audio file"),
    ],
    ids=["silence", "0.1s", "corrupt", "csv-renamed-wav", "empty"],
)
def test_bad_audio_gives_its_reason(data, needle):
    with pytest.raises(AudioDecodeError, match=r"bad\.wav") as info:
        decode_audio(data, name="bad.wav")
    assert needle in str(info.value)
    assert isinstance(info.value, VoxMetricsInputError)


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_zip_extracts_inside_root(tmp_path):
    root = extract_zip(zip_bytes({"a/b.wav": b"x", "c.wav": b"yz"}), tmp_path / "out")
    assert (root / "a" / "b.wav").read_bytes() == b"x"
    assert (root / "c.wav").read_bytes() == b"yz"


@pytest.mark.parametrize("member", ["../evil.wav", "/etc/evil.wav", "a/../../evil.wav", "C:/x.wav"])
def test_zip_refuses_paths_outside_root(tmp_path, member):
    with pytest.raises(VoxMetricsInputError, match="outside the extraction folder"):
        extract_zip(zip_bytes({"ok.wav": b"x", member: b"y"}), tmp_path / "out", name="up.zip")
    assert not (tmp_path / "evil.wav").exists()


def test_zip_refuses_expanded_size_over_cap(tmp_path):
    data = zip_bytes({"big.wav": b"\0" * 200_000})  # compresses to a few hundred bytes
    assert len(data) < 2000
    with pytest.raises(VoxMetricsInputError, match="over the cap"):
        extract_zip(data, tmp_path / "out", max_bytes=100_000)
    extract_zip(data, tmp_path / "ok", max_bytes=200_000)


def test_zip_lying_about_sizes_is_stopped_while_writing(tmp_path):
    data = bytearray(zip_bytes({"big.wav": b"\0" * 50_000}))
    # shrink the declared uncompressed size in the central directory to 10 bytes
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    with pytest.raises(VoxMetricsInputError, match=r"corrupt|cap"):
        extract_zip(bytes(data), tmp_path / "out", max_bytes=1000)


def test_not_a_zip(tmp_path):
    with pytest.raises(VoxMetricsInputError, match="not a readable zip"):
        extract_zip(b"hello", tmp_path)


def test_resolve_refuses_escape(tmp_path):
    assert resolve_audio_path(tmp_path, "a/b.wav") == (tmp_path / "a" / "b.wav").resolve()
    for bad in ("../x.wav", "/etc/passwd"):
        with pytest.raises(AudioDecodeError, match="outside the audio folder"):
            resolve_audio_path(tmp_path, bad)


MANIFEST = """utt_id,speaker,role,split,audio_path,system,sex
o_e1,a,enrol,eval,orig/a1.wav,original,F
o_t1,a,trial,eval,orig/a2.wav,original,F
o_e2,b,enrol,eval,orig/b1.wav,original,M
o_t2,b,trial,eval,orig/b2.wav,original,M
x_e1,a,enrol,eval,anon/a1.wav,B1,F
x_t1,a,trial,eval,anon/a2.wav,B1,F
x_e2,b,enrol,eval,anon/b1.wav,B1,M
x_t2,b,trial,eval,anon/b2.wav,B1,M
"""


def test_manifest_reads_and_defaults_system():
    df = read_manifest(MANIFEST.encode())
    assert len(df) == 8 and set(df["system"]) == {"original", "B1"}
    df2 = read_manifest(b"utt_id,speaker,role,split,audio_path\nu,a,enrol,eval,u.wav\n")
    assert df2["system"].tolist() == ["original"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("utt_id,speaker,role,split\nu,a,enrol,eval\n", "lacks column(s) audio_path"),
        ("utt_id,speaker,role,split,audio_path\nu,a,test,eval,u.wav\n", "role 'test'"),
        ("utt_id,speaker,role,split,audio_path\nu,a,enrol,eval,\n", "'audio_path' is empty"),
        (
            "utt_id,speaker,role,split,audio_path\nu,a,enrol,eval,1.wav\nu,a,trial,eval,2.wav\n",
            "more than once",
        ),
        ("", "not a readable CSV"),
    ],
)
def test_bad_manifest(text, needle):
    with pytest.raises(VoxMetricsInputError, match=r"m\.csv") as info:
        read_manifest(text.encode(), name="m.csv")
    assert needle in str(info.value)


class FakeExtractor:
    """Embeds a wave as (rms, peak, length): deterministic and torch-free."""

    name = "fake"
    identity = "fake-v1"
    sample_rate = 16000
    device = "cpu"
    padding_invariant = False

    def __init__(self) -> None:
        self.batches: list[int] = []

    def embed(self, waves):
        self.batches.append(len(waves))
        e = np.array([[np.sqrt(np.mean(w**2)), np.abs(w).max(), w.size / 1e4] for w in waves])
        return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)


def study_folder(tmp_path):
    for i, rel in enumerate(read_manifest(MANIFEST.encode())["audio_path"]):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        sf.write(p, tone(0.5 + 0.1 * (i % 2), freq=150 + 40 * i), 16000)
    return tmp_path


def test_pipeline_failures_are_per_file_and_the_rest_proceeds(tmp_path):
    root = study_folder(tmp_path)
    (root / "orig" / "b1.wav").write_bytes(b"not audio at all")  # renamed text
    sf.write(root / "anon" / "b2.wav", np.zeros(16000), 16000)  # silence
    (root / "anon" / "a1.wav").unlink()  # missing
    df = read_manifest(MANIFEST.encode())
    df.loc[7, "audio_path"] = "../outside.wav"
    calls = []
    res = extract_embeddings(
        df,
        audio_root=root,
        extractor=FakeExtractor(),
        cache_dir=False,
        progress=lambda f, m: calls.append((f, m)),
    )
    reasons = dict(zip(res.failures["utt_id"], res.failures["reason"], strict=True))
    assert set(reasons) == {"o_e2", "x_e1", "x_t2"}
    assert "not a readable audio file" in reasons["o_e2"]
    assert "not found" in reasons["x_e1"]
    assert "outside the audio folder" in reasons["x_t2"]
    assert res.embeddings is not None
    assert res.embeddings.meta["utt_id"].tolist() == ["o_e1", "o_t1", "o_t2", "x_t1", "x_e2"]
    assert calls[-1][0] == 1.0 and calls[-1][1].startswith("8/8")
    assert all(0 <= f <= 1 for f, _ in calls)


def test_pipeline_cache_makes_rerun_free(tmp_path):
    root = study_folder(tmp_path / "audio")
    df = read_manifest(MANIFEST.encode())
    first = FakeExtractor()
    a = extract_embeddings(df, audio_root=root, extractor=first, cache_dir=tmp_path / "c")
    second = FakeExtractor()
    b = extract_embeddings(df, audio_root=root, extractor=second, cache_dir=tmp_path / "c")
    assert a.n_cached == 0 and b.n_cached == 8 and second.batches == []
    np.testing.assert_allclose(a.embeddings.embeddings, b.embeddings.embeddings, atol=1e-7)
    other = FakeExtractor()
    other.identity = "fake-v2"  # another model never reads these entries
    c = extract_embeddings(df, audio_root=root, extractor=other, cache_dir=tmp_path / "c")
    assert c.n_cached == 0


def test_exact_batches_by_equal_length_padded_by_similar_length(tmp_path):
    root = study_folder(tmp_path / "audio")  # lengths alternate 0.5 s / 0.6 s
    df = read_manifest(MANIFEST.encode())
    exact, padded = FakeExtractor(), FakeExtractor()
    extract_embeddings(df, audio_root=root, extractor=exact, cache_dir=False, batch_size=8)
    extract_embeddings(
        df, audio_root=root, extractor=padded, cache_dir=False, batch_size=8, exact=False
    )
    assert sorted(exact.batches) == [4, 4] and padded.batches == [8]


def test_all_files_failing_gives_no_embeddings(tmp_path):
    df = read_manifest(MANIFEST.encode())
    res = extract_embeddings(df, audio_root=tmp_path, extractor=FakeExtractor(), cache_dir=False)
    assert res.embeddings is None and len(res.failures) == 8
    assert res.to_dict()["n_failed"] == 8


def test_conditions_ignorant_and_lazy_informed():
    meta = read_manifest(MANIFEST.encode())
    es = EmbeddingSet.from_arrays(np.random.default_rng(0).normal(size=(8, 4)), meta)
    conds = {c.name: c for c in conditions_from_embeddings(es)}
    assert list(conds) == ["original", "B1 / ignorant", "B1 / lazy-informed"]
    ign = conds["B1 / ignorant"].embeddings.meta
    assert set(ign.loc[ign["role"] == "enrol", "system"]) == {"original"}
    assert set(ign.loc[ign["role"] == "trial", "system"]) == {"B1"}
    assert set(conds["B1 / lazy-informed"].embeddings.meta["system"]) == {"B1"}
    sm = conds["B1 / ignorant"].embeddings.score_matrix("eval")
    assert sm.shape == (2, 2)
    only = conditions_from_embeddings(es, scenarios=("ignorant",))
    assert [c.scenario for c in only] == ["original", "ignorant"]
    with pytest.raises(VoxMetricsInputError, match="scenario 'x'"):
        conditions_from_embeddings(es, scenarios=("x",))


def test_study_conditions_and_their_table():
    meta = read_manifest(MANIFEST.encode())
    es = EmbeddingSet.from_arrays(np.random.default_rng(0).normal(size=(8, 4)), meta)
    conds = conditions_from_embeddings(es)
    study = study_conditions(conds, "ge2e")
    assert [c.name for c in study] == [f"ge2e: {c.name}" for c in conds]
    assert [c.attacker for c in study] == ["original", "ignorant", "lazy-informed"]
    for c, sc in zip(conds, study, strict=True):
        assert sc.embeddings is c.embeddings
        assert sc.eval.equals(c.embeddings.score_matrix("eval"))
        assert (sc.dev is None) == ("dev" not in c.embeddings.splits())
        assert sc.description == f"{c.scenario} attack on {c.system}, ge2e embeddings"
    table = conditions_frame(conds, "ge2e")
    assert table["Condition"].tolist() == [c.name for c in study]
    for row, c in zip(table.itertuples(), conds, strict=True):
        roles = c.embeddings.meta["role"]
        assert (row.Enrolment, row.Trials) == ((roles == "enrol").sum(), (roles == "trial").sum())
        assert row.Enrolment + row.Trials == len(c.embeddings.meta)
