"""Compiles a compressed-tensors folder (examples/tiny-gemma3-ct-<scheme>: config.json
with its quantization_config, model.safetensors) for the CPU in f32 and bf16, runs it
on the folder itself with the golden's prompt and fed tokens (bf16 also on the
baseline variant x86-64-v3), and compares the logits with compare-logits.py: HF
transformers (eager) on the dequantized weights, the f32 rule and the bf16 rule
(B = the reference's own bf16-vs-f32 difference, factor 1: the path is weight-only,
nothing is rounded that the reference does not round). Prints compare-logits'
lines, then '<model> <dtype> [variant]: N passed, M failed' per run.

usage: ct-golden.py BIN FOLDER WORKDIR [WEIGHTS]
WEIGHTS: run on this folder instead (the same weights stored otherwise)."""
import os
import subprocess
import sys

bindir, golden, work = sys.argv[1:4]
weights = sys.argv[4] if len(sys.argv) > 4 else golden
here = os.path.dirname(os.path.abspath(__file__))
e2e = os.path.join(os.path.dirname(os.path.dirname(here)), "e2e")
name = os.path.basename(os.path.normpath(golden))
os.makedirs(work, exist_ok=True)


def ids(key):
    return subprocess.run([sys.executable, os.path.join(e2e, "golden-ids.py"), golden, key],
                          check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


status = 0
for dtype, variant in (("f32", None), ("bf16", None), ("bf16", "x86-64-v3")):
    so = os.path.join(work, "%s.%s.so" % (name, dtype))
    label = dtype + (" " + variant if variant else "")
    dump = os.path.join(work, "%s.%s.logits" % (name, label.replace(" ", ".")))
    if variant is None:
        subprocess.run([os.path.join(bindir, "sgc"), "compile", weights, "--target=cpu",
                        "--compute-dtype=" + dtype, "-o", so], check=True)
    subprocess.run([os.path.join(bindir, "sgc-run"), so, "--weights", weights,
                    "--prompt-ids", ids("input_ids"), "--feed-ids", ids("decode_ids_" + dtype),
                    "--max-new-tokens", "17", "--dump-logits", dump] +
                   (["--cpu-variant", variant] if variant else []),
                   check=True, stdout=subprocess.DEVNULL)
    p = subprocess.run([sys.executable, os.path.join(e2e, "compare-logits.py"), "--golden",
                        golden, "--dtype", dtype, "--ours", dump],
                       stdout=subprocess.PIPE, text=True)
    lines = p.stdout.strip().splitlines()
    print("\n".join(lines[:-1]))
    print("%s %s: %s" % (name, label, lines[-1] if lines else "no output"))
    status |= p.returncode
sys.exit(status)
