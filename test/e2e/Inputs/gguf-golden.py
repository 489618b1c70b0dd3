"""Compiles examples/tiny-gemma3-gguf-<encoding>/model.gguf for the CPU in
f32 and bf16, runs it on the file with the golden's prompt and fed tokens,
and compares the logits (compare-logits.py; bf16 with --bf16-factor 1.5,
see tiny-gemma3-gguf.test). Prints '<model> <dtype>: N passed, M failed'
per dtype after compare-logits' own lines.

usage: gguf-golden.py BIN EXAMPLES ENCODING WORKDIR"""
import os
import subprocess
import sys

bindir, examples, encoding, work = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
e2e = os.path.dirname(here)
name = "tiny-gemma3-gguf-" + encoding
golden = os.path.join(examples, name)
gguf = os.path.join(golden, "model.gguf")
os.makedirs(work, exist_ok=True)


def ids(key):
    return subprocess.run([sys.executable, os.path.join(e2e, "golden-ids.py"), golden, key],
                          check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


status = 0
for dtype in ("f32", "bf16"):
    so = os.path.join(work, "%s.%s.so" % (encoding, dtype))
    dump = os.path.join(work, "%s.%s.logits" % (encoding, dtype))
    subprocess.run([os.path.join(bindir, "sgc"), "compile", gguf, "--target=cpu",
                    "--compute-dtype=" + dtype, "-o", so], check=True)
    subprocess.run([os.path.join(bindir, "sgc-run"), so, "--weights", gguf,
                    "--prompt-ids", ids("input_ids"), "--feed-ids", ids("decode_ids_" + dtype),
                    "--max-new-tokens", "17", "--dump-logits", dump],
                   check=True, stdout=subprocess.DEVNULL)
    p = subprocess.run([sys.executable, os.path.join(e2e, "compare-logits.py"), "--golden",
                        golden, "--dtype", dtype, "--ours", dump, "--bf16-factor", "1.5"],
                       stdout=subprocess.PIPE, text=True)
    lines = p.stdout.strip().splitlines()
    print("\n".join(lines[:-1]))
    print("%s %s: %s" % (name, dtype, lines[-1] if lines else "no output"))
    status |= p.returncode
sys.exit(status)
