"""Rounding to the dtypes the kernels store (bf16, f16, f32), seeded normal
values, and the safetensors files the backend-op test writes and reads.
Python's float is an f64; a value rounded here is exact in it."""

import json
import math
import random
import struct

DTYPES = ("bf16", "f16", "f32")
SAFETENSORS_NAME = {"bf16": "BF16", "f16": "F16", "f32": "F32"}
BYTES = {"bf16": 2, "f16": 2, "f32": 4}


def f32(x):
    """x rounded to the nearest float32 (ties to even)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bf16_bits(x):
    bits = struct.unpack("<I", struct.pack("<f", f32(x)))[0]
    if (bits & 0x7F800000) == 0x7F800000:  # inf / nan keep their class
        return (bits >> 16) | (0x40 if bits & 0x7FFFFF else 0)
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


def bf16(x):
    """x rounded to the nearest bfloat16 (ties to even), via float32 as the
    kernels round an f32 value."""
    return struct.unpack("<f", struct.pack("<I", bf16_bits(x) << 16))[0]


def f16(x):
    return struct.unpack("<e", struct.pack("<e", f32(x)))[0]


ROUND = {"bf16": bf16, "f16": f16, "f32": f32}


def encode(values, dtype):
    if dtype == "bf16":
        return b"".join(struct.pack("<H", bf16_bits(v)) for v in values)
    fmt = "<e" if dtype == "f16" else "<f"
    return b"".join(struct.pack(fmt, v) for v in values)


class Normal:
    """Seeded N(0, 1) values: Python's Mersenne Twister, the same on every
    platform for a given seed."""

    def __init__(self, seed):
        self.random = random.Random(seed)

    def values(self, n, sigma=1.0, mean=0.0):
        return [mean + sigma * self.random.gauss(0.0, 1.0) for _ in range(n)]

    def ints(self, n, below):
        return [self.random.randrange(below) for _ in range(n)]


def write_safetensors(path, tensors):
    """tensors: name -> (dtype, shape, flat values); each value is rounded
    to its dtype by the encoding."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, values = tensors[name]
        assert len(values) == math.prod(shape), name
        blob = encode(values, dtype)
        header[name] = {"dtype": SAFETENSORS_NAME[dtype], "shape": list(shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """name -> (shape, flat values) for the F32 and I32 tensors of a file
    (what sgc-run --dump-logits writes)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        fmt = {"F32": "f", "I32": "i"}[t["dtype"]]
        raw = data[8 + n + begin:8 + n + end]
        out[name] = (t["shape"], list(struct.unpack("<%d%s" % (len(raw) // 4, fmt), raw)))
    return out
