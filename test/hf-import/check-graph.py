#!/usr/bin/env python3
"""Compares a system_graph.json written by `sgc import-hf` with expected.json, what
transformers' config classes made of the same config.json (tools/gen-golden/gen_hf_configs.py:
per layer its type, head dim, KV heads, V-from-K and RoPE parameters; the sizes).  Standard
library only.  Prints one line per check and 'N passed, M failed'; exits 1 on a failure."""

import json
import math
import sys

graph = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
failures = []
passed = 0


def check(what, ours, theirs):
    global passed
    same = (math.isclose(ours, theirs, rel_tol=1e-12)
            if isinstance(ours, float) or isinstance(theirs, float) else ours == theirs)
    if same:
        passed += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}: graph {ours!r}, transformers {theirs!r}")


text = graph["components"][0]
ex = text["execution"]
check("hidden_size", text["hidden_size"], exp["hidden_size"])
check("num_layers", text["num_layers"], len(exp["layers"]))
check("vocab_size", ex["head"]["vocab_size"], exp["vocab_size"])
check("intermediate_size", ex["ffn"]["intermediate_size"], exp["intermediate_size"])
check("num_q_heads", ex["attention"]["num_q_heads"], exp["num_attention_heads"])
check("context_length", ex["context_length"], exp["max_position_embeddings"])
check("score_scale", ex["attention"]["score_scale"], exp["score_scale"])
# eps is written as the f32 the reference adds (struct round trip = f32 rounding)
import struct  # noqa: E402
f32 = struct.unpack("f", struct.pack("f", exp["rms_norm_eps"]))[0]
check("rms_norm_eps (f32)", ex["norm"]["pre"]["eps"], f32)
check("final_logit_softcapping", ex["head"].get("final_logit_softcapping"), exp["final_logit_softcapping"])
check("tied head", ex["head"]["head_reuses_embedding"], exp["tie_word_embeddings"])
def as_f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


# The graph writes the shortest decimal of the f32 value (61.967735): it reads back as that f32.
check("embed_scale (f32 sqrt(hidden))", as_f32(ex["head"]["embed_scale"]),
      as_f32(math.sqrt(exp["hidden_size"])))

kinds = {"default": "rope", "linear": "linear", "proportional": "partial_rope"}
for i, (a, e) in enumerate(zip(text["attention"], exp["layers"])):
    span = "sliding" if e["type"] == "sliding_attention" else "full"
    check(f"layer {i} span", a["span"], span)
    check(f"layer {i} window", a.get("window"), exp["sliding_window"] if span == "sliding" else None)
    check(f"layer {i} head_dim", a["geometry"]["head_dim"], e["head_dim"])
    check(f"layer {i} num_kv_heads", a["geometry"]["num_kv_heads"], e["num_kv_heads"])
    check(f"layer {i} v_from_k", a.get("v_from_k", False), e["v_from_k"])
    r = e["rope"]
    p = a["position"]
    check(f"layer {i} rope kind", p["kind"], kinds.get(r["rope_type"], r["rope_type"]))
    check(f"layer {i} rope theta", p["theta"], r["rope_theta"])
    if r["rope_type"] == "linear":
        check(f"layer {i} rope factor", p["factor"], r["factor"])
    if r["rope_type"] == "proportional":
        check(f"layer {i} rotary fraction", p["rotary_fraction"], r.get("partial_rotary_factor", 1.0))

vision = [c for c in graph["components"] if c["role"] == "perception"]
check("vision component", len(vision), 1 if "vision" in exp else 0)
if vision and "vision" in exp:
    v, ev = vision[0], exp["vision"]
    check("vision num_layers", v["num_layers"], ev["num_hidden_layers"])
    check("vision hidden_size", v["hidden_size"], ev["hidden_size"])
    check("vision num_heads", v["perception"]["transform"]["encoder"]["num_heads"], ev["num_attention_heads"])
    if "execution" in v:
        check("vision intermediate_size", v["execution"]["ffn"]["intermediate_size"], ev["intermediate_size"])

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
