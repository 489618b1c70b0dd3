"""The math of the sg ops the backend-op test runs, at the dialect's
rounding points (the ops' descriptions in dialects/SG/IR/*.td, which follow
Hugging Face transformers' eager bf16 path, ../design/gemma-text.md §10):
every op computes in f32 or wider and rounds its result once to the
activation dtype, except where HF rounds inside an op (RoPE's cos/sin and
products, attention's scores and probabilities, softcap's three steps).
Sums are taken in f64: the kernels' f32 sums differ from them by far less
than the tolerance. Rows are Python lists; a [T, heads, D] tensor is a list
of T lists of heads."""

import math

from numerics import ROUND, f32


def embed(table, ids, scale, r):
    return [[r(v * scale) for v in table[t]] for t in ids]


def rms_norm(rows, weight, eps, offset, r):
    out = []
    for x in rows:
        n = 1.0 / math.sqrt(sum(v * v for v in x) / len(x) + f32(eps))
        if weight is None:
            out.append([r(v * n) for v in x])
        else:
            out.append([r(v * n * (w + offset)) for v, w in zip(x, weight)])
    return out


def layer_norm(rows, weight, bias, eps, r):
    out = []
    for x in rows:
        mean = sum(x) / len(x)
        var = sum((v - mean) ** 2 for v in x) / len(x)
        n = 1.0 / math.sqrt(var + f32(eps))
        out.append([r((v - mean) * n * w + b) for v, w, b in zip(x, weight, bias)])
    return out


def linear(rows, weight, r):
    """y = x · Wᵀ, W as [N][K] rows."""
    return [[r(math.fsum(a * b for a, b in zip(x, w))) for w in weight] for x in rows]


def gelu_tanh(rows, r):
    c = math.sqrt(2.0 / math.pi)
    return [[r(0.5 * z * (1.0 + math.tanh(c * (z + 0.044715 * z * z * z)))) for z in x]
            for x in rows]


def mul(a, b, r):
    return [[r(u * v) for u, v in zip(x, y)] for x, y in zip(a, b)]


def add(a, b, r):
    return [[r(u + v) for u, v in zip(x, y)] for x, y in zip(a, b)]


def layer_scalar(rows, s, r):
    return [[r(v * s) for v in x] for x in rows]


def softcap(rows, cap, r):
    return [[r(r(math.tanh(r(v / cap))) * cap) for v in x] for x in rows]


def split_heads(rows, heads):
    d = len(rows[0]) // heads
    return [[x[h * d:(h + 1) * d] for h in range(heads)] for x in rows]


def merge_heads(t):
    return [[v for head in x for v in head] for x in t]


def heads_op(t, fn):
    """fn applied to every head vector of a [T, heads, D] tensor."""
    return [[fn(head) for head in x] for x in t]


def inv_freq(theta, dim, rotated):
    """HF's f32 table: 1 / f32(theta ^ f32(2k / dim)) for the `rotated`
    first frequencies, 0 for the rest of dim / 2."""
    return [f32(1.0 / f32(theta ** f32(2 * k / dim))) if k < rotated else 0.0
            for k in range(dim // 2)]


def rope(t, positions, freqs, r):
    """rotate_half RoPE over the full head width: pairs d <-> d + D/2."""
    out = []
    for x, p in zip(t, positions):
        angles = [f32(f32(p) * f) for f in freqs]
        cos = [r(math.cos(a)) for a in angles]
        sin = [r(math.sin(a)) for a in angles]
        row = []
        for head in x:
            half = len(head) // 2
            y = [0.0] * len(head)
            for d in range(half):
                y[d] = r(r(head[d] * cos[d]) + r(-head[d + half] * sin[d]))
                y[d + half] = r(r(head[d + half] * cos[d]) + r(head[d] * sin[d]))
            row.append(y)
        out.append(row)
    return out


def attention(q, k, v, positions, window, scale, r):
    """Causal attention of the queries at `positions` over all keys before
    them (k, v hold every position from 0); `window` > 0 keeps the keys with
    p - j < window. GQA: query head h reads kv head h // (Hq / Hkv)."""
    group = len(q[0]) // len(k[0])
    out = []
    for t, p in enumerate(positions):
        row = []
        for h, qh in enumerate(q[t]):
            g = h // group
            keys = [j for j in range(p + 1) if window == 0 or p - j < window]
            s = [r(r(math.fsum(a * b for a, b in zip(qh, k[j][g]))) * scale) for j in keys]
            m = max(s)
            e = [math.exp(x - m) for x in s]
            total = math.fsum(e)
            prob = [r(x / total) for x in e]
            row.append([r(math.fsum(pj * v[j][g][d] for pj, j in zip(prob, keys)))
                        for d in range(len(v[0][0]))])
        out.append(row)
    return out
