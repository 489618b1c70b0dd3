"""Writes an HF checkpoint folder for bench/quantize/run.sh: Gemma 3 4B's text
decoder widths (hidden 2560, ffn 10240, 8 query and 4 KV heads of 256,
vocabulary 262,144, tied embedding; every K a multiple of 256, so Q4_K_M
keeps its K-quants) at LAYERS layers (default 12), random bf16 weights
(normal, std 0.02; embedding 0.03; norm weights std 0.1), as
Gemma3ForCausalLM names them; tiny-gemma3's tokenizer (512 pieces: both
tools pad the vocabulary to the config's 262,144, as they do for any
tokenizer smaller than the embedding).

usage: python make_checkpoint.py OUT_DIR [LAYERS]

Tensors are generated and written one at a time (~1 GB of memory).
"""

import json
import os
import shutil
import struct
import sys

import numpy as np

OUT = sys.argv[1]
LAYERS = int(sys.argv[2]) if len(sys.argv) > 2 else 12
HIDDEN, FFN, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 2560, 10240, 8, 4, 256, 262144
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

CONFIG = {
    "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
    "hidden_size": HIDDEN, "intermediate_size": FFN, "num_hidden_layers": LAYERS,
    "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "head_dim": HEAD_DIM,
    "vocab_size": VOCAB, "query_pre_attn_scalar": HEAD_DIM, "rms_norm_eps": 1e-6,
    "sliding_window": 1024, "max_position_embeddings": 131072,
    "layer_types": ["full_attention" if i % 6 == 5 else "sliding_attention"
                    for i in range(LAYERS)],
    "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                        "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}},
    "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True,
    "attention_bias": False, "final_logit_softcapping": None, "attn_logit_softcapping": None,
    "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0, "dtype": "bfloat16",
}


def shapes():
    out = {"model.embed_tokens.weight": (VOCAB, HIDDEN), "model.norm.weight": (HIDDEN,)}
    for layer in range(LAYERS):
        p = "model.layers.%d." % layer
        for norm in ("input_layernorm", "post_attention_layernorm",
                     "pre_feedforward_layernorm", "post_feedforward_layernorm"):
            out[p + norm + ".weight"] = (HIDDEN,)
        out[p + "self_attn.q_proj.weight"] = (HEADS * HEAD_DIM, HIDDEN)
        out[p + "self_attn.k_proj.weight"] = (KV_HEADS * HEAD_DIM, HIDDEN)
        out[p + "self_attn.v_proj.weight"] = (KV_HEADS * HEAD_DIM, HIDDEN)
        out[p + "self_attn.o_proj.weight"] = (HIDDEN, HEADS * HEAD_DIM)
        out[p + "self_attn.q_norm.weight"] = (HEAD_DIM,)
        out[p + "self_attn.k_norm.weight"] = (HEAD_DIM,)
        out[p + "mlp.gate_proj.weight"] = (FFN, HIDDEN)
        out[p + "mlp.up_proj.weight"] = (FFN, HIDDEN)
        out[p + "mlp.down_proj.weight"] = (HIDDEN, FFN)
    return out


def bf16(a):
    u = a.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(8)
    items = sorted(shapes().items())
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in items:
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(OUT, "model.safetensors.part"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, shape in items:
            std = 0.1 if name.endswith("norm.weight") else 0.03 if "embed" in name else 0.02
            f.write(bf16(rng.standard_normal(shape, dtype=np.float32) * std).tobytes())
    os.replace(os.path.join(OUT, "model.safetensors.part"), os.path.join(OUT, "model.safetensors"))
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=1)
    for name in ("tokenizer.model", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(os.path.join(ROOT, "examples", "tiny-gemma3", name), os.path.join(OUT, name))


if __name__ == "__main__":
    main()
