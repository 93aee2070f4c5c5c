"""Cost of the input-limits layer: NPZ reading through voxmetrics.limits vs numpy.load.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_limits.py [--trials 22024] [--enrolled 4949] [--repeat 3]

Builds a seeded float32 score matrix (default 22,024 x 4,949, 0.44 GB) saved with
``numpy.savez`` (stored) and ``numpy.savez_compressed`` (deflate), then times
``numpy.load(..., allow_pickle=False)["scores"]`` and ``voxmetrics.limits.load_npz`` (header
checked before allocation, members decompressed in chunks within the byte and ratio caps,
straight into an array of the declared size), best of ``--repeat`` (``time.perf_counter``),
checks the arrays are equal (exit status 1 if not), and also times the refusal of a deflate
bomb that declares 1.1 GB. Not a test: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import io
import struct
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _bomb(n_mib: int) -> bytes:
    """A zip whose one member inflates to n_mib MiB of zeros and says so."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(b"\0" * 2**20) + c.flush(zlib.Z_FULL_FLUSH)
    data = block * n_mib + c.flush()
    crc = 0
    for _ in range(n_mib):
        crc = zlib.crc32(b"\0" * 2**20, crc)
    # by hand: local header + data + central directory of one deflated member
    name = b"scores.npy"
    local = (
        struct.pack(
            "<4s5H3L2H",
            b"PK\x03\x04",
            20,
            0,
            8,
            0,
            0x21,
            crc,
            len(data),
            n_mib * 2**20,
            len(name),
            0,
        )
        + name
    )
    central = (
        struct.pack(
            "<4s6H3L5H2L",
            b"PK\x01\x02",
            20,
            20,
            0,
            8,
            0,
            0x21,
            crc,
            len(data),
            n_mib * 2**20,
            len(name),
            0,
            0,
            0,
            0,
            0,
            0,
        )
        + name
    )
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(data), 0
    )
    return local + data + central + end


def main() -> int:
    from voxmetrics.errors import VoxMetricsInputError
    from voxmetrics.limits import load_npz

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=22_024)
    p.add_argument("--enrolled", type=int, default=4_949)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(args.trials, args.enrolled)).astype(np.float32)
    print(f"scores: {args.trials:,} x {args.enrolled:,} float32 = {scores.nbytes / 1e9:.2f} GB")
    ok = True
    for label, save in (("stored", np.savez), ("deflate", np.savez_compressed)):
        buf = io.BytesIO()
        save(buf, scores=scores)
        data = buf.getvalue()
        t_np, a = _best(
            lambda d=data: np.load(io.BytesIO(d), allow_pickle=False)["scores"], args.repeat
        )
        t_vm, b = _best(lambda d=data: load_npz(d, "bench.npz")["scores"], args.repeat)
        same = np.array_equal(a, b)
        ok &= same
        print(
            f"{label:8s} numpy.load {t_np * 1e3:9.1f} ms   limits.load_npz {t_vm * 1e3:9.1f} ms"
            f"   equal: {same}"
        )
    bomb = _bomb(1100)

    def refuse() -> str:
        try:
            load_npz(bomb, "bomb.npz")
        except VoxMetricsInputError as exc:
            return str(exc)
        return "NOT REFUSED"

    t_bomb, message = _best(refuse, args.repeat)
    print(
        f"bomb ({len(bomb) / 1e6:.1f} MB declaring 1.15 GB): refused in {t_bomb * 1e3:.2f} ms: "
        f"{message[:90]}..."
    )
    ok &= message != "NOT REFUSED"
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
