"""llama-perplexity's figures on the tiny GGUF goldens and the project's own
text (test/Inputs/perplexity/text.txt), the reference of
test/e2e/perplexity.test (issue "Quantized weights, part 2", item 3):

- perplexity of tiny-gemma3-gguf-{q8_0,q4_0,q4_k_m} and tiny-gemma4-gguf-q4_k_m,
  chunks of CONTEXT tokens (llama-perplexity -c CONTEXT -b CONTEXT);
- KL divergence of tiny-gemma3's q4_0 and q4_k_m files against its q8_0 file
  (--kl-divergence-base from the q8_0 run, then --kl-divergence): mean KLD and
  the share of rows whose top token agrees.

    bench/llamacpp/setup.sh     # llama.cpp's tree and llama-perplexity
    tools/gen-golden/.venv/bin/python tools/gen-golden/perplexity_reference.py

writes test/Inputs/perplexity/llama-perplexity.json."""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WORK = os.environ.get("SGC_BENCH_WORK", "/tmp/sgc-bench")
LLAMA = os.path.join(WORK, "llamacpp")
TEXT = os.path.join(ROOT, "test", "Inputs", "perplexity", "text.txt")
OUT = os.path.join(ROOT, "test", "Inputs", "perplexity", "llama-perplexity.json")
CONTEXT = 128
PPL_MODELS = ("tiny-gemma3-gguf-q8_0", "tiny-gemma3-gguf-q4_0", "tiny-gemma3-gguf-q4_k_m",
              "tiny-gemma4-gguf-q4_k_m")
KL_BASE = "tiny-gemma3-gguf-q8_0"
KL_MODELS = ("tiny-gemma3-gguf-q4_0", "tiny-gemma3-gguf-q4_k_m")
NUMBER = r"([-+0-9.eE]+)"


def run(args):
    exe = os.path.join(LLAMA, "bin", "llama-perplexity")
    cmd = [exe, "-f", TEXT, "-c", str(CONTEXT), "-b", str(CONTEXT), "-t", "2"] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stdout[-3000:]))
    return p.stdout


def find(pattern, text, what):
    m = re.search(pattern, text)
    if not m:
        sys.exit("no %s in llama-perplexity's output:\n%s" % (what, text[-3000:]))
    return [float(g) for g in m.groups()]


def gguf(name):
    return os.path.join(ROOT, "examples", name, "model.gguf")


def main():
    out = {"made_by": "tools/gen-golden/perplexity_reference.py: llama-perplexity of "
                      "llama-cpp-python %s, -c %d -b %d -t 2, llama.cpp's defaults otherwise"
                      % (open(os.path.join(LLAMA, "VERSION")).read().strip(), CONTEXT, CONTEXT),
           "text": "test/Inputs/perplexity/text.txt", "context": CONTEXT,
           "perplexity": {}, "kl_divergence": {"base": KL_BASE}}
    for name in PPL_MODELS:
        text = run(["-m", gguf(name)])
        ppl, err = find(r"Final estimate: PPL = %s \+/- %s" % (NUMBER, NUMBER), text, "PPL")
        chunks = int(find(r"calculating perplexity over (\d+) chunks", text, "chunk count")[0])
        out["perplexity"][name] = {"ppl": ppl, "error": err, "chunks": chunks}
        print(name, "PPL", ppl, "+/-", err, "chunks", chunks, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.kld")
        run(["-m", gguf(KL_BASE), "--kl-divergence-base", base])
        for name in KL_MODELS:
            text = run(["-m", gguf(name), "--kl-divergence-base", base, "--kl-divergence"])
            kld, kerr = find(r"Mean +KLD: +%s ± +%s" % (NUMBER, NUMBER), text, "mean KLD")
            top, terr = find(r"Same top p: +%s ± +%s %%" % (NUMBER, NUMBER), text, "same top p")
            out["kl_divergence"][name] = {"mean_kld": kld, "mean_kld_error": kerr,
                                          "same_top_percent": top, "same_top_error": terr}
            print(name, "KLD", kld, "+/-", kerr, "same top", top, "%", flush=True)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
