"""Writes B8, a gemma-3-4b-it-shaped text model with random weights, as a
BF16 GGUF (llama.cpp's gemma3 layout) that llama-quantize and sgc both read.

usage: python make_gguf.py OUT.gguf [LAYERS]

The shapes are Gemma 3 4B's text decoder (hidden 2560, ffn 10240, 8 query
heads and 4 KV heads of 256, 34 layers, vocabulary 262,144 with the tied
embedding): every K is a multiple of 256, so llama-quantize's Q4_0 recipe
gives the embedding Q6_K and every matrix Q4_0 (B1's 640-wide embedding
falls back to Q8_0). Weights: normal, std 0.02 (embedding 0.03); norms
stored as 1 + w, as Gemma 3 GGUFs store them. The vocabulary is a
placeholder with Gemma's special ids and 256 byte pieces (llama.cpp's loader
needs one). No RoPE scaling: speed does not depend on it. Tensors are
generated and written one at a time (7.8 GB file, ~1 GB of memory).
"""

import struct
import sys

import numpy as np

OUT = sys.argv[1]
LAYERS = int(sys.argv[2]) if len(sys.argv) > 2 else 34
HIDDEN, FFN, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 2560, 10240, 8, 4, 256, 262144
ALIGN = 32
F32, BF16 = 0, 30

META = {
    "general.architecture": "gemma3",
    "general.name": "sgc-b8",
    "gemma3.context_length": 131072,
    "gemma3.block_count": LAYERS,
    "gemma3.embedding_length": HIDDEN,
    "gemma3.feed_forward_length": FFN,
    "gemma3.attention.head_count": HEADS,
    "gemma3.attention.head_count_kv": KV_HEADS,
    "gemma3.attention.key_length": HEAD_DIM,
    "gemma3.attention.value_length": HEAD_DIM,
    "gemma3.attention.sliding_window": 1024,
    "gemma3.attention.layer_norm_rms_epsilon": 1e-6,
    "gemma3.rope.freq_base": 1e6,
    "tokenizer.ggml.model": "llama",
    "tokenizer.ggml.pre": "default",
    "tokenizer.ggml.bos_token_id": 2,
    "tokenizer.ggml.eos_token_id": 1,
    "tokenizer.ggml.padding_token_id": 0,
    "tokenizer.ggml.unknown_token_id": 3,
    "tokenizer.ggml.add_bos_token": True,
    "tokenizer.ggml.add_space_prefix": False,
}
PIECES = ["<pad>", "<eos>", "<bos>", "<unk>"] + ["<0x%02X>" % b for b in range(256)]
PIECES += ["p%d" % i for i in range(len(PIECES), VOCAB)]
TYPES = [3, 3, 3, 2] + [6] * 256 + [1] * (VOCAB - 260)


def string(s):
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


def value(v):
    if isinstance(v, bool):
        return struct.pack("<IB", 7, v)
    if isinstance(v, str):
        return struct.pack("<I", 8) + string(v)
    if isinstance(v, int):
        return struct.pack("<II", 4, v)
    return struct.pack("<If", 6, v)


def array(code, items, fmt=None):
    body = b"".join(string(x) for x in items) if fmt is None else np.asarray(
        items, dtype=fmt).tobytes()
    return struct.pack("<IIQ", 9, code, len(items)) + body


def tensors():
    """name -> (ggml type, dims outermost first, std or None for a norm)."""
    t = {"token_embd.weight": (BF16, [VOCAB, HIDDEN], 0.03),
         "output_norm.weight": (F32, [HIDDEN], None)}
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    for i in range(LAYERS):
        p = "blk.%d." % i
        for name, dims in (("attn_q", [q, HIDDEN]), ("attn_k", [kv, HIDDEN]),
                           ("attn_v", [kv, HIDDEN]), ("attn_output", [HIDDEN, q]),
                           ("ffn_gate", [FFN, HIDDEN]), ("ffn_up", [FFN, HIDDEN]),
                           ("ffn_down", [HIDDEN, FFN])):
            t[p + name + ".weight"] = (BF16, dims, 0.02)
        for name, n in (("attn_norm", HIDDEN), ("attn_q_norm", HEAD_DIM),
                        ("attn_k_norm", HEAD_DIM), ("post_attention_norm", HIDDEN),
                        ("ffn_norm", HIDDEN), ("post_ffw_norm", HIDDEN)):
            t[p + name + ".weight"] = (F32, [n], None)
    return t


def nbytes(kind, dims):
    return int(np.prod(dims)) * (4 if kind == F32 else 2)


def data(rng, kind, dims, std):
    n = int(np.prod(dims))
    if std is None:  # a norm: 1 + w, w small
        return (1.0 + 0.1 * rng.standard_normal(n, dtype=np.float32)).astype("<f4").tobytes()
    x = rng.standard_normal(n, dtype=np.float32) * np.float32(std)
    bits = x.view(np.uint32)
    bits += np.uint32(0x7FFF) + ((bits >> 16) & 1)  # round to nearest even bf16
    return (bits >> 16).astype("<u2").tobytes()


def main():
    table = tensors()
    meta = b"".join(string(k) + value(v) for k, v in META.items())
    meta += string("tokenizer.ggml.tokens") + array(8, PIECES)
    meta += string("tokenizer.ggml.scores") + array(6, [0.0] * VOCAB, "<f4")
    meta += string("tokenizer.ggml.token_type") + array(5, TYPES, "<i4")
    infos, offset, order = b"", 0, list(table)
    for name in order:
        kind, dims, _ = table[name]
        offset += -offset % ALIGN
        infos += string(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in reversed(dims))
        infos += struct.pack("<IQ", kind, offset)
        offset += nbytes(kind, dims)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(table), len(META) + 3) + meta + infos
    head += b"\0" * (-len(head) % ALIGN)
    rng = np.random.default_rng(8)
    written = 0
    with open(OUT, "wb") as f:
        f.write(head)
        for i, name in enumerate(order):
            kind, dims, std = table[name]
            pad = -written % ALIGN
            f.write(b"\0" * pad)
            written += pad
            blob = data(rng, kind, dims, std)
            f.write(blob)
            written += len(blob)
            print("\r%d/%d tensors, %.1f GB" % (i + 1, len(order), written / 1e9),
                  end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


main()
