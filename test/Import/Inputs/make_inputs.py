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
