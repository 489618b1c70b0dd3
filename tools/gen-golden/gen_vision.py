#!/usr/bin/env python3
"""Tiny random multimodal Gemma 3 / Gemma 4 models (text + vision tower + adapter) and their
Hugging Face reference outputs with an image in the prompt (issue 12, "Done when" item 1).

For each model this writes examples/tiny-<name>-vision/{model.safetensors, system_graph.json,
image.png, golden.safetensors, meta.json}.  The recipes are gemma-vision.md G.8 at the text
sizes of gemma-text.md §13 (hidden 96); the facts the graph states are VISION_KEYS.md's.
See README.md next to this file ("Vision models").

  gen-golden --vision                 regenerate both folders
  gen-golden --vision --check         regenerate into a temp dir, compare byte for byte
  gen-golden --vision --search 40     try prompt seeds 0..39, print margins and greedy ids
"""

import gen_golden as G  # first: fixes the numeric environment before torch is imported

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import PIL  # noqa: E402
import PIL.Image  # noqa: E402
import safetensors  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
import transformers  # noqa: E402
from safetensors import safe_open  # noqa: E402
from transformers import (  # noqa: E402
    Gemma3Config,
    Gemma3ForConditionalGeneration,
    Gemma3ImageProcessor,
    Gemma4Config,
    Gemma4ForConditionalGeneration,
    Gemma4ImageProcessor,
    Gemma4VisionConfig,
    SiglipVisionConfig,
)
from transformers.image_utils import load_image  # noqa: E402
from transformers.models.auto import image_processing_auto  # noqa: E402
from transformers.models.siglip import modeling_siglip  # noqa: E402

from gen_images import encode_g3, encode_g4, smooth  # noqa: E402

FILES = ("model.safetensors", "system_graph.json", "image.png", "golden.safetensors", "meta.json")
SIZE_LIMIT = 2560 * 1024

# Token ids of the image markers (G.8); the greedy tokens must avoid them, as the prompt does.
IMAGE_IDS = dict(boi=500, eoi=501, image=502)
G4_OTHER_IDS = dict(video=503, audio=504, boa=505, eoa=506)
RESERVED = set(range(500, 512)) | set(G.SPECIAL_IDS)

# Text: the text tiny models' conventions (gen_golden.TINY) at G.8's sizes.  Vision: G.8 as written.
# Prompt: BOS, `before` text ids, BOI, the soft-token placeholders, EOI, `after` text ids.
# Prompt seeds chosen with --search: the two dtypes pick the same greedy tokens, every top-2
# margin clears gen_golden.MARGIN_FACTOR x the bf16-vs-f32 bound, and the greedy tokens vary.
VISION = {
    "gemma3": dict(
        text=dict(G.TINY["gemma3"], source_artifact="gemma-3-tiny-vision", weight_seed=13,
                  intermediate=128, head_dim=16, window=8, decode_steps=8),
        vision_seed=113,
        prompt_seed=75,
        before=10,
        after=16,
        image=dict(width=61, height=47, seed=51),
        tower=dict(hidden=32, intermediate=48, layers=2, heads=4, image_size=56, patch=14,
                   soft_tokens=4),
    ),
    "gemma4": dict(
        text=dict(G.TINY["gemma4"], source_artifact="gemma-4-tiny-vision", weight_seed=14,
                  intermediate=128, head_dim=16, global_head_dim=32, global_kv_heads=1, window=16,
                  decode_steps=8),
        vision_seed=114,
        prompt_seed=302,
        # 2, not gen_golden's 4: of prompt seeds 0..76 and 300..699 (and 0..119 with text weight
        # seeds 24, 34, 44) none gives a Gemma 4 greedy run that changes token and clears 4 (the
        # random tied-embedding model repeats its token).
        margin_factor=2.0,
        before=8,
        after=16,
        image=dict(width=91, height=37, seed=52),
        tower=dict(hidden=48, intermediate=96, layers=2, heads=4, head_dim=12, patch=4, pooling=3,
                   position_embedding_size=64, max_soft_tokens=70),
    ),
}


# ---------------------------------------------------------------------------------------------
# Hugging Face configs and processors
# ---------------------------------------------------------------------------------------------

def hf_config(spec):
    fam, t = spec["text"]["family"], spec["tower"]
    text = G.hf_text_config_dict(spec["text"])
    if fam == "gemma3":
        vis = SiglipVisionConfig(hidden_size=t["hidden"], intermediate_size=t["intermediate"],
                                 num_hidden_layers=t["layers"], num_attention_heads=t["heads"],
                                 image_size=t["image_size"], patch_size=t["patch"],
                                 hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6,
                                 vision_use_head=False)
        return Gemma3Config(text_config=text, vision_config=vis, mm_tokens_per_image=t["soft_tokens"],
                            boi_token_index=IMAGE_IDS["boi"], eoi_token_index=IMAGE_IDS["eoi"],
                            image_token_index=IMAGE_IDS["image"])
    text["use_bidirectional_attention"] = "vision"  # the 31B's rule (G4.7)
    vis = Gemma4VisionConfig(hidden_size=t["hidden"], intermediate_size=t["intermediate"],
                             num_hidden_layers=t["layers"], num_attention_heads=t["heads"],
                             num_key_value_heads=t["heads"], head_dim=t["head_dim"], patch_size=t["patch"],
                             pooling_kernel_size=t["pooling"],
                             position_embedding_size=t["position_embedding_size"], standardize=True,
                             use_clipped_linears=False, rms_norm_eps=1e-6,
                             hidden_activation="gelu_pytorch_tanh",
                             rope_parameters={"rope_type": "axial", "rope_theta": 100.0})
    return Gemma4Config(text_config=text, vision_config=vis, audio_config=None,
                        boi_token_id=IMAGE_IDS["boi"], eoi_token_id=IMAGE_IDS["eoi"],
                        image_token_id=IMAGE_IDS["image"], video_token_id=G4_OTHER_IDS["video"],
                        audio_token_id=G4_OTHER_IDS["audio"], boa_token_id=G4_OTHER_IDS["boa"],
                        eoa_token_index=G4_OTHER_IDS["eoa"])


def model_class(fam):
    return Gemma3ForConditionalGeneration if fam == "gemma3" else Gemma4ForConditionalGeneration


def processor(spec):
    t = spec["tower"]
    if spec["text"]["family"] == "gemma3":
        return Gemma3ImageProcessor(size={"height": t["image_size"], "width": t["image_size"]},
                                    do_pan_and_scan=False)
    return Gemma4ImageProcessor(patch_size=t["patch"], max_soft_tokens=t["max_soft_tokens"],
                                pooling_kernel_size=t["pooling"])


def write_image(spec, path):
    im = spec["image"]
    PIL.Image.fromarray(smooth(im["width"], im["height"], im["seed"])).save(path, compress_level=9)


def preprocess(spec, path):
    """pixel_values (and Gemma 4's positions and soft-token count) as a user gets them: load_image,
    then the family's image processor (the backend transformers picks by default)."""
    out = processor(spec)(images=load_image(path), return_tensors="pt")
    pv = out["pixel_values"]
    assert pv.dtype == torch.float32
    res = {"pixel_values": pv.contiguous()}
    # every value is one float32 op on a uint8 (asserted there), as the image fixtures record them
    (encode_g3 if spec["text"]["family"] == "gemma3" else encode_g4)(pv.numpy())
    if spec["text"]["family"] == "gemma3":
        s = spec["tower"]["image_size"]
        assert tuple(pv.shape) == (1, 3, s, s), pv.shape
        res["num_soft_tokens"] = spec["tower"]["soft_tokens"]
    else:
        pos = out["image_position_ids"]
        nst = out["num_soft_tokens_per_image"]
        nst = int(np.asarray(nst.tolist() if hasattr(nst, "tolist") else nst).reshape(-1)[0])
        res["image_position_ids"] = pos.to(torch.int64).contiguous()
        res["num_soft_tokens"] = nst
        valid = (pos[0] >= 0).all(-1)
        n = int(valid.sum())
        # padding patches follow the image's: the valid ones are the first n rows
        assert bool(valid[:n].all()) and not bool(valid[n:].any()), "padding is not at the end"
        res["num_patches"] = n
        res["grid"] = [int(pos[0, :n, 1].max()) + 1, int(pos[0, :n, 0].max()) + 1]  # rows, cols
    return res


# ---------------------------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------------------------

def text_memory_name(name):
    """gen_golden's CausalLM names (no 'model.') -> the multimodal model's module names."""
    return "model.language_model." + name


def vision_init(name, shape, rs, head_dim):
    """One vision/adapter tensor, drawn from |rs| (G.8: every tensor re-randomized; HF's init
    zeroes the Gemma 3 projector and sets norms to 1 or 0)."""
    leaf = name.rsplit(".", 1)[-1]
    if name.endswith("std_bias"):
        return rs.standard_normal(shape)
    if name.endswith("std_scale"):
        return rs.uniform(0.5, 1.5, size=shape)
    if name.endswith("position_embedding.weight") or name.endswith("position_embedding_table"):
        return rs.standard_normal(shape) * 0.5
    if name.endswith("mm_input_projection_weight"):  # [in, out], applied as x W
        return rs.standard_normal(shape) / math.sqrt(shape[0])
    if name.endswith("mm_soft_emb_norm.weight"):  # Gemma RMSNorm, used as (1 + w)
        return rs.standard_normal(shape) * 0.3
    if "norm" in name and leaf == "weight":  # LayerNorm (g3), RMSNorm used as w (g4)
        a = 1.0 + rs.standard_normal(shape) * 0.3
        if name.endswith(("q_norm.weight", "k_norm.weight")):  # score scale 1.0: keep q.k O(1)
            a = a * head_dim ** -0.25
        return a
    if leaf == "bias":
        return rs.standard_normal(shape) * 0.2
    if leaf == "weight" and len(shape) >= 2:  # Linear [out, in], Conv2d [out, c, kh, kw]
        return rs.standard_normal(shape) / math.sqrt(int(np.prod(shape[1:])))
    raise AssertionError(f"no init rule for {name} {shape}")


def build_model(spec, cfg):
    """The bf16 HF model holding our weights: text from gen_golden.make_weights (its seed), the
    vision tower and adapter from RandomState(vision_seed) in sorted name order.  Returns the model
    and {module name: bf16 tensor} of every tensor set."""
    fam = spec["text"]["family"]
    model = model_class(fam)._from_config(cfg, attn_implementation="eager", dtype=torch.bfloat16).eval()
    sd = model.state_dict()
    values = {text_memory_name(n): t for n, t in G.make_weights(spec["text"]).items()}
    vision = sorted(k for k in sd if not k.startswith("model.language_model.") and k != "lm_head.weight")
    rs = np.random.RandomState(spec["vision_seed"])
    hd = spec["tower"].get("head_dim", spec["tower"]["hidden"] // spec["tower"]["heads"])
    for k in vision:
        if k.endswith("position_ids"):  # SigLIP's arange buffer (not saved)
            continue
        a = vision_init(k, list(sd[k].shape), rs, hd)
        values[k] = torch.from_numpy(np.asarray(a, dtype=np.float32)).to(torch.bfloat16)
    persistent = set(k for k in sd if not k.endswith("position_ids")) - {"lm_head.weight"}
    assert set(values) == persistent, f"tensors not set: {sorted(persistent ^ set(values))}"
    with torch.no_grad():
        for k, t in values.items():
            dst = sd[k]
            assert list(dst.shape) == list(t.shape), f"{k}: {list(dst.shape)} vs {list(t.shape)}"
            dst.copy_(t)
    assert model.lm_head.weight.data_ptr() == model.model.language_model.embed_tokens.weight.data_ptr()
    return model, values


def saved_tensors(model, values, hfdir):
    """save_pretrained's names and tensors (the names the checkpoint of this folder keeps)."""
    model.save_pretrained(hfdir)
    with safe_open(os.path.join(hfdir, "model.safetensors"), "pt") as f:
        out = {k: f.get_tensor(k) for k in f.keys()}
    assert "lm_head.weight" not in out, "tied head saved"
    assert len(out) == len(values), f"saved {len(out)} tensors, set {len(values)}"
    mem = sorted(values)
    for k, t in out.items():
        assert t.dtype == torch.bfloat16, k
        # every saved tensor is exactly one of ours (names differ by the checkpoint prefixes)
        assert any(m.endswith(k.split(".", 1)[1]) and torch.equal(values[m], t) for m in mem), k
    return out


# ---------------------------------------------------------------------------------------------
# system_graph.json: the text component of gen_golden.system_graph, plus the vision component
# ---------------------------------------------------------------------------------------------

def tower_bindings(fam):
    """Object kind -> the group prefixes of its source_bindings (like the seeds'; each tensor
    counts under the longest prefix it has)."""
    if fam == "gemma3":
        return {
            "perception_tower": ["vision_tower.embeddings.patch_embedding",
                                 "vision_tower.embeddings.position_embedding",
                                 "vision_tower.encoder.layers", "vision_tower.post_layernorm"],
            "perception_adapter": ["multi_modal_projector", "multi_modal_projector.mm_soft_emb_norm"],
        }
    return {
        "perception_tower": ["model.vision_tower", "model.vision_tower.encoder.layers",
                             "model.vision_tower.patch_embedder",
                             "model.vision_tower.patch_embedder.input_proj"],
        "perception_adapter": ["model.embed_vision.embedding_projection"],
    }


def longest_prefix(name, prefixes):
    best = None
    for p in prefixes:
        if (name == p or name.startswith(p + ".")) and (best is None or len(p) > len(best)):
            best = p
    return best


def vision_component(spec, num_soft_tokens_default):
    fam, t = spec["text"]["family"], spec["tower"]
    g4 = fam == "gemma4"
    heads = t["heads"]
    hd = t["head_dim"] if g4 else t["hidden"] // heads
    layers = []
    for _ in range(t["layers"]):
        pos = {"kind": "rope", "theta": 100.0} if g4 else {"kind": "none"}
        layers.append({"operator": "softmax", "span": "full", "position": pos,
                       "declared_span": "full_attention"})
    if g4:
        norm = {"kind": "rms_norm", "eps": 1e-06, "weight_offset": 0.0}  # as the gemma-4 seed's tower
        execution = {
            "attention": {"num_q_heads": heads, "num_kv_heads": heads, "head_dim": hd, "score_scale": 1.0,
                          "qk_norm_scope": "per_head", "qk_norm_weight_offset": 0.0,
                          "parameter_free_qk_norm": {"q": False, "k": False, "v": True},
                          "attention_bias": False},
            "ffn": {"intermediate_size": t["intermediate"], "activation": "gelu_tanh", "ffn_type": "gated",
                    "gate_policy": {"kind": "gated"}, "bias": False},
            "norm": {"pre": dict(norm), "post": dict(norm), "placement": "pre_post"},
            "residual_topology": {"kind": "single_stream"},
        }
        image = {"patch_size": t["patch"], "soft_tokens_per_image": num_soft_tokens_default,
                 "pooling_kernel": t["pooling"], "position_embedding_size": t["position_embedding_size"],
                 "standardize": True}
    else:
        norm = {"kind": "layer_norm", "eps": 1e-06}
        execution = {
            "attention": {"num_q_heads": heads, "num_kv_heads": heads, "head_dim": hd,
                          "score_scale": hd ** -0.5,
                          "parameter_free_qk_norm": {"q": False, "k": False, "v": False},
                          "attention_bias": True},
            "ffn": {"intermediate_size": t["intermediate"], "activation": "gelu_tanh", "ffn_type": "plain",
                    "bias": True},
            "norm": {"pre": dict(norm), "final_norm": dict(norm)},
            "residual_topology": {"kind": "single_stream"},
        }
        grid = t["image_size"] // t["patch"]
        image = {"patch_size": t["patch"], "image_size": t["image_size"],
                 "soft_tokens_per_image": t["soft_tokens"],
                 "pooling_kernel": grid // math.isqrt(t["soft_tokens"]),
                 "position_embedding_size": grid * grid}
    image["token_ids"] = {"image": IMAGE_IDS["image"], "boi": IMAGE_IDS["boi"], "eoi": IMAGE_IDS["eoi"]}
    return {
        "id": "vision",
        "role": "perception",
        "source_artifact": spec["text"]["source_artifact"],
        "num_layers": t["layers"],
        "hidden_size": t["hidden"],
        "attention": layers,
        "execution": execution,
        "perception": {"modality": "image",
                       "transform": {"encoder": {"depth": t["layers"], "width": t["hidden"], "num_heads": heads}},
                       "image": image},
    }


def system_graph(spec, art, num_soft_tokens_default):
    fam = spec["text"]["family"]
    text_prefix = G.sgc_prefix(fam)
    text = {k: v for k, v in art.items() if k.startswith(text_prefix)}
    graph = G.system_graph(spec["text"], text)  # asserts every text tensor is bound
    graph["components"].append(vision_component(spec, num_soft_tokens_default))
    groups = tower_bindings(fam)
    prefixes = [p for ps in groups.values() for p in ps]
    count = {p: [0, 0] for p in prefixes}
    for name, t in art.items():
        if name in text:
            continue
        p = longest_prefix(name, prefixes)
        assert p is not None, f"{name}: no binding"
        count[p][0] += 1
        count[p][1] += t.numel() * t.element_size()
    for kind, ps in sorted(groups.items(), reverse=True):  # tower, then adapter (as the seeds)
        graph["objects"].append({
            "id": "vision." + kind,
            "component": "vision",
            "kind": kind,
            "source_bindings": [{"artifact": spec["text"]["source_artifact"], "tensor_prefix": p,
                                 "tensors": count[p][0], "bytes": count[p][1]} for p in ps],
            "representations": [{"encoding": "BF16", "fidelity": "canonical"}],
        })
    assert all(c[0] > 0 for c in count.values()), count
    assert sum(c[0] for c in count.values()) + len(text) == len(art)
    return graph


# ---------------------------------------------------------------------------------------------
# Reference runs
# ---------------------------------------------------------------------------------------------

def make_prompt(spec, seed, n_soft):
    """BOS, text, BOI, n_soft image placeholders, EOI, text.  Text ids from RandomState(1000 + seed)
    in [3, 500): no special id and none of the image / audio / video ids."""
    rs = np.random.RandomState(1000 + seed)
    a = [int(v) for v in rs.randint(3, 500, size=spec["before"] + spec["after"])]
    ids = [2] + a[: spec["before"]] + [IMAGE_IDS["boi"]] + [IMAGE_IDS["image"]] * n_soft \
        + [IMAGE_IDS["eoi"]] + a[spec["before"]:]
    return ids


def load_reference(spec, hfdir, dtype):
    model, info = model_class(spec["text"]["family"]).from_pretrained(
        hfdir, dtype=dtype, attn_implementation="eager", output_loading_info=True)
    missing = [k for k in info["missing_keys"] if k != "lm_head.weight"]
    assert not missing and not info["unexpected_keys"], f"loading: {info}"
    assert model.config._attn_implementation == "eager"
    return model.eval()


def first(o):
    return o[0] if isinstance(o, (tuple, list)) else o


@torch.no_grad()
def run_reference(spec, model, ids, pix, fast=False):
    """Prefill with the image (HF KV cache), then greedy decode one token a step (causal)."""
    fam = spec["text"]["family"]
    m = model.model
    vt = m.vision_tower
    cap, hooks = {}, []

    def keep(key, fn=lambda o: first(o)):
        return lambda mod, a, o: cap.__setitem__(key, fn(o).float().clone())

    if fam == "gemma3":
        hooks.append(vt.embeddings.register_forward_hook(keep("vision_embeddings")))
        for i, layer in enumerate(vt.encoder.layers):
            hooks.append(layer.register_forward_hook(keep(f"vision_hidden_states.{i}")))
        hooks.append(vt.post_layernorm.register_forward_hook(keep("vision_output")))
        hooks.append(m.multi_modal_projector.register_forward_hook(keep("soft_tokens")))
    else:
        hooks.append(vt.patch_embedder.register_forward_hook(keep("vision_embeddings")))
        for i, layer in enumerate(vt.encoder.layers):
            hooks.append(layer.register_forward_hook(keep(f"vision_hidden_states.{i}")))
        hooks.append(vt.pooler.register_forward_hook(keep("vision_pooled_padded")))
        hooks.append(vt.register_forward_hook(keep("vision_output", lambda o: o.last_hidden_state)))
        hooks.append(m.embed_vision.register_forward_hook(keep("soft_tokens")))
    masks = {}
    types = G.layer_types(spec["text"]["layers"])
    for lt in ("sliding_attention", "full_attention"):
        i = types.index(lt)
        hooks.append(m.language_model.layers[i].register_forward_pre_hook(
            (lambda i, lt: lambda mod, a, kw: masks.__setitem__(i, (lt, kw["attention_mask"])))(i, lt),
            with_kwargs=True))
    hooks.append(m.language_model.register_forward_pre_hook(
        lambda mod, a, kw: cap.__setitem__("inputs_embeds", kw["inputs_embeds"].float().clone()),
        with_kwargs=True))

    x = torch.tensor([ids], dtype=torch.long)
    types = (x == IMAGE_IDS["image"]).long()
    kw = dict(input_ids=x, pixel_values=pix["pixel_values"], attention_mask=torch.ones_like(x))
    if fam == "gemma3":
        kw["token_type_ids"] = types
    else:
        kw["mm_token_type_ids"] = types
        kw["image_position_ids"] = pix["image_position_ids"]
    mods = [G.modeling_module(fam)] + ([modeling_siglip] if fam == "gemma3" else [])
    counters = [G.EagerCounter(mm) for mm in mods]
    for c in counters:
        c.__enter__()
    try:
        out = model(**kw, use_cache=True)
    finally:
        for c in counters:
            c.__exit__()
        for h in hooks:
            h.remove()
    calls = sum(c.calls for c in counters)
    want_calls = spec["text"]["layers"] + spec["tower"]["layers"]
    assert calls == want_calls, f"eager attention ran {calls} times, not {want_calls}"

    S = len(ids)
    for k in list(cap):
        t = cap[k]
        cap[k] = t[0] if t.dim() >= 3 and t.shape[0] == 1 else t
    if fam == "gemma4":  # the valid patches' rows (padding rows are HF's, on zero pixels)
        n, T = pix["num_patches"], pix["num_soft_tokens"]
        for k in ["vision_embeddings"] + [f"vision_hidden_states.{i}" for i in range(spec["tower"]["layers"])]:
            assert cap[k].shape[0] == pix["pixel_values"].shape[1]
            cap[k] = cap[k][:n].contiguous()
        pooled = cap.pop("vision_pooled_padded")
        assert pooled.shape[0] == spec["tower"]["max_soft_tokens"]
        cap["vision_pooled"] = pooled[:T].contiguous()
    assert cap["inputs_embeds"].shape[0] == S
    assert cap["soft_tokens"].shape[0] == pix["num_soft_tokens"]
    # the merge: the image rows of inputs_embeds are the adapter's output (no embed scale)
    img = torch.tensor(ids) == IMAGE_IDS["image"]
    assert torch.equal(cap["inputs_embeds"][img], cap["soft_tokens"]), "image rows != soft tokens"

    check_masks(spec, ids, masks)
    cache = out.cache
    prefill = out.logits[0].float().clone()
    tok = G.greedy(prefill[-1])
    dec_ids, dec_logits = [], []
    for _ in range(spec["text"]["decode_steps"]):
        dec_ids.append(tok)
        o = model(input_ids=torch.tensor([[tok]], dtype=torch.long), cache=cache, use_cache=True)
        cache = o.cache
        row = o.logits[0, -1].float().clone()
        dec_logits.append(row)
        tok = G.greedy(row)
    dec_logits = torch.stack(dec_logits)
    res = dict(prefill=prefill, dec_ids=dec_ids, dec_logits=dec_logits, next_id=tok, cap=cap,
               cache_vs_full=None)
    if fast:
        return res
    # the same sequence in one uncached forward (prompt with its image, then the decoded ids)
    full_ids = torch.tensor([ids + dec_ids], dtype=torch.long)
    kw2 = dict(kw, input_ids=full_ids, attention_mask=torch.ones_like(full_ids))
    tt = (full_ids == IMAGE_IDS["image"]).long()
    kw2["token_type_ids" if fam == "gemma3" else "mm_token_type_ids"] = tt
    full = model(**kw2, use_cache=False).logits[0].float()
    both = torch.cat([prefill, dec_logits])
    res["cache_vs_full"] = ((full - both).abs().amax(-1) / (both.amax(-1) - both.amin(-1))).max().item()
    return res


def expected_mask(fam, ids, layer_type, window):
    """allowed[q][kv] of the prefill as gemma-vision.md G.9 states transformers 5.24's rule."""
    S = len(ids)
    block, b, prev = [-1] * S, -1, False
    for i, t in enumerate(ids):
        img = t == IMAGE_IDS["image"]
        if img and not prev:
            b += 1
        block[i] = b if img else -1
        prev = img
    same = torch.tensor([[block[q] >= 0 and block[q] == block[k] for k in range(S)] for q in range(S)])
    q = torch.arange(S)[:, None]
    k = torch.arange(S)[None, :]
    causal = k <= q
    if layer_type == "sliding_attention":
        return (causal | same) & (k > q - window)
    return causal | same if fam == "gemma3" else causal


def check_masks(spec, ids, masks):
    """The masks HF gave the first sliding and the first full text layer are the rule of G.9."""
    fam = spec["text"]["family"]
    assert len(masks) == 2, masks.keys()
    for i, (lt, mask) in masks.items():
        mask = mask[0, 0]
        allowed = mask if mask.dtype == torch.bool else mask == 0
        want = expected_mask(fam, ids, lt, spec["text"]["window"])
        assert torch.equal(allowed.cpu(), want), f"layer {i} ({lt}): HF's prefill mask is not the G.9 rule"


def evaluate(spec, prompt_seed, work, fast=False):
    fam = spec["text"]["family"]
    cfg = hf_config(spec)
    model, values = build_model(spec, cfg)
    hfdir = os.path.join(work, "hf")
    art = saved_tensors(model, values, hfdir)
    del model
    # HF loads the checkpoint as this folder writes it (our writer, same names and bytes)
    G.write_safetensors(os.path.join(hfdir, "model.safetensors"), art, {"format": "pt"})
    image_path = os.path.join(work, "image.png")
    write_image(spec, image_path)
    pix = preprocess(spec, image_path)
    ids = make_prompt(spec, prompt_seed, pix["num_soft_tokens"])
    res = {}
    for dtype in (torch.float32, torch.bfloat16):
        model = load_reference(spec, hfdir, dtype)
        sd = model.state_dict()
        for k, t in values.items():  # loaded bit-exactly (upcast for f32)
            assert sd[k].dtype == dtype and torch.equal(sd[k], t.to(dtype)), f"{k} not loaded exactly"
        res[dtype] = run_reference(spec, model, ids, pix, fast=fast)
        if dtype == torch.float32:
            facts = model_facts(spec, model)
        del model
    ana = G.analyse(spec["text"], res[torch.float32], res[torch.bfloat16])
    return dict(cfg=cfg, art=art, values=values, pix=pix, ids=ids, r32=res[torch.float32],
                r16=res[torch.bfloat16], ana=ana, facts=facts, image_path=image_path, hfdir=hfdir)


def model_facts(spec, model):
    """What the reference computes with, as the modules say."""
    fam = spec["text"]["family"]
    m = model.model
    vt = m.vision_tower
    f = {"text_embed_scale_used_f32": float(m.language_model.embed_tokens.embed_scale.float().item())}
    if fam == "gemma3":
        at = vt.encoder.layers[0].self_attn
        f.update(vision_score_scale=at.scale, vision_head_dim=at.head_dim,
                 avg_pool_kernel=m.multi_modal_projector.avg_pool.kernel_size,
                 soft_emb_norm_eps=m.multi_modal_projector.mm_soft_emb_norm.eps,
                 layer_norm_eps=vt.encoder.layers[0].layer_norm1.eps)
    else:
        at = vt.encoder.layers[0].self_attn
        f.update(vision_score_scale=at.scaling, vision_head_dim=at.head_dim,
                 vision_rope_inv_freq=vt.encoder.rotary_emb.inv_freq.tolist(),
                 pooler_root_hidden_size=vt.pooler.root_hidden_size,
                 v_norm_has_weight=hasattr(at.v_norm, "weight") and at.v_norm.weight is not None,
                 pre_projection_norm_has_weight=getattr(m.embed_vision.embedding_pre_projection_norm,
                                                        "weight", None) is not None)
    return f


def acceptable(spec, ev):
    """gen_golden's criterion, plus: no image id among the greedy tokens, and not all of them the
    same token (a wrong decode feed would go unseen if every step gave the same token)."""
    r, ana = ev["r32"], ev["ana"]
    toks = r["dec_ids"] + [r["next_id"]]
    return (ana["same_tokens"] and ana["ratio"] > margin_factor(spec)
            and not any(t in RESERVED for t in toks) and len(set(toks)) > 1)


def margin_factor(spec):
    return spec.get("margin_factor", G.MARGIN_FACTOR)


# ---------------------------------------------------------------------------------------------
# One folder
# ---------------------------------------------------------------------------------------------

def hf_cfg_dict(cfg):
    d = json.loads(cfg.to_json_string(use_diff=True))
    d.pop("transformers_version", None)
    return d


def build(name, outroot, quiet=False):
    spec = VISION[name]
    fam = spec["text"]["family"]
    say = (lambda *a: None) if quiet else print
    outdir = os.path.join(outroot, f"tiny-{name}-vision")
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        ev = evaluate(spec, spec["prompt_seed"], work)
        r32, r16, ana, pix, ids = ev["r32"], ev["r16"], ev["ana"], ev["pix"], ev["ids"]
        assert acceptable(spec, ev), (
            f"{name}: seeds no longer meet the criterion (ratio {ana['ratio']:.2f}, same tokens "
            f"{ana['same_tokens']}, ids {r32['dec_ids']}); rerun --vision --search")
        art = ev["art"]
        model_path = os.path.join(outdir, "model.safetensors")
        G.write_safetensors(model_path, art, {"format": "pt"})
        G.read_back_equal(model_path, art)
        shutil.copyfile(ev["image_path"], os.path.join(outdir, "image.png"))
        n_default = spec["tower"].get("max_soft_tokens", spec["tower"].get("soft_tokens"))
        graph = system_graph(spec, art, n_default)
        G.write_json(os.path.join(outdir, "system_graph.json"), graph)

        S = len(ids)
        types_key = "token_type_ids" if fam == "gemma3" else "mm_token_type_ids"
        g = {
            "input_ids": torch.tensor(ids, dtype=torch.int32),
            types_key: torch.tensor([int(i == IMAGE_IDS["image"]) for i in ids], dtype=torch.int32),
            "pixel_values": pix["pixel_values"],
        }
        if fam == "gemma4":
            g["image_position_ids"] = pix["image_position_ids"]
            g["num_soft_tokens"] = torch.tensor([pix["num_soft_tokens"]], dtype=torch.int64)
        for dn, r in (("f32", r32), ("bf16", r16)):
            g[f"prefill_logits_{dn}"] = r["prefill"]
            g[f"decode_ids_{dn}"] = torch.tensor(r["dec_ids"], dtype=torch.int32)
            g[f"decode_logits_{dn}"] = r["dec_logits"]
            for k, t in r["cap"].items():
                base, _, idx = k.partition(".")
                g[f"{base}_{dn}" + (f".{idx}" if idx else "")] = t
        for k, t in g.items():
            if ("_bf16" in k and t.dtype == torch.float32 and not k.startswith("vision_pooled")
                    and not k.startswith("prefill_logits") and not k.startswith("decode_logits")):
                assert torch.equal(t, t.to(torch.bfloat16).float()), f"{k} not bf16-exact"
            g[k] = t.contiguous()
        golden_path = os.path.join(outdir, "golden.safetensors")
        G.write_safetensors(golden_path, g, {"format": "pt"})
        G.read_back_equal(golden_path, g)

        meta = make_meta(name, spec, ev, graph, g)
        meta["sha256"] = {f: G.sha256(os.path.join(outdir, f)) for f in FILES if f != "meta.json"}
        G.write_json(os.path.join(outdir, "meta.json"), meta)
        total = sum(os.path.getsize(os.path.join(outdir, f)) for f in FILES)
        assert total < SIZE_LIMIT, f"{outdir}: {total} bytes"

        say(f"== tiny-{name}-vision: {outdir}")
        say(f"  image {spec['image']['width']}x{spec['image']['height']} -> pixel_values "
            f"{list(pix['pixel_values'].shape)}"
            + (f", grid {pix['grid']} ({pix['num_patches']} patches), {pix['num_soft_tokens']} soft tokens"
               if fam == "gemma4" else f", {pix['num_soft_tokens']} soft tokens"))
        say(f"  prompt {S} tokens (window {spec['text']['window']}); facts {ev['facts']}")
        say(f"  verified: eager attention once per text and tower layer; the prefill masks of a sliding and "
            f"a full layer are G.9's rule; image rows of inputs_embeds "
            f"== adapter output; KV-cache decode == full re-forward: f32 {r32['cache_vs_full']:.3g}, "
            f"bf16 {r16['cache_vs_full']:.3g} (rel)")
        say(f"  bf16-vs-f32 bound {ana['bound']:.5f}; min rel margin {ana['min_rel']:.5f} "
            f"(ratio {ana['ratio']:.2f}); decode ids {r32['dec_ids']} then {r32['next_id']}")
        for f in FILES:
            say(f"  {f:20s} {os.path.getsize(os.path.join(outdir, f)):9d} bytes")
        say(f"  total {total} bytes")
    return outdir


def describe_keys(spec, ev, g):
    fam = spec["text"]["family"]
    S, N = len(ev["ids"]), spec["text"]["decode_steps"]
    V, H, D = spec["text"]["vocab"], spec["text"]["hidden"], spec["tower"]["hidden"]
    T = ev["pix"]["num_soft_tokens"]
    P = ev["pix"]["num_patches"] if fam == "gemma4" else (spec["tower"]["image_size"] // spec["tower"]["patch"]) ** 2
    d = {
        "input_ids": f"I32 [{S}] prompt: BOS, text, BOI {IMAGE_IDS['boi']}, {T} x image {IMAGE_IDS['image']}, "
                     f"EOI {IMAGE_IDS['eoi']}, text (ids, no tokenizer"
                     + ("; the processor's '\\n\\n' around the block is not there)" if fam == "gemma3" else ")"),
        ("token_type_ids" if fam == "gemma3" else "mm_token_type_ids"):
            f"I32 [{S}] 1 at the image placeholders, 0 elsewhere (BOI/EOI 0), as passed to HF in prefill",
        "pixel_values": f"F32 {list(g['pixel_values'].shape)} the image processor's output for image.png "
                        "(the same tensor fed to both runs; HF casts it to the weight dtype)",
        "prefill_logits_{f32,bf16}": f"F32 [{S},{V}] logits of every prompt position (prefill with the image)",
        "decode_ids_{f32,bf16}": f"I32 [{N}] token fed at decode step k (position {S}+k): decode_ids[0] = "
                                 "argmax(prefill_logits[S-1]), decode_ids[k] = argmax(decode_logits[k-1])",
        "decode_logits_{f32,bf16}": f"F32 [{N},{V}] logits after feeding decode_ids[k] (HF KV cache, one "
                                    "token per forward, no token types: causal)",
        "vision_embeddings_{f32,bf16}": f"F32 [{P},{D}] patch embedding plus position embedding "
                                        "(the encoder's input)",
        "vision_hidden_states_{f32,bf16}.{i}": f"F32 [{P},{D}] output of tower encoder layer i",
        "soft_tokens_{f32,bf16}": f"F32 [{T},{H}] the adapter's output: the image soft tokens in text space",
        "inputs_embeds_{f32,bf16}": f"F32 [{S},{H}] the merged embeddings the text decoder gets (text rows "
                                    "scaled by embed_scale, image rows = soft_tokens)",
        "dtype_note": "_bf16 tensors hold exact bfloat16 values stored as F32, except vision_pooled_bf16 "
                      "(HF computes it in f32 in both runs)",
    }
    if fam == "gemma3":
        d["vision_output_{f32,bf16}"] = (f"F32 [{P},{D}] post_layernorm output: the tower's last_hidden_state, "
                                         "the adapter's input (before the 2x2 average pool)")
        d["patch_order"] = "row-major over the 4x4 patch grid (p = row * 4 + col)"
    else:
        d["image_position_ids"] = (f"I64 {list(g['image_position_ids'].shape)} the processor's (x = column, "
                                   "y = row) per patch, (-1, -1) for padding")
        d["num_soft_tokens"] = "I64 [1] the processor's num_soft_tokens_per_image"
        d["vision_rows"] = (f"vision_embeddings and vision_hidden_states keep the {P} valid patches (the "
                            f"first {P} rows of HF's {g['pixel_values'].shape[1]}); HF's padding rows are left out")
        d["vision_pooled_{f32,bf16}"] = (f"F32 [{T},{D}] the pooler's output for the valid bins: 3x3 mean "
                                         "times sqrt(hidden), float32 in both runs (before standardize)")
        d["vision_output_{f32,bf16}"] = (f"F32 [{T},{D}] the tower's last_hidden_state: (pooled - std_bias) * "
                                         "std_scale, cast to the run's dtype; the adapter's input")
    return d


def make_meta(name, spec, ev, graph, g):
    fam = spec["text"]["family"]
    pix, ana, r32, r16 = ev["pix"], ev["ana"], ev["r32"], ev["r16"]
    proc = processor(spec)
    backend = image_processing_auto._resolve_backend(None, None, type(proc).__name__)
    proc_dict = json.loads(proc.to_json_string())
    proc_dict.pop("transformers_version", None)
    S = len(ev["ids"])
    img_pos = [i for i, t in enumerate(ev["ids"]) if t == IMAGE_IDS["image"]]
    meta = {
        "model": f"tiny-{name}-vision",
        "family": fam,
        "source_artifact": spec["text"]["source_artifact"],
        "reference": {
            "class": model_class(fam).__name__,
            "attn_implementation": "eager",
            "f32": "float32 run on the checkpoint's bf16 values upcast (from_pretrained dtype=float32)",
            "bf16": "bfloat16 run (from_pretrained dtype=bfloat16)",
            "prefill": "one forward: input_ids, pixel_values" + (", image_position_ids" if fam == "gemma4" else "")
                       + f", {'token_type_ids' if fam == 'gemma3' else 'mm_token_type_ids'}, attention_mask ones",
            "decode": "HF KV cache, one token per forward, greedy (argmax; first index on ties), no token types",
        },
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "torchvision": torchvision.__version__,
            "pillow": PIL.__version__,
            "safetensors": safetensors.__version__,
            "numpy": np.__version__,
        },
        "numeric_env": dict(G.NUMERIC_ENV, torch_threads=1, deterministic_algorithms=True),
        "hf_config": hf_cfg_dict(ev["cfg"]),
        "spec": {k: v for k, v in spec.items()},
        "image": {
            "file": "image.png",
            "width": spec["image"]["width"],
            "height": spec["image"]["height"],
            "content": f"gen_images.smooth({spec['image']['width']}, {spec['image']['height']}, "
                       f"{spec['image']['seed']}): gradients, noise and a bright square, RGB, PNG",
        },
        "processor": {
            "class": f"{type(proc).__module__}.{type(proc).__name__}",
            "backend": backend,
            "call": "processor(images=transformers.image_utils.load_image('image.png'), return_tensors='pt')",
            "settings": proc_dict,
        },
        "image_block": {
            "boi_position": ev["ids"].index(IMAGE_IDS["boi"]),
            "image_positions": [img_pos[0], img_pos[-1]],
            "eoi_position": ev["ids"].index(IMAGE_IDS["eoi"]),
            "soft_tokens": pix["num_soft_tokens"],
            "text_window": spec["text"]["window"],
        },
        "prompt_length": S,
        "decode_steps": spec["text"]["decode_steps"],
        "input_ids": ev["ids"],
        "decode_ids_f32": r32["dec_ids"],
        "decode_ids_bf16": r16["dec_ids"],
        "next_id_after_decode": {"f32": r32["next_id"], "bf16": r16["next_id"]},
        "facts": ev["facts"],
        "seeds": {"text_weights": spec["text"]["weight_seed"], "vision_weights": spec["vision_seed"],
                  "prompt": spec["prompt_seed"],
                  "text_rng": "gen_golden.make_weights: numpy RandomState(text_weights), tensors in sorted name order",
                  "vision_rng": "numpy RandomState(vision_weights).standard_normal (uniform for std_scale), "
                                "the tower and adapter tensors in sorted module-name order",
                  "prompt_rng": "numpy RandomState(1000 + prompt).randint(3, 500, before + after)"},
        "init": {
            "text": "gen_golden.make_weights at spec.text (embedding N(0, embed_std^2), linear N(0, 1/in), "
                    "norms as tiny-" + fam + "); see tools/gen-golden/README.md",
            "vision": {
                "linear_and_conv_weights": "N(0, 1/fan_in)" + ("; mm_input_projection_weight [in,out]: N(0, 1/in)"
                                                               if fam == "gemma3" else ""),
                "biases": "N(0, 0.2^2)" if fam == "gemma3" else "none (bias-free)",
                "norm_weights": ("LayerNorm weights 1 + N(0, 0.3^2), biases N(0, 0.2^2); mm_soft_emb_norm "
                                 "N(0, 0.3^2), used as (1 + w)") if fam == "gemma3" else
                                "1 + N(0, 0.3^2), used as w; q_norm/k_norm additionally times head_dim^-0.25",
                "position_embeddings": "N(0, 0.5^2)",
                **({"std_bias": "N(0, 1)", "std_scale": "U[0.5, 1.5]"} if fam == "gemma4" else {}),
            },
            "not_stored": "non-persistent buffers (inv_freq, embed_scale"
                          + (", SigLIP position_ids" if fam == "gemma3" else "") + ") are HF's own",
            "stored": "bf16 (round to nearest even from f32), every tensor save_pretrained writes",
        },
        "checkpoint": {
            "names": "exactly the names transformers " + transformers.__version__ + " save_pretrained writes for "
                     + model_class(fam).__name__ + " (the same bytes, our writer: sorted, header padded to 8)",
            "tensors": len(ev["art"]),
            "saved_names": sorted(ev["art"]),
            "note": ("the tower is saved as vision_tower.{embeddings,encoder,post_layernorm}.* (SigLIP's "
                     "vision_model. level is gone in 5.24); released checkpoints use vision_tower.vision_model.*; "
                     "text language_model.model.*, projector multi_modal_projector.*") if fam == "gemma3" else
                    ("model.vision_tower.*, model.embed_vision.*, model.language_model.* (the seeds' names); "
                     "no v_proj on full text layers (attention_k_eq_v), no v_norm/pre-projection norm tensors"),
        },
        "graph": {
            "text": "components[0] as gen_golden.system_graph writes it for this text spec",
            "vision": "components[1]: the keys of compiler/Import/VISION_KEYS.md stated explicitly",
            "perception_image": graph["components"][1]["perception"]["image"],
        },
        "golden_keys": describe_keys(spec, ev, g),
        "bf16_vs_f32": {
            "definition": "per position: max_v |bf16 - f32| / (max_v f32 - min_v f32); positions = "
                          "the S prefill rows then the N decode rows",
            "per_position": ana["per_pos"],
            "max": ana["bound"],
        },
        "margins": {
            "definition": "per greedy choice (step 0 = prefill row S-1, step k = decode_logits[k-1]): "
                          "top1 - top2 (abs) and divided by the row's max - min (rel)",
            "f32": ana["margins"]["f32"],
            "bf16": ana["margins"]["bf16"],
            "min_rel": ana["min_rel"],
            "min_rel_over_bf16_bound": ana["ratio"],
            "required_factor": margin_factor(spec),
            "criterion": f"min_rel > {margin_factor(spec)} x bf16_vs_f32.max, the same greedy tokens in both dtypes, "
                         "no special or image id among them, and not all the same token",
        },
        "kv_cache_vs_full_reforward": {
            "definition": "max over positions of max|cached - uncached| / row range (the uncached forward "
                          "has the image and the token types over the whole sequence)",
            "f32": r32["cache_vs_full"],
            "bf16": r16["cache_vs_full"],
        },
        "tolerance_rule": {
            "f32": "per row: max|d| <= 1e-4 * (max - min of the reference row)",
            "bf16": "per position: max|d| <= B * (max - min), B from bf16_vs_f32.max (the test sets B); "
                    "greedy tokens must equal decode_ids_bf16",
            "pixels": "sgc's own preprocessing of image.png: within 1/255 per value of pixel_values",
        },
        "attention_masks": (
            "prefill, transformers " + transformers.__version__ + " (checked against the masks HF gives the first "
            "sliding and the first full layer): " +
            ("every layer allows kv <= q or the same image block; sliding layers also kv > q - window"
             if fam == "gemma3" else
             "sliding layers allow (kv <= q or the same image block) and kv > q - window; full layers causal; "
             f"the {pix['num_soft_tokens']}-token block is longer than the window {spec['text']['window']}")),
        "sliding_window_128_golden": "skipped (the folder's size; the mask rule of this version is recorded "
                                     "above)" if fam == "gemma4" else None,
    }
    if fam == "gemma4":
        meta["image"]["processed"] = {"resized_hw": [pix["grid"][0] * spec["tower"]["patch"],
                                                     pix["grid"][1] * spec["tower"]["patch"]],
                                      "patch_grid_rows_cols": pix["grid"], "patches": pix["num_patches"],
                                      "padded_to": int(pix["pixel_values"].shape[1]),
                                      "soft_tokens": pix["num_soft_tokens"]}
    else:
        meta.pop("sliding_window_128_golden")
    return meta


# ---------------------------------------------------------------------------------------------
# Modes
# ---------------------------------------------------------------------------------------------

def do_check(names, root):
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            build(name, tmp, quiet=True)
            for f in FILES:
                rel = os.path.join(f"tiny-{name}-vision", f)
                new, old = os.path.join(tmp, rel), os.path.join(root, rel)
                hn = G.sha256(new)
                if not os.path.exists(old):
                    print(f"MISSING {rel} (regenerated sha256 {hn})")
                    bad += 1
                    continue
                ho = G.sha256(old)
                ok = ho == hn
                bad += not ok
                print(f"{'OK  ' if ok else 'DIFF'} {rel} {ho}" + ("" if ok else f" regenerated {hn}"))
    print("check passed" if not bad else f"check FAILED: {bad} file(s) differ")
    return 1 if bad else 0


def do_search(names, count):
    for name in names:
        spec = VISION[name]
        print(f"== {name}: prompt seeds 0..{count - 1}", flush=True)
        for s in range(count):
            with tempfile.TemporaryDirectory() as work:
                ev = evaluate(spec, s, work, fast=True)
            a = ev["ana"]
            print(f"  prompt seed {s:3d}: same tokens {a['same_tokens']!s:5s} bound {a['bound']:.5f} "
                  f"min rel margin {a['min_rel']:.5f} ratio {a['ratio']:6.2f} "
                  f"{'ACCEPT' if acceptable(spec, ev) else '      '} ids {ev['r32']['dec_ids']} "
                  f"{ev['r32']['next_id']}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=G.EXAMPLES, help="examples root (default: the repo's examples/)")
    ap.add_argument("--only", choices=sorted(VISION), action="append", help="one model only")
    ap.add_argument("--check", action="store_true", help="regenerate into a temp dir and compare bytes")
    ap.add_argument("--search", type=int, metavar="N", help="try prompt seeds 0..N-1, print margins")
    args = ap.parse_args()
    names = args.only or sorted(VISION)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, torchvision "
          f"{torchvision.__version__}, pillow {PIL.__version__}", flush=True)
    if args.search:
        do_search(names, args.search)
        return 0
    if args.check:
        return do_check(names, args.out)
    for name in names:
        build(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
