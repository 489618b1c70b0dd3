"""B8 (the gemma-3-4b-it shape) as compressed-tensors folders, random weights: FP8
(float-quantized, e4m3 with a bf16 scale per output channel; no NaN codes) and INT4
(pack-quantized, symmetric groups of 32, bf16 scales), every decoder Linear quantized,
the embedding (tied head) and norms bf16. For bench/b8/run_ct.sh: decode speed only, so
the values are random bytes under small scales.

usage: make_ct.py CONFIG.json OUT_DIR fp8|int4
CONFIG.json: a Gemma 3 config (a multimodal one's text_config is taken).
"""
import json
import os
import struct
import sys

import numpy as np

config_path, out, scheme = sys.argv[1:4]
with open(config_path) as f:
    cfg = json.load(f)
text = dict(cfg.get("text_config", cfg))
text["model_type"] = "gemma3_text"
text["architectures"] = ["Gemma3ForCausalLM"]
H, F, L = text["hidden_size"], text["intermediate_size"], text["num_hidden_layers"]
Hq, Hkv, D, V = (text["num_attention_heads"], text["num_key_value_heads"], text["head_dim"],
                 text["vocab_size"])
rng = np.random.default_rng(8)


def bf16(values):
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


tensors = {"model.embed_tokens.weight": ("BF16", [V, H], lambda: bf16(rng.uniform(-0.03, 0.03, V * H))),
           "model.norm.weight": ("BF16", [H], lambda: bf16(np.zeros(H)))}
linears = {"self_attn.q_proj": (Hq * D, H), "self_attn.k_proj": (Hkv * D, H),
           "self_attn.v_proj": (Hkv * D, H), "self_attn.o_proj": (H, Hq * D),
           "mlp.gate_proj": (F, H), "mlp.up_proj": (F, H), "mlp.down_proj": (H, F)}
for layer in range(L):
    p = "model.layers.%d." % layer
    for norm, n in (("input_layernorm", H), ("post_attention_layernorm", H),
                    ("pre_feedforward_layernorm", H), ("post_feedforward_layernorm", H),
                    ("self_attn.q_norm", D), ("self_attn.k_norm", D)):
        tensors[p + norm + ".weight"] = ("BF16", [n], lambda n=n: bf16(np.zeros(n)))
    for name, (n, k) in linears.items():
        if scheme == "fp8":
            def e4m3(n=n, k=k):
                b = rng.integers(0, 256, n * k, dtype=np.uint8)
                b[(b & 0x7F) == 0x7F] ^= 1
                return b
            tensors[p + name + ".weight"] = ("F8_E4M3", [n, k], e4m3)
            tensors[p + name + ".weight_scale"] = ("BF16", [n, 1],
                                                   lambda n=n: bf16(np.full(n, 0.02 / 448)))
        else:
            tensors[p + name + ".weight_packed"] = (
                "I32", [n, k // 8], lambda n=n, k=k: rng.integers(-2**31, 2**31, n * k // 8,
                                                                  dtype=np.int64).astype(np.int32))
            tensors[p + name + ".weight_scale"] = ("BF16", [n, k // 32],
                                                   lambda n=n, k=k: bf16(np.full(n * k // 32, 0.02 / 8)))
            tensors[p + name + ".weight_shape"] = ("I64", [2],
                                                   lambda n=n, k=k: np.array([n, k], dtype=np.int64))

size = {"BF16": 2, "F8_E4M3": 1, "I32": 4, "I64": 8}
header, offset = {}, 0
for name in sorted(tensors):
    dt, shape, _ = tensors[name]
    n = size[dt] * int(np.prod(shape))
    header[name] = {"dtype": dt, "shape": shape, "data_offsets": [offset, offset + n]}
    offset += n
os.makedirs(out + ".part", exist_ok=True)
blob = json.dumps(header, separators=(",", ":")).encode()
blob += b" " * (-len(blob) % 8)
with open(os.path.join(out + ".part", "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(blob)) + blob)
    for name in sorted(tensors):
        f.write(np.ascontiguousarray(tensors[name][2]()).tobytes())
if scheme == "fp8":
    weights = dict(num_bits=8, type="float", strategy="channel", symmetric=True, dynamic=False)
    acts, fmt = dict(num_bits=8, type="float", strategy="token", symmetric=True, dynamic=True), "float-quantized"
else:
    weights = dict(num_bits=4, type="int", strategy="group", group_size=32, symmetric=True, dynamic=False)
    acts, fmt = None, "pack-quantized"
text["quantization_config"] = {
    "quant_method": "compressed-tensors", "format": fmt, "ignore": ["lm_head"],
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights,
                                  "input_activations": acts}}}
with open(os.path.join(out + ".part", "config.json"), "w") as f:
    json.dump(text, f, indent=2)
os.rename(out + ".part", out)
print("%s: %s, %.2f GB" % (out, scheme, offset / 1e9))
