#!/usr/bin/env python3
"""A Gemma 3 or Gemma 4 HF checkpoint folder made from a seed, the same bytes on every
machine (pure Python: random.Random's random() is reproducible across
versions, and every value is rounded to bf16 by integer arithmetic).

    make-hf-checkpoint.py CONFIG.json TOKENIZER_DIR OUT_DIR [--seed N]

OUT_DIR gets config.json (a copy), model.safetensors (bf16, the tensor names
of Gemma3ForCausalLM or Gemma4ForCausalLM, by the config's model_type) and
TOKENIZER_DIR's tokenizer files (tokenizer.model or tokenizer.json,
tokenizer_config.json, chat_template.jinja). The input of sgc quantize's
test and of the llama-quantize figures it is held to
(tools/gen-golden/gen_quantize.py): both read the folder this writes.

Values: matrices s * (r1 + r2 - 1) with s = 0.05 (embedding 0.03: a larger
one makes the tied head repeat one token), one value
in 256 times 6 (outliers: what picks a block's scale); norm weights
0.2 * (r - 0.5); Gemma 4's layer scalars 0.5 + 0.5 r.
"""

import argparse
import json
import os
import random
import shutil
import struct

TOKENIZER_FILES = ("tokenizer.model", "tokenizer.json", "tokenizer_config.json",
                   "chat_template.jinja")


def shapes(cfg):
    """Gemma3ForCausalLM's (Gemma4ForCausalLM's) tensors of a text config:
    name -> shape. Gemma 4: full layers take per_layer_config's head_dim
    (global_head_dim) and num_global_key_value_heads, have no v_proj when
    attention_k_eq_v, and every layer a layer_scalar."""
    gemma4 = cfg["model_type"].startswith("gemma4")
    h, i = cfg["hidden_size"], cfg["intermediate_size"]
    q, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    out = {"model.embed_tokens.weight": [cfg["vocab_size"], h], "model.norm.weight": [h]}
    for layer in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % layer
        d, heads_kv, has_v = cfg["head_dim"], kv, True
        if gemma4 and cfg["layer_types"][layer] == "full_attention":
            d = cfg.get("global_head_dim") or cfg["per_layer_config"][str(layer)]["head_dim"]
            heads_kv = (cfg.get("num_global_key_value_heads")
                        or cfg.get("per_layer_config", {}).get(str(layer), {}).get("num_key_value_heads")
                        or kv)
            has_v = not cfg.get("attention_k_eq_v", False)
        for norm in ("input_layernorm", "post_attention_layernorm",
                     "pre_feedforward_layernorm", "post_feedforward_layernorm"):
            out[p + norm + ".weight"] = [h]
        out[p + "self_attn.q_proj.weight"] = [q * d, h]
        out[p + "self_attn.k_proj.weight"] = [heads_kv * d, h]
        if has_v:
            out[p + "self_attn.v_proj.weight"] = [heads_kv * d, h]
        out[p + "self_attn.o_proj.weight"] = [h, q * d]
        out[p + "self_attn.q_norm.weight"] = [d]
        out[p + "self_attn.k_norm.weight"] = [d]
        out[p + "mlp.gate_proj.weight"] = [i, h]
        out[p + "mlp.up_proj.weight"] = [i, h]
        out[p + "mlp.down_proj.weight"] = [h, i]
        if gemma4:
            out[p + "layer_scalar"] = [1]
    return out


def bf16_bits(x):
    """x rounded to bf16 (to nearest, ties to even), as its 16 bits."""
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def values(rng, name, count):
    if name.endswith("layer_scalar"):
        return [0.5 + 0.5 * rng.random() for _ in range(count)]
    if name.endswith("norm.weight"):
        return [0.2 * (rng.random() - 0.5) for _ in range(count)]
    s = 0.03 if "embed_tokens" in name else 0.05
    out = []
    for _ in range(count):
        v = s * (rng.random() + rng.random() - 1.0)
        if rng.random() < 1.0 / 256:
            v *= 6.0
        out.append(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("tokenizer_dir")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, shape in sorted(shapes(cfg).items()):
        count = 1
        for n in shape:
            count *= n
        data = struct.pack("<%dH" % count, *(bf16_bits(v) for v in values(rng, name, count)))
        header[name] = {"dtype": "BF16", "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for data in blobs:
            f.write(data)
    shutil.copy(args.config, os.path.join(args.out, "config.json"))
    for name in TOKENIZER_FILES:
        if os.path.exists(os.path.join(args.tokenizer_dir, name)):
            shutil.copy(os.path.join(args.tokenizer_dir, name), os.path.join(args.out, name))


if __name__ == "__main__":
    main()
