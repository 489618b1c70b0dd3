"""Compiles examples/tiny-<family>-gguf-<encoding>/model.gguf for the CPU in
f32 and bf16, runs it on the file with the golden's prompt and fed tokens
(bf16 also on the baseline variant x86-64-v3), and compares the logits
(compare-logits.py; bf16 with --bf16-factor 1.5, see tiny-gemma3-gguf.test).
Prints which decode rows the host's variant runs, then '<model> <dtype>
[variant]: N passed, M failed' per run after compare-logits' own lines. Then reference (b): the bf16
run is no further from reference (a) f32 than llama.cpp's own logits on
the file (the golden's llama_logits) are, row by row's worst, the rule an
activation-quantizing path must meet (design/QUANT.md §5); prints
'<model> reference (b): ...' and fails when it is further. BF16 and F16
files are a weight-only path, held to (a)'s rules alone; for them the
line says whether llama.cpp's own run is within the bf16 rule's B, what
makes its logits a reference for the quantized files.

usage: gguf-golden.py BIN EXAMPLES ENCODING WORKDIR [FAMILY (gemma3)]"""
import importlib.util
import json
import os
import subprocess
import sys

bindir, examples, encoding, work = sys.argv[1:5]
family = sys.argv[5] if len(sys.argv) > 5 else "gemma3"
here = os.path.dirname(os.path.abspath(__file__))
e2e = os.path.dirname(here)
name = "tiny-%s-gguf-%s" % (family, encoding)
golden = os.path.join(examples, name)
gguf = os.path.join(golden, "model.gguf")
os.makedirs(work, exist_ok=True)


def ids(key):
    return subprocess.run([sys.executable, os.path.join(e2e, "golden-ids.py"), golden, key],
                          check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def host_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# The decode rows the host's best variant runs for these weights
# (compiler/Conversion/SGToCPU/Int8Dot.h): int8 activations where the
# CPU has AVX512-VNNI, else the bf16 pairs (AVX512-BF16) or f32.
flags = host_flags()
# BF16 and F16 weights are a weight-only path: their rows never quantize
# the activations, and the rules are (a)'s alone (design/QUANT.md §5).
weight_only = encoding in ("bf16", "f16")
if weight_only:
    print("%s decode rows: %s weights, activations as computed (weight-only)"
          % (name, encoding.upper()))
elif {"avx512_vnni", "avx512bw"} <= flags:
    print("%s decode rows: int8 activations (AVX512-VNNI)" % name)
else:
    print("%s decode rows: skipped int8 activations (no AVX512-VNNI here)" % name)

status = 0
# f32; bf16 on the host's best variant, then on the baseline one (f32 FMA
# rows and tiles: every host with AVX2 runs it).
for dtype, variant in (("f32", None), ("bf16", None), ("bf16", "x86-64-v3")):
    so = os.path.join(work, "%s.%s.so" % (encoding, dtype))
    label = dtype + (" " + variant if variant else "")
    dump = os.path.join(work, "%s.%s.logits" % (encoding, label.replace(" ", ".")))
    if not os.path.exists(so) or variant is None:
        subprocess.run([os.path.join(bindir, "sgc"), "compile", gguf, "--target=cpu",
                        "--compute-dtype=" + dtype, "-o", so], check=True)
    subprocess.run([os.path.join(bindir, "sgc-run"), so, "--weights", gguf,
                    "--prompt-ids", ids("input_ids"), "--feed-ids", ids("decode_ids_" + dtype),
                    "--max-new-tokens", "17", "--dump-logits", dump] +
                   (["--cpu-variant", variant] if variant else []),
                   check=True, stdout=subprocess.DEVNULL)
    p = subprocess.run([sys.executable, os.path.join(e2e, "compare-logits.py"), "--golden",
                        golden, "--dtype", dtype, "--ours", dump, "--bf16-factor", "1.5"],
                       stdout=subprocess.PIPE, text=True)
    lines = p.stdout.strip().splitlines()
    print("\n".join(lines[:-1]))
    print("%s %s: %s" % (name, label, lines[-1] if lines else "no output"))
    status |= p.returncode


def worst_from_f32(rows, ref):
    """max over rows of max|row - ref| / (max - min of the ref row)."""
    worst = 0.0
    for r, a in zip(rows, ref):
        worst = max(worst, max(abs(x - y) for x, y in zip(r, a)) / (max(a) - min(a)))
    return worst


spec = importlib.util.spec_from_file_location("compare_logits",
                                              os.path.join(e2e, "compare-logits.py"))
cl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cl)
gfile = os.path.join(golden, "golden.safetensors")
g = cl.read_safetensors(gfile)
ours = cl.read_safetensors(os.path.join(work, "%s.bf16.logits" % encoding))
ref = (cl.rows(cl.tensor(g, "prefill_logits_f32", "F32", 2, gfile)) +
       cl.rows(cl.tensor(g, "decode_logits_f32", "F32", 2, gfile)))
mine = (cl.rows(cl.tensor(ours, "prefill_logits", "F32", 2, "ours")) +
        cl.rows(cl.tensor(ours, "decode_logits", "F32", 2, "ours")))
llama = cl.rows(cl.tensor(g, "llama_logits", "F32", 2, gfile))
if not (len(mine) == len(llama) == len(ref)):
    print("%s reference (b): %d rows of ours, %d of llama.cpp, %d of (a)"
          % (name, len(mine), len(llama), len(ref)))
    sys.exit(1)
with open(os.path.join(golden, "meta.json")) as f:
    meta = json.load(f)
recorded = meta["reference_b"]["vs_f32"]["max"]
theirs, ours_worst = worst_from_f32(llama, ref), worst_from_f32(mine, ref)
same = abs(theirs - recorded) <= 1e-6 * recorded
if weight_only:
    # Reference (b) is a reference where llama.cpp's own file of plain
    # weights meets the bf16 rule against (a): its distance within B.
    bound = meta["bf16_vs_f32"]["max"]
    ok = same and theirs <= bound
    print("%s reference (b): llama.cpp %.2e of the row range from (a) f32 (meta.json %.2e), "
          "B %.2e: %s; sgc bf16 %.2e (weight-only: (a)'s rules)"
          % (name, theirs, recorded, bound, "within B" if ok else "NOT WITHIN B", ours_worst))
else:
    ok = same and ours_worst <= theirs
    print("%s reference (b): llama.cpp %.2e of the row range from (a) f32 (meta.json %.2e), "
          "sgc bf16 %.2e: %s" % (name, theirs, recorded, ours_worst,
                                 "no further" if ok else "FURTHER"))
sys.exit(status | (0 if ok else 1))
