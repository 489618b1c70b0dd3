"""The GGUF goldens (issue "Quantized weights, part 1", design/QUANT.md §5):
a tiny Gemma 3 whose every fact a GGUF can carry (every 6th layer full,
attention scale 1/sqrt(head_dim), no RoPE scaling) and whose every K is a
multiple of 256, converted by llama.cpp's own convert_hf_to_gguf.py (Q8_0;
BF16 as the input of llama-quantize) and quantized by its llama-quantize (Q4_0: the linears Q4_0, the tied
embedding Q6_K; Q4_K_M, what llama.cpp users run by default: Q4_K, with Q6_K for
the tied embedding and some attn_v / ffn_down), each with the logits of Hugging Face transformers (eager)
on the weights as the `gguf` package dequantizes them (reference (a)):
f32, and those f32 weights cast to bf16 for the bf16 run. The same for a
tiny Gemma 4 (SPEC4: layers [s, s, full, s, s, full], head widths 128 and
256, full layers' V = K, proportional RoPE, layer scalars, softcap 30).
And the plain encodings, BF16 and F16 as convert_hf_to_gguf.py writes them,
of a smaller tiny Gemma 3 made for them (SPEC_PLAIN, family gemma3-plain:
hidden 256, ffn 128, head_dim 64; no K need be a multiple of 256), whose
files stay under the 4 MiB a golden folder may take.

    bench/llamacpp/setup.sh      # llama.cpp's tree and llama-quantize
    tools/gen-golden/gen-golden --gguf [OUTROOT] [--family gemma3|gemma4|gemma3-plain|all]
    tools/gen-golden/gen-golden --gguf --family gemma3 --encodings q4_k_m   # one folder only
    tools/gen-golden/gen-golden --gguf --family gemma4 --search 40   # prompt seeds
    tools/gen-golden/gen-golden --gguf --family gemma3-plain --search 150 --weight-seed 21

The HF folder holds tiny-gemma3's (tiny-gemma4's) tokenizer and chat template,
so each file carries them (tokenizer.ggml.*, tokenizer.chat_template).

writes OUTROOT/tiny-gemma{3,4}-gguf-{q8_0,q4_0,q4_k_m}/ and
OUTROOT/tiny-gemma3-gguf-{bf16,f16}/ (gemma3-plain): model.gguf,
golden.safetensors (the keys of the other goldens, and llama_logits:
reference (b), llama.cpp's own logits on the file, llama_logits.cc),
meta.json and the HF config.json the files were converted from.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WORK = os.environ.get("SGC_BENCH_WORK", "/tmp/sgc-bench")
LLAMA = os.path.join(WORK, "llamacpp")
sys.path.insert(0, os.path.join(LLAMA, "src", "gguf-py"))
sys.path.insert(0, HERE)

import gen_golden as G  # noqa: E402
from gguf import GGUFReader, quants  # noqa: E402

SPEC = dict(
    family="gemma3",
    source_artifact="gemma-3-tiny-gguf",
    weight_seed=11,
    prompt_seed=262,
    vocab=512,
    hidden=256,
    intermediate=256,
    layers=6,
    q_heads=2,
    kv_heads=1,
    head_dim=128,
    query_pre_attn_scalar=128,  # what a GGUF implies: 1/sqrt(head_dim)
    window=4,
    context=512,
    prompt_len=16,
    decode_steps=16,
    embed_std=0.15,
)
# The tiny Gemma 4 (the gen_golden.py machinery: make_weights, hf_text_config_dict).
# Two full layers, one mid-stack: the file's sliding-window pattern is an explicit
# per-layer array, not G.layer_types' every-6th. Every K is a multiple of 256: 256
# for q/k/v/gate/up/down, 256 (sliding) or 512 (full) for o. Full layers have no
# v_proj (attention_k_eq_v: V = k_proj's output) and use proportional RoPE (theta
# 1e6, a quarter of the 256 dims rotated); sliding layers default RoPE, theta 1e4.
# embed_std 0.3: top logits near 20, which the softcap (30) bends (with
# tiny-gemma4's 0.5 at hidden 256 the tied head repeats the last prompt token
# for every prompt tried). The seeds: of weight seeds 14..17 x prompt seeds
# 0..299 (--search 300 for each), the one pair whose f32 greedy tokens switch
# (484 x3, then 131) and meet gen_golden's margin criterion (4x the bf16
# bound) in both files.
SPEC4 = dict(
    family="gemma4",
    source_artifact="gemma-4-tiny-gguf",
    weight_seed=15,
    prompt_seed=283,
    vocab=512,
    hidden=256,
    intermediate=256,
    layers=6,
    layer_types=["sliding_attention", "sliding_attention", "full_attention",
                 "sliding_attention", "sliding_attention", "full_attention"],
    q_heads=2,
    kv_heads=1,
    head_dim=128,
    global_head_dim=256,
    global_kv_heads=1,
    window=4,
    context=512,
    prompt_len=16,
    decode_steps=16,
    embed_std=0.3,
    layer_scalars=[0.9, 0.78, 0.66, 0.54, 0.42, 0.3],
    softcap=30.0,
)
# The files of SPEC and SPEC4 committed as goldens. The BF16 and F16 files of
# SPEC (every K a multiple of 256 forces hidden 256 and ffn 256; 6 layers for
# the implicit pattern) are 4.9 MB each, over the 4 MiB a golden file may
# take: the BF16 one is made (the Q4_0 file is quantized from it) but not
# written out. SPEC_PLAIN is the model of the BF16 and F16 goldens.
ENCODINGS = ("q8_0", "q4_0", "q4_k_m")
# The encodings llama-quantize makes from the BF16 file (the converter's
# --outtype has no Q4_0 or K-quants), with its type argument.
QUANTIZE = {"q4_0": "Q4_0", "q4_k_m": "Q4_K_M"}
# Q4_K_M's types when every K is a multiple of 256: the Q4_K base, Q6_K for the
# tied embedding and the "more bits" attn_v / ffn_down, F32 for the 1-D tensors.
# Anything else is llama-quantize's fallback for a width the block does not
# divide (Q5_0, Q8_0, F16): not the format users' files have.
Q4_K_M_TYPES = {"Q4_K", "Q6_K", "F32"}

# The tiny Gemma 3 of the plain encodings (BF16, F16: no block, so no K need
# be a multiple of 256): SPEC's facts (6 layers, the converter writes no
# sliding pattern, so llama.cpp's every-6th-full rule gives layer 5 full, as
# G.layer_types; attention scale 1/sqrt(head_dim); no RoPE scaling) at half
# the head width and half the ffn, so that each folder (2.6 MB file) stays
# well under 4 MiB. embed_std 0.06: with SPEC's 0.15 (and 0.09) the tied head
# repeats the last prompt token for every prompt tried (the scaled embedding,
# 0.15 x 16 rms, outweighs the layers' normed outputs). The seeds: weight
# seed 21 (the first tried), then prompt seeds 0..149 (--search 150): 10 meet
# gen_golden's margin criterion with a switch of the f32 greedy tokens in
# both files; 36 has the widest margins (8.3x the bf16 bound), 393 x2, then 232.
SPEC_PLAIN = dict(
    family="gemma3",
    source_artifact="gemma-3-tiny-gguf-plain",
    weight_seed=21,
    prompt_seed=36,
    vocab=512,
    hidden=256,
    intermediate=128,
    layers=6,
    q_heads=2,
    kv_heads=1,
    head_dim=64,
    query_pre_attn_scalar=64,  # what a GGUF implies: 1/sqrt(head_dim)
    window=4,
    context=512,
    prompt_len=16,
    decode_steps=16,
    embed_std=0.06,
)
ENCODINGS_PLAIN = ("bf16", "f16")

# What the HF folder holds besides the weights (tiny-gemma3's, vocab 512).
TOKENIZER_FILES = ("tokenizer.model", "tokenizer_config.json", "chat_template.jinja")
# ... and for Gemma 4 (tiny-gemma4's BPE tokenizer.json, vocab 512).
TOKENIZER_FILES4 = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")

# GGUF tensor name (after "blk.N.") -> HF name (after "model.layers.N.").
LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q_norm.weight": "self_attn.q_norm.weight",
    "attn_k_norm.weight": "self_attn.k_norm.weight",
    "post_attention_norm.weight": "post_attention_layernorm.weight",
    "ffn_norm.weight": "pre_feedforward_layernorm.weight",
    "post_ffw_norm.weight": "post_feedforward_layernorm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
    "layer_output_scale.weight": "layer_scalar",  # Gemma 4's per-layer scalar (a buffer)
}


def hf_name(name):
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    _, layer, rest = name.split(".", 2)
    return "model.layers.%s.%s" % (layer, LAYER_NAMES[rest])


def hf_config(s=SPEC):
    """Gemma3TextConfig of a Gemma 3 spec (SPEC, SPEC_PLAIN): what its GGUF can say
    (every 6th layer full, default RoPE on both kinds, no softcaps)."""
    cfg_cls, _ = G.hf_classes("gemma3")
    return cfg_cls(
        vocab_size=s["vocab"], hidden_size=s["hidden"], intermediate_size=s["intermediate"],
        num_hidden_layers=s["layers"], num_attention_heads=s["q_heads"],
        num_key_value_heads=s["kv_heads"], head_dim=s["head_dim"], sliding_window=s["window"],
        layer_types=G.layer_types(s["layers"]), rms_norm_eps=1e-6,
        hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True, attention_bias=False,
        max_position_embeddings=s["context"], query_pre_attn_scalar=s["query_pre_attn_scalar"],
        rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
        final_logit_softcapping=None, attn_logit_softcapping=None,
        bos_token_id=2, eos_token_id=1, pad_token_id=0)


def hf_config4():
    """Gemma4TextConfig of SPEC4: gen_golden's (attention_k_eq_v, proportional RoPE of
    the full layers, softcap), bos 2 / eos 1 / pad 0 as tiny-gemma4's tokenizer."""
    cfg_cls, _ = G.hf_classes("gemma4")
    return cfg_cls(**G.hf_text_config_dict(SPEC4), bos_token_id=2, eos_token_id=1, pad_token_id=0)


def run(cmd, log):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(log, "a") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout)
    if p.returncode:
        sys.exit("failed: %s (see %s)\n%s" % (" ".join(cmd), log, p.stdout[-2000:]))


def convert(hf, tmp, encodings):
    """llama.cpp's files of the HF folder `hf`: BF16 and the other `encodings`
    but QUANTIZE's (Q8_0, F16) by convert_hf_to_gguf.py --outtype, Q4_0 and
    Q4_K_M (if asked) by llama-quantize from the BF16 one."""
    log = os.path.join(tmp, "llama.log")
    conv = os.path.join(LLAMA, "src", "convert_hf_to_gguf.py")
    out = {}
    for enc in ["bf16"] + [e for e in encodings if e != "bf16" and e not in QUANTIZE]:
        out[enc] = os.path.join(tmp, enc + ".gguf")
        run([sys.executable, conv, hf, "--outtype", enc, "--outfile", out[enc]], log)
    for enc in (e for e in encodings if e in QUANTIZE):
        out[enc] = os.path.join(tmp, enc + ".gguf")
        run([os.path.join(LLAMA, "bin", "llama-quantize"), out["bf16"], out[enc], QUANTIZE[enc]], log)
    return out


def make_ggufs(spec, encodings, tmp):
    """The HF checkpoint of a Gemma 3 spec (bf16, seeded), then llama.cpp's files."""
    weights = G.make_weights(spec)
    cfg = hf_config(spec)
    _, model_cls = G.hf_classes("gemma3")
    model = model_cls(cfg).to(torch.bfloat16)
    state = {"model." + k: v for k, v in weights.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
    hf = os.path.join(tmp, "hf")
    model.save_pretrained(hf, safe_serialization=True)
    # tiny-gemma3's tokenizer (512 ids, HF's answers in test/Inputs/tokenizers/
    # cases.json) and chat template: the converter writes them into the files
    # as tokenizer.ggml.* and tokenizer.chat_template.
    for name in TOKENIZER_FILES:
        shutil.copy(os.path.join(ROOT, "examples", "tiny-gemma3", name), os.path.join(hf, name))
    return convert(hf, tmp, encodings)


def make_ggufs4(spec, encodings, tmp):
    """Gemma 4: gen_golden's checkpoint of SPEC4 (save_hf_copy: Gemma4ForCausalLM's
    save_pretrained, bf16, checked tensor by tensor), tiny-gemma4's tokenizer and
    chat template, then llama.cpp's files."""
    hf = os.path.join(tmp, "hf")
    G.save_hf_copy(spec, G.make_weights(spec), hf)
    with open(os.path.join(hf, "config.json")) as f:
        assert '"Gemma4ForCausalLM"' in f.read(), "the converter registers Gemma4ForCausalLM"
    for name in TOKENIZER_FILES4:
        shutil.copy(os.path.join(ROOT, "examples", "tiny-gemma4", name), os.path.join(hf, name))
    return convert(hf, tmp, encodings)


def build_llama_logits(tmp):
    """llama_logits.cc (reference (b)) against the llama.cpp build of
    bench/llamacpp/setup.sh."""
    exe = os.path.join(tmp, "llama_logits")
    libs = [os.path.join(LLAMA, "build", "src", "libllama.a")] + [
        os.path.join(LLAMA, "build", "ggml", "src", "lib%s.a" % n)
        for n in ("ggml", "ggml-cpu", "ggml-base")]
    run(["c++", "-O2", "-std=c++17", "-I" + os.path.join(LLAMA, "src", "include"),
         "-I" + os.path.join(LLAMA, "src", "ggml", "include"),
         os.path.join(HERE, "llama_logits.cc"), "-o", exe] + libs +
        ["-fopenmp", "-lpthread", "-ldl"], os.path.join(tmp, "llama.log"))
    return exe


def llama_reference(exe, path, ids, fed, vocab, tmp):
    """llama.cpp's logits on `path`: the prompt rows, then one row per fed id."""
    out = os.path.join(tmp, "llama_logits.f32")
    run([exe, path, ",".join(map(str, ids)), ",".join(map(str, fed)), out],
        os.path.join(tmp, "llama.log"))
    rows = np.fromfile(out, dtype="<f4").reshape(-1, vocab)
    assert rows.shape[0] == len(ids) + len(fed) and np.isfinite(rows).all(), rows.shape
    return torch.from_numpy(rows.copy())


def check_rope_freqs(a):
    """rope_freqs.weight (Gemma 4; only the full layers read it) is no HF tensor but
    what proportional RoPE means to llama.cpp: global_head_dim/2 frequency factors,
    1 for the rotated quarter, 1e30 (frequency ~0: no rotation) for the rest."""
    half = SPEC4["global_head_dim"] // 2
    rot = int(SPEC4["global_head_dim"] * 0.25 / 2)
    want = np.array([1.0] * rot + [1e30] * (half - rot), dtype=np.float32)
    assert a.shape == (half,) and np.array_equal(a, want), ("rope_freqs", a.shape, a[:rot + 2])


def dequantized(path, family="gemma3"):
    """HF name -> f32 tensor as the `gguf` package dequantizes the file, the
    Gemma 3 norms' stored 1 + w turned back into w (Gemma 4 stores w: no
    shift); and name -> type (every tensor of the file, rope_freqs too)."""
    reader = GGUFReader(path)
    out, types = {}, {}
    for t in reader.tensors:
        shape = tuple(int(d) for d in reversed(t.shape))
        a = quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        types[t.name] = t.tensor_type.name
        if family == "gemma4" and t.name == "rope_freqs.weight":
            check_rope_freqs(a)
            continue
        if family == "gemma3" and t.name.endswith("norm.weight"):
            a = a - np.float32(1.0)
        out[hf_name(t.name)] = torch.from_numpy(a.copy())
    return out, types


def check_types(enc, types, path):
    """A Q4_K_M file holds only Q4_K_M_TYPES (no fallback); its per-tensor
    types are printed, so one sees which attn_v / ffn_down got Q6_K."""
    if enc != "q4_k_m":
        return
    print("%s (q4_k_m) tensor types:" % path)
    for name, t in types.items():
        print("  %s -> %s" % (name, t))
    bad = {n: t for n, t in types.items() if t not in Q4_K_M_TYPES}
    assert not bad, "llama-quantize fell back (a K not a multiple of 256?): %s" % bad


def reference(spec, weights, dtype):
    cfg = hf_config(spec)
    cfg._attn_implementation = "eager"
    _, model_cls = G.hf_classes("gemma3")
    model = model_cls(cfg).to(torch.float32)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
    model = model.to(dtype).eval()
    return model


def reference4(spec, weights, dtype):
    """Gemma4ForCausalLM (eager) made in `dtype` as from_pretrained makes it (so its
    RoPE tables stay f32), holding `weights` (cast to dtype; the layer scalars too)."""
    assert spec is SPEC4
    _, model_cls = G.hf_classes("gemma4")
    model = model_cls._from_config(hf_config4(), attn_implementation="eager", dtype=dtype)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
    for name, t in weights.items():
        got = model.get_buffer(name) if name.endswith("layer_scalar") else model.get_parameter(name)
        assert got.dtype == dtype and torch.equal(got, t.to(dtype)), name
    re = model.model.rotary_emb
    assert re.full_attention_inv_freq.dtype == re.sliding_attention_inv_freq.dtype == torch.float32
    for layer, kind in zip(model.model.layers, SPEC4["layer_types"]):
        assert (layer.self_attn.v_proj is None) == (kind == "full_attention"), "full layers: V = K"
    return model.eval()


def hf_runs(spec, make, weights, ids):
    """Reference (a) for one file: f32, and the same weights in bf16."""
    runs = {}
    for name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        runs[name] = G.run_reference(spec, make(spec, weights, dtype), ids, want_hidden=False, fast=True)
    return runs


# What llama.cpp's CPU matmuls round the activations to for each encoding
# (ggml-cpu's vec_dot_type of the weight type): Q8_0 for Q8_0 and Q4_0, Q8_K
# (256-weight blocks, f32 scale) for the K-quants Q4_K and Q6_K, the weight's
# own type for F16 and BF16.
ACTIVATIONS = {"q8_0": "8-bit activations", "q4_0": "8-bit activations",
               "q4_k_m": "8-bit activations (Q8_K)",
               "bf16": "bf16 activations", "f16": "f16 activations"}


def write_example(d, spec, enc, path, types, runs, ids, llama_rows, reference_text, cfg_json):
    """One golden folder: model.gguf, golden.safetensors, meta.json, config.json."""
    ana = G.analyse(spec, runs["f32"], runs["bf16"])
    os.makedirs(d, exist_ok=True)
    shutil.copy(path, os.path.join(d, "model.gguf"))
    golden = {"input_ids": torch.tensor(ids, dtype=torch.int32)}
    for name, r in runs.items():
        golden["prefill_logits_" + name] = r["prefill"]
        golden["decode_ids_" + name] = torch.tensor(r["dec_ids"], dtype=torch.int32)
        golden["decode_logits_" + name] = r["dec_logits"]
    # Reference (b): llama.cpp on the same file, fed (a)'s f32 tokens.
    ref_a = torch.cat([runs["f32"]["prefill"], runs["f32"]["dec_logits"]])
    golden["llama_logits"] = llama_rows
    rng = ref_a.amax(-1) - ref_a.amin(-1)
    llama_rel = ((golden["llama_logits"] - ref_a).abs().amax(-1) / rng).tolist()
    G.write_safetensors(os.path.join(d, "golden.safetensors"), golden, {})
    counts = {}
    for t in types.values():
        counts[t] = counts.get(t, 0) + 1
    meta = {
        "model": os.path.basename(d),
        "spec": spec,
        "made_by": "llama.cpp (llama-cpp-python %s): convert_hf_to_gguf.py%s"
                   % (open(os.path.join(LLAMA, "VERSION")).read().strip(),
                      ", llama-quantize " + QUANTIZE[enc] if enc in QUANTIZE
                      else " --outtype " + enc),
        "tensor_types": counts,
        "token_embd": types["token_embd.weight"],
        "reference": reference_text,
        "input_ids": ids,
        "decode_ids_f32": runs["f32"]["dec_ids"],
        "decode_ids_bf16": runs["bf16"]["dec_ids"],
        "next_id_after_decode": {"f32": runs["f32"]["next_id"],
                                 "bf16": runs["bf16"]["next_id"]},
        "margins": {"min_rel": ana["min_rel"], "min_rel_over_bf16_bound": ana["ratio"]},
        "bf16_vs_f32": {"max": ana["bound"], "per_position": ana["per_pos"]},
        "same_tokens": ana["same_tokens"],
        "reference_b": {
            "made_by": "llama_logits.cc on the same model.gguf: the prompt in one "
                       "llama_decode, then decode_ids_f32 fed one at a time; "
                       "llama.cpp's defaults (%s, f16 KV cache)" % ACTIVATIONS[enc],
            "key": "llama_logits (prefill rows, then decode rows)",
            "vs_f32": {"max": max(llama_rel), "per_position": llama_rel},
        },
    }
    G.write_json(os.path.join(d, "meta.json"), meta)
    # The HF config the files were converted from (sgc import-hf reads it).
    shutil.copy(cfg_json, os.path.join(d, "config.json"))
    print("%s: %s, bf16_vs_f32 %.4g, llama.cpp_vs_f32 %.4g, same tokens %s, greedy %s"
          % (d, counts, ana["bound"], max(llama_rel), ana["same_tokens"], runs["f32"]["dec_ids"]),
          flush=True)


REFERENCE3 = ("HF Gemma3ForCausalLM eager on the gguf package's dequantized "
              "weights (norms: stored - 1); bf16: those f32 weights cast to bf16")
# family -> (spec, make_ggufs, reference model, meta.json's "reference", encodings);
# the folders are tiny-<spec's family>-gguf-<encoding>.
FAMILIES = {
    "gemma3": (SPEC, make_ggufs, reference, REFERENCE3, ENCODINGS),
    "gemma4": (SPEC4, make_ggufs4, reference4,
               "HF Gemma4ForCausalLM eager on the gguf package's dequantized "
               "weights (norms as stored; rope_freqs.weight checked, not an HF tensor); "
               "bf16: those f32 weights cast to bf16 (RoPE tables f32, as from_pretrained)",
               ENCODINGS),
    "gemma3-plain": (SPEC_PLAIN, make_ggufs, reference, REFERENCE3, ENCODINGS_PLAIN),
}


def build(family, outroot, exe, tmp, encodings=None):
    """The family's folders; encodings: only those (default: all of the family's)."""
    spec, make, ref, text, encodings = FAMILIES[family][:4] + (encodings or FAMILIES[family][4],)
    torch.manual_seed(0)
    ids = G.make_prompt(spec, spec["prompt_seed"])
    files = make(spec, encodings, tmp)
    for enc in encodings:
        weights, types = dequantized(files[enc], spec["family"])
        check_types(enc, types, files[enc])
        runs = hf_runs(spec, ref, weights, ids)
        rows = llama_reference(exe, files[enc], ids, runs["f32"]["dec_ids"], spec["vocab"], tmp)
        write_example(os.path.join(outroot, "tiny-%s-gguf-%s" % (spec["family"], enc)), spec, enc,
                      files[enc], types, runs, ids, rows, text, os.path.join(tmp, "hf", "config.json"))


def search(family, seeds, weight_seed=None, encodings=None):
    """Prompt seeds `seeds` on each file's dequantized weights: gen_golden's
    criterion (same tokens in f32 and bf16, top-2 margins over 4x the bf16
    bound, no special ids) on each, and the f32 greedy tokens' switches.
    weight_seed: try that one instead of the spec's; encodings: only those files."""
    spec, make, ref, _, encodings = FAMILIES[family][:4] + (encodings or FAMILIES[family][4],)
    if weight_seed is not None:
        spec = dict(spec, weight_seed=weight_seed)
    with tempfile.TemporaryDirectory() as tmp:
        files = make(spec, encodings, tmp)
        models = {}
        for enc in encodings:
            weights, types = dequantized(files[enc], spec["family"])
            check_types(enc, types, files[enc])
            models[enc] = {d: ref(spec, weights, d) for d in (torch.float32, torch.bfloat16)}
        for seed in seeds:
            ids = G.make_prompt(spec, seed)
            line = []
            ok = True
            for enc in encodings:
                r = {d: G.run_reference(spec, m, ids, want_hidden=False, fast=True)
                     for d, m in models[enc].items()}
                ana = G.analyse(spec, r[torch.float32], r[torch.bfloat16])
                toks = r[torch.float32]["dec_ids"] + [r[torch.float32]["next_id"]]
                switches = sum(a != b for a, b in zip(toks, toks[1:]))
                ok = ok and G.acceptable(spec, ana, r[torch.float32]) and switches > 0
                line.append("%s ratio %.2f same %s switches %d %s"
                            % (enc, ana["ratio"], ana["same_tokens"], switches, toks))
            print("seed %d%s: %s" % (seed, " ok" if ok else "", "; ".join(line)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outroot", nargs="?", default=os.path.join(ROOT, "examples"),
                    help="where the tiny-*-gguf-* folders go (default: the repo's examples/)")
    ap.add_argument("--family", choices=tuple(FAMILIES) + ("all",), default="all",
                    help="gemma3: tiny-gemma3-gguf-{q8_0,q4_0,q4_k_m}; gemma4: tiny-gemma4-gguf-"
                         "{q8_0,q4_0,q4_k_m}; gemma3-plain: tiny-gemma3-gguf-{bf16,f16}; all (default)")
    ap.add_argument("--encodings", metavar="E,E",
                    help="only these encodings of the families (e.g. q4_k_m): the other "
                         "folders are left as they are")
    ap.add_argument("--search", type=int, metavar="N",
                    help="try prompt seeds 0..N-1 of --family (not all) and print; no files")
    ap.add_argument("--seed", type=int, metavar="S",
                    help="with --search: try prompt seed S only (N is ignored)")
    ap.add_argument("--weight-seed", type=int, metavar="W",
                    help="with --search: the family's spec with weight seed W")
    args = ap.parse_args()
    families = tuple(FAMILIES) if args.family == "all" else (args.family,)
    if (args.weight_seed is not None or args.seed is not None) and not args.search:
        ap.error("--weight-seed and --seed go with --search")
    # family -> its encodings that --encodings names (all of them without it)
    chosen = {f: FAMILIES[f][4] for f in families}
    if args.encodings:
        want = args.encodings.split(",")
        chosen = {f: tuple(e for e in encs if e in want) for f, encs in chosen.items()}
        unknown = set(want) - {e for encs in chosen.values() for e in encs}
        if unknown:
            ap.error("--encodings: %s not of --family %s" % (",".join(sorted(unknown)), args.family))
        chosen = {f: encs for f, encs in chosen.items() if encs}
    if args.search:
        if args.family == "all":
            ap.error("--search needs one --family")
        seeds = [args.seed] if args.seed is not None else range(args.search)
        search(args.family, seeds, args.weight_seed, chosen[args.family])
        return
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_llama_logits(tmp)
        for family, encs in chosen.items():
            sub = os.path.join(tmp, family)
            os.makedirs(sub)
            build(family, args.outroot, exe, sub, encs)


if __name__ == "__main__":
    main()
