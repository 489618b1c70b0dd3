#!/usr/bin/env python3
"""HF config.json fixtures for `sgc import-hf`, written by transformers' own config classes.

Each fixture is a folder test/Inputs/hf-configs/<name>/ with the config.json that
`save_pretrained` of Gemma3Config / Gemma3TextConfig / Gemma4Config writes, at the sizes of
the seed graphs (examples/gemma-3-12b-it.system_graph.json, gemma-4-31B-it) and of the tiny
models (the config objects gen_golden.py builds them from), plus Gemma 3 1b/4b/27b.  Variants:

  <name>-minimal   only the keys that differ from the class defaults (to_diff_dict): the
                   importer must fill the rest as transformers does
  model.safetensors.index.json (12b, 31B)  every tensor name of the model transformers builds
                   from the config (meta device), the shards absent
  gemma-4-31B-it-global   the released checkpoints' spelling (global_head_dim,
                   num_global_key_value_heads) instead of per_layer_config; asserted to load
                   back to the same per_layer_config

  gen_hf_configs.py            (re)write the fixtures
  gen_hf_configs.py --check    regenerate into a temp dir and compare byte for byte
"""

import argparse
import filecmp
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_golden  # noqa: E402  (its numeric environment and tiny specs)

from transformers import (Gemma3Config, Gemma3TextConfig, Gemma4Config,  # noqa: E402
                          Gemma4TextConfig, SiglipVisionConfig)
from transformers.models.gemma4.configuration_gemma4 import Gemma4VisionConfig  # noqa: E402

OUT = os.path.join(gen_golden.REPO, "test", "Inputs", "hf-configs")

# SigLIP-So400m at 896 px as Gemma 3 4b/12b/27b use it (the seed's vision component: 27
# layers, width 1152, 16 heads; FFN 4304, patch 14).
SIGLIP = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27,
              num_attention_heads=16, image_size=896, patch_size=14, vision_use_head=False)
GEMMA3_ROPE = dict(rope_scaling={"rope_type": "linear", "factor": 8.0}, rope_theta=1e6,
                   rope_local_base_freq=1e4)


def gemma3_text(**kw):
    return Gemma3TextConfig(**kw)


def configs():
    """name -> config object."""
    out = {}
    # gemma-3-12b-it: the seed's sizes (48 layers, 3840, 16/8 heads x 256, FFN 15360, window
    # 1024, vocab 262208, query_pre_attn_scalar 256, full layers linear x8).
    out["gemma-3-12b-it"] = Gemma3Config(
        text_config=gemma3_text(hidden_size=3840, intermediate_size=15360, num_hidden_layers=48,
                                num_attention_heads=16, num_key_value_heads=8, head_dim=256,
                                sliding_window=1024, query_pre_attn_scalar=256, **GEMMA3_ROPE),
        vision_config=SiglipVisionConfig(**SIGLIP))
    out["gemma-3-4b-it"] = Gemma3Config(
        text_config=gemma3_text(hidden_size=2560, intermediate_size=10240, num_hidden_layers=34,
                                num_attention_heads=8, num_key_value_heads=4, head_dim=256,
                                sliding_window=1024, query_pre_attn_scalar=256, **GEMMA3_ROPE),
        vision_config=SiglipVisionConfig(**SIGLIP))
    # 27b: query_pre_attn_scalar 168 (hidden / heads), not its head_dim 128.
    out["gemma-3-27b-it"] = Gemma3Config(
        text_config=gemma3_text(hidden_size=5376, intermediate_size=21504, num_hidden_layers=62,
                                num_attention_heads=32, num_key_value_heads=16, head_dim=128,
                                sliding_window=1024, query_pre_attn_scalar=168, **GEMMA3_ROPE),
        vision_config=SiglipVisionConfig(**SIGLIP))
    # 1b: text only, no rope scaling, vocab 262144.
    out["gemma-3-1b-it"] = gemma3_text(
        vocab_size=262144, hidden_size=1152, intermediate_size=6912, num_hidden_layers=26,
        num_attention_heads=4, num_key_value_heads=1, head_dim=256, sliding_window=512,
        query_pre_attn_scalar=256, max_position_embeddings=32768, rope_theta=1e6,
        rope_local_base_freq=1e4)
    # gemma-4-31B-it: the seed's sizes (gemma-text.md §1).
    g4 = dict(vocab_size=262144, hidden_size=5376, intermediate_size=21504,
              num_hidden_layers=60, num_attention_heads=32, num_key_value_heads=16, head_dim=256,
              global_head_dim=512, num_global_key_value_heads=4, attention_k_eq_v=True,
              sliding_window=1024, final_logit_softcapping=30.0, hidden_size_per_layer_input=0,
              max_position_embeddings=262144, use_bidirectional_attention="vision")
    out["gemma-4-31B-it"] = Gemma4Config(
        text_config=Gemma4TextConfig(**g4),
        vision_config=Gemma4VisionConfig(hidden_size=1152, intermediate_size=4304,
                                         num_hidden_layers=27, num_attention_heads=16,
                                         num_key_value_heads=16, head_dim=72, standardize=True))
    # The tiny models, from the config dicts gen_golden.py builds them with.
    out["gemma-3-tiny"] = Gemma3TextConfig(**gen_golden.hf_text_config_dict(gen_golden.TINY["gemma3"]))
    out["gemma-4-tiny"] = Gemma4Config(
        text_config=Gemma4TextConfig(**gen_golden.hf_text_config_dict(gen_golden.TINY["gemma4"])),
        vision_config=None, audio_config=None)
    return out


def write_dict(path, d):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(d, indent=2, sort_keys=True) + "\n")


def global_spelling(cfg):
    """gemma-4-31B-it's config with global_head_dim / num_global_key_value_heads (as released)
    instead of per_layer_config; transformers must read it back to the same per_layer_config."""
    d = cfg.to_dict()
    t = d["text_config"]
    plc = t.pop("per_layer_config")
    dims = {v["head_dim"] for v in plc.values()}
    kvs = {v["num_key_value_heads"] for v in plc.values()}
    assert len(dims) == 1 and len(kvs) == 1, plc
    t["global_head_dim"] = dims.pop()
    t["num_global_key_value_heads"] = kvs.pop()
    back = Gemma4Config.from_dict(json.loads(json.dumps(d)))
    assert resolved(back) == resolved(cfg), "the global_* spelling reads back differently"
    return d


def text_of(cfg):
    return cfg.text_config if hasattr(cfg, "text_config") else cfg


def resolved(cfg):
    """What transformers made of a config: per layer (type, head_dim, kv heads, k_eq_v, rope
    parameters) and the sizes; expected.json next to each fixture, compared with the graph
    sgc import-hf writes (test/hf-import/check-graph.py)."""
    t = text_of(cfg)
    gemma4 = t.model_type == "gemma4_text"
    layers = []
    for i, kind in enumerate(t.layer_types):
        if gemma4:
            lc = t.per_layer_config[i]
            d, kv = lc.head_dim, lc.num_key_value_heads
        else:
            d, kv = t.head_dim, t.num_key_value_heads
        rope = dict(t.rope_parameters[kind])
        layers.append(dict(type=kind, head_dim=d, num_kv_heads=kv,
                           v_from_k=bool(gemma4 and t.attention_k_eq_v and kind == "full_attention"),
                           rope=rope))
    out = dict(model_type=cfg.model_type, vocab_size=t.vocab_size, hidden_size=t.hidden_size,
               intermediate_size=t.intermediate_size, num_attention_heads=t.num_attention_heads,
               sliding_window=t.sliding_window, max_position_embeddings=t.max_position_embeddings,
               rms_norm_eps=t.rms_norm_eps, final_logit_softcapping=t.final_logit_softcapping,
               tie_word_embeddings=t.tie_word_embeddings,
               score_scale=1.0 if gemma4 else t.query_pre_attn_scalar ** -0.5, layers=layers)
    v = getattr(cfg, "vision_config", None)
    if v is not None:
        out["vision"] = dict(num_hidden_layers=v.num_hidden_layers, hidden_size=v.hidden_size,
                             num_attention_heads=v.num_attention_heads,
                             intermediate_size=v.intermediate_size)
    return out


SUBCLASSES = {"text_config": None, "vision_config": None}


def diff(sub, default):
    """The keys of `sub` (a to_dict) whose value differs from `default`'s."""
    return {k: v for k, v in sub.items() if k not in default or default[k] != v}


def minimal_text(t):
    """A text config's keys that differ from its class's defaults (at its layer count, so the
    derived layer_types and per_layer_config count as defaults when they are); Gemma 3's RoPE in
    the legacy spelling of the released configs (rope_scaling, rope_theta,
    rope_local_base_freq)."""
    cls = type(t)
    default = cls(num_hidden_layers=t.num_hidden_layers).to_dict()
    d = diff(t.to_dict(), default)
    d["model_type"] = t.model_type
    # The default was built at this layer count; the count itself is not a default.
    d["num_hidden_layers"] = t.num_hidden_layers
    d.pop("transformers_version", None)
    if t.model_type == "gemma3_text":
        d.pop("_sliding_window_pattern", None)
        rp = d.pop("rope_parameters", None)
        if rp is not None:
            full, sliding = rp["full_attention"], rp["sliding_attention"]
            if full.get("rope_type", "default") != "default":
                d["rope_scaling"] = {k: v for k, v in full.items() if k != "rope_theta"}
            if full.get("rope_theta", 1e6) != 1e6:
                d["rope_theta"] = full["rope_theta"]
            if sliding.get("rope_theta", 1e4) != 1e4:
                d["rope_local_base_freq"] = sliding["rope_theta"]
    return d


def minimal_dict(cfg):
    if not hasattr(cfg, "text_config"):
        return minimal_text(cfg)
    default = type(cfg)().to_dict()
    d = diff(cfg.to_dict(), default)
    d["model_type"] = cfg.model_type
    d.pop("transformers_version", None)
    d["text_config"] = minimal_text(cfg.text_config)
    v = getattr(cfg, "vision_config", None)
    if v is not None:
        d["vision_config"] = diff(v.to_dict(), type(v)().to_dict())
        d["vision_config"]["model_type"] = v.model_type
        d["vision_config"].pop("transformers_version", None)
    return d


INDEXED = {"gemma-3-12b-it": "Gemma3ForConditionalGeneration",
           "gemma-4-31B-it": "Gemma4ForConditionalGeneration"}


def write_index(path, cfg, cls_name):
    """model.safetensors.index.json naming every tensor of the model transformers builds from
    `cfg` (on the meta device: no memory), as its state_dict names them, the tied lm_head left
    out as save_pretrained does; two shard names, the shards themselves absent."""
    import torch
    import transformers
    cls = getattr(transformers, cls_name)
    with torch.device("meta"):
        model = cls(cfg)
    sd = model.state_dict()
    names = sorted(k for k in sd if k != "lm_head.weight")
    half = len(names) // 2
    weight_map = {n: "model-%05d-of-00002.safetensors" % (1 if i < half else 2)
                  for i, n in enumerate(names)}
    total = sum(sd[n].numel() * sd[n].element_size() for n in names)
    write_dict(path, {"metadata": {"total_size": total}, "weight_map": weight_map})


def write_all(root):
    for name, cfg in configs().items():
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        cfg.save_pretrained(d)
        # Drop the version line so that another transformers patch release keeps the bytes.
        full = json.load(open(os.path.join(d, "config.json")))
        full.pop("transformers_version", None)
        write_dict(os.path.join(d, "config.json"), full)
        # Only what differs from the class defaults.
        write_dict(os.path.join(d, "expected.json"), resolved(cfg))
        if name in INDEXED:
            write_index(os.path.join(d, "model.safetensors.index.json"), cfg, INDEXED[name])
        minimal = minimal_dict(cfg)
        write_dict(os.path.join(root, name + "-minimal", "config.json"), minimal)
        # transformers reads the minimal config back to the same model.
        cls = type(cfg)
        assert resolved(cls.from_dict(json.loads(json.dumps(minimal)))) == resolved(cfg), name
        if name == "gemma-4-31B-it":
            g = global_spelling(cfg)
            g.pop("transformers_version", None)
            write_dict(os.path.join(root, name + "-global", "config.json"), g)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if not args.check:
        write_all(OUT)
        print(f"wrote {OUT}")
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        write_all(tmp)
        for dirpath, _, files in os.walk(tmp):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), tmp)
                old = os.path.join(OUT, rel)
                ok = os.path.exists(old) and filecmp.cmp(old, os.path.join(tmp, rel), shallow=False)
                bad += not ok
                print(f"{'OK  ' if ok else 'DIFF'} {rel}")
    print("check passed" if not bad else f"check FAILED: {bad} file(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
