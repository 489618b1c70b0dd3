"""The figures sgc quantize's test holds it to (test/quantize/): what llama.cpp's
own tools make of the test's checkpoint.

    bench/llamacpp/setup.sh          # llama.cpp's tree, llama-quantize, libllama
    tools/gen-golden/gen-golden --quantize

The checkpoint is test/Inputs/quantize/make-hf-checkpoint.py's (seed 1) of the
tiny Gemma 3 config of the GGUF goldens (examples/tiny-gemma3-gguf-q8_0/
config.json: 6 layers, every K a multiple of 256, so Q4_K_M and Q6_K keep
their K-quants) with tiny-gemma3's tokenizer, in a folder named "hf". Then
convert_hf_to_gguf.py --outtype bf16, and llama-quantize of that file to Q8_0,
Q4_0, Q4_K_M and Q6_K. For each file, written to
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
    "<type>.llama" (q8_0.llama, ...); next to them "<type>.hf_f32", reference
    (a) of QUANT.md §5 on the same positions: HF Gemma3ForCausalLM (eager,
    f32) on the weights as the `gguf` package dequantizes the file
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

CONFIG = os.path.join(ROOT, "examples", "tiny-gemma3-gguf-q8_0", "config.json")
TOKENIZER = os.path.join(ROOT, "examples", "tiny-gemma3")
SEED = 1
TYPES = ("Q8_0", "Q4_0", "Q4_K_M", "Q6_K")
PROMPT = [2, 100, 200, 300, 400, 17, 18, 19, 55, 66, 77, 88, 99, 111, 222, 333]
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


def hf_rows(path, tokens):
    """Reference (a): HF f32 on the file's dequantized weights, teacher-forced
    with llama.cpp's tokens; the rows that predict them."""
    weights, _ = gen_gguf.dequantized(path, "gemma3")
    model = gen_gguf.reference(gen_gguf.SPEC, weights, torch.float32)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([PROMPT + tokens[:-1]])).logits[0].float()
    return logits[len(PROMPT) - 1:].numpy()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        hf = os.path.join(tmp, "hf")
        gen_gguf.run([sys.executable, os.path.join(INPUTS, "make-hf-checkpoint.py"), CONFIG,
                      TOKENIZER, hf, "--seed", str(SEED)], os.path.join(tmp, "log"))
        source = gguf_file.bf16_checkpoint(os.path.join(hf, "model.safetensors"))
        bf16 = os.path.join(tmp, "bf16.gguf")
        gen_gguf.run([sys.executable, os.path.join(gen_gguf.LLAMA, "src", "convert_hf_to_gguf.py"),
                      hf, "--outtype", "bf16", "--outfile", bf16], os.path.join(tmp, "log"))
        exe = gen_gguf.build_llama_logits(tmp)
        with open(CONFIG) as f:
            vocab = json.load(f)["vocab_size"]
        files, rows = {}, {}
        for t in TYPES:
            path = os.path.join(tmp, t + ".gguf")
            gen_gguf.run([os.path.join(gen_gguf.LLAMA, "bin", "llama-quantize"), bf16, path, t],
                         os.path.join(tmp, "log"))
            f = gguf_file.GgufFile(path)
            tokens, margins, rows[t.lower() + ".llama"] = greedy(exe, path, vocab, tmp)
            rows[t.lower() + ".hf_f32"] = hf_rows(path, tokens)
            files[t.lower()] = {
                "sha256": hashlib.sha256(f.raw).hexdigest(),
                "bytes": len(f.raw),
                "metadata": f.metadata,
                "tensors": [[x.name, x.type, x.dims, hashlib.sha256(f.data(x)).hexdigest()]
                            for x in f.tensors],
                "squared_error": squared_errors(f, source),
                "greedy": {"prompt": PROMPT, "tokens": tokens, "margins": margins},
            }
            print("%s: %d bytes, tokens %s, smallest margin %.3g"
                  % (t, len(f.raw), tokens, min(margins)), flush=True)
    out = {
        "made_by": "tools/gen-golden/gen_quantize.py: convert_hf_to_gguf.py --outtype bf16, "
                   "then llama-quantize TYPE (llama.cpp %s)"
                   % open(os.path.join(gen_gguf.LLAMA, "VERSION")).read().strip(),
        "checkpoint": {"config": os.path.relpath(CONFIG, ROOT),
                       "tokenizer": os.path.relpath(TOKENIZER, ROOT), "seed": SEED,
                       "folder": "hf"},
        "files": files,
    }
    G.write_safetensors(os.path.join(INPUTS, "llama-logits.safetensors"),
                        {t: torch.from_numpy(np.ascontiguousarray(r)) for t, r in rows.items()}, {})
    with open(os.path.join(INPUTS, "llama-quantize.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
