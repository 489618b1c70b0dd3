#!/usr/bin/env python3
"""sgc golden generator: tiny random Gemma 3 / Gemma 4 text models and their reference outputs.

Hugging Face transformers (eager attention) is the numeric truth.  For each tiny model this
writes examples/tiny-<name>/{model.safetensors, system_graph.json, golden.safetensors, meta.json},
and for tiny-gemma4 also long.{system_graph.json, golden.safetensors, meta.json} (LONG: sampled
f32 logits of a 3000-position teacher-forced decode).
See README.md next to this file for what each file holds and for the tolerance rule.

  gen-golden                      regenerate examples/tiny-gemma3 and examples/tiny-gemma4
  gen-golden --check              regenerate into a temp dir, compare byte for byte
  gen-golden --search 40          try prompt seeds 0..39 and print their margins (no files)
  gen-golden --b1 OUTDIR          write the B1 benchmark model (PERFORMANCE.md) to OUTDIR
"""

import os

# Numeric environment, fixed before torch is imported so that reruns (and --check) reproduce the
# same bytes: one thread, and the AVX2 kernels of ATen / oneDNN / MKL even where the CPU has more.
NUMERIC_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2",
}
for _k, _v in NUMERIC_ENV.items():
    os.environ[_k] = _v
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_VERBOSITY"] = "error"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import safetensors  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors import safe_open  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
try:
    transformers.utils.logging.disable_progress_bar()
except AttributeError:
    pass

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

from transformers import (  # noqa: E402
    Gemma3Config,
    Gemma3ForCausalLM,
    Gemma3ForConditionalGeneration,
    Gemma3TextConfig,
    Gemma4Config,
    Gemma4ForCausalLM,
    Gemma4ForConditionalGeneration,
    Gemma4TextConfig,
    SiglipVisionConfig,
)
from transformers.models.gemma3 import modeling_gemma3  # noqa: E402
from transformers.models.gemma4 import modeling_gemma4  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(REPO, "examples")

EPS_F32 = float(np.float32(1e-6))  # 9.999999974752427e-07, as the seeds write it
MODEL_FILES = ("model.safetensors", "system_graph.json", "golden.safetensors", "meta.json")
SIZE_LIMIT = 4 * 1024 * 1024

# ---------------------------------------------------------------------------------------------
# Model specifications
# ---------------------------------------------------------------------------------------------

# Prompt seeds chosen with --search (for the fixed weight seeds): their top-2 margins clear the
# criterion (MARGIN_FACTOR) at every greedy step in both dtypes, and greedy decoding switches
# token once (gemma3 at step 3, gemma4 at step 4) before repeating.  Thinner but more varied
# alternatives: gemma3 prompt seed 82 (3 tokens, ratio 2.8), gemma4 120 (4 tokens, ratio 2.9).
TINY = {
    "gemma3": dict(
        family="gemma3",
        source_artifact="gemma-3-tiny",
        weight_seed=3,
        prompt_seed=261,
        vocab=512,
        hidden=96,
        intermediate=192,
        layers=6,
        q_heads=4,
        kv_heads=2,
        head_dim=32,
        query_pre_attn_scalar=16,  # score scale 16^-0.5 = 0.25: a power of two, and not head_dim^-0.5
        window=4,
        context=512,
        prompt_len=16,
        decode_steps=16,
        embed_std=0.15,
    ),
    "gemma4": dict(
        family="gemma4",
        source_artifact="gemma-4-tiny",
        weight_seed=4,
        prompt_seed=170,
        vocab=512,
        hidden=96,
        intermediate=192,
        layers=6,
        q_heads=4,
        kv_heads=2,
        head_dim=16,
        global_head_dim=64,
        global_kv_heads=1,
        window=4,
        context=512,
        prompt_len=16,
        decode_steps=16,
        embed_std=0.5,
        layer_scalars=[0.9, 0.78, 0.66, 0.54, 0.42, 0.3],
        softcap=30.0,
    ),
}

# tiny-gemma3's weights with every matrix (embedding, projections) stored as F16, rounded from the
# same f32 draws (so not bf16 values): Gemma 3's QAT checkpoints keep their embedding in F16. Norm
# weights stay BF16. The f32 reference upcasts the F16 values exactly; the bf16 one casts them to
# bf16, as HF loads any checkpoint in bf16.
TINY["gemma3-f16"] = dict(TINY["gemma3"], source_artifact="gemma-3-tiny-f16", f16_matrices=True)

# B1 of PERFORMANCE.md: a Gemma-3-shaped ~270M model, random bf16 weights.
B1 = dict(
    family="gemma3",
    source_artifact="gemma-3-b1-random",
    weight_seed=1,
    vocab=262144,
    hidden=640,
    intermediate=2048,
    layers=18,
    q_heads=4,
    kv_heads=1,
    head_dim=256,
    query_pre_attn_scalar=256,
    window=512,
    context=32768,
    embed_std=0.15,
)


# The long-position f32 golden (one model; its own files next to the model's four, which stay
# unchanged): the prompt of the regular golden, then a fixed pseudo-random token stream fed one
# token per decode step up to `positions` positions, so that the full layers' RoPE and the sliding
# layers' ring are checked at positions far beyond the window.  Only sampled rows are stored:
# every `sample_every`-th position and the last `tail`.  The graph is the model's own with a larger
# context_length (the committed system_graph.json keeps 512: other tests compile it).
LONG = {
    "gemma4": dict(
        context=4096,
        positions=3000,
        sample_every=64,
        tail=4,
        stream_seed=1,
    ),
}
LONG_FILES = ("long.system_graph.json", "long.golden.safetensors", "long.meta.json")
LONG_SIZE_LIMIT = 512 * 1024


def layer_types(n):
    if isinstance(n, dict):  # a spec: its own "layer_types" if it has them, else every 6th full
        return list(n.get("layer_types") or layer_types(n["layers"]))
    return ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(n)]


def hf_text_config_dict(spec):
    """Keyword arguments for Gemma3TextConfig / Gemma4TextConfig (gemma-text.md §13)."""
    common = dict(
        vocab_size=spec["vocab"],
        hidden_size=spec["hidden"],
        intermediate_size=spec["intermediate"],
        num_hidden_layers=spec["layers"],
        num_attention_heads=spec["q_heads"],
        num_key_value_heads=spec["kv_heads"],
        head_dim=spec["head_dim"],
        sliding_window=spec["window"],
        layer_types=layer_types(spec),
        rms_norm_eps=1e-6,
        hidden_activation="gelu_pytorch_tanh",
        tie_word_embeddings=True,
        attention_bias=False,
        max_position_embeddings=spec["context"],
    )
    if spec["family"] == "gemma3":
        common.update(
            query_pre_attn_scalar=spec["query_pre_attn_scalar"],
            rope_parameters={
                "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            },
            final_logit_softcapping=None,
            attn_logit_softcapping=None,
        )
    else:
        common.update(
            global_head_dim=spec["global_head_dim"],
            num_global_key_value_heads=spec["global_kv_heads"],
            attention_k_eq_v=True,
            rope_parameters={
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                "full_attention": {
                    "rope_type": "proportional",
                    "partial_rotary_factor": 0.25,
                    "rope_theta": 1e6,
                },
            },
            final_logit_softcapping=spec["softcap"],
            hidden_size_per_layer_input=0,
            num_kv_shared_layers=0,
            enable_moe_block=False,
            use_double_wide_mlp=False,
            use_bidirectional_attention=None,
        )
    return common


def hf_classes(family):
    if family == "gemma3":
        return Gemma3TextConfig, Gemma3ForCausalLM
    return Gemma4TextConfig, Gemma4ForCausalLM


def sgc_prefix(family):
    """The real checkpoints' prefix for the text decoder (the seeds' tensor_prefix)."""
    return "language_model.model." if family == "gemma3" else "model.language_model."


def layer_geometry(spec, layer):
    """(head_dim, kv_heads, v_from_k) of one layer."""
    full = layer_types(spec)[layer] == "full_attention"
    if spec["family"] == "gemma4" and full:
        return spec["global_head_dim"], spec["global_kv_heads"], True
    return spec["head_dim"], spec["kv_heads"], False


def tensor_table(spec):
    """Checkpoint tensors (HF CausalLM names, without the 'model.' prefix) -> shape.

    This is the family table of gemma-text.md §12 at this spec's sizes."""
    H, F, V, Hq = spec["hidden"], spec["intermediate"], spec["vocab"], spec["q_heads"]
    t = {"embed_tokens.weight": [V, H], "norm.weight": [H]}
    for l in range(spec["layers"]):
        D, Hkv, v_from_k = layer_geometry(spec, l)
        p = f"layers.{l}."
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            t[p + n + ".weight"] = [H]
        t[p + "self_attn.q_proj.weight"] = [Hq * D, H]
        t[p + "self_attn.k_proj.weight"] = [Hkv * D, H]
        if not v_from_k:
            t[p + "self_attn.v_proj.weight"] = [Hkv * D, H]
        t[p + "self_attn.o_proj.weight"] = [H, Hq * D]
        t[p + "self_attn.q_norm.weight"] = [D]
        t[p + "self_attn.k_norm.weight"] = [D]
        t[p + "mlp.gate_proj.weight"] = [F, H]
        t[p + "mlp.up_proj.weight"] = [F, H]
        t[p + "mlp.down_proj.weight"] = [H, F]
        if spec["family"] == "gemma4":
            t[p + "layer_scalar"] = [1]
    return t


# ---------------------------------------------------------------------------------------------
# Weights: drawn from numpy's legacy RandomState (a stream numpy keeps frozen), rounded to bf16
# ---------------------------------------------------------------------------------------------

def make_weights(spec):
    """name (HF CausalLM, no 'model.' prefix) -> bf16 tensor.  Deterministic in weight_seed.

    Linear [out,in]: N(0, 1/in).  Embedding: N(0, embed_std^2) (Gemma 4: large enough that the
    softcap bends the logits; both: the token's own embedding keeps a share of the residual
    stream, which gives greedy steps clear top-2 margins).  Norm weights: Gemma 3 N(0, 0.3^2)
    (used as 1+w); Gemma 4 1 + N(0, 0.3^2), q_norm/k_norm times head_dim^-0.25.  Gemma 4
    layer_scalar: the fixed distinct values of the spec."""
    rs = np.random.RandomState(spec["weight_seed"])
    out = {}
    for name, shape in sorted(tensor_table(spec).items()):
        if name.endswith("layer_scalar"):
            layer = int(name.split(".")[1])
            a = np.array([spec["layer_scalars"][layer]], dtype=np.float64)
        elif len(shape) == 1:
            a = rs.standard_normal(shape) * 0.3
            if spec["family"] == "gemma4":
                a = a + 1.0
                if name.endswith(("q_norm.weight", "k_norm.weight")):
                    # score scale is 1.0: keep q.k of unit-rms heads O(1) (D^-0.25 on each side)
                    a = a * shape[0] ** -0.25
        elif name == "embed_tokens.weight":
            a = rs.standard_normal(shape) * spec["embed_std"]
        else:
            a = rs.standard_normal(shape) * (1.0 / math.sqrt(shape[1]))
        stored = torch.float16 if spec.get("f16_matrices") and len(shape) == 2 else torch.bfloat16
        out[name] = torch.from_numpy(a.astype(np.float32)).to(stored)
    return out


# ---------------------------------------------------------------------------------------------
# safetensors writer (own, deterministic: sorted names, fixed metadata, header padded to 8)
# ---------------------------------------------------------------------------------------------

ST_DTYPES = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32", torch.int32: "I32", torch.int64: "I64"}


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.numel() == 0:
        return b""
    return t.reshape(-1).view(torch.uint8).numpy().tobytes()


def write_safetensors(path, tensors, metadata):
    header = {"__metadata__": dict(sorted(metadata.items()))}
    blobs = []
    off = 0
    for name in sorted(tensors):
        t = tensors[name]
        b = tensor_bytes(t)
        header[name] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_back_equal(path, tensors):
    """The official safetensors reader sees exactly the tensors we meant to write."""
    with safe_open(path, "pt") as f:
        keys = sorted(f.keys())
        assert keys == sorted(tensors), f"{path}: keys differ"
        for k in keys:
            a = f.get_tensor(k)
            b = tensors[k]
            assert a.dtype == b.dtype and list(a.shape) == list(b.shape), f"{path}:{k} dtype/shape"
            assert tensor_bytes(a) == tensor_bytes(b), f"{path}:{k} bytes differ"


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, indent=2) + "\n")


# ---------------------------------------------------------------------------------------------
# system_graph.json (schema 6), shaped like the seeds' target component
# ---------------------------------------------------------------------------------------------

def f32_shortest(x):
    """The shortest decimal that reads back as the same float32 (how the seeds print embed_scale)."""
    v = float(np.float32(x))
    for p in range(1, 12):
        s = "%.*g" % (p, v)
        if float(np.float32(float(s))) == v:
            return float(s)
    return v


def system_graph(spec, artifact_tensors):
    fam = spec["family"]
    g4 = fam == "gemma4"
    attention = []
    for l, lt in enumerate(layer_types(spec)):
        D, Hkv, v_from_k = layer_geometry(spec, l)
        a = {"operator": "softmax"}
        if lt == "sliding_attention":
            a["span"] = "sliding"
            a["window"] = spec["window"]
            a["position"] = {"kind": "rope", "theta": 10000.0}
        else:
            a["span"] = "full"
            if g4:
                a["position"] = {"kind": "partial_rope", "theta": 1000000.0, "rotary_fraction": 0.25,
                                 "basis": "head_width"}
            else:
                a["position"] = {"kind": "linear", "theta": 1000000.0, "factor": 8.0}
        a["geometry"] = {"head_dim": D, "num_kv_heads": Hkv}
        if v_from_k:
            a["v_from_k"] = True
        if g4:  # the gemma-4 seed names the source's layer type; the gemma-3 seed does not
            a["declared_span"] = lt
        attention.append(a)

    offset = 0.0 if g4 else 1.0
    norm = {"kind": "rms_norm", "eps": EPS_F32, "weight_offset": offset}
    att = {
        "num_q_heads": spec["q_heads"],
        "num_kv_heads": spec["kv_heads"],
        "head_dim": spec["head_dim"],
        "score_scale": 1.0 if g4 else spec["query_pre_attn_scalar"] ** -0.5,
        "qk_norm_scope": "per_head",
        "qk_norm_weight_offset": offset,
        "parameter_free_qk_norm": {"q": False, "k": False, "v": g4},
    }
    if g4:
        att["attention_bias"] = False
    head = {"vocab_size": spec["vocab"], "embed_scale": f32_shortest(math.sqrt(spec["hidden"]))}
    if g4:
        head["final_logit_softcapping"] = spec["softcap"]
    head["head_reuses_embedding"] = True
    execution = {
        "context_length": spec["context"],
        "attention": att,
        "ffn": {"intermediate_size": spec["intermediate"], "activation": "gelu_tanh",
                "ffn_type": "gated", "gate_policy": {"kind": "gated"}},
        "norm": {"pre": dict(norm), "post": dict(norm), "final_norm": dict(norm),
                 "placement": "pre_post"},
        "head": head,
        "residual_topology": {"kind": "single_stream"},
    }
    target = {
        "id": "target",
        "role": "primary_text",
        "source_artifact": spec["source_artifact"],
        "num_layers": spec["layers"],
        "hidden_size": spec["hidden"],
        "attention": attention,
        "execution": execution,
    }
    prefix = sgc_prefix(fam)

    def binding(sub):
        p = prefix + sub
        names = [n for n in artifact_tensors if n == p or n.startswith(p + ".")]
        nbytes = sum(artifact_tensors[n].numel() * artifact_tensors[n].element_size() for n in names)
        return {"artifact": spec["source_artifact"], "tensor_prefix": p, "tensors": len(names),
                "bytes": nbytes}

    objects = []
    for kind, sub in (("decoder_stack", "layers"), ("embedding", "embed_tokens"),
                      ("final_norm", "norm")):
        objects.append({
            "id": "target." + kind,
            "component": "target",
            "kind": kind,
            "source_bindings": [binding(sub)],
            "representations": [{"encoding": "F16" if spec.get("f16_matrices") and kind != "final_norm"
                                  else "BF16", "fidelity": "canonical"}],
        })
    total = sum(o["source_bindings"][0]["tensors"] for o in objects)
    assert total == len(artifact_tensors), "every checkpoint tensor must be bound"
    return {"schema": 6, "components": [target], "objects": objects, "edges": []}


# ---------------------------------------------------------------------------------------------
# Reference runs
# ---------------------------------------------------------------------------------------------

class EagerCounter:
    """Counts calls of the modeling module's eager attention function (proof that eager runs)."""

    def __init__(self, module):
        self.module = module
        self.calls = 0

    def __enter__(self):
        self.orig = self.module.eager_attention_forward

        def wrapped(*a, **k):
            self.calls += 1
            return self.orig(*a, **k)

        self.module.eager_attention_forward = wrapped
        return self

    def __exit__(self, *exc):
        self.module.eager_attention_forward = self.orig


def modeling_module(family):
    return modeling_gemma3 if family == "gemma3" else modeling_gemma4


def save_hf_copy(spec, weights, outdir):
    """save_pretrained of the CausalLM holding exactly `weights`; returns the saved key list."""
    cfg_cls, model_cls = hf_classes(spec["family"])
    cfg = cfg_cls(**hf_text_config_dict(spec))
    # F16 matrices: an f32 model holds both storages exactly; the checkpoint is rewritten below.
    f16 = spec.get("f16_matrices", False)
    model = model_cls._from_config(cfg, attn_implementation="eager",
                                   dtype=torch.float32 if f16 else torch.bfloat16)
    sd = model.state_dict()
    for name, t in weights.items():
        key = "model." + name
        assert key in sd, f"HF model has no {key}"
        assert list(sd[key].shape) == list(t.shape), f"{key}: HF {list(sd[key].shape)} vs {list(t.shape)}"
    expected = {"model." + n for n in weights} | {"lm_head.weight"}
    assert set(sd) == expected, f"HF state dict differs from the family table: {sorted(set(sd) ^ expected)}"
    with torch.no_grad():
        for name, t in weights.items():
            target = model.get_parameter("model." + name) if not name.endswith("layer_scalar") \
                else model.get_buffer("model." + name)
            target.copy_(t)
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr(), "head not tied"
    model.save_pretrained(outdir)
    if f16:
        write_safetensors(os.path.join(outdir, "model.safetensors"),
                          {"model." + n: t for n, t in weights.items()}, {"format": "pt"})
    with safe_open(os.path.join(outdir, "model.safetensors"), "pt") as f:
        keys = sorted(f.keys())
        assert keys == sorted("model." + n for n in weights), "save_pretrained wrote other tensors"
        for k in keys:
            t = f.get_tensor(k)
            w = weights[k[len("model."):]]
            assert t.dtype == w.dtype and torch.equal(t, w), k
    return keys


def load_reference(spec, hfdir, dtype):
    _, model_cls = hf_classes(spec["family"])
    model, info = model_cls.from_pretrained(hfdir, dtype=dtype, attn_implementation="eager",
                                            output_loading_info=True)
    missing = [k for k in info["missing_keys"] if k != "lm_head.weight"]
    assert not missing and not info["unexpected_keys"], f"loading: {info}"
    model.eval()
    return model


def verify_model(spec, model, dtype, weights, facts):
    """Assert (and record) what the reference really computes with."""
    fam = spec["family"]
    dn = "f32" if dtype == torch.float32 else "bf16"
    m = model.model
    assert model.config._attn_implementation == "eager"
    L = spec["layers"]
    # per-layer geometry as the modules see it
    dims = []
    for l, layer in enumerate(m.layers):
        D, Hkv, v_from_k = layer_geometry(spec, l)
        at = layer.self_attn
        assert at.head_dim == D, f"layer {l}: head_dim {at.head_dim} != {D}"
        assert at.k_proj.out_features == Hkv * D
        assert (getattr(at, "v_proj", None) is None) == v_from_k, f"layer {l}: v_proj presence"
        assert at.num_key_value_groups == spec["q_heads"] // Hkv
        dims.append(at.head_dim)
    facts.setdefault("layer_head_dims", dims)
    if fam == "gemma4":
        facts.setdefault("hf_per_layer_config", {
            str(k): {"head_dim": v.head_dim, "num_key_value_heads": v.num_key_value_heads}
            for k, v in ((l, model.config.per_layer_config[l]) for l in range(L))
            if layer_types(spec)[k] == "full_attention"})
    # score scale
    scales = sorted({layer.self_attn.scaling for layer in m.layers})
    want = 1.0 if fam == "gemma4" else spec["query_pre_attn_scalar"] ** -0.5
    assert scales == [want], f"score scales {scales}"
    facts.setdefault("score_scale", want)
    # RoPE tables
    re = m.rotary_emb
    sl = getattr(re, "sliding_attention_inv_freq")
    fl = getattr(re, "full_attention_inv_freq")
    assert sl.dtype == torch.float32 and fl.dtype == torch.float32, "inv_freq not f32"
    D = spec["head_dim"]
    ref_sl = 1.0 / (1e4 ** (torch.arange(0, D, 2, dtype=torch.float) / D))
    assert torch.equal(sl, ref_sl), "sliding inv_freq"
    if fam == "gemma3":
        ref_fl = (1.0 / (1e6 ** (torch.arange(0, D, 2, dtype=torch.float) / D))) / 8.0
        assert torch.equal(fl, ref_fl), "gemma3 full inv_freq (linear /8)"
        assert fl[0].item() == 0.125
        facts.setdefault("rope_full", f"linear: inv_freq = 1e6^(-2k/{D}) / 8, k < {D // 2}; inv_freq[0] = 0.125")
    else:
        Dg = spec["global_head_dim"]
        rot = int(0.25 * Dg // 2)
        nz = int((fl != 0).sum())
        assert fl.numel() == Dg // 2 and nz == rot, f"full inv_freq: {nz} nonzero of {fl.numel()}"
        k = torch.arange(0, 2 * rot, 2, dtype=torch.float)
        ref = 1.0 / (1e6 ** (k / Dg))
        assert torch.equal(fl[:rot], ref), "proportional RoPE denominator is not the full head width"
        assert torch.all(fl[rot:] == 0)
        facts.setdefault(
            "rope_full",
            f"proportional: inv_freq[k] = 1e6^(-2k/{Dg}) for k < {rot}, 0 for {rot} <= k < {Dg // 2} "
            f"(denominator = full head width {Dg}; rotated dims [0,{rot}) with [{Dg // 2},{Dg // 2 + rot}))")
    # embed scale actually multiplied in
    es = m.embed_tokens.embed_scale.to(m.embed_tokens.weight.dtype)
    facts.setdefault("embed_scale_used", {})[dn] = float(es.item())
    # layer scalars
    if fam == "gemma4":
        vals = [float(layer.layer_scalar.float().item()) for layer in m.layers]
        want = [float(weights[f"layers.{l}.layer_scalar"].float().item()) for l in range(L)]
        assert vals == want, f"layer_scalar {vals} != {want}"
        facts.setdefault("layer_scalars_bf16", vals)
    # tied head
    assert model.lm_head.weight.data_ptr() == m.embed_tokens.weight.data_ptr(), "head not tied"
    # weights loaded bit-exactly (upcast for f32)
    for name, t in weights.items():
        src = m.get_buffer(name) if name.endswith("layer_scalar") else m.get_parameter(name)
        assert src.dtype == dtype and torch.equal(src, t.to(dtype)), f"{name} not loaded exactly"
    return es


def greedy(row):
    return int(torch.argmax(row).item())


def top2(row):
    v, i = torch.topk(row, 2)
    rng = float(row.max() - row.min())
    return float(v[0] - v[1]), rng


@torch.no_grad()
def run_reference(spec, model, ids, want_hidden, fast=False):
    """Prefill with the HF KV cache, then N greedy decode steps one token at a time."""
    fam = spec["family"]
    m = model.model
    hidden = {}
    hooks = []
    if want_hidden:
        hooks.append(m.embed_tokens.register_forward_hook(
            lambda mod, a, o: hidden.__setitem__(0, o[0].float().clone())))
        for l, layer in enumerate(m.layers):
            hooks.append(layer.register_forward_hook(
                (lambda idx: lambda mod, a, o: hidden.__setitem__(
                    idx, (o[0] if isinstance(o, tuple) else o)[0].float().clone()))(l + 1)))
        hooks.append(m.norm.register_forward_hook(
            lambda mod, a, o: hidden.__setitem__("final", o[0].float().clone())))
    x = torch.tensor([ids], dtype=torch.long)
    with EagerCounter(modeling_module(fam)) as ec:
        out = model(input_ids=x, use_cache=True, output_hidden_states=want_hidden)
        eager_calls = ec.calls
    for h in hooks:
        h.remove()
    assert eager_calls == spec["layers"], f"eager attention ran {eager_calls} times, not per layer"
    if want_hidden:
        hs = out.hidden_states
        assert len(hs) == spec["layers"] + 1
        for i in range(spec["layers"]):
            assert torch.equal(hs[i][0].float(), hidden[i]), f"hidden state {i} differs from HF's"
        assert torch.equal(hs[-1][0].float(), hidden["final"]), "HF's last hidden state is not the normed one"
    cache = out.cache
    prefill = out.logits[0].float().clone()
    tok = greedy(prefill[-1])
    dec_ids, dec_logits = [], []
    for _ in range(spec["decode_steps"]):
        dec_ids.append(tok)
        o = model(input_ids=torch.tensor([[tok]], dtype=torch.long), cache=cache, use_cache=True)
        cache = o.cache
        row = o.logits[0, -1].float().clone()
        dec_logits.append(row)
        tok = greedy(row)
    dec_logits = torch.stack(dec_logits)
    if fast:  # --search: skip the cross-checks
        return dict(prefill=prefill, dec_ids=dec_ids, dec_logits=dec_logits, next_id=tok,
                    hidden=hidden, cache_vs_full=None)
    # the same sequence in one uncached forward
    full = model(input_ids=torch.tensor([ids + dec_ids], dtype=torch.long), use_cache=False).logits[0].float()
    S = len(ids)
    both = torch.cat([prefill, dec_logits])
    rel = ((full - both).abs().amax(-1) / (both.amax(-1) - both.amin(-1))).max().item()
    # HF generate() picks the same tokens
    gen = model.generate(x, max_new_tokens=spec["decode_steps"] + 1, do_sample=False, pad_token_id=0)
    gen_ids = gen[0, S:].tolist()
    want = dec_ids + [tok]
    # generate() stops early at an eos id; the loop does not (the chosen seeds have no special ids)
    assert gen_ids == want[: len(gen_ids)] and (len(gen_ids) == len(want) or gen_ids[-1] in SPECIAL_IDS), \
        f"generate() {gen_ids} != loop {want}"
    return dict(prefill=prefill, dec_ids=dec_ids, dec_logits=dec_logits, next_id=tok,
                hidden=hidden, cache_vs_full=rel)


def analyse(spec, r32, r16):
    """bf16-vs-f32 difference of the reference itself and the top-2 margins per greedy step."""
    a32 = torch.cat([r32["prefill"], r32["dec_logits"]])
    a16 = torch.cat([r16["prefill"], r16["dec_logits"]])
    same = r32["dec_ids"] == r16["dec_ids"] and r32["next_id"] == r16["next_id"]
    rng = a32.amax(-1) - a32.amin(-1)
    per_pos = ((a16 - a32).abs().amax(-1) / rng).tolist()
    if not same:  # decode rows are not comparable once the tokens differ: prefill only
        per_pos = per_pos[: len(r32["prefill"])]
    bound = max(per_pos)
    margins = {}
    for dn, r in (("f32", r32), ("bf16", r16)):
        rows = [r["prefill"][-1]] + list(r["dec_logits"])
        ab, rel = [], []
        for row in rows:
            mg, rg = top2(row)
            ab.append(mg)
            rel.append(mg / rg)
        margins[dn] = dict(abs=ab, rel=rel, min_abs=min(ab), min_rel=min(rel))
    min_rel = min(margins["f32"]["min_rel"], margins["bf16"]["min_rel"])
    return dict(same_tokens=same, per_pos=per_pos, bound=bound, margins=margins,
                min_rel=min_rel, ratio=min_rel / bound if bound > 0 else float("inf"))


MARGIN_FACTOR = 4.0  # required: min top-2 margin / row range > 4 x the bf16-vs-f32 bound
SPECIAL_IDS = (0, 1, 2)  # pad, eos, bos: never in the prompt or the greedy tokens


def acceptable(spec, ana, r32):
    ids = r32["dec_ids"] + [r32["next_id"]]
    return ana["same_tokens"] and ana["ratio"] > MARGIN_FACTOR and not any(i in SPECIAL_IDS for i in ids)


def make_prompt(spec, seed):
    rs = np.random.RandomState(1000 + seed)
    # [3, vocab-3): no special ids, and clear of the ids 509..511 the Gemma 3 wrapper check gives
    # to image tokens
    return [int(v) for v in rs.randint(3, spec["vocab"] - 3, size=spec["prompt_len"])]


def wrapper_check(spec, model_path, ids, prefill32):
    """Load our renamed checkpoint through the real multimodal wrapper class (whose prefixes are the
    seeds'); its text-only logits must equal the CausalLM's.  Also report what its save_pretrained
    writes."""
    text = hf_text_config_dict(spec)
    if spec["family"] == "gemma3":
        vis = SiglipVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                 num_attention_heads=2, image_size=28, patch_size=14)
        cfg = Gemma3Config(text_config=text, vision_config=vis, mm_tokens_per_image=4,
                           boi_token_index=509, eoi_token_index=510, image_token_index=511)
        cls = Gemma3ForConditionalGeneration
    else:
        cfg = Gemma4Config(text_config=text, vision_config=None, audio_config=None)
        cls = Gemma4ForConditionalGeneration
    with tempfile.TemporaryDirectory() as d:
        cfg.save_pretrained(d)
        shutil.copyfile(model_path, os.path.join(d, "model.safetensors"))
        torch.manual_seed(0)
        model, info = cls.from_pretrained(d, dtype=torch.float32, attn_implementation="eager",
                                          output_loading_info=True)
        model.eval()
        missing = [k for k in info["missing_keys"] if k != "lm_head.weight"]
        if spec["family"] == "gemma3":
            assert all(".vision_tower." in k or "multi_modal_projector" in k or k.startswith(
                ("vision_tower", "multi_modal_projector")) for k in missing), missing
        else:
            assert not missing, missing
        assert not info["unexpected_keys"], info["unexpected_keys"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0].float()
        rng = prefill32.amax(-1) - prefill32.amin(-1)
        rel = ((logits - prefill32).abs().amax(-1) / rng).max().item()
        assert rel <= 1e-6, f"wrapper logits differ: {rel}"
        d2 = os.path.join(d, "resaved")
        model.to(torch.bfloat16).save_pretrained(d2)
        with safe_open(os.path.join(d2, "model.safetensors"), "pt") as f:
            keys = sorted(k for k in f.keys() if "vision" not in k and "multi_modal" not in k)
    emb = [k for k in keys if k.endswith("embed_tokens.weight")]
    assert len(emb) == 1, emb
    return dict(cls=cls.__name__, rel=rel, saved_prefix=emb[0][: -len("embed_tokens.weight")],
                saved_keys=len(keys))


# ---------------------------------------------------------------------------------------------
# One tiny model
# ---------------------------------------------------------------------------------------------

def evaluate(spec, prompt_seed, workdir, fast=False):
    weights = make_weights(spec)
    hfdir = os.path.join(workdir, "hf")
    saved = save_hf_copy(spec, weights, hfdir)
    ids = make_prompt(spec, prompt_seed)
    facts = {}
    res = {}
    for dtype in (torch.float32, torch.bfloat16):
        model = load_reference(spec, hfdir, dtype)
        verify_model(spec, model, dtype, weights, facts)
        res[dtype] = run_reference(spec, model, ids, want_hidden=not fast, fast=fast)
        if dtype == torch.float32:
            facts["inv_freq"] = {
                "sliding_attention": model.model.rotary_emb.sliding_attention_inv_freq.clone(),
                "full_attention": model.model.rotary_emb.full_attention_inv_freq.clone()}
        del model
    ana = analyse(spec, res[torch.float32], res[torch.bfloat16])
    return dict(weights=weights, saved=saved, ids=ids, facts=facts, r32=res[torch.float32],
                r16=res[torch.bfloat16], ana=ana, hfdir=hfdir)


def build_tiny(name, outroot, quiet=False):
    spec = TINY[name]
    say = (lambda *a: None) if quiet else print
    outdir = os.path.join(outroot, "tiny-" + name)
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        ev = evaluate(spec, spec["prompt_seed"], work)
        r32, r16, ana, facts = ev["r32"], ev["r16"], ev["ana"], ev["facts"]
        assert acceptable(spec, ana, r32), (
            f"{name}: seeds no longer meet the margin criterion (ratio {ana['ratio']:.2f}, "
            f"same tokens {ana['same_tokens']}); rerun --search")
        S, N, L = spec["prompt_len"], spec["decode_steps"], spec["layers"]

        # model.safetensors with the seeds' prefixes
        prefix = sgc_prefix(spec["family"])
        art = {prefix + n: t for n, t in ev["weights"].items()}
        model_path = os.path.join(outdir, "model.safetensors")
        write_safetensors(model_path, art, {"format": "pt"})
        read_back_equal(model_path, art)
        wrap = wrapper_check(spec, model_path, ev["ids"], r32["prefill"])

        # system_graph.json
        graph = system_graph(spec, art)
        write_json(os.path.join(outdir, "system_graph.json"), graph)

        # golden.safetensors
        g = {
            "input_ids": torch.tensor(ev["ids"], dtype=torch.int32),
            "prefill_logits_f32": r32["prefill"],
            "decode_ids_f32": torch.tensor(r32["dec_ids"], dtype=torch.int32),
            "decode_logits_f32": r32["dec_logits"],
            "prefill_logits_bf16": r16["prefill"],
            "decode_ids_bf16": torch.tensor(r16["dec_ids"], dtype=torch.int32),
            "decode_logits_bf16": r16["dec_logits"],
            "final_norm_f32": r32["hidden"]["final"],
            "final_norm_bf16": r16["hidden"]["final"],
            "rope_inv_freq.sliding_attention": facts["inv_freq"]["sliding_attention"],
            "rope_inv_freq.full_attention": facts["inv_freq"]["full_attention"],
        }
        for i in range(L + 1):
            g[f"hidden_states_f32.{i}"] = r32["hidden"][i]
            g[f"hidden_states_bf16.{i}"] = r16["hidden"][i]
        for k, t in g.items():
            if k.endswith("_bf16") or "_bf16." in k:
                if t.dtype == torch.float32:
                    assert torch.equal(t, t.to(torch.bfloat16).float()), f"{k} not bf16-exact"
            g[k] = t.contiguous()
        golden_path = os.path.join(outdir, "golden.safetensors")
        write_safetensors(golden_path, g, {"format": "pt"})
        read_back_equal(golden_path, g)

        # meta.json
        cfg_dict = json.loads(hf_classes(spec["family"])[0](**hf_text_config_dict(spec)).to_json_string(
            use_diff=False))
        cfg_dict.pop("transformers_version", None)
        meta = {
            "model": "tiny-" + name,
            "family": spec["family"],
            "source_artifact": spec["source_artifact"],
            "reference": {
                "class": hf_classes(spec["family"])[1].__name__,
                "attn_implementation": "eager",
                "f32": "float32 run on the checkpoint's %s values upcast (from_pretrained dtype=float32)"
                       % ("f16 and bf16" if spec.get("f16_matrices") else "bf16"),
                "bf16": "bfloat16 run (from_pretrained dtype=bfloat16)",
                "decode": "HF KV cache, one token per forward, greedy (argmax; first index on ties)",
            },
            "hf_config": cfg_dict,
            "hf_config_kwargs": hf_text_config_dict(spec),
            "spec": {k: v for k, v in spec.items()},
            "seeds": {"weights": spec["weight_seed"], "prompt": spec["prompt_seed"],
                      "weights_rng": "numpy.random.RandomState(weights).standard_normal, tensors in sorted name order",
                      "prompt_rng": "numpy.random.RandomState(1000 + prompt).randint(3, vocab - 3, prompt_length)"},
            "init": {
                "linear": "N(0, 1/in_features)",
                "embedding": f"N(0, {spec['embed_std']}^2)",
                "norm_weights": "N(0, 0.3^2), used as (1+w)" if spec["family"] == "gemma3"
                else "1 + N(0, 0.3^2), used as w; q_norm/k_norm additionally times head_dim^-0.25 "
                     "(score scale is 1.0: keeps q.k O(1))",
                "layer_scalar": facts.get("layer_scalars_bf16"),
                "stored": ("matrices f16, vectors bf16 (round to nearest even from f32)"
                           if spec.get("f16_matrices") else "bf16 (round to nearest even from f32)"),
            },
            "versions": {
                "python": platform.python_version(),
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "safetensors": safetensors.__version__,
                "numpy": np.__version__,
            },
            "numeric_env": dict(NUMERIC_ENV, torch_threads=1, deterministic_algorithms=True),
            "window": spec["window"],
            "context_length": spec["context"],
            "prompt_length": S,
            "decode_steps": N,
            "decode_positions": [S, S + N - 1],
            "input_ids": ev["ids"],
            "decode_ids_f32": r32["dec_ids"],
            "decode_ids_bf16": r16["dec_ids"],
            "next_id_after_decode": {"f32": r32["next_id"], "bf16": r16["next_id"]},
            "embed_scale_used": facts["embed_scale_used"],
            "embed_scale_graph": graph["components"][0]["execution"]["head"]["embed_scale"],
            "score_scale": facts["score_scale"],
            "layer_head_dims": facts["layer_head_dims"],
            "rope_full": facts["rope_full"],
            "golden_keys": {
                "input_ids": "I32 [S] prompt token ids",
                "prefill_logits_{f32,bf16}": "F32 [S,V] logits of every prompt position",
                "decode_ids_{f32,bf16}": "I32 [N] token fed at decode step k (position S+k); "
                                         "decode_ids[0] = argmax(prefill_logits[S-1]), "
                                         "decode_ids[k] = argmax(decode_logits[k-1])",
                "decode_logits_{f32,bf16}": "F32 [N,V] logits after feeding decode_ids[k] at position S+k "
                                            "(that run's own greedy tokens fed back)",
                "hidden_states_{f32,bf16}.0": "F32 [S,H] embedding output (scaled by embed_scale_used)",
                "hidden_states_{f32,bf16}.{l+1}": "F32 [S,H] output of decoder layer l (before the final norm; "
                                                  "gemma4: after layer_scalar)",
                "final_norm_{f32,bf16}": "F32 [S,H] final RMSNorm output (what the tied head multiplies); "
                                         "HF's output_hidden_states[-1]",
                "rope_inv_freq.{sliding,full}_attention": "F32 inv_freq buffers of the reference",
                "dtype_note": "_bf16 tensors hold exact bfloat16 values stored as F32",
            },
            "bf16_vs_f32": {
                "definition": "per position: max_v |bf16 - f32| / (max_v f32 - min_v f32); positions = "
                              "the S prefill rows then the N decode rows",
                "per_position": ana["per_pos"],
                "max": ana["bound"],
            },
            "margins": {
                "definition": "per greedy choice (step 0 = prefill row S-1, step k = decode_logits[k-1], "
                              "k = 1..N): top1 - top2 (abs) and divided by the row's max - min (rel)",
                "f32": ana["margins"]["f32"],
                "bf16": ana["margins"]["bf16"],
                "min_rel": ana["min_rel"],
                "min_rel_over_bf16_bound": ana["ratio"],
                "required_factor": MARGIN_FACTOR,
                "criterion": f"min_rel > {MARGIN_FACTOR} x bf16_vs_f32.max, for both dtypes, the same "
                             f"greedy tokens in both dtypes, and no special id {list(SPECIAL_IDS)} among them",
            },
            "kv_cache_vs_full_reforward": {
                "definition": "max over positions of max|cached - uncached| / row range",
                "f32": r32["cache_vs_full"],
                "bf16": r16["cache_vs_full"],
            },
            "tolerance_rule": {
                "f32": "per position: max|d| <= 1e-4 * (max - min of the reference row)",
                "bf16": "per position: max|d| <= B * (max - min), B from bf16_vs_f32.max (the test sets B); "
                        "greedy tokens must equal decode_ids_bf16",
            },
            "hf_save_pretrained_keys": {
                "causal_lm": ev["saved"][:3] + ["..."] + [f"{len(ev['saved'])} tensors, no lm_head.weight"],
                "wrapper_class": wrap["cls"],
                "wrapper_prefix": wrap["saved_prefix"],
                "wrapper_loads_this_checkpoint": f"text logits equal to the CausalLM's (max rel {wrap['rel']:.3g})",
            },
        }
        if spec["family"] == "gemma4":
            meta["hf_per_layer_config"] = facts["hf_per_layer_config"]
            meta["layer_scalars"] = facts["layer_scalars_bf16"]
        meta["sha256"] = {f: sha256(os.path.join(outdir, f)) for f in MODEL_FILES if f != "meta.json"}
        write_json(os.path.join(outdir, "meta.json"), meta)

        total = sum(os.path.getsize(os.path.join(outdir, f)) for f in MODEL_FILES)
        assert total < SIZE_LIMIT, f"{outdir}: {total} bytes"

        say(f"== tiny-{name}: {outdir}")
        say(f"  verified: attn_implementation eager; eager_attention_forward ran once per layer "
            f"({L}) per forward")
        say(f"  verified: per-layer head_dim {facts['layer_head_dims']}"
            + (f"; model.model.layers[5].self_attn.head_dim = {facts['layer_head_dims'][5]} "
               f"(global), v_proj absent on full layers" if spec['family'] == 'gemma4' else ""))
        if spec["family"] == "gemma4":
            say(f"  verified: HF per_layer_config {facts['hf_per_layer_config']}")
            say(f"  verified: layer_scalar (bf16) {facts['layer_scalars_bf16']}")
        say(f"  verified: RoPE full layers {facts['rope_full']}")
        say(f"  verified: score scale {facts['score_scale']}; embed scale used "
            f"{facts['embed_scale_used']} (graph embed_scale {meta['embed_scale_graph']})")
        say(f"  verified: save_pretrained ({meta['reference']['class']}) wrote {len(ev['saved'])} tensors "
            f"'{ev['saved'][0]}', ... (no lm_head.weight)")
        say(f"  verified: {wrap['cls']} loads model.safetensors ({prefix}*) and gives the same text logits "
            f"(max rel {wrap['rel']:.2g}); its save_pretrained writes prefix '{wrap['saved_prefix']}'")
        say(f"  verified: KV-cache decode == full re-forward: f32 {r32['cache_vs_full']:.3g}, "
            f"bf16 {r16['cache_vs_full']:.3g} (rel); generate() gives the same greedy tokens")
        say(f"  bf16-vs-f32 bound {ana['bound']:.5f}; min rel margin {ana['min_rel']:.5f} "
            f"(ratio {ana['ratio']:.2f}); decode ids {r32['dec_ids']}")
        for f in MODEL_FILES:
            say(f"  {f:20s} {os.path.getsize(os.path.join(outdir, f)):9d} bytes")
        say(f"  total {total} bytes")
        if name in LONG:
            build_long(name, spec, ev, art, graph, outdir, work, say)
    return outdir


# ---------------------------------------------------------------------------------------------
# The long-position f32 golden (LONG)
# ---------------------------------------------------------------------------------------------

def long_token_stream(spec, lspec, prompt):
    """prompt, then positions - len(prompt) ids from RandomState(5000 + stream_seed), in [3, vocab-3)
    as the prompt's (no special id, so no stop token either)."""
    rs = np.random.RandomState(5000 + lspec["stream_seed"])
    n = lspec["positions"] - len(prompt)
    return [int(v) for v in rs.randint(3, spec["vocab"] - 3, size=n)]


def long_positions(lspec):
    T = lspec["positions"]
    return sorted(set(range(0, T, lspec["sample_every"])) | set(range(T - lspec["tail"], T)))


@torch.no_grad()
def run_long_reference(spec, model, prompt, feed, positions):
    """Prefill the prompt with the HF KV cache, then feed `feed` one token per forward (teacher
    forcing); returns the logits rows at `positions` and the number of eager attention calls."""
    S = len(prompt)
    want = set(positions)
    rows = {}
    with EagerCounter(modeling_module(spec["family"])) as ec:
        out = model(input_ids=torch.tensor([prompt], dtype=torch.long), use_cache=True)
        cache = out.cache
        for p in range(S):
            if p in want:
                rows[p] = out.logits[0, p].float().clone()
        for k, tok in enumerate(feed):
            o = model(input_ids=torch.tensor([[tok]], dtype=torch.long), cache=cache, use_cache=True)
            cache = o.cache
            if S + k in want:
                rows[S + k] = o.logits[0, -1].float().clone()
        calls = ec.calls
    return torch.stack([rows[p] for p in positions]), calls


def build_long(name, spec, ev, art, graph, outdir, work, say):
    """Writes LONG_FILES into outdir: the graph with the larger context, the sampled golden, and its
    meta.  The reference is the same checkpoint in float32, eager, with max_position_embeddings
    raised to the graph's context (the only change to the HF config)."""
    lspec = LONG[name]
    lsp = dict(spec, context=lspec["context"])
    T = lspec["positions"]
    assert T <= lsp["context"], f"{T} positions need context_length >= {T}"
    prompt = list(ev["ids"])
    S = len(prompt)
    feed = long_token_stream(spec, lspec, prompt)
    positions = long_positions(lspec)

    # the graph: the model's own, context_length raised, nothing else
    lgraph = system_graph(lsp, art)
    assert lgraph["components"][0]["execution"]["context_length"] == lsp["context"]
    same = json.loads(json.dumps(lgraph))
    same["components"][0]["execution"]["context_length"] = spec["context"]
    assert same == graph, "the long graph differs from system_graph.json in more than context_length"
    write_json(os.path.join(outdir, LONG_FILES[0]), lgraph)

    # the reference: the saved HF copy, config with the larger max_position_embeddings
    cfg_cls, _ = hf_classes(spec["family"])
    hfdir = os.path.join(work, "hf-long")
    cfg = cfg_cls.from_pretrained(ev["hfdir"])
    base = cfg.to_dict()
    cfg.max_position_embeddings = lsp["context"]
    diff = sorted(k for k in set(base) | set(cfg.to_dict()) if base.get(k) != cfg.to_dict().get(k))
    assert diff == ["max_position_embeddings"], diff
    cfg.save_pretrained(hfdir)
    shutil.copyfile(os.path.join(ev["hfdir"], "model.safetensors"), os.path.join(hfdir, "model.safetensors"))
    model = load_reference(lsp, hfdir, torch.float32)
    assert model.config.max_position_embeddings == lsp["context"]
    verify_model(lsp, model, torch.float32, ev["weights"], {})
    logits, calls = run_long_reference(spec, model, prompt, feed, positions)
    assert calls == spec["layers"] * (1 + len(feed)), f"eager attention ran {calls} times"
    assert torch.isfinite(logits).all()
    # the sampled rows equal the regular golden's where both have them (the prompt rows)
    pre = ev["r32"]["prefill"]
    for i, p in enumerate(positions):
        if p < S:
            assert torch.equal(logits[i], pre[p]), f"position {p}: differs from prefill_logits_f32"
    # the same sequence in one uncached forward
    full = model(input_ids=torch.tensor([prompt + feed], dtype=torch.long), use_cache=False).logits[0].float()
    full = full[positions]
    rng = logits.amax(-1) - logits.amin(-1)
    assert (rng > 0).all()
    cache_vs_full = ((full - logits).abs().amax(-1) / rng).max().item()
    assert cache_vs_full <= 1e-5, f"KV-cache decode vs full forward: {cache_vs_full}"
    del model, full

    g = {
        "prompt_ids": torch.tensor(prompt, dtype=torch.int32),
        "feed_ids": torch.tensor(feed, dtype=torch.int32),
        "positions": torch.tensor(positions, dtype=torch.int32),
        "logits_f32": logits.contiguous(),
    }
    golden_path = os.path.join(outdir, LONG_FILES[1])
    write_safetensors(golden_path, g, {"format": "pt"})
    read_back_equal(golden_path, g)

    window = spec["window"]
    meta = {
        "model": "tiny-" + name,
        "what": f"f32 logits of HF {hf_classes(spec['family'])[1].__name__} (eager, float32 on the bf16 "
                f"checkpoint upcast) decoded teacher-forced to {T} positions; sampled rows only",
        "checkpoint": "model.safetensors of this folder (unchanged)",
        "graph": f"{LONG_FILES[0]}: system_graph.json with execution.context_length "
                 f"{lsp['context']} instead of {spec['context']}, nothing else",
        "hf_config_change": {"max_position_embeddings": [spec["context"], lsp["context"]]},
        "long": dict(lspec),
        "tokens": {
            "prompt": f"prompt_ids: the regular golden's input_ids ({S} tokens, positions 0..{S - 1}), "
                      "prefilled in one forward",
            "stream": f"feed_ids: numpy.random.RandomState(5000 + {lspec['stream_seed']}).randint(3, "
                      f"{spec['vocab'] - 3}, {len(feed)}), fed one per decode step at positions "
                      f"{S}..{T - 1} (a fixed pseudo-random stream, not greedy tokens)",
        },
        "decode": "HF KV cache, one token per forward, teacher-forced",
        "positions": f"every {lspec['sample_every']}-th position from 0 and the last {lspec['tail']}: "
                     f"{len(positions)} rows",
        "golden_keys": {
            "prompt_ids": f"I32 [{S}]",
            "feed_ids": f"I32 [{len(feed)}]",
            "positions": f"I32 [{len(positions)}] sampled positions, increasing",
            "logits_f32": f"F32 [{len(positions)},{spec['vocab']}] logits at those positions",
        },
        "kv_cache_vs_full_reforward": {
            "definition": "over the sampled positions, max|cached - uncached| / row range",
            "f32": cache_vs_full,
        },
        "ring": f"sliding layers keep {window} slots; position {T - 1} is slot {(T - 1) % window}, "
                f"the ring has wrapped {(T - 1) // window} times",
        "tolerance_rule": "per sampled position: max|d| <= 1e-4 * (max - min of the reference row)",
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "safetensors": safetensors.__version__,
            "numpy": np.__version__,
        },
        "numeric_env": dict(NUMERIC_ENV, torch_threads=1, deterministic_algorithms=True),
        "sha256": {f: sha256(os.path.join(outdir, f)) for f in LONG_FILES[:2]},
    }
    write_json(os.path.join(outdir, LONG_FILES[2]), meta)
    total = sum(os.path.getsize(os.path.join(outdir, f)) for f in LONG_FILES)
    assert total < LONG_SIZE_LIMIT, f"{outdir}: long files {total} bytes"
    say(f"  long golden: {T} positions (prompt {S}, {len(feed)} fed), {len(positions)} sampled rows, "
        f"context {lsp['context']}; KV-cache decode == full re-forward: {cache_vs_full:.3g} (rel)")
    for f in LONG_FILES:
        say(f"  {f:24s} {os.path.getsize(os.path.join(outdir, f)):9d} bytes")


# ---------------------------------------------------------------------------------------------
# Modes
# ---------------------------------------------------------------------------------------------

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def do_check(names, committed_root):
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            build_tiny(name, tmp, quiet=True)
            for f in MODEL_FILES + (LONG_FILES if name in LONG else ()):
                new = os.path.join(tmp, "tiny-" + name, f)
                old = os.path.join(committed_root, "tiny-" + name, f)
                hn = sha256(new)
                if not os.path.exists(old):
                    print(f"MISSING tiny-{name}/{f} (regenerated sha256 {hn})")
                    bad += 1
                    continue
                ho = sha256(old)
                ok = ho == hn
                bad += not ok
                print(f"{'OK  ' if ok else 'DIFF'} tiny-{name}/{f} {ho}" + ("" if ok else f" regenerated {hn}"))
    print(f"{'check passed' if not bad else f'check FAILED: {bad} file(s) differ'}")
    return 1 if bad else 0


def do_search(names, count):
    for name in names:
        spec = TINY[name]
        print(f"== {name}: weight seed {spec['weight_seed']}, prompt seeds 0..{count - 1}")
        for s in range(count):
            with tempfile.TemporaryDirectory() as work:
                ev = evaluate(spec, s, work, fast=True)
            a = ev["ana"]
            ok = acceptable(spec, a, ev["r32"])
            print(f"  prompt seed {s:3d}: same tokens {a['same_tokens']!s:5s} bound {a['bound']:.5f} "
                  f"distinct {len(set(ev['r32']['dec_ids']))} "
                  f"min rel margin {a['min_rel']:.5f} ratio {a['ratio']:6.2f} "
                  f"{'ACCEPT' if ok else ''}  ids {ev['r32']['dec_ids']}", flush=True)


def do_b1(outdir):
    """B1 benchmark model: system_graph.json + model.safetensors (seed names) and hf/ (HF-loadable)."""
    spec = dict(B1)
    os.makedirs(outdir, exist_ok=True)
    print(f"== B1: building random bf16 weights ({spec['layers']} layers, hidden {spec['hidden']}, "
          f"vocab {spec['vocab']})", flush=True)
    weights = make_weights(spec)
    n_params = sum(t.numel() for t in weights.values())
    prefix = sgc_prefix(spec["family"])
    art = {prefix + n: t for n, t in weights.items()}
    write_safetensors(os.path.join(outdir, "model.safetensors"), art, {"format": "pt"})
    write_json(os.path.join(outdir, "system_graph.json"), system_graph(spec, art))
    hfdir = os.path.join(outdir, "hf")
    os.makedirs(hfdir, exist_ok=True)
    cfg = Gemma3TextConfig(**hf_text_config_dict(spec))
    cfg.architectures = ["Gemma3ForCausalLM"]
    cfg.dtype = "bfloat16"
    cfg.save_pretrained(hfdir)
    write_safetensors(os.path.join(hfdir, "model.safetensors"),
                      {"model." + n: t for n, t in weights.items()}, {"format": "pt"})
    write_json(os.path.join(outdir, "meta.json"), {
        "model": "b1", "spec": spec, "parameters": n_params,
        "bytes": sum(t.numel() * 2 for t in weights.values()),
        "files": {"model.safetensors": f"{prefix}* names (like the seed)",
                  "hf/": "config.json + model.safetensors with model.* names for Gemma3ForCausalLM; "
                         "the same bf16 values"},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
    })
    print(f"  {n_params} parameters; files written to {outdir}", flush=True)
    # sanity: transformers loads the hf/ copy with nothing missing and runs a few tokens
    model, info = Gemma3ForCausalLM.from_pretrained(hfdir, dtype=torch.bfloat16, attn_implementation="eager",
                                                    output_loading_info=True)
    missing = [k for k in info["missing_keys"] if k != "lm_head.weight"]
    assert not missing and not info["unexpected_keys"], info
    with torch.no_grad():
        lg = model(input_ids=torch.tensor([[5, 6, 7, 8]])).logits
    assert torch.isfinite(lg.float()).all()
    print(f"  sanity: Gemma3ForCausalLM loads hf/ (nothing missing) and runs; logits {tuple(lg.shape)}, "
          f"finite; embed value equal: "
          f"{torch.equal(model.model.embed_tokens.weight[:4], weights['embed_tokens.weight'][:4])}")
    for f in ("system_graph.json", "model.safetensors", "meta.json", "hf/config.json", "hf/model.safetensors"):
        print(f"  {f:22s} {os.path.getsize(os.path.join(outdir, f)):12d} bytes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=EXAMPLES, help="examples root (default: the repo's examples/)")
    ap.add_argument("--only", choices=sorted(TINY), action="append", help="one model only")
    ap.add_argument("--check", action="store_true", help="regenerate into a temp dir and compare bytes")
    ap.add_argument("--search", type=int, metavar="N", help="try prompt seeds 0..N-1, print margins")
    ap.add_argument("--b1", metavar="OUTDIR", help="write the B1 benchmark model to OUTDIR")
    args = ap.parse_args()
    names = args.only or sorted(TINY)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"safetensors {safetensors.__version__}, python {platform.python_version()}", flush=True)
    if args.b1:
        if os.path.realpath(args.b1).startswith(os.path.realpath(REPO) + os.sep):
            print("error: --b1 writes ~1 GiB; give a folder outside the repository", file=sys.stderr)
            return 2
        do_b1(args.b1)
        return 0
    if args.search:
        do_search(names, args.search)
        return 0
    if args.check:
        return do_check(names, args.out)
    for name in names:
        build_tiny(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
