"""The figures sgc quantize's test holds it to (test/quantize/): what llama.cpp's
own tools make of the test's checkpoint.

    bench/llamacpp/setup.sh          # llama.cpp's tree, llama-quantize, libllama
    tools/gen-golden/gen-golden --quantize

The checkpoints are test/Inputs/quantize/make-hf-checkpoint.py's (seed 1) of
the tiny Gemma 3 and Gemma 4 configs of the GGUF goldens (examples/
tiny-gemma{3,4}-gguf-q8_0/config.json: 6 layers, every K a multiple of 256,
so Q4_K_M and Q6_K keep their K-quants; Gemma 4's full layers with V = K)
with tiny-gemma3's SentencePiece and tiny-gemma4's BPE tokenizer, each in a
folder named "hf". Then convert_hf_to_gguf.py --outtype bf16, and
llama-quantize of that file to Q8_0, Q4_0, Q4_K_M and Q6_K. For each file
(FAMILY-TYPE: gemma3-q8_0, ...), written to
test/Inputs/quantize/llama-quantize.json:
  - sha256 of the whole file; its metadata (key, type, digest of the value)
    and tensors (name, type, dims, sha256 of the data), read by
    test/Inputs/quantize/gguf_file.py, the reader the test uses;
  - each Q4_K / Q6_K tensor's squared reconstruction error against the
    checkpoint's values (gguf_file.py's dequantizers), the bound "no worse
    than llama-quantize" holds sgc's K-quants to;
  - llama.cpp's greedy tokens on the file (llama_logits.cc, one step at a
    time) from a fixed prompt, with its top-2 margin at each step; and the
    logits rows that chose them (the prompt's last row, then one row per
    token fed back), in test/Inputs/quantize/llama-logits.safetensors as
    "FAMILY-TYPE.llama"; next to them "FAMILY-TYPE.hf_f32", reference (a) of
    QUANT.md §5 on the same positions: HF Gemma{3,4}ForCausalLM (eager, f32)
    on the weights as the `gguf` package dequantizes the file
    (gen_gguf.dequantized), the prompt and the greedy tokens in one forward.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
INPUTS = os.path.join(ROOT, "test", "Inputs", "quantize")
sys.path.insert(0, INPUTS)
sys.path.insert(0, HERE)

import gen_golden as G  # noqa: E402  (write_safetensors)
import gen_gguf  # noqa: E402  (LLAMA, run, build_llama_logits)
import gguf_file  # noqa: E402

# family -> (config, tokenizer folder, gen_gguf's spec and reference model)
FAMILIES = {
    "gemma3": ("tiny-gemma3-gguf-q8_0", "tiny-gemma3", gen_gguf.SPEC, gen_gguf.reference),
    "gemma4": ("tiny-gemma4-gguf-q8_0", "tiny-gemma4", gen_gguf.SPEC4, gen_gguf.reference4),
}
SEED = 1
TYPES = ("Q8_0", "Q4_0", "Q4_K_M", "Q6_K")
# Clear of both tokenizers' special ids (Gemma 4's run to 19).
PROMPT = [2, 100, 200, 300, 400, 27, 28, 29, 55, 66, 77, 88, 99, 111, 222, 333]
STEPS = 16


def squared_errors(f, source):
    """GGUF name -> sum of squared differences from the checkpoint, for the
    K-quant tensors (every K-quant tensor here is a matrix: no norm shift)."""
    names = {t.name: t for t in f.tensors}
    out = {}
    for t in f.tensors:
        if t.type not in ("Q4_K", "Q6_K"):
            continue
        want = source[gen_gguf.hf_name(t.name)]
        got = f.values(t)
        rows = t.dims[1]
        want = want[:rows * t.dims[0]]  # the embedding keeps the vocabulary's rows
        assert len(got) == len(want), (t.name, len(got), len(want))
        out[t.name] = sum((a - b) * (a - b) for a, b in zip(got, want))
    assert names
    return out


def greedy(exe, path, vocab, tmp):
    """llama.cpp's greedy tokens, top-2 margins and the rows that chose them,
    one decode step at a time."""
    fed = []
    for _ in range(STEPS):
        rows = gen_gguf.llama_reference(exe, path, PROMPT, fed, vocab, tmp).numpy()
        fed.append(int(np.argmax(rows[-1])))
    rows = gen_gguf.llama_reference(exe, path, PROMPT, fed[:-1], vocab, tmp).numpy()
    steps = rows[len(PROMPT) - 1:]
    margins = []
    for row, tok in zip(steps, fed):
        order = np.argsort(-row)
        assert order[0] == tok
        margins.append(float(row[order[0]] - row[order[1]]))
    return fed, margins, steps


def hf_rows(family, path, tokens):
    """Reference (a): HF f32 on the file's dequantized weights, teacher-forced
    with llama.cpp's tokens; the rows that predict them."""
    _, _, spec, reference = FAMILIES[family]
    weights, _ = gen_gguf.dequantized(path, family)
    model = reference(spec, weights, torch.float32)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([PROMPT + tokens[:-1]])).logits[0].float()
    return logits[len(PROMPT) - 1:].numpy()


def build(family, tmp, files, rows, exe):
    """One family's checkpoint, llama.cpp's four files of it and their figures."""
    config, tokenizer = (os.path.join(ROOT, "examples", d) for d in FAMILIES[family][:2])
    config = os.path.join(config, "config.json")
    hf = os.path.join(tmp, "hf")
    log = os.path.join(tmp, "log")
    gen_gguf.run([sys.executable, os.path.join(INPUTS, "make-hf-checkpoint.py"), config,
                  tokenizer, hf, "--seed", str(SEED)], log)
    source = gguf_file.bf16_checkpoint(os.path.join(hf, "model.safetensors"))
    bf16 = os.path.join(tmp, "bf16.gguf")
    gen_gguf.run([sys.executable, os.path.join(gen_gguf.LLAMA, "src", "convert_hf_to_gguf.py"),
                  hf, "--outtype", "bf16", "--outfile", bf16], log)
    with open(config) as f:
        vocab = json.load(f)["vocab_size"]
    for t in TYPES:
        key = "%s-%s" % (family, t.lower())
        path = os.path.join(tmp, t + ".gguf")
        gen_gguf.run([os.path.join(gen_gguf.LLAMA, "bin", "llama-quantize"), bf16, path, t], log)
        f = gguf_file.GgufFile(path)
        tokens, margins, rows[key + ".llama"] = greedy(exe, path, vocab, tmp)
        rows[key + ".hf_f32"] = hf_rows(family, path, tokens)
        files[key] = {
            "checkpoint": {"config": os.path.relpath(config, ROOT),
                           "tokenizer": os.path.relpath(tokenizer, ROOT), "seed": SEED,
                           "folder": "hf"},
            "sha256": hashlib.sha256(f.raw).hexdigest(),
            "bytes": len(f.raw),
            "metadata": f.metadata,
            "tensors": [[x.name, x.type, x.dims, hashlib.sha256(f.data(x)).hexdigest()]
                        for x in f.tensors],
            "squared_error": squared_errors(f, source),
            "greedy": {"prompt": PROMPT, "tokens": tokens, "margins": margins},
        }
        print("%s: %d bytes, tokens %s, smallest margin %.3g"
              % (key, len(f.raw), tokens, min(margins)), flush=True)


def main():
    files, rows = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = gen_gguf.build_llama_logits(tmp)
        for family in FAMILIES:
            sub = os.path.join(tmp, family)
            os.makedirs(sub)
            build(family, sub, files, rows, exe)
    out = {
        "made_by": "tools/gen-golden/gen_quantize.py: convert_hf_to_gguf.py --outtype bf16, "
                   "then llama-quantize TYPE (llama.cpp %s)"
                   % open(os.path.join(gen_gguf.LLAMA, "VERSION")).read().strip(),
        "files": files,
    }
    G.write_safetensors(os.path.join(INPUTS, "llama-logits.safetensors"),
                        {k: torch.from_numpy(np.ascontiguousarray(r)) for k, r in rows.items()}, {})
    with open(os.path.join(INPUTS, "llama-quantize.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
