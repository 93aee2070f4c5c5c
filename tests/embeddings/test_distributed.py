"""Embedding extraction on Dask (voxmetrics.embeddings.distributed) equals one machine's.

Extraction spread over a local Dask cluster gives the embeddings and failures of one machine
and shares the content-hash cache with the command line's ``extract --scheduler``; each worker
resolves ``device="auto"`` itself and loads its extractor once per device.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("distributed")

from dask_cases import local_client

import voxmetrics.distributed as dist
import voxmetrics.embeddings.distributed as edist
from voxmetrics.cli import main
from voxmetrics.errors import VoxMetricsInputError


@pytest.fixture(scope="module")
def client():
    with local_client() as c:
        yield c


def test_extraction_on_dask_equals_one_machine_and_shares_the_cache(client, tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("speechbrain")
    from extractor_cases import make_study, write_tiny_ecapa
    from metric_registry import forget_unimportable_modules

    from voxmetrics.data.readers import read_embeddings
    from voxmetrics.embeddings import extract_embeddings, load_extractor, read_manifest

    model_dir = write_tiny_ecapa(tmp_path / "tiny_ecapa", seed=1)
    manifest_path = make_study(tmp_path / "audio")
    (tmp_path / "audio" / "B1" / "a_trial.wav").write_bytes(b"not audio")  # one failure
    manifest = read_manifest(manifest_path)
    try:
        one = extract_embeddings(
            manifest,
            audio_root=tmp_path / "audio",
            batch_size=1,
            cache_dir=False,
            extractor=load_extractor(str(model_dir), device="cpu"),
        )
        seen = []
        got = dist.extract_embeddings_blockwise(
            manifest,
            audio_root=tmp_path / "audio",
            model=str(model_dir),
            client=client,
            device="cpu",
            batch_size=1,
            files_per_task=3,
            cache_dir=tmp_path / "cache",
            progress=lambda f, m: seen.append(f),
        )
        assert seen[-1] == 1.0  # (identical recordings may hit the cache across tasks)
        assert got.embeddings.meta.equals(one.embeddings.meta)
        np.testing.assert_array_equal(got.embeddings.embeddings, one.embeddings.embeddings)
        keys = ["utt_id", "audio_path"]  # (the reason quotes an object address)
        assert got.failures[keys].to_dict("records") == one.failures[keys].to_dict("records")
        assert len(got.failures) == 1
        # the CLI on the same cluster: every embedding now comes from the shared cache
        out = tmp_path / "emb.npz"
        status = main(
            [
                "extract",
                "--manifest",
                str(manifest_path),
                "--audio-root",
                str(tmp_path / "audio"),
                "--model",
                str(model_dir),
                "--device",
                "cpu",
                "--cache-dir",
                str(tmp_path / "cache"),
                "--out",
                str(out),
                "--scheduler",
                client.scheduler.address,
                "--files-per-task",
                "2",
            ]
        )
        summary = json.loads(capsys.readouterr().out)
        assert status == 0 and summary["n_cached"] == 7 and summary["n_failed"] == 1
        es = read_embeddings(out, metadata=tmp_path / "emb.csv")
        np.testing.assert_allclose(es.embeddings, one.embeddings.embeddings, rtol=0, atol=1e-7)
    finally:
        forget_unimportable_modules()


def test_workers_resolve_the_device_themselves_and_take_their_gpu(client, monkeypatch):
    """``device="auto"`` is resolved on the worker: CUDA where its torch sees a GPU (mocked)."""
    torch = pytest.importorskip("torch")
    import voxmetrics.embeddings as emb_mod

    loaded = []

    class FakeExtractor:
        def __init__(self, model, device):
            self.model, self.device = model, device

    def fake_load(model, *, device):
        loaded.append(device)
        return FakeExtractor(model, device)

    monkeypatch.setattr(emb_mod, "load_extractor", fake_load)
    monkeypatch.setattr(edist, "_EXTRACTORS", {})
    for has_gpu, want in ((True, "cuda"), (False, "cpu")):
        monkeypatch.setattr(torch.cuda, "is_available", lambda has_gpu=has_gpu: has_gpu)
        got = client.submit(edist._worker_extractor, "fake", "auto", pure=False).result()
        assert got.device == want  # the worker (same process here) saw the mocked GPU
        again = client.submit(edist._worker_extractor, "fake", "auto", pure=False).result()
        assert again is got  # loaded once per worker and device
    assert loaded == ["cuda", "cpu"]
    fut = client.submit(edist._worker_extractor, "fake", "cuda", pure=False)  # no GPU now
    with pytest.raises(VoxMetricsInputError, match="no CUDA GPU is available"):
        fut.result()
