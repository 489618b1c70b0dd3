#!/usr/bin/env python3
"""Check the tiny golden models in examples/tiny-*/ without torch (Python standard library only).

usage: check-goldens.py DIR     DIR = examples/ (every tiny-* folder in it) or one tiny-* folder

For each model folder: the four files exist and stay under 4 MiB together; both safetensors
files parse strictly (8-byte little-endian header length, JSON header, offsets contiguous and
in range, dtype x shape = bytes); model.safetensors holds exactly the tensors that the family
table predicts from system_graph.json, and the graph's source_bindings count them right;
golden.safetensors has the expected keys, shapes and dtypes, token ids within the vocabulary,
greedy tokens that are the argmax of the logits before them, bf16 values that really are bf16;
meta.json has its fields and agrees with the goldens (bf16-vs-f32 bound, margins).
Prints one line per model and 'N passed, M failed' (checks); exits 1 on any failure.
"""

import hashlib
import json
import math
import os
import re
import struct
import sys

FILES = ("model.safetensors", "system_graph.json", "golden.safetensors", "meta.json")
SIZE_LIMIT = 4 * 1024 * 1024
ITEMSIZE = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8, "I32": 4, "I64": 8, "I16": 2, "I8": 1, "U8": 1, "F8_E4M3": 1,
            "BOOL": 1}
SPECIAL_IDS = (0, 1, 2)
EPS_F32 = 9.999999974752427e-07


class Fail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Fail(msg)


# ------------------------------------------------------------------------------------------
# safetensors, read by hand
# ------------------------------------------------------------------------------------------

def _no_dups(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise Fail(f"duplicate key {k!r} in JSON")
        d[k] = v
    return d


class SafeTensors:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.raw = f.read()
        name = os.path.basename(path)
        need(len(self.raw) >= 8, f"{name}: shorter than the 8-byte header length")
        (n,) = struct.unpack("<Q", self.raw[:8])
        need(n <= len(self.raw) - 8, f"{name}: header length {n} runs past the end of the file")
        need(n <= 100 * 1024 * 1024, f"{name}: header length {n} is not plausible")
        try:
            header = json.loads(self.raw[8:8 + n].decode("utf-8"), object_pairs_hook=_no_dups)
        except (UnicodeDecodeError, ValueError) as e:
            raise Fail(f"{name}: header is not JSON ({e})")
        need(isinstance(header, dict), f"{name}: header is not a JSON object")
        self.metadata = header.pop("__metadata__", {})
        need(isinstance(self.metadata, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in self.metadata.items()),
             f"{name}: __metadata__ must map strings to strings")
        self.data = self.raw[8 + n:]
        self.tensors = {}
        spans = []
        for key, e in header.items():
            need(isinstance(e, dict) and set(e) == {"dtype", "shape", "data_offsets"},
                 f"{name}:{key}: entry needs exactly dtype, shape, data_offsets")
            dt, shape, off = e["dtype"], e["shape"], e["data_offsets"]
            need(dt in ITEMSIZE, f"{name}:{key}: unknown dtype {dt!r}")
            need(isinstance(shape, list) and all(isinstance(s, int) and s >= 0 for s in shape),
                 f"{name}:{key}: bad shape {shape!r}")
            need(isinstance(off, list) and len(off) == 2 and all(isinstance(o, int) for o in off)
                 and 0 <= off[0] <= off[1] <= len(self.data),
                 f"{name}:{key}: data_offsets {off!r} out of range (data is {len(self.data)} bytes)")
            numel = math.prod(shape)
            need(off[1] - off[0] == numel * ITEMSIZE[dt],
                 f"{name}:{key}: {dt} {shape} needs {numel * ITEMSIZE[dt]} bytes, offsets give "
                 f"{off[1] - off[0]}")
            self.tensors[key] = (dt, shape, off)
            spans.append((off[0], off[1], key))
        spans.sort()
        pos = 0
        for b, e, key in spans:
            need(b == pos, f"{name}:{key}: data starts at {b}, expected {pos} (gap or overlap)")
            pos = e
        need(pos == len(self.data), f"{name}: {len(self.data) - pos} trailing bytes after the last tensor")

    def values(self, key):
        dt, shape, (b, e) = self.tensors[key]
        buf = self.data[b:e]
        n = math.prod(shape)
        if dt == "F32":
            return list(struct.unpack(f"<{n}f", buf))
        if dt == "I32":
            return list(struct.unpack(f"<{n}i", buf))
        if dt == "I64":
            return list(struct.unpack(f"<{n}q", buf))
        if dt == "BF16":
            return [struct.unpack("<f", b"\0\0" + buf[2 * i:2 * i + 2])[0] for i in range(n)]
        raise Fail(f"{key}: cannot read dtype {dt}")

    def raw_u32(self, key):
        dt, shape, (b, e) = self.tensors[key]
        return struct.unpack(f"<{math.prod(shape)}I", self.data[b:e])


# ------------------------------------------------------------------------------------------
# The family table (gemma-text.md §12) from the graph
# ------------------------------------------------------------------------------------------

def binding_of(graph, name):
    """(prefix, object) of the source binding with the longest prefix of
    `name`, or (None, None) when no binding holds it."""
    found = [(b["tensor_prefix"], o) for o in graph["objects"] for b in o["source_bindings"]
             if name == b["tensor_prefix"] or name.startswith(b["tensor_prefix"] + ".")]
    return max(found, key=lambda f: len(f[0])) if found else (None, None)


def matrix_encoding(graph, name):
    """The encoding of the object binding `name`: its matrices' storage;
    vectors are BF16 in every encoding."""
    _, o = binding_of(graph, name)
    return o["representations"][0]["encoding"] if o else "BF16"


def family_of(graph_target):
    sa = graph_target.get("source_artifact", "")
    if sa.startswith("gemma-3"):
        return "gemma3"
    if sa.startswith("gemma-4"):
        return "gemma4"
    raise Fail(f"source_artifact {sa!r} names no known family")


def expected_tensors(target, prefix):
    """Checkpoint name -> shape, everything BF16."""
    ex = target["execution"]
    H = target["hidden_size"]
    F = ex["ffn"]["intermediate_size"]
    V = ex["head"]["vocab_size"]
    Hq = ex["attention"]["num_q_heads"]
    fam = family_of(target)
    t = {prefix + "embed_tokens.weight": [V, H], prefix + "norm.weight": [H]}
    for l, a in enumerate(target["attention"]):
        geo = a.get("geometry", {})
        D = geo.get("head_dim", ex["attention"]["head_dim"])
        Hkv = geo.get("num_kv_heads", ex["attention"]["num_kv_heads"])
        p = f"{prefix}layers.{l}."
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            t[p + n + ".weight"] = [H]
        t[p + "self_attn.q_proj.weight"] = [Hq * D, H]
        t[p + "self_attn.k_proj.weight"] = [Hkv * D, H]
        if not a.get("v_from_k", False):
            t[p + "self_attn.v_proj.weight"] = [Hkv * D, H]
        t[p + "self_attn.o_proj.weight"] = [H, Hq * D]
        t[p + "self_attn.q_norm.weight"] = [D]
        t[p + "self_attn.k_norm.weight"] = [D]
        t[p + "mlp.gate_proj.weight"] = [F, H]
        t[p + "mlp.up_proj.weight"] = [F, H]
        t[p + "mlp.down_proj.weight"] = [H, F]
        if fam == "gemma4":
            t[p + "layer_scalar"] = [1]
    return t


# ------------------------------------------------------------------------------------------
# Checks of one model folder
# ------------------------------------------------------------------------------------------

class Checker:
    def __init__(self, folder):
        self.folder = folder
        self.name = os.path.basename(os.path.normpath(folder))
        self.passed = 0
        self.failed = []

    def check(self, what, fn):
        try:
            fn()
            self.passed += 1
            return True
        except Fail as e:
            self.failed.append(f"{what}: {e}")
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, struct.error) as e:
            self.failed.append(f"{what}: malformed ({type(e).__name__}: {e})")
        return False

    def run(self):
        p = lambda f: os.path.join(self.folder, f)  # noqa: E731
        if "-gguf-" in self.name:
            return self.run_gguf(p)
        if "-ct-" in self.name:
            return self.run_gguf(p, weights="model.safetensors")
        if not self.check("files", lambda: self.files(p)):
            return
        st = {}
        for f in ("model.safetensors", "golden.safetensors"):
            self.check(f"{f} parses", lambda f=f: st.__setitem__(f, SafeTensors(p(f))))
        js = {}
        for f in ("system_graph.json", "meta.json"):
            def load(f=f):
                try:
                    with open(p(f), encoding="utf-8") as fh:
                        js[f] = json.load(fh, object_pairs_hook=_no_dups)
                except ValueError as e:
                    raise Fail(f"not JSON ({e})")
            self.check(f"{f} parses", load)
        if len(st) < 2 or len(js) < 2:
            return
        graph, meta = js["system_graph.json"], js["meta.json"]
        model, golden = st["model.safetensors"], st["golden.safetensors"]
        ok = self.check("system_graph.json shape", lambda: self.graph_shape(graph))
        if not ok:
            return
        target = graph["components"][0]
        self.check("model.safetensors = family table", lambda: self.model_tensors(target, graph, model))
        self.check("graph source_bindings", lambda: self.bindings(graph, model))
        if not self.check("golden keys/shapes/dtypes", lambda: self.golden_layout(target, golden, meta)):
            return
        self.check("golden token ids", lambda: self.golden_ids(target, golden))
        self.check("golden greedy = argmax", lambda: self.golden_greedy(golden))
        self.check("golden values", lambda: self.golden_values(target, golden))
        self.check("meta.json fields", lambda: self.meta_fields(target, meta, golden))
        self.check("meta bound and margins", lambda: self.meta_numbers(meta, golden))
        self.check("meta sha256 of the files", lambda: self.hashes(meta))
        for f in sorted(os.listdir(self.folder)):
            if re.fullmatch(r"batch[0-9]+\.golden\.safetensors", f):
                self.check(f"{f}: layout and greedy = argmax",
                           lambda f=f: self.batch_golden(p(f), target))

    # -- the batched run's goldens (tools/gen-golden/gen_batch.py) -----------------------
    def batch_golden(self, path, target):
        g = SafeTensors(path)
        vocab = target["execution"]["head"]["vocab_size"]
        prompt, feed = g.values("prompt_ids"), g.values("feed_ids")
        positions = g.values("positions")
        n = len(prompt) + len(feed)
        need(list(positions) == list(range(n)), f"positions are not 0..{n - 1}")
        for key in ("logits_f32", "logits_bf16"):
            dt, shape, _ = g.tensors[key]
            need(dt == "F32" and shape == [n, vocab],
                 f"{key} is {dt} {shape}, expected F32 [{n}, vocab]")
            rows = self.rows(g, key)
            need(all(math.isfinite(x) for r in rows for x in r), f"{key} is not finite")
            # Each fed token is the argmax of the row before it.
            for k, tok in enumerate(feed):
                row = rows[len(prompt) - 1 + k]
                am = row.index(max(row))
                need(am == tok, f"feed_ids[{k}] = {tok} but the argmax of {key} before it is {am}")

    # -- GGUF goldens (tools/gen-golden/gen_gguf.py) -------------------------------------
    def run_gguf(self, p, weights="model.gguf"):
        """model.gguf as llama.cpp wrote it (checked by the tests that compile it), the HF
        config it came from, the golden and meta.json, consistent with each other. With
        weights="model.safetensors" (tiny-*-ct-*, tools/gen-golden/gen_compressed.py): a
        compressed-tensors folder, whose config names its scheme and whose golden has no
        llama.cpp rows (llama.cpp reads neither format)."""
        files = (weights, "config.json", "golden.safetensors", "meta.json")
        gguf = weights == "model.gguf"

        def present():
            missing = [f for f in files if not os.path.isfile(p(f))]
            need(not missing, f"missing {', '.join(missing)}")
            if gguf:
                with open(p("model.gguf"), "rb") as fh:
                    need(fh.read(4) == b"GGUF", "model.gguf does not start with GGUF's magic")
            else:
                SafeTensors(p(weights))
            total = sum(os.path.getsize(p(f)) for f in files)
            need(total < SIZE_LIMIT, f"{total} bytes in all, limit {SIZE_LIMIT}")
        if not self.check("files", present):
            return
        st, js = {}, {}
        self.check("golden.safetensors parses",
                   lambda: st.__setitem__("g", SafeTensors(p("golden.safetensors"))))
        for f in ("config.json", "meta.json"):
            def load(f=f):
                with open(p(f), encoding="utf-8") as fh:
                    js[f] = json.load(fh, object_pairs_hook=_no_dups)
            self.check(f"{f} parses", load)
        if not st or len(js) < 2:
            return
        golden, meta, config = st["g"], js["meta.json"], js["config.json"]

        def layout():
            vocab = config.get("vocab_size") or config["text_config"]["vocab_size"]
            s = len(golden.values("input_ids"))
            for d in ("f32", "bf16"):
                n = len(golden.values(f"decode_ids_{d}"))
                need(golden.tensors[f"prefill_logits_{d}"][1] == [s, vocab],
                     f"prefill_logits_{d} is not [{s}, {vocab}]")
                need(golden.tensors[f"decode_logits_{d}"][1] == [n, vocab],
                     f"decode_logits_{d} is not [{n}, {vocab}]")
            need(all(0 <= i < vocab for i in golden.values("input_ids")), "input ids outside the vocabulary")
            if not gguf:
                q = config.get("quantization_config", {})
                need(q.get("quant_method") == "compressed-tensors",
                     "config.json has no compressed-tensors quantization_config")
                return
            # Reference (b): llama.cpp's rows for the prompt and (a)'s f32 tokens.
            rows = s + len(golden.values("decode_ids_f32"))
            need(golden.tensors.get("llama_logits", (None, None))[1] == [rows, vocab],
                 f"llama_logits is not [{rows}, {vocab}]")
            need(all(math.isfinite(v) for v in golden.values("llama_logits")),
                 "llama_logits holds a value that is not finite")
            need(meta.get("reference_b", {}).get("vs_f32", {}).get("max", 0) > 0,
                 "meta.json has no reference_b.vs_f32.max")
        if not self.check("golden keys/shapes", layout):
            return
        self.check("golden greedy = argmax", lambda: self.golden_greedy(golden))

        def agrees():
            need(meta["input_ids"] == golden.values("input_ids"), "meta input_ids differ from the golden's")
            for d in ("f32", "bf16"):
                need(meta[f"decode_ids_{d}"] == golden.values(f"decode_ids_{d}"),
                     f"meta decode_ids_{d} differ from the golden's")
            need(0 < meta["bf16_vs_f32"]["max"] < 0.05, "bf16_vs_f32.max implausible")
        self.check("meta.json agrees", agrees)

    # -- files ---------------------------------------------------------------------------
    def files(self, p):
        missing = [f for f in FILES if not os.path.isfile(p(f))]
        need(not missing, f"missing {', '.join(missing)}")
        total = sum(os.path.getsize(p(f)) for f in FILES)
        need(total < SIZE_LIMIT, f"{total} bytes in all, limit {SIZE_LIMIT}")

    # -- graph ---------------------------------------------------------------------------
    def graph_shape(self, g):
        need(g.get("schema") == 6, f"schema {g.get('schema')!r}, want 6")
        need(isinstance(g.get("components"), list) and len(g["components"]) == 1,
             "want exactly one component (target)")
        need(g.get("edges") == [], "edges must be []")
        t = g["components"][0]
        need(t.get("id") == "target" and t.get("role") == "primary_text",
             "component must be id target, role primary_text")
        fam = family_of(t)
        need(t["num_layers"] == len(t["attention"]) >= 1, "num_layers != len(attention)")
        ex = t["execution"]
        need(isinstance(ex.get("context_length"), int) and ex["context_length"] > 0,
             "execution.context_length must be set")
        for i, a in enumerate(t["attention"]):
            where = f"attention[{i}]"
            need(a.get("operator") == "softmax", f"{where}.operator")
            need(a.get("span") in ("sliding", "full"), f"{where}.span")
            need((a["span"] == "sliding") == ("window" in a), f"{where}: window iff sliding")
            if "declared_span" in a:
                need(a["declared_span"] == a["span"] + "_attention", f"{where}.declared_span disagrees")
            kind = a["position"]["kind"]
            if a["span"] == "sliding":
                need(kind == "rope", f"{where}.position.kind {kind!r}")
            else:
                need(kind == ("linear" if fam == "gemma3" else "partial_rope"), f"{where}.position.kind {kind!r}")
            need(a.get("v_from_k", False) == (fam == "gemma4" and a["span"] == "full"), f"{where}.v_from_k")
        for part in ("pre", "post", "final_norm"):
            n = ex["norm"][part]
            need(n["kind"] == "rms_norm" and n["eps"] == EPS_F32, f"norm.{part}")
            need(n["weight_offset"] == (1.0 if fam == "gemma3" else 0.0), f"norm.{part}.weight_offset")
        H = t["hidden_size"]
        es = ex["head"]["embed_scale"]
        f32 = struct.unpack("<f", struct.pack("<f", math.sqrt(H)))[0]
        need(struct.unpack("<f", struct.pack("<f", es))[0] == f32, f"embed_scale {es} is not f32(sqrt({H}))")
        need(ex["head"]["head_reuses_embedding"] is True, "head_reuses_embedding")
        need(ex["residual_topology"] == {"kind": "single_stream"}, "residual_topology")
        kinds = sorted(o["kind"] for o in g["objects"])
        need(kinds == ["decoder_stack", "embedding", "final_norm"], f"objects {kinds}")

    def prefix(self, graph):
        for o in graph["objects"]:
            if o["kind"] == "embedding":
                p = o["source_bindings"][0]["tensor_prefix"]
                need(p.endswith("embed_tokens"), f"embedding prefix {p!r}")
                return p[: -len("embed_tokens")]
        raise Fail("no embedding object")

    def model_tensors(self, target, graph, model):
        prefix = self.prefix(graph)
        want_prefix = {"gemma3": "language_model.model.", "gemma4": "model.language_model."}[family_of(target)]
        need(prefix == want_prefix, f"prefix {prefix!r}, the real checkpoints use {want_prefix!r}")
        exp = expected_tensors(target, prefix)
        have = model.tensors
        extra = sorted(set(have) - set(exp))
        missing = sorted(set(exp) - set(have))
        need(not extra, f"unexpected tensors {extra[:5]}")
        need(not missing, f"missing tensors {missing[:5]}")
        for k, shape in exp.items():
            dt, s, _ = have[k]
            want = matrix_encoding(graph, k) if len(shape) == 2 else "BF16"
            need(dt == want, f"{k}: dtype {dt}, want {want}")
            need(s == shape, f"{k}: shape {s}, family table says {shape}")

    def bindings(self, graph, model):
        bins = [(b["tensor_prefix"], b) for o in graph["objects"] for b in o["source_bindings"]]
        counts = {p: [0, 0] for p, _ in bins}
        for k, (dt, shape, _) in model.tensors.items():
            best, _ = binding_of(graph, k)
            need(best is not None, f"{k} is bound by no source_binding")
            counts[best][0] += 1
            counts[best][1] += math.prod(shape) * ITEMSIZE[dt]
        for p, b in bins:
            need([b["tensors"], b["bytes"]] == counts[p],
                 f"binding {p}: graph says {b['tensors']} tensors / {b['bytes']} bytes, checkpoint has "
                 f"{counts[p][0]} / {counts[p][1]}")

    # -- golden --------------------------------------------------------------------------
    def dims(self, target, golden):
        ex = target["execution"]
        S = golden.tensors["input_ids"][1][0]
        N = golden.tensors["decode_ids_f32"][1][0]
        return S, N, ex["head"]["vocab_size"], target["hidden_size"], target["num_layers"]

    def golden_layout(self, target, golden, meta):
        for k in ("input_ids", "decode_ids_f32"):
            need(k in golden.tensors and len(golden.tensors[k][1]) == 1, f"{k} missing or not 1-D")
        S, N, V, H, L = self.dims(target, golden)
        ex = target["execution"]
        full = [a for a in target["attention"] if a["span"] == "full"]
        sliding = [a for a in target["attention"] if a["span"] == "sliding"]
        need(full and sliding, "the tiny model must have both sliding and full layers")
        W = sliding[0]["window"]
        D_sl = sliding[0].get("geometry", {}).get("head_dim", ex["attention"]["head_dim"])
        D_fu = full[0].get("geometry", {}).get("head_dim", ex["attention"]["head_dim"])
        want = {"input_ids": ("I32", [S])}
        for d in ("f32", "bf16"):
            want[f"prefill_logits_{d}"] = ("F32", [S, V])
            want[f"decode_ids_{d}"] = ("I32", [N])
            want[f"decode_logits_{d}"] = ("F32", [N, V])
            want[f"final_norm_{d}"] = ("F32", [S, H])
            for i in range(L + 1):
                want[f"hidden_states_{d}.{i}"] = ("F32", [S, H])
        want["rope_inv_freq.sliding_attention"] = ("F32", [D_sl // 2])
        want["rope_inv_freq.full_attention"] = ("F32", [D_fu // 2])
        have = {k: (dt, s) for k, (dt, s, _) in golden.tensors.items()}
        extra = sorted(set(have) - set(want))
        missing = sorted(set(want) - set(have))
        need(not missing, f"missing keys {missing}")
        need(not extra, f"unexpected keys {extra}")
        for k, v in want.items():
            need(have[k] == v, f"{k}: {have[k][0]} {have[k][1]}, want {v[0]} {v[1]}")
        need(S >= 3 * W, f"prompt length {S} < 3 x window {W}")
        need(N >= 8, f"only {N} decode steps")
        need((S + N) // W - S // W >= 2, "decode steps do not cross the ring boundary twice")
        need(S + N + 1 <= ex["context_length"], "prompt + decode steps exceed context_length")

    def golden_ids(self, target, golden):
        V = target["execution"]["head"]["vocab_size"]
        for k in ("input_ids", "decode_ids_f32", "decode_ids_bf16"):
            ids = golden.values(k)
            bad = [i for i in ids if not 0 <= i < V]
            need(not bad, f"{k}: ids {bad[:5]} outside [0, {V})")
            if k != "input_ids":
                sp = [i for i in ids if i in SPECIAL_IDS]
                need(not sp, f"{k}: special ids {sp}")

    def rows(self, golden, key):
        dt, shape, _ = golden.tensors[key]
        v = golden.values(key)
        n = shape[-1]
        return [v[i * n:(i + 1) * n] for i in range(len(v) // n)]

    def golden_greedy(self, golden):
        for d in ("f32", "bf16"):
            ids = golden.values(f"decode_ids_{d}")
            rows = [self.rows(golden, f"prefill_logits_{d}")[-1]] + self.rows(golden, f"decode_logits_{d}")
            for k, tok in enumerate(ids):
                row = rows[k]
                am = row.index(max(row))
                need(am == tok, f"decode_ids_{d}[{k}] = {tok} but the argmax before it is {am}")

    def golden_values(self, target, golden):
        for k, (dt, shape, _) in golden.tensors.items():
            if dt != "F32":
                continue
            vals = golden.values(k)
            need(all(math.isfinite(x) for x in vals), f"{k}: non-finite values")
            if k.endswith("_bf16") or "_bf16." in k:
                low = [u & 0xFFFF for u in golden.raw_u32(k)]
                need(not any(low), f"{k}: values are not exact bfloat16")
        cap = target["execution"]["head"].get("final_logit_softcapping")
        if cap:
            for k in ("prefill_logits_f32", "decode_logits_f32", "prefill_logits_bf16", "decode_logits_bf16"):
                m = max(abs(x) for x in golden.values(k))
                need(m <= cap, f"{k}: |logit| {m} above the softcap {cap}")
        inv = golden.values("rope_inv_freq.full_attention")
        if family_of(target) == "gemma4":
            a = [x for x in target["attention"] if x["span"] == "full"][0]
            D = a["geometry"]["head_dim"]
            rot = int(a["position"]["rotary_fraction"] * D // 2)
            need(all(x != 0 for x in inv[:rot]) and all(x == 0 for x in inv[rot:]),
                 f"full-layer inv_freq: want {rot} nonzero then zeros")
        else:
            need(inv[0] == 1.0 / a_factor(target), "full-layer inv_freq[0] != 1/factor")

    # -- meta ----------------------------------------------------------------------------
    def meta_fields(self, target, meta, golden):
        S, N, V, H, L = self.dims(target, golden)
        for k in ("model", "family", "seeds", "versions", "window", "context_length", "prompt_length",
                  "decode_steps", "input_ids", "decode_ids_f32", "decode_ids_bf16", "embed_scale_used",
                  "bf16_vs_f32", "margins", "tolerance_rule", "hf_config", "sha256"):
            need(k in meta, f"missing field {k!r}")
        for k in ("weights", "prompt"):
            need(isinstance(meta["seeds"].get(k), int), f"seeds.{k}")
        for k in ("python", "torch", "transformers"):
            need(isinstance(meta["versions"].get(k), str), f"versions.{k}")
        need(meta["family"] == family_of(target), "family disagrees with the graph")
        need(meta["model"] == self.name, f"model {meta['model']!r} but folder {self.name!r}")
        W = [a["window"] for a in target["attention"] if a["span"] == "sliding"][0]
        need(meta["window"] == W, "window disagrees with the graph")
        need(meta["context_length"] == target["execution"]["context_length"], "context_length disagrees")
        need(meta["prompt_length"] == S and meta["decode_steps"] == N, "prompt_length/decode_steps")
        need(meta["input_ids"] == golden.values("input_ids"), "input_ids disagree with golden")
        for d in ("f32", "bf16"):
            need(meta[f"decode_ids_{d}"] == golden.values(f"decode_ids_{d}"), f"decode_ids_{d} disagree")
        es = meta["embed_scale_used"]
        need(set(es) == {"f32", "bf16"}, "embed_scale_used needs f32 and bf16")
        bf = struct.unpack(">f", struct.pack(">I", _bf16_bits(math.sqrt(H)) << 16))[0]
        need(es["bf16"] == bf, f"embed_scale_used.bf16 {es['bf16']} != bf16(sqrt({H})) {bf}")
        b = meta["bf16_vs_f32"]
        need(len(b["per_position"]) == S + N and b["max"] == max(b["per_position"]), "bf16_vs_f32")
        for d in ("f32", "bf16"):
            m = meta["margins"][d]
            need(len(m["abs"]) == N + 1 and len(m["rel"]) == N + 1, f"margins.{d} needs N+1 steps")

    def hashes(self, meta):
        h = meta.get("sha256")
        need(isinstance(h, dict) and set(h) == set(FILES) - {"meta.json"}, "sha256 needs the three other files")
        for f, want in sorted(h.items()):
            with open(os.path.join(self.folder, f), "rb") as fh:
                got = hashlib.sha256(fh.read()).hexdigest()
            need(got == want, f"{f}: sha256 {got[:16]}..., meta.json recorded {want[:16]}...")

    def meta_numbers(self, meta, golden):
        """Recompute the bound and the margins from the goldens; the criterion must hold."""
        a32 = self.rows(golden, "prefill_logits_f32") + self.rows(golden, "decode_logits_f32")
        a16 = self.rows(golden, "prefill_logits_bf16") + self.rows(golden, "decode_logits_bf16")
        per = []
        for r32, r16 in zip(a32, a16):
            rng = max(r32) - min(r32)
            per.append(max(abs(x - y) for x, y in zip(r32, r16)) / rng)
        bound = max(per)
        need(math.isclose(bound, meta["bf16_vs_f32"]["max"], rel_tol=1e-5),
             f"bf16-vs-f32 bound {bound} but meta says {meta['bf16_vs_f32']['max']}")
        mins = []
        for d in ("f32", "bf16"):
            rows = [self.rows(golden, f"prefill_logits_{d}")[-1]] + self.rows(golden, f"decode_logits_{d}")
            for k, row in enumerate(rows):
                top = sorted(row, reverse=True)
                rel = (top[0] - top[1]) / (top[0] - min(row))
                need(math.isclose(rel, meta["margins"][d]["rel"][k], rel_tol=1e-5, abs_tol=1e-9),
                     f"margins.{d}.rel[{k}] {meta['margins'][d]['rel'][k]} but goldens give {rel}")
                mins.append(rel)
        factor = meta["margins"].get("required_factor", 1.0)
        need(min(mins) > factor * bound,
             f"min top-2 margin {min(mins):.5f} does not exceed {factor} x the bf16 bound {bound:.5f}")


def a_factor(target):
    a = [x for x in target["attention"] if x["span"] == "full"][0]
    return a["position"].get("factor", 1.0)


def _bf16_bits(x):
    """Round a double to f32, then to bf16 (nearest even); the top 16 bits."""
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = argv[1]
    if os.path.isfile(os.path.join(root, "meta.json")) or os.path.basename(os.path.normpath(root)).startswith("tiny-"):
        folders = [root]
    else:
        try:
            # tiny-*-vision (gen_vision.py) hold a second component; this checker knows text only
            folders = sorted(os.path.join(root, d) for d in os.listdir(root)
                             if d.startswith("tiny-") and not d.endswith("-vision")
                             and os.path.isdir(os.path.join(root, d)))
        except OSError as e:
            print(f"error: {root}: {e.strerror}", file=sys.stderr)
            return 1
    if not folders:
        print(f"error: no tiny-* model folders in {root}")
        print("0 passed, 1 failed")
        return 1
    passed = failed = 0
    for f in folders:
        c = Checker(f)
        c.run()
        passed += c.passed
        failed += len(c.failed)
        if c.failed:
            print(f"{c.name}: FAILED {len(c.failed)} of {c.passed + len(c.failed)} checks")
            for m in c.failed:
                print(f"  error: {c.name}: {m}")
        else:
            print(f"{c.name}: {c.passed} checks passed")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
