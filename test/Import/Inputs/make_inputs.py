#!/usr/bin/env python3
"""Re-creates the importer's test inputs from the gemma-4-31B-it seed.

base-gemma4.json is the seed cut to 6 text layers (5 sliding + 1 full) and 2
vision layers, with the declared tensor figures recomputed, so it imports
cleanly. Every bad-*.json is the base with one small edit; the lit tests in
test/Import/ name the edit. Run from anywhere; writes next to this script.
The files are checked in; rerun only when the seed or a case changes.
"""

import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "..", "examples")
SEED = os.path.join(EXAMPLES, "gemma-4-31B-it.system_graph.json")
SEED3 = os.path.join(EXAMPLES, "gemma-3-12b-it.system_graph.json")

# gemma-text.md §12.2: elements per sliding / full layer of gemma-4-31B.
SLIDING_ELEMENTS = 478_959_105
FULL_ELEMENTS = 534_009_857
# gemma-vision.md §0: bytes per gemma4 vision encoder layer, 13 tensors.
VISION_LAYER_BYTES = 40_375_584
# gemma-text.md §12.1: elements per gemma-3-12b layer (13 tensors);
# gemma-vision.md §0: bytes per SigLIP layer (16 tensors).
GEMMA3_LAYER_ELEMENTS = 224_148_992
SIGLIP_LAYER_BYTES = 30_479_008


def base():
    g = json.load(open(SEED))
    text, vision = g["components"]
    text["num_layers"] = 6
    text["attention"] = text["attention"][:6]
    vision["num_layers"] = 2
    vision["attention"] = vision["attention"][:2]
    vision["perception"]["transform"]["encoder"]["depth"] = 2
    for o in g["objects"]:
        for b in o["source_bindings"]:
            if b["tensor_prefix"] == "model.language_model.layers":
                b["tensors"] = 5 * 14 + 13
                b["bytes"] = (5 * SLIDING_ELEMENTS + FULL_ELEMENTS) * 2
            if b["tensor_prefix"] == "model.vision_tower.encoder.layers":
                b["tensors"] = 2 * 13
                b["bytes"] = 2 * VISION_LAYER_BYTES
    return g


def base3():
    """gemma-3-12b-it cut to 6 text layers and 2 vision layers."""
    g = json.load(open(SEED3))
    text, vision = g["components"]
    text["num_layers"] = 6
    text["attention"] = text["attention"][:6]
    vision["num_layers"] = 2
    vision["attention"] = vision["attention"][:2]
    vision["perception"]["transform"]["encoder"]["depth"] = 2
    for o in g["objects"]:
        for b in o["source_bindings"]:
            if b["tensor_prefix"] == "language_model.model.layers":
                b["tensors"] = 6 * 13
                b["bytes"] = 6 * GEMMA3_LAYER_ELEMENTS * 2
            if b["tensor_prefix"] == "vision_tower.vision_model.encoder.layers":
                b["tensors"] = 2 * 16
                b["bytes"] = 2 * SIGLIP_LAYER_BYTES
    return g


# Tiny vision towers (VISION_KEYS.md keys stated in full) on the tiny text
# models. Their tensor figures are counted here from gemma-vision.md §G3.6 /
# §G4.6, independently of sgc's table.
TINY3 = os.path.join(EXAMPLES, "tiny-gemma3", "system_graph.json")
TINY4 = os.path.join(EXAMPLES, "tiny-gemma4", "system_graph.json")


def binding(artifact, prefix, shapes):
    elements = [1] * len(shapes)
    for i, shape in enumerate(shapes):
        for d in shape:
            elements[i] *= d
    return {"artifact": artifact, "tensor_prefix": prefix,
            "tensors": len(shapes), "bytes": 2 * sum(elements)}


def vision_object(kind, bindings):
    return {"id": "vision." + kind, "component": "vision", "kind": kind,
            "source_bindings": bindings,
            "representations": [{"encoding": "BF16", "fidelity": "canonical"}]}


def tiny3_vision():
    """SigLIP: hidden 32, 2 layers, 4 heads x 8, FFN 48, 56 px, patch 14
    (4 x 4 = 16 patches), 4 soft tokens (pool 2); transformers 5.24's
    tensor names (no vision_model level)."""
    g = json.load(open(TINY3))
    art = g["components"][0]["source_artifact"]
    d, ffn, text_hidden = 32, 48, g["components"][0]["hidden_size"]
    norm = {"kind": "layer_norm", "eps": 1e-6}
    g["components"].append({
        "id": "vision", "role": "perception", "source_artifact": art,
        "num_layers": 2, "hidden_size": d,
        "attention": [{"operator": "softmax", "span": "full",
                       "position": {"kind": "none"}} for _ in range(2)],
        "execution": {
            "attention": {"num_q_heads": 4, "num_kv_heads": 4, "head_dim": 8,
                          "score_scale": 8 ** -0.5,
                          "parameter_free_qk_norm": {"q": False, "k": False,
                                                     "v": False},
                          "attention_bias": True},
            "ffn": {"intermediate_size": ffn, "activation": "gelu_tanh",
                    "ffn_type": "plain", "bias": True},
            "norm": {"pre": dict(norm), "final_norm": dict(norm)},
            "residual_topology": {"kind": "single_stream"}},
        "perception": {
            "modality": "image",
            "transform": {"encoder": {"depth": 2, "width": d, "num_heads": 4}},
            "image": {"patch_size": 14, "image_size": 56,
                      "soft_tokens_per_image": 4, "pooling_kernel": 2,
                      "position_embedding_size": 16,
                      "token_ids": {"image": 502, "boi": 500, "eoi": 501}}}})
    layer = ([[d], [d]] + [[d, d], [d]] * 4 + [[d], [d]] +
             [[ffn, d], [ffn], [d, ffn], [d]])
    g["objects"] += [
        vision_object("perception_adapter", [
            binding(art, "multi_modal_projector", [[d, text_hidden]]),
            binding(art, "multi_modal_projector.mm_soft_emb_norm", [[d]])]),
        vision_object("perception_tower", [
            binding(art, "vision_tower.embeddings.patch_embedding",
                    [[d, 3, 14, 14], [d]]),
            binding(art, "vision_tower.embeddings.position_embedding",
                    [[16, d]]),
            binding(art, "vision_tower.encoder.layers", layer * 2),
            binding(art, "vision_tower.post_layernorm", [[d], [d]])])]
    return g


def tiny4_vision():
    """gemma4 ViT: hidden 48, 2 layers, 4 heads x 12, FFN 96, patch 4,
    pool 3, position tables of 64, 70 soft tokens (630 patches)."""
    g = json.load(open(TINY4))
    art = g["components"][0]["source_artifact"]
    d, ffn, hd, text_hidden = 48, 96, 12, g["components"][0]["hidden_size"]
    norm = {"kind": "rms_norm", "eps": 1e-6, "weight_offset": 0}
    g["components"].append({
        "id": "vision", "role": "perception", "source_artifact": art,
        "num_layers": 2, "hidden_size": d,
        "attention": [{"operator": "softmax", "span": "full",
                       "position": {"kind": "rope", "theta": 100.0}}
                      for _ in range(2)],
        "execution": {
            "attention": {"num_q_heads": 4, "num_kv_heads": 4, "head_dim": hd,
                          "score_scale": 1.0, "qk_norm_scope": "per_head",
                          "qk_norm_weight_offset": 0,
                          "parameter_free_qk_norm": {"q": False, "k": False,
                                                     "v": True},
                          "attention_bias": False},
            "ffn": {"intermediate_size": ffn, "activation": "gelu_tanh",
                    "ffn_type": "gated", "bias": False},
            "norm": {"pre": dict(norm), "post": dict(norm),
                     "placement": "pre_post"},
            "residual_topology": {"kind": "single_stream"}},
        "perception": {
            "modality": "image",
            "transform": {"encoder": {"depth": 2, "width": d, "num_heads": 4}},
            "image": {"patch_size": 4, "soft_tokens_per_image": 70,
                      "pooling_kernel": 3, "position_embedding_size": 64,
                      "standardize": True,
                      "token_ids": {"image": 502, "boi": 500, "eoi": 501}}}})
    layer = [[d, d]] * 4 + [[hd]] * 2 + [[ffn, d]] * 2 + [[d, ffn]] + [[d]] * 4
    g["objects"] += [
        vision_object("perception_adapter", [
            binding(art, "model.embed_vision.embedding_projection",
                    [[text_hidden, d]])]),
        vision_object("perception_tower", [
            binding(art, "model.vision_tower", [[d], [d]]),
            binding(art, "model.vision_tower.encoder.layers", layer * 2),
            binding(art, "model.vision_tower.patch_embedder", [[2, 64, d]]),
            binding(art, "model.vision_tower.patch_embedder.input_proj",
                    [[d, 3 * 4 * 4]])])]
    return g


def seed4_strict():
    """The gemma-4-31B-it seed with its vision keys stated and its vision
    execution block corrected (gemma-vision.md, "Discrepancies"): what
    --strict-graph accepts and follows literally."""
    g = json.load(open(SEED))
    v = g["components"][1]
    attn = v["execution"]["attention"]
    attn["score_scale"] = 1.0
    attn["parameter_free_qk_norm"]["v"] = True
    norm = v["execution"]["norm"]
    norm["post"] = norm.pop("final_norm")
    norm["placement"] = "pre_post"
    v["execution"]["ffn"]["bias"] = False
    v["perception"]["image"] = {
        "patch_size": 16, "soft_tokens_per_image": 280, "pooling_kernel": 3,
        "position_embedding_size": 10240, "standardize": True,
        "token_ids": {"image": 258880, "boi": 255999, "eoi": 258882}}
    return g


def vision(g):
    return g["components"][-1]


def image(g):
    return vision(g)["perception"]["image"]


def vexec(g):
    return vision(g)["execution"]


def tiny_edit(base_fn, fn):
    def make():
        g = base_fn()
        fn(g)
        return dump(g)
    return make


def t3(fn):
    return tiny_edit(tiny3_vision, fn)


def t4(fn):
    return tiny_edit(tiny4_vision, fn)


def set_path(d, keys, value):
    for k in keys[:-1]:
        d = d[k]
    d[keys[-1]] = value


def pop_path(d, keys):
    for k in keys[:-1]:
        d = d[k]
    d.pop(keys[-1])


def dump(g):
    return json.dumps(g, indent=2) + "\n"


def edit(fn):
    """A case that edits the parsed graph."""
    def make():
        g = base()
        fn(g)
        return dump(g)
    return make


def text_edit(old, new, count=1):
    """A case that replaces the first `count` occurrences of `old`."""
    def make():
        t = dump(base())
        assert old in t, old
        return t.replace(old, new, count)
    return make


def text0(g):
    return g["components"][0]


def layer(g, i):
    return g["components"][0]["attention"][i]


def set_(d, key, value):
    d[key] = value


CASES = {
    "base-gemma4": edit(lambda g: None),
    "base-gemma3": lambda: dump(base3()),
    # Not JSON at all, cut short, saved as a web page, nothing, wrong shape.
    "bad-not-json": lambda: "schema: 6\ncomponents: [target, vision]\n",
    "bad-truncated": lambda: dump(base())[:1500],
    "bad-html": lambda: ("<!DOCTYPE html>\n<html><head><title>system_graph.json"
                         "</title></head>\n<body><pre>\n" + dump(base()) +
                         "</pre></body></html>\n"),
    "bad-empty": lambda: "",
    "bad-top-array": lambda: "[" + dump(base()) + "]\n",
    "bad-duplicate-key": text_edit('"hidden_size": 5376,',
                                   '"hidden_size": 5376,\n      "hidden_size": 4096,'),
    # Schema.
    "bad-schema-5": text_edit('"schema": 6', '"schema": 5'),
    "bad-schema-missing": edit(lambda g: g.pop("schema")),
    "bad-schema-string": text_edit('"schema": 6', '"schema": "6"'),
    # Required fields and types.
    "bad-missing-hidden-size": edit(lambda g: text0(g).pop("hidden_size")),
    "bad-missing-position": edit(lambda g: layer(g, 2).pop("position")),
    "bad-string-for-int": text_edit('"hidden_size": 5376', '"hidden_size": "5376"'),
    "bad-float-for-int": text_edit('"window": 1024', '"window": 1024.5'),
    "bad-bool-for-int": text_edit('"num_kv_heads": 16', '"num_kv_heads": true'),
    "bad-nan": text_edit('"theta": 10000.0', '"theta": NaN'),
    # Layers.
    "bad-layer-count": edit(lambda g: set_(text0(g), "num_layers", 7)),
    "bad-operator": edit(lambda g: set_(layer(g, 3), "operator", "linear_attention")),
    "bad-span": edit(lambda g: set_(layer(g, 1), "span", "chunked")),
    "bad-position-kind": edit(lambda g: set_(layer(g, 0)["position"], "kind", "alibi")),
    "bad-window-zero": edit(lambda g: set_(layer(g, 4), "window", 0)),
    "bad-window-negative": edit(lambda g: set_(layer(g, 4), "window", -1024)),
    "bad-window-on-full": edit(lambda g: set_(layer(g, 5), "window", 1024)),
    "bad-window-missing": edit(lambda g: layer(g, 2).pop("window")),
    "bad-kv-heads": edit(lambda g: set_(layer(g, 5)["geometry"], "num_kv_heads", 5)),
    "bad-rotary-fraction": edit(lambda g: set_(layer(g, 5)["position"], "rotary_fraction", 1.5)),
    "bad-rotary-fraction-zero": edit(lambda g: set_(layer(g, 5)["position"], "rotary_fraction", 0)),
    "bad-odd-head-dim": edit(lambda g: set_(layer(g, 1)["geometry"], "head_dim", 255)),
    "bad-declared-span": edit(lambda g: set_(layer(g, 5), "declared_span", "sliding_attention")),
    "bad-full-no-geometry": edit(lambda g: layer(g, 5).pop("geometry")),
    "bad-v-from-k-sliding": edit(lambda g: set_(layer(g, 2), "v_from_k", True)),
    # Components.
    "bad-unknown-family": edit(lambda g: set_(text0(g), "source_artifact", "llama-3-8b")),
    "bad-two-text": edit(lambda g: set_(g["components"][1], "role", "primary_text")),
    "bad-encoder-depth": edit(lambda g: set_(g["components"][1]["perception"]["transform"]["encoder"], "depth", 27)),
    "bad-absurd-layers": edit(lambda g: set_(text0(g), "num_layers", 10**12)),
    "bad-absurd-vocab": edit(lambda g: set_(text0(g)["execution"]["head"], "vocab_size", 2**40)),
    # Objects and edges.
    "bad-object-component": edit(lambda g: set_(g["objects"][1], "component", "text")),
    "bad-missing-embedding": edit(lambda g: g["objects"].pop(1)),
    "bad-negative-bytes": edit(lambda g: set_(g["objects"][2]["source_bindings"][0], "bytes", -10752)),
    "bad-encoding": edit(lambda g: set_(g["objects"][0]["representations"][0], "encoding", "F8_E4M3")),
    "bad-edges": edit(lambda g: set_(g, "edges", [{"from": "vision", "to": "target"}])),
    # Perception components (VISION_KEYS.md): the tiny towers, the seed as
    # --strict-graph takes it, and one broken rule each.
    "tiny-gemma3-vision": lambda: dump(tiny3_vision()),
    "tiny-gemma4-vision": lambda: dump(tiny4_vision()),
    "strict-gemma4": lambda: dump(seed4_strict()),
    "vision-g3-partial": t3(lambda g: [image(g).pop(k) for k in
                                       ("pooling_kernel",
                                        "position_embedding_size")]),
    "vision-g4-partial": t4(lambda g: [image(g).pop("standardize"),
                                       pop_path(vexec(g), ["ffn", "bias"]),
                                       pop_path(vexec(g), ["attention", "score_scale"])]),
    "bad-vision-patch-type": t3(lambda g: set_(image(g), "patch_size", "14")),
    "bad-vision-patch-zero": t4(lambda g: set_(image(g), "patch_size", 0)),
    "bad-vision-image-multiple": t3(lambda g: set_(image(g), "image_size", 60)),
    "bad-vision-soft-square": t3(lambda g: set_(image(g), "soft_tokens_per_image", 8)),
    "bad-vision-soft-divide": t3(lambda g: set_(image(g), "soft_tokens_per_image", 9)),
    "bad-vision-pool-derived": t3(lambda g: set_(image(g), "pooling_kernel", 4)),
    "bad-vision-positions-derived": t3(lambda g: set_(image(g), "position_embedding_size", 64)),
    "bad-vision-token-dup": t3(lambda g: set_(image(g)["token_ids"], "eoi", 500)),
    "bad-vision-token-vocab": t4(lambda g: set_(image(g)["token_ids"], "image", 512)),
    "bad-vision-token-family": t3(lambda g: image(g).pop("token_ids")),
    "bad-vision-token-negative": t4(lambda g: set_(image(g)["token_ids"], "boi", -1)),
    "bad-vision-g3-standardize": t3(lambda g: set_(image(g), "standardize", True)),
    "bad-vision-g3-rms-norm": t3(lambda g: set_(vexec(g)["norm"], "pre", {"kind": "rms_norm", "eps": 1e-6, "weight_offset": 0})),
    "bad-vision-g3-placement": t3(lambda g: vexec(g)["norm"].update(post={"kind": "layer_norm", "eps": 1e-6}, placement="pre_post")),
    "bad-vision-g3-no-final": t3(lambda g: vexec(g)["norm"].pop("final_norm")),
    "bad-vision-g3-ffn-gated": t3(lambda g: set_(vexec(g)["ffn"], "ffn_type", "gated")),
    "bad-vision-g3-no-exec-strict": t3(lambda g: vision(g).pop("execution")),
    "bad-vision-g3-ffn-bias": t3(lambda g: set_(vexec(g)["ffn"], "bias", False)),
    "bad-vision-g3-attention-bias": t3(lambda g: set_(vexec(g)["attention"], "attention_bias", False)),
    "bad-vision-g3-qk-norm": t3(lambda g: vexec(g)["attention"].update(qk_norm_scope="per_head", qk_norm_weight_offset=0)),
    "bad-vision-g3-v-norm": t3(lambda g: set_(vexec(g)["attention"]["parameter_free_qk_norm"], "v", True)),
    "bad-vision-g3-rope": t3(lambda g: set_(vision(g)["attention"][1], "position", {"kind": "rope", "theta": 100.0})),
    "bad-vision-layer-norm-offset": t3(lambda g: set_(vexec(g)["norm"]["final_norm"], "weight_offset", 1)),
    "bad-vision-sliding": t4(lambda g: vision(g)["attention"][0].update(span="sliding", window=16)),
    "bad-vision-g4-layer-norm": t4(lambda g: set_(vexec(g)["norm"], "post", {"kind": "layer_norm", "eps": 1e-6})),
    "bad-vision-g4-image-size": t4(lambda g: set_(image(g), "image_size", 48)),
    "bad-vision-g4-ffn-plain": t4(lambda g: set_(vexec(g)["ffn"], "ffn_type", "plain")),
    "bad-vision-g4-ffn-bias": t4(lambda g: set_(vexec(g)["ffn"], "bias", True)),
    "bad-vision-g4-no-qk-norm": t4(lambda g: [vexec(g)["attention"].pop(k) for k in ("qk_norm_scope", "qk_norm_weight_offset")]),
    "bad-vision-g4-theta": t4(lambda g: set_(vision(g)["attention"][1]["position"], "theta", 10000.0)),
    "bad-vision-g4-position-none": t4(lambda g: set_(vision(g)["attention"][0], "position", {"kind": "none"})),
    "bad-vision-g4-head-dim": t4(lambda g: [set_(vision(g), "hidden_size", 40),
                                            set_(vision(g)["perception"]["transform"]["encoder"], "width", 40),
                                            set_(vexec(g)["attention"], "head_dim", 10)]),
    "bad-vision-g4-standardize-type": t4(lambda g: set_(image(g), "standardize", "yes")),
    "bad-vision-g4-soft-zero": t4(lambda g: set_(image(g), "soft_tokens_per_image", 0)),
    "bad-vision-g4-final-strict": lambda: dump((lambda g: (set_(g["components"][1]["execution"]["norm"], "final_norm", {"kind": "rms_norm", "eps": 1e-6, "weight_offset": 0}), g)[1])(seed4_strict())),
    "bad-text-layer-norm": t4(lambda g: set_(g["components"][0]["execution"]["norm"]["pre"], "kind", "layer_norm")),
    # Accepted with a warning.
    "warn-unknown-key": edit(lambda g: set_(layer(g, 0), "sink_tokens", 4)),
    "warn-declared-bytes": edit(lambda g: set_(g["objects"][0]["source_bindings"][0], "bytes", 5857610765)),
}


def main():
    for name, make in CASES.items():
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            f.write(make())


if __name__ == "__main__":
    main()
