"""The GGUF goldens (issue "Quantized weights, part 1", design/QUANT.md §5):
a tiny Gemma 3 whose every fact a GGUF can carry (every 6th layer full,
attention scale 1/sqrt(head_dim), no RoPE scaling) and whose every K is a
multiple of 256, converted by llama.cpp's own convert_hf_to_gguf.py (Q8_0;
BF16 as the input of llama-quantize) and quantized by its llama-quantize (Q4_0: the linears Q4_0, the tied
embedding Q6_K), each with the logits of Hugging Face transformers (eager)
on the weights as the `gguf` package dequantizes them (reference (a)):
f32, and those f32 weights cast to bf16 for the bf16 run.

    bench/llamacpp/setup.sh      # llama.cpp's tree and llama-quantize
    tools/gen-golden/gen-golden --gguf [OUTROOT]   # default: examples/

The HF folder holds tiny-gemma3's tokenizer and chat template, so each file
carries them (tokenizer.ggml.*, tokenizer.chat_template).

writes OUTROOT/tiny-gemma3-gguf-{q8_0,q4_0}/: model.gguf,
golden.safetensors (the keys of the other goldens, and llama_logits:
reference (b), llama.cpp's own logits on the file, llama_logits.cc),
meta.json and the HF config.json the files were converted from.
"""

import json
import math
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
# The files committed as goldens. The BF16 and F16 files of this model (every
# K a multiple of 256 forces hidden 256 and ffn 256; 6 layers for the implicit
# pattern) are 4.9 MB each, over the 4 MiB a golden file may take: they are
# made (the Q4_0 file is quantized from the BF16 one) but not written out.
ENCODINGS = ("q8_0", "q4_0")

# What the HF folder holds besides the weights (tiny-gemma3's, vocab 512).
TOKENIZER_FILES = ("tokenizer.model", "tokenizer_config.json", "chat_template.jinja")

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
}


def hf_name(name):
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    _, layer, rest = name.split(".", 2)
    return "model.layers.%s.%s" % (layer, LAYER_NAMES[rest])


def hf_config():
    s = SPEC
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


def run(cmd, log):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(log, "a") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout)
    if p.returncode:
        sys.exit("failed: %s (see %s)\n%s" % (" ".join(cmd), log, p.stdout[-2000:]))


def make_ggufs(tmp):
    """The HF checkpoint (bf16, seeded), then llama.cpp's three files."""
    weights = G.make_weights(SPEC)
    cfg = hf_config()
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
    log = os.path.join(tmp, "llama.log")
    conv = os.path.join(LLAMA, "src", "convert_hf_to_gguf.py")
    out = {}
    for enc in ("bf16", "q8_0"):
        out[enc] = os.path.join(tmp, enc + ".gguf")
        run([sys.executable, conv, hf, "--outtype", enc, "--outfile", out[enc]], log)
    out["q4_0"] = os.path.join(tmp, "q4_0.gguf")
    run([os.path.join(LLAMA, "bin", "llama-quantize"), out["bf16"], out["q4_0"], "Q4_0"], log)
    return out


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


def dequantized(path):
    """HF name -> f32 tensor as the `gguf` package dequantizes the file, the
    Gemma 3 norms' stored 1 + w turned back into w; and name -> type."""
    reader = GGUFReader(path)
    out, types = {}, {}
    for t in reader.tensors:
        shape = tuple(int(d) for d in reversed(t.shape))
        a = quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        if t.name.endswith("norm.weight"):
            a = a - np.float32(1.0)
        out[hf_name(t.name)] = torch.from_numpy(a.copy())
        types[t.name] = t.tensor_type.name
    return out, types


def reference(weights, dtype):
    cfg = hf_config()
    cfg._attn_implementation = "eager"
    _, model_cls = G.hf_classes("gemma3")
    model = model_cls(cfg).to(torch.float32)
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
    model = model.to(dtype).eval()
    return model


def main():
    outroot = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "examples")
    torch.manual_seed(0)
    ids = G.make_prompt(SPEC, SPEC["prompt_seed"])
    with tempfile.TemporaryDirectory() as tmp:
        files = make_ggufs(tmp)
        llama_logits = build_llama_logits(tmp)
        for enc in ENCODINGS:
            weights, types = dequantized(files[enc])
            runs = {}
            for name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
                model = reference(weights, dtype)
                runs[name] = G.run_reference(SPEC, model, ids, want_hidden=False, fast=True)
            ana = G.analyse(SPEC, runs["f32"], runs["bf16"])
            d = os.path.join(outroot, "tiny-gemma3-gguf-" + enc)
            os.makedirs(d, exist_ok=True)
            shutil.copy(files[enc], os.path.join(d, "model.gguf"))
            golden = {"input_ids": torch.tensor(ids, dtype=torch.int32)}
            for name, r in runs.items():
                golden["prefill_logits_" + name] = r["prefill"]
                golden["decode_ids_" + name] = torch.tensor(r["dec_ids"], dtype=torch.int32)
                golden["decode_logits_" + name] = r["dec_logits"]
            # Reference (b): llama.cpp on the same file, fed (a)'s f32 tokens.
            ref_a = torch.cat([runs["f32"]["prefill"], runs["f32"]["dec_logits"]])
            golden["llama_logits"] = llama_reference(
                llama_logits, files[enc], ids, runs["f32"]["dec_ids"], SPEC["vocab"], tmp)
            rng = ref_a.amax(-1) - ref_a.amin(-1)
            llama_rel = ((golden["llama_logits"] - ref_a).abs().amax(-1) / rng).tolist()
            G.write_safetensors(os.path.join(d, "golden.safetensors"), golden, {})
            counts = {}
            for t in types.values():
                counts[t] = counts.get(t, 0) + 1
            meta = {
                "model": "tiny-gemma3-gguf-" + enc,
                "spec": SPEC,
                "made_by": "llama.cpp (llama-cpp-python %s): convert_hf_to_gguf.py%s"
                           % (open(os.path.join(LLAMA, "VERSION")).read().strip(),
                              ", llama-quantize Q4_0" if enc == "q4_0" else " --outtype " + enc),
                "tensor_types": counts,
                "token_embd": types["token_embd.weight"],
                "reference": "HF Gemma3ForCausalLM eager on the gguf package's dequantized "
                             "weights (norms: stored - 1); bf16: those f32 weights cast to bf16",
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
                               "llama.cpp's defaults (8-bit activations, f16 KV cache)",
                    "key": "llama_logits (prefill rows, then decode rows)",
                    "vs_f32": {"max": max(llama_rel), "per_position": llama_rel},
                },
            }
            G.write_json(os.path.join(d, "meta.json"), meta)
            # The HF config the files were converted from (sgc import-hf reads it).
            shutil.copy(os.path.join(tmp, "hf", "config.json"), os.path.join(d, "config.json"))
            print("%s: %s, bf16_vs_f32 %.4g, llama.cpp_vs_f32 %.4g, same tokens %s, greedy %s"
                  % (d, counts, ana["bound"], max(llama_rel), ana["same_tokens"],
                     runs["f32"]["dec_ids"][:6]))


if __name__ == "__main__":
    main()
