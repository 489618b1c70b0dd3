"""Writes small GGUF files into argv[1] for gguf-input.test: ok.gguf, a
minimal valid gemma3 file (one layer, hidden 256, zero weights), and one
file per defect, each differing from ok.gguf in that one place."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "backend-ops"))
import blocks  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
H, V = 256, 64
META = {
    "general.architecture": "gemma3",
    "gemma3.block_count": 1,
    "gemma3.context_length": 128,
    "gemma3.embedding_length": H,
    "gemma3.feed_forward_length": H,
    "gemma3.attention.head_count": 1,
    "gemma3.attention.head_count_kv": 1,
    "gemma3.attention.key_length": H,
    "gemma3.attention.value_length": H,
    "gemma3.attention.sliding_window": 8,
    "gemma3.attention.layer_norm_rms_epsilon": 1e-6,
    "gemma3.rope.freq_base": 1e6,
}


def bf16(rows, cols):
    return ((30, bytes(rows * cols * 2)), None, [rows, cols])


def f32(n):
    return ((0, bytes(n * 4)), None, [n])


TENSORS = {"token_embd.weight": bf16(V, H), "output_norm.weight": f32(H)}
for name in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"):
    TENSORS["blk.0.%s.weight" % name] = bf16(H, H)
for name in ("attn_norm", "attn_q_norm", "attn_k_norm", "post_attention_norm", "ffn_norm",
             "post_ffw_norm"):
    TENSORS["blk.0.%s.weight" % name] = f32(H)


def write(name, meta=META, tensors=TENSORS):
    blocks.write_gguf(os.path.join(out, name),
                      {k: (t, shape, None) for k, (t, _, shape) in tensors.items()},
                      metadata=meta)


write("ok.gguf")
write("llama.gguf", dict(META, **{"general.architecture": "llama"}))
write("gemma4.gguf", dict(META, **{"general.architecture": "gemma4"}))
write("no-block-count.gguf", {k: v for k, v in META.items() if k != "gemma3.block_count"})
write("text-block-count.gguf", dict(META, **{"gemma3.block_count": "one"}))
write("no-attn-q.gguf", tensors={k: v for k, v in TENSORS.items() if k != "blk.0.attn_q.weight"})
write("q5_k.gguf", tensors=dict(TENSORS, **{"blk.0.attn_q.weight": ((13, bytes(H * 176)), None,
                                                                    [H, H])}))
write("wide-q.gguf", tensors=dict(TENSORS, **{"blk.0.attn_q.weight": bf16(2 * H, H)}))
write("extra.gguf", tensors=dict(TENSORS, **{"blk.0.ffn_gate_exps.weight": bf16(H, H)}))
write("untied.gguf", tensors=dict(TENSORS, **{"output.weight": bf16(V, H)}))
with open(os.path.join(out, "ok.gguf"), "rb") as f:
    data = f.read()
with open(os.path.join(out, "short.gguf"), "wb") as f:
    f.write(data[:len(data) // 2])

# gemma4: a sliding layer, then a full one whose V is its K (no attn_v);
# the full layer rotates a quarter of its head (rope_freqs.weight).
import struct  # noqa: E402

G4 = {
    "general.architecture": "gemma4",
    "gemma4.block_count": 2,
    "gemma4.context_length": 128,
    "gemma4.embedding_length": H,
    "gemma4.feed_forward_length": H,
    "gemma4.attention.head_count": 1,
    "gemma4.attention.head_count_kv": blocks.Array("i32", [1, 1]),
    "gemma4.attention.key_length": H,
    "gemma4.attention.value_length": H,
    "gemma4.attention.key_length_swa": H,
    "gemma4.attention.value_length_swa": H,
    "gemma4.attention.sliding_window": 8,
    "gemma4.attention.sliding_window_pattern": blocks.Array("bool", [True, False]),
    "gemma4.attention.layer_norm_rms_epsilon": 1e-6,
    "gemma4.rope.freq_base": 1e6,
    "gemma4.rope.freq_base_swa": 1e4,
    "gemma4.rope.dimension_count": H,
    "gemma4.rope.dimension_count_swa": H,
    "gemma4.final_logit_softcapping": 30.0,
}


def rope_freqs(values):
    return ((0, b"".join(struct.pack("<f", v) for v in values)), None, [len(values)])


QUARTER = [1.0] * (H // 8) + [1e30] * (H // 2 - H // 8)
T4 = {"token_embd.weight": bf16(V, H), "output_norm.weight": f32(H),
      "rope_freqs.weight": rope_freqs(QUARTER)}
for layer in (0, 1):
    names = ["attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]
    for name in names + (["attn_v"] if layer == 0 else []):
        T4["blk.%d.%s.weight" % (layer, name)] = bf16(H, H)
    for name in ("attn_norm", "attn_q_norm", "attn_k_norm", "post_attention_norm", "ffn_norm",
                 "post_ffw_norm"):
        T4["blk.%d.%s.weight" % (layer, name)] = f32(H)
    T4["blk.%d.layer_output_scale.weight" % layer] = f32(1)

write("ok4.gguf", G4, T4)
write("g4-no-rope-freqs.gguf", G4, {k: v for k, v in T4.items() if k != "rope_freqs.weight"})
write("g4-rope-freqs-2.gguf", G4, dict(T4, **{"rope_freqs.weight": rope_freqs(
    [1.0] * 16 + [2.0] + [1e30] * (H // 2 - 17))}))
write("g4-pattern-3.gguf", dict(G4, **{"gemma4.attention.sliding_window_pattern":
                                         blocks.Array("bool", [True, False, False])}), T4)
write("g4-last-sliding.gguf", dict(G4, **{"gemma4.attention.sliding_window_pattern":
                                            blocks.Array("bool", [False, True])}), T4)
write("g4-shared-kv.gguf", dict(G4, **{"gemma4.attention.shared_kv_layers": 1}), T4)
write("g4-per-layer-input.gguf", dict(G4, **{"gemma4.embedding_length_per_layer_input": 256}),
      T4)
write("g4-sliding-no-v.gguf", G4, {k: v for k, v in T4.items() if k != "blk.0.attn_v.weight"})
write("g4-mixed-kv.gguf", dict(G4, **{"gemma4.attention.head_count_kv":
                                        blocks.Array("i32", [1, 2])}), T4)
