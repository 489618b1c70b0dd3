"""Checks a GGUF against the safetensors checkpoint it was converted from.

usage: python check_gguf.py MODEL.gguf CHECKPOINT.safetensors

With llama.cpp's gguf-py on PYTHONPATH (the vendored copy; convert.sh sets
it). Every checkpoint tensor must appear in the GGUF under its Gemma 3 name
(the table below, written from the GGUF spec's names, not taken from the
converter) and nothing else may be there:
  - bf16 tensors: the same shape (GGUF lists dims innermost first) and the
    same bytes, bit for bit;
  - norm vectors: llama.cpp stores Gemma's (1 + w) as f32, so the GGUF value
    must be the f32 sum 1 + w exactly (bf16 w is exact in f32, and the
    converter adds in f32).
Prints one line per kind and exits 1 naming the first tensor that differs.
"""

import json
import re
import struct
import sys

import numpy as np
from gguf import GGUFReader, GGMLQuantizationType

LAYER = {
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "post_attention_norm",
    "pre_feedforward_layernorm": "ffn_norm",
    "post_feedforward_layernorm": "post_ffw_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
TOP = {"embed_tokens": "token_embd", "norm": "output_norm"}


def gguf_name(hf):
    """GGUF name of an HF Gemma 3 tensor name (language_model. prefix optional)."""
    m = re.fullmatch(r"(?:language_model\.)?model\.(.+)\.weight", hf)
    if not m:
        return None
    rest = m.group(1)
    if rest in TOP:
        return TOP[rest] + ".weight"
    m = re.fullmatch(r"layers\.(\d+)\.(.+)", rest)
    if m and m.group(2) in LAYER:
        return f"blk.{m.group(1)}.{LAYER[m.group(2)]}.weight"
    return None


def read_safetensors(path):
    """{name: (dtype, shape, bytes)} of a single-file safetensors checkpoint."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        size = f.seek(0, 2)
        if n > size - 8:
            raise ValueError(f"header length {n} exceeds the file ({size} bytes)")
        f.seek(8)
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = (t["dtype"], tuple(t["shape"]), data[a:b])
    return out


def bf16_to_f32(raw):
    return (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def fail(msg):
    print(f"check_gguf: FAIL: {msg}")
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gguf_path, ckpt_path = sys.argv[1], sys.argv[2]
    try:
        ckpt = read_safetensors(ckpt_path)
    except (OSError, ValueError, KeyError, struct.error) as e:
        fail(f"{ckpt_path}: not a readable safetensors file ({type(e).__name__}: {e})")
    try:
        reader = GGUFReader(gguf_path)
    except (OSError, ValueError, KeyError, IndexError) as e:
        fail(f"{gguf_path}: not a readable GGUF file ({type(e).__name__}: {e})")
    tensors = {t.name: t for t in reader.tensors}
    seen = set()
    n_bits = n_norms = 0
    for hf, (dtype, shape, raw) in sorted(ckpt.items()):
        g = gguf_name(hf)
        if g is None:
            fail(f"{ckpt_path}: tensor '{hf}' has no Gemma 3 GGUF name")
        if g not in tensors:
            fail(f"{gguf_path}: tensor '{g}' (from '{hf}') is missing")
        seen.add(g)
        t = tensors[g]
        gshape = tuple(int(d) for d in reversed(list(t.shape)))
        if gshape != shape:
            fail(f"{gguf_path}: '{g}' has shape {list(gshape)}, '{hf}' {list(shape)}")
        graw = reader.data[t.data_offset:t.data_offset + t.n_bytes]
        if dtype != "BF16":
            fail(f"{ckpt_path}: '{hf}' is {dtype}, the check knows bf16 only")
        if t.tensor_type == GGMLQuantizationType.BF16:
            if graw.nbytes != raw.nbytes or not np.array_equal(graw, raw):
                diff = np.flatnonzero(np.asarray(graw) != np.asarray(raw))
                where = f"first differing byte {diff[0]}" if diff.size else "size differs"
                fail(f"{gguf_path}: '{g}' is not bit-identical to '{hf}' ({where})")
            n_bits += 1
        elif t.tensor_type == GGMLQuantizationType.F32 and len(shape) == 1:
            got = np.frombuffer(graw, dtype=np.float32)
            want = bf16_to_f32(raw) + np.float32(1)
            if got.size != want.size:
                fail(f"{gguf_path}: norm '{g}' has {got.size} values, '{hf}' {want.size}")
            bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
            if bad.size:
                i = int(bad[0])
                fail(f"{gguf_path}: norm '{g}'[{i}] = {float(got[i])!r}, 1 + '{hf}'[{i}] = {float(want[i])!r}")
            n_norms += 1
        else:
            fail(f"{gguf_path}: '{g}' has type {t.tensor_type.name}, expected BF16 "
                 "(or F32 for a norm vector)")
    extra = sorted(set(tensors) - seen)
    if extra:
        fail(f"{gguf_path}: tensors not in the checkpoint: {', '.join(extra[:5])}")
    print(f"check_gguf: {n_bits} bf16 tensors bit-identical to {ckpt_path}")
    print(f"check_gguf: {n_norms} norm vectors: f32 values exactly 1 + w")
    print(f"check_gguf: OK, {len(tensors)} tensors, nothing extra")


main()
