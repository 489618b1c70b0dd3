"""Checks the backend-op test's pure-Python block dequantizers
(test/backend-ops/blocks.py) against the `gguf` package's numpy ones from
llama.cpp's tree, bit for bit, on random blocks with finite scales and on
blocks made by our quantizers. The test trusts those dequantizers as the
meaning of the format; this is what makes that trust earned.

    PYTHONPATH=$SGC_BENCH_WORK/llamacpp/src/gguf-py \\
        tools/gen-golden/.venv/bin/python tools/gen-golden/check_blocks.py

(bench/llamacpp/setup.sh fetches that tree.) Exits non-zero on a mismatch."""

import os
import random
import struct
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test", "backend-ops"))
import blocks  # noqa: E402

TYPES = {"q8_0": T.Q8_0, "q4_0": T.Q4_0, "q6_k": T.Q6_K, "q4_k": T.Q4_K}
# Where each block's f16 scales sit (Q4_K: d, then dmin).
SCALE_AT = {"q8_0": (0,), "q4_0": (0,), "q6_k": (208,), "q4_k": (0, 2)}


def random_block(rng, encoding):
    _, _, size = blocks.BLOCKS[encoding]
    raw = bytearray(rng.getrandbits(8) for _ in range(size))
    # A finite scale (an f16 of either sign, not inf or nan).
    for at in SCALE_AT[encoding]:
        raw[at:at + 2] = struct.pack("<e", rng.uniform(-0.05, 0.05))
    return bytes(raw)


def main():
    rng = random.Random(7)
    failures = 0
    for encoding, qtype in TYPES.items():
        n = blocks.BLOCKS[encoding][1]
        data = [random_block(rng, encoding) for _ in range(64)]
        values = [rng.gauss(0, 1) for _ in range(8 * n)]
        made, _ = blocks.quantize(values, encoding)
        size = blocks.BLOCKS[encoding][2]
        data += [made[i:i + size] for i in range(0, len(made), size)]
        theirs = quants.dequantize(np.frombuffer(b"".join(data), dtype=np.uint8),
                                   qtype).astype(np.float32)
        ours = np.array([v for blk in data for v in blocks.DEQUANTIZE[encoding](blk)],
                        dtype=np.float32)
        bad = np.flatnonzero(ours.view(np.uint32) != theirs.view(np.uint32))
        print("%-5s %d blocks: %s" % (encoding, len(data),
                                      "identical" if bad.size == 0 else
                                      "%d values differ, first at %d: ours %r, gguf %r"
                                      % (bad.size, bad[0], ours[bad[0]], theirs[bad[0]])))
        failures += bad.size != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
