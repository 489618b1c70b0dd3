"""ggml's block encodings (Q8_0, Q4_0, Q6_K, Q4_K; design/QUANT.md §3) in pure
Python: a quantizer that makes valid blocks of given values, the
dequantizer that defines what the blocks mean (every product rounded to
float32 in ggml's order), and the GGUF file the backend-op test writes when
a case has block-encoded weights. The quantizers need not match
llama-quantize's choices: a kernel must read any valid block; the
dequantizer must match the format (checked against the `gguf` package's
numpy dequantizers by tools/gen-golden/check_blocks.py)."""

import struct

from numerics import bf16_bits, f16, f32

# name: (ggml type, elements a block, bytes a block)
BLOCKS = {"q8_0": (8, 32, 34), "q4_0": (2, 32, 18), "q6_k": (14, 256, 210),
          "q4_k": (12, 256, 144)}
PLAIN = {"f32": (0, "<f"), "f16": (1, "<e"), "bf16": (30, None)}
MLIR_NAME = {"q8_0": "Q8_0", "q4_0": "Q4_0", "q6_k": "Q6_K", "q4_k": "Q4_K"}


def _half(v):
    return struct.pack("<e", f16(v))


def _unhalf(b):
    return struct.unpack("<e", b)[0]


def quantize_q8_0(x):
    amax = max(abs(v) for v in x)
    d = f16(amax / 127.0)
    q = [0 if d == 0 else max(-127, min(127, round(v / d))) for v in x]
    return _half(d) + struct.pack("<32b", *q)


def dequantize_q8_0(b):
    d = _unhalf(b[:2])
    return [f32(d * q) for q in struct.unpack("<32b", b[2:34])]


def quantize_q4_0(x):
    # ggml's rule: d from the value of largest magnitude, with its sign.
    m = max(x, key=abs)
    d = f16(m / -8.0)
    inv = 0.0 if d == 0 else 1.0 / d
    q = [max(0, min(15, int(v * inv + 8.5))) for v in x]
    return _half(d) + bytes(q[j] | (q[j + 16] << 4) for j in range(16))


def dequantize_q4_0(b):
    d = _unhalf(b[:2])
    qs = b[2:18]
    q = [v & 0xF for v in qs] + [v >> 4 for v in qs]
    return [f32(d * (v - 8)) for v in q]


def quantize_q6_k(x):
    # Sub-blocks of 16 with their own int8 scale under one f16 d.
    sub = [max(abs(v) for v in x[16 * i:16 * i + 16]) / 31.0 for i in range(16)]
    d = f16(max(sub) / 127.0)
    sc = [0 if d == 0 else max(-128, min(127, round(s / d))) for s in sub]
    q = []
    for i, v in enumerate(x):
        step = f32(d * sc[i // 16])
        q.append(32 if step == 0 else max(0, min(63, round(v / step) + 32)))
    ql, qh = bytearray(128), bytearray(64)
    for half in range(2):
        for quarter in range(4):
            for l in range(32):
                v = q[128 * half + 32 * quarter + l]
                at = 64 * half + 32 * (quarter % 2) + l
                ql[at] |= (v & 0xF) << (4 * (quarter // 2))
                qh[32 * half + l] |= (v >> 4) << (2 * quarter)
    return bytes(ql) + bytes(qh) + struct.pack("<16b", *sc) + _half(d)


def dequantize_q6_k(b):
    ql, qh = b[:128], b[128:192]
    sc = struct.unpack("<16b", b[192:208])
    d = _unhalf(b[208:210])
    out = [0.0] * 256
    for half in range(2):
        for quarter in range(4):
            for l in range(32):
                low = (ql[64 * half + 32 * (quarter % 2) + l] >> (4 * (quarter // 2))) & 0xF
                high = (qh[32 * half + l] >> (2 * quarter)) & 3
                s = sc[8 * half + l // 16 + 2 * quarter]
                out[128 * half + 32 * quarter + l] = f32(f32(d * s) * ((low | high << 4) - 32))
    return out


def quantize_q4_k(x):
    # Sub-blocks of 32, each q in 0..15 from its own minimum: a 6-bit scale
    # and min under the f16 d and dmin, packed as get_scale_min_k4 unpacks.
    subs = [x[32 * j:32 * j + 32] for j in range(8)]
    lows = [max(0.0, -min(s)) for s in subs]
    steps = [(max(s) + lo) / 15.0 for s, lo in zip(subs, lows)]
    d, dmin = f16(max(steps) / 63.0), f16(max(lows) / 63.0)
    sc = [0 if d == 0 else min(63, round(v / d)) for v in steps]
    m = [0 if dmin == 0 else min(63, round(v / dmin)) for v in lows]
    q = []
    for j, s in enumerate(subs):
        step, lo = f32(d * sc[j]), f32(dmin * m[j])
        q += [0 if step == 0 else max(0, min(15, round((v + lo) / step))) for v in s]
    packed = bytearray(12)
    for j in range(4):
        packed[j] = sc[j] | (sc[j + 4] >> 4) << 6
        packed[j + 4] = m[j] | (m[j + 4] >> 4) << 6
        packed[j + 8] = (sc[j + 4] & 0xF) | (m[j + 4] & 0xF) << 4
    qs = bytes(q[64 * c + l] | q[64 * c + 32 + l] << 4 for c in range(4) for l in range(32))
    return _half(d) + _half(dmin) + bytes(packed) + qs


def _scale_min_k4(s, j):
    if j < 4:
        return s[j] & 63, s[j + 4] & 63
    return (s[j + 4] & 0xF) | (s[j - 4] >> 6) << 4, (s[j + 4] >> 4) | (s[j] >> 6) << 4


def dequantize_q4_k(b):
    d, dmin = _unhalf(b[:2]), _unhalf(b[2:4])
    s, qs = b[4:16], b[16:144]
    out = []
    for j in range(8):
        sc, m = _scale_min_k4(s, j)
        step, lo = f32(d * sc), f32(dmin * m)
        c, shift = divmod(j, 2)
        out += [f32(f32(step * ((qs[32 * c + l] >> 4 * shift) & 0xF)) - lo) for l in range(32)]
    return out


QUANTIZE = {"q8_0": quantize_q8_0, "q4_0": quantize_q4_0, "q6_k": quantize_q6_k,
            "q4_k": quantize_q4_k}
DEQUANTIZE = {"q8_0": dequantize_q8_0, "q4_0": dequantize_q4_0, "q6_k": dequantize_q6_k,
              "q4_k": dequantize_q4_k}


def quantize(values, encoding):
    """(the bytes of `values` in blocks, the values they dequantize to)."""
    _, n, _ = BLOCKS[encoding]
    assert len(values) % n == 0
    data, back = b"", []
    for i in range(0, len(values), n):
        blk = QUANTIZE[encoding](values[i:i + n])
        data += blk
        back += DEQUANTIZE[encoding](blk)
    return data, back


def _string(s):
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


# GGUF array element types by the tag an Array names them with.
ARRAY_ELEMENTS = {"i32": (5, "<i"), "f32": (6, "<f"), "u32": (4, "<I"), "bool": (7, "<B")}


class Array:
    """A typed metadata array: Array("str", [...]) or Array("i32"|"f32"|"u32"|"bool", [...])."""

    def __init__(self, element, values):
        self.element, self.values = element, list(values)


def _value(v):
    """A metadata value: its GGUF type and bytes (str, int as u32 or i64 when
    negative or large, float as f32, an Array as its element type)."""
    if isinstance(v, Array):
        head = struct.pack("<I", 9)
        if v.element == "str":
            return head + struct.pack("<IQ", 8, len(v.values)) + b"".join(
                _string(x) for x in v.values)
        code, fmt = ARRAY_ELEMENTS[v.element]
        return head + struct.pack("<IQ", code, len(v.values)) + b"".join(
            struct.pack(fmt, x) for x in v.values)
    if isinstance(v, str):
        return struct.pack("<I", 8) + _string(v)
    if isinstance(v, bool):
        return struct.pack("<IB", 7, v)
    if isinstance(v, int):
        if 0 <= v < 2 ** 32:
            return struct.pack("<II", 4, v)
        return struct.pack("<Iq", 11, v)
    return struct.pack("<If", 6, v)


def write_gguf(path, tensors, alignment=32, metadata=None):
    """tensors: name -> (dtype, shape outermost first, flat values or the
    block bytes of a block encoding; a dtype not known here is taken as
    (ggml type, raw bytes)). Dims are written innermost first. metadata:
    key -> str | int | float | Array (default: an architecture of 'sgc-test')."""
    infos, blobs, offset = b"", [], 0
    for name in sorted(tensors):
        dtype, shape, payload = tensors[name]
        if isinstance(dtype, tuple):
            (ggml, blob), dtype = dtype, None
        elif dtype in BLOCKS:
            ggml, blob = BLOCKS[dtype][0], payload
        elif dtype == "bf16":
            ggml, blob = 30, b"".join(struct.pack("<H", bf16_bits(v)) for v in payload)
        else:
            ggml, fmt = PLAIN[dtype]
            blob = b"".join(struct.pack(fmt, v) for v in payload)
        offset += -offset % alignment
        infos += _string(name) + struct.pack("<I", len(shape))
        infos += b"".join(struct.pack("<Q", d) for d in reversed(shape))
        infos += struct.pack("<IQ", ggml, offset)
        blobs.append((offset, blob))
        offset += len(blob)
    metadata = metadata if metadata is not None else {"general.architecture": "sgc-test"}
    meta = b"".join(_string(k) + _value(v) for k, v in metadata.items())
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)) + meta + infos
    head += b"\0" * (-len(head) % alignment)
    data = bytearray()
    for at, blob in blobs:
        data += b"\0" * (at - len(data)) + blob
    with open(path, "wb") as f:
        f.write(head + bytes(data))
