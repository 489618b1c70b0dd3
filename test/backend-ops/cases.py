"""The backend-op test's cases: one line each. A case is an op (or the few
ops a fusion turns into one kernel) at one shape and weight dtype; it runs
in bf16 and f32 activations on every target. A new kernel family or weight
encoding is covered by a new line here."""

import math
from collections import namedtuple

Case = namedtuple("Case", "name kind params")


def case(name, kind, **params):
    return Case(name, kind, params)


CASES = [
    # The tiny models' shapes (hidden 96, heads of 16 and 64).
    case("embed", "embed", width=96),
    case("linear-96x64", "linear", k=96, n=64),
    case("norm-linear-96x256", "norm_linear", k=96, n=256, offset=1),
    case("gated-mlp-96x192", "gated_mlp", k=96, n=192),
    case("softcap-head-96x512", "softcap_head", k=96, n=512, cap=30.0),
    case("row-chain-96", "row_chain", width=96),
    case("attn-sliding-4x2x16-w4", "attention", heads=4, kv_heads=2, head_dim=16,
         window=4, scale=1.0),
    case("attn-full-4x1x64-partial", "attention", heads=4, kv_heads=1, head_dim=64,
         window=0, scale=1.0, fraction=0.25, v_from_k=True),
    case("layer-norm-96", "layer_norm", width=96, targets=("cpu",)),
    # Wider: several tiles and warps per row, K past one chunk.
    case("linear-512x320", "linear", k=512, n=320),
    case("norm-linear-384x192", "norm_linear", k=384, n=192, offset=0),
    case("attn-sliding-8x4x128-w6", "attention", heads=8, kv_heads=4, head_dim=128,
         window=6, scale=0.0883883476483184),
    # 8 q heads a kv head: tensor cores in decode from head_dim 128 (64 once
    # read q rows it never loaded).
    case("attn-full-16x2x64", "attention", heads=16, kv_heads=2, head_dim=64,
         window=0, scale=0.125),
    case("attn-full-16x2x128", "attention", heads=16, kv_heads=2, head_dim=128,
         window=0, scale=0.0883883476483184),
    # Gemma 3's V: no norm, so its cache write is a kernel of its own.
    case("attn-sliding-2x1x32-w5-raw-v", "attention", heads=2, kv_heads=1,
         head_dim=32, window=5, scale=0.25, v_norm=False),
    # The seeds' widths: Gemma 3's hidden size as K, the head geometries of
    # both seeds (head_dim 256 sliding; Gemma 4's full layers: head_dim 512,
    # 8 q heads a kv head, K = V, a quarter of the frequencies rotated).
    case("linear-3840x256", "linear", k=3840, n=256),
    case("attn-sliding-2x1x256-w4", "attention", heads=2, kv_heads=1, head_dim=256,
         window=4, scale=0.0625),
    case("attn-full-8x1x512-partial", "attention", heads=8, kv_heads=1, head_dim=512,
         window=0, scale=1.0, fraction=0.25, v_from_k=True),
    # The same two with the cache holding V only, the keys rebuilt from it
    # (keys_from_values, Gemma 4's default): every attention family reads
    # them, tensor cores in decode at head_dim 512.
    case("attn-full-4x1x64-partial-v-only", "attention", heads=4, kv_heads=1,
         head_dim=64, window=0, scale=1.0, fraction=0.25, v_from_k=True,
         keys_from_values=True),
    case("attn-full-8x1x512-partial-v-only", "attention", heads=8, kv_heads=1,
         head_dim=512, window=0, scale=1.0, fraction=0.25, v_from_k=True,
         keys_from_values=True),
    # Weight encodings other than bf16.
    case("embed-f16", "embed", width=96, wdtype="f16"),
    case("linear-f16-512x320", "linear", k=512, n=320, wdtype="f16"),
    # K = 80: two 32-weight chunks of bf16 pairs, then a tail of 8 pairs one
    # by one (prefill panels) and 16 lanes (decode rows).
    case("linear-f16-80x48", "linear", k=80, n=48, wdtype="f16"),
    case("norm-linear-f16-96x256", "norm_linear", k=96, n=256, offset=1, wdtype="f16"),
    # ggml's block encodings (GGUF weights), CPU only so far: every path of
    # the projection kernel (decode rows, prefill tiles and their lane
    # tails: 7 prompt rows are a tile of 6 and one more) and the gather.
    case("embed-q8_0", "embed", width=256, wdtype="q8_0", targets=("cpu",)),
    case("embed-q6_k", "embed", width=256, wdtype="q6_k", targets=("cpu",)),
    case("linear-q8_0-256x96", "linear", k=256, n=96, wdtype="q8_0", targets=("cpu",)),
    case("linear-q4_0-512x80", "linear", k=512, n=80, wdtype="q4_0", targets=("cpu",)),
    case("gated-mlp-q4_0-256x128", "gated_mlp", k=256, n=128, wdtype="q4_0",
         targets=("cpu",)),
    # Decode rows of Q8_0 / Q4_0 / Q6_K take int8 activations where the CPU
    # has AVX512-VNNI; past K = 6,144 four rows a pass (Int8Dot.h), here 6
    # passes and one row alone on each of 2 threads' 25 rows.
    case("linear-q4_0-6400x50", "linear", k=6400, n=50, wdtype="q4_0", targets=("cpu",)),
    case("softcap-head-q6_k-256x48", "softcap_head", k=256, n=48, cap=30.0,
         wdtype="q6_k", targets=("cpu",)),
    # Q4_K (Q4_K_M's base): the gather, every path of the projection and
    # past K = 6,144.
    case("embed-q4_k", "embed", width=256, wdtype="q4_k", targets=("cpu",)),
    case("linear-q4_k-512x80", "linear", k=512, n=80, wdtype="q4_k", targets=("cpu",)),
    case("gated-mlp-q4_k-256x256", "gated_mlp", k=256, n=256, wdtype="q4_k",
         targets=("cpu",)),
    case("linear-q4_k-6400x50", "linear", k=6400, n=50, wdtype="q4_k", targets=("cpu",)),
]

# Targets without a kernel for a case's op, and why (printed as skipped).
NO_KERNEL = {"cuda": "no CUDA kernel for the vision ops and block encodings yet"}

# Ids come from a table of this many rows: at most every output's width.
VOCAB = 48


def build(m, c):
    """Builds case `c` in model `m`; returns the output value."""
    p = dict(c.params)
    wdtype = p.pop("wdtype", "bf16")
    p.pop("targets", None)
    # The input rows: the embedding's (scale 2: exact in every dtype).
    x = m.embed(VOCAB, p.get("k", p.get("width", 96)),
                wdtype if c.kind == "embed" else "bf16", 2.0)
    kind = c.kind
    if kind == "embed":
        return x
    if kind == "linear":
        # An output norm, so that the projection is not the LM head.
        return m.rms_norm(m.linear(x, p["n"], wdtype, "w"), "out_norm")
    if kind == "norm_linear":
        n = m.rms_norm(x, "norm", offset=p["offset"])
        return m.linear(n, p["n"], wdtype, "w")
    if kind == "gated_mlp":
        u = m.rms_norm(x, "norm")
        g = m.gelu_tanh(m.linear(u, p["n"], wdtype, "gate"))
        h = m.mul(g, m.linear(u, p["n"], wdtype, "up"))
        return m.linear(h, p["k"], wdtype, "down")
    if kind == "softcap_head":
        return m.softcap(m.linear(m.rms_norm(x, "norm"), p["n"], wdtype, "head"),
                         p["cap"])
    if kind == "row_chain":
        h = m.add(x, m.rms_norm(x, "post_norm"))
        return m.layer_scalar(m.mul(h, m.rms_norm(h, "other_norm", offset=1)))
    if kind == "layer_norm":
        return m.layer_norm(x)
    if kind == "attention":
        return attention(m, x, wdtype, **p)
    raise ValueError("unknown case kind " + kind)


def attention(m, x, wdtype, heads, kv_heads, head_dim, window, scale,
              fraction=None, v_from_k=False, v_norm=True, keys_from_values=False):
    """Gemma's attention block without its output projection: q/k/v
    projections, QK-norm, RoPE, V-norm, the cache write and attention."""
    n = m.rms_norm(x, "input_norm")
    q = m.split_heads(m.linear(n, heads * head_dim, wdtype, "q"), heads)
    k_raw = m.split_heads(m.linear(n, kv_heads * head_dim, wdtype, "k"), kv_heads)
    v_raw = k_raw if v_from_k else m.split_heads(
        m.linear(n, kv_heads * head_dim, wdtype, "v"), kv_heads)
    theta = 1e6 if window == 0 else 1e4
    q = m.rope(m.rms_norm(q, "q_norm"), theta, fraction)
    k = m.rope(m.rms_norm(k_raw, "k_norm"), theta, fraction)
    v = m.rms_norm(v_raw, None, weighted=False) if v_norm else v_raw
    rebuild = (m.ssa["k_norm"], theta, fraction) if keys_from_values else None
    o = m.merge_heads(m.attention(q, k, v, window, scale, v_from_k, rebuild))
    return m.add(x, m.rms_norm(m.linear(o, x.shape[0], wdtype, "o"), "post_norm"))
