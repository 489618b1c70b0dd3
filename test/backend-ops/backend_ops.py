#!/usr/bin/env python3
"""sgc's backend-op test: every kernel family on every target against one
reference of the op's math (reference.py), in the spirit of llama.cpp's
test-backend-ops.

  backend_ops.py --bin DIR --work DIR [--case NAME]... [--dtype bf16|f32]
                 [--plant-bug] [--seed N]

Each case of cases.py becomes a one-case model (model.py): random ids
through an sg.embed, the case's ops, its output returned as the logits. It
is compiled for the CPU and for cuda:sm_90a, run on every CPU variant the
host can execute and on the CUDA kernel emulator (`sgc-run --device
cuda-emu`), 7 prompt tokens in one prefill call then 6 decode steps (past
the smallest ring's wrap-around), and every output row is compared with the
reference:

  max |ours - reference| <= B * (max - min of the reference row)

with B = 1e-4 for f32 activations (the e2e f32 rule) and B = 2^-6 for
bf16: a kernel may round an intermediate (a norm's row, a score) to the
other side of a bf16 tie from the reference, and one such flip moves an
output by up to one bf16 ulp of the row's largest element, 2^-8 of the row
range; 2^-6 leaves room for a few. It prints one line per case, target and
dtype with the families the compiler selected, the variants it skipped on
this host, and checks that the cases together select every family of both
targets' registries (`sgc-opt --list-kernel-families`). --plant-bug hands
every comparison a reference with one element of the first row changed:
every check must then fail. Exit 1 on any failure."""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cases import CASES, NO_KERNEL, VOCAB, build  # noqa: E402
from blocks import BLOCKS, write_gguf  # noqa: E402
from model import Model  # noqa: E402
from numerics import Normal, read_safetensors, write_safetensors  # noqa: E402

PROMPT, FED, CONTEXT = 7, 6, 64
BOUND = {"f32": 1e-4, "bf16": 2.0 ** -6}
PSEUDO_FAMILIES = {"prologue", "carried", "fused"}


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def families_of(ir):
    """The families sg-select-kernels recorded in `ir` (the module it
    printed after it ran)."""
    return set(re.findall(r'#sg\.kernel<"(\w+)"', ir)) - PSEUDO_FAMILIES


def cpu_variants(sgc_run, so):
    out = run([sgc_run, so, "--load-format=dummy", "--check", "--cpu-variant", "?"]).stdout
    return re.findall(r"available: '([^']+)'", out)


def compare(rows, ours, bound):
    """(worst error / allowed over all rows, first bad row or None)."""
    worst, bad = 0.0, None
    for t, (want, got) in enumerate(zip(rows, ours)):
        span = max(want) - min(want)
        allowed = bound * span if span > 0 else bound
        err = max((abs(a - b) if a == a and b == b else float("inf"))
                  for a, b in zip(want, got))
        if err / allowed > worst:
            worst = err / allowed
        if err > allowed and bad is None:
            bad = "row %d: max error %.3g > %.3g" % (t, err, allowed)
    return worst, bad


def run_case(c, dtype, args, out):
    work = os.path.join(args.work, "%s.%s" % (c.name, dtype))
    os.makedirs(work, exist_ok=True)
    normal = Normal(args.seed)
    ids = normal.ints(PROMPT + FED, VOCAB)
    m = Model(dtype, ids, normal, CONTEXT)
    result = build(m, c)
    mlir = os.path.join(work, "case.mlir")
    with open(mlir, "w") as f:
        f.write(m.mlir(result))
    # A case with block-encoded weights comes as a GGUF, the only files
    # that hold them.
    if any(dt in BLOCKS for dt, _, _ in m.weights.values()):
        weights = os.path.join(work, "weights.gguf")
        write_gguf(weights, m.weights)
    else:
        weights = os.path.join(work, "weights.safetensors")
        write_safetensors(weights, m.weights)
    reference = [list(r) for r in result.rows]
    if args.plant_bug:
        reference[0][0] += 1.0 + abs(reference[0][0])
    prompt = ",".join(map(str, ids[:PROMPT]))
    fed = ",".join(map(str, ids[PROMPT:]))
    failures, families = 0, {}
    for target, flag in (("cpu", "cpu"), ("cuda", "cuda:sm_90a")):
        if target not in c.params.get("targets", (target,)):
            out("skip %-28s %-5s %-14s (%s)" % (c.name, dtype, target, NO_KERNEL[target]))
            continue
        if target == "cuda" and not (shutil.which("ptxas") and shutil.which("fatbinary")):
            out("skip %-28s %-5s %-14s (no ptxas and fatbinary on PATH)" % (c.name, dtype, target))
            continue
        so = os.path.join(work, target + ".so")
        # The module after sg-select-kernels comes on stderr (any error after
        # it): the families are read from it, not from a dump of every pass.
        p = subprocess.run([args.sgc, "compile", mlir, "--target=" + flag,
                            "--compute-dtype=" + dtype,
                            "--mlir-print-ir-after=sg-select-kernels", "-o", so],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode:
            out("FAIL %-28s %-5s %-4s compile: %s" % (c.name, dtype, target,
                                                     p.stderr.strip().splitlines()[-1:]))
            failures += 1
            continue
        families[target] = families_of(p.stderr)
        runs = ([("cpu:" + v, ["--cpu-variant", v]) for v in cpu_variants(args.sgc_run, so)]
                if target == "cpu" else [("cuda-emu", ["--device", "cuda-emu"])])
        for label, extra in runs:
            logits = os.path.join(work, label.replace(":", "-") + ".logits")
            p = run([args.sgc_run, so, "--weights", weights, "--prompt-ids", prompt,
                     "--feed-ids", fed, "--max-new-tokens", str(FED + 1),
                     "--dump-logits", logits] + extra,
                    env=dict(os.environ, SGC_EMU_SCHEDULES="1"))
            if p.returncode and "this CPU cannot run variant" in p.stdout:
                out("skip %-28s %-5s %-14s (%s)" % (c.name, dtype, label,
                                                    p.stdout.split("lacks ")[-1].split("\n")[0]))
                continue
            if p.returncode:
                out("FAIL %-28s %-5s %-14s run: %s" % (c.name, dtype, label,
                                                      p.stdout.strip()[-300:]))
                failures += 1
                continue
            dumped = read_safetensors(logits)
            ours = dumped["prefill_logits"][1], dumped["decode_logits"][1]
            width = len(reference[0])
            rows = [ours[0][i:i + width] for i in range(0, len(ours[0]), width)]
            rows += [ours[1][i:i + width] for i in range(0, len(ours[1]), width)]
            if len(rows) != len(reference):
                out("FAIL %-28s %-5s %-14s %d rows, not %d" % (c.name, dtype, label,
                                                              len(rows), len(reference)))
                failures += 1
                continue
            worst, bad = compare(reference, rows, BOUND[dtype])
            status = "FAIL" if bad else "ok  "
            failures += 1 if bad else 0
            out("%s %-28s %-5s %-14s %.3f of bound  %s%s" % (
                status, c.name, dtype, label, worst, " ".join(sorted(families[target])),
                "  (" + bad + ")" if bad else ""))
    return failures, families


def registry(sgc_opt, target):
    p = run([sgc_opt, "--list-kernel-families=" + target])
    return set(p.stdout.split()) if p.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory of sgc, sgc-run, sgc-opt")
    ap.add_argument("--work", required=True)
    ap.add_argument("--case", action="append", help="run only these cases")
    ap.add_argument("--dtype", action="append", choices=sorted(BOUND))
    ap.add_argument("--plant-bug", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.sgc = os.path.join(args.bin, "sgc")
    args.sgc_run = os.path.join(args.bin, "sgc-run")
    cases = [c for c in CASES if not args.case or c.name in args.case]
    if args.case and len(cases) != len(set(args.case)):
        ap.error("unknown case in %s" % args.case)
    out = lambda line: print(line, flush=True)
    start, failures = time.time(), 0
    seen = {"cpu": set(), "cuda": set()}
    for c in cases:
        for dtype in args.dtype or ["bf16", "f32"]:
            f, fams = run_case(c, dtype, args, out)
            failures += f
            for target, names in fams.items():
                seen[target] |= names
    if not args.case:
        for target in ("cpu", "cuda") if shutil.which("ptxas") else ("cpu",):
            known = registry(os.path.join(args.bin, "sgc-opt"), target)
            if known is None:
                out("FAIL sgc-opt --list-kernel-families=%s failed" % target)
                failures += 1
            elif known - seen[target]:
                out("FAIL %s families no case selects: %s"
                    % (target, " ".join(sorted(known - seen[target]))))
                failures += 1
            else:
                out("every %s family covered: %s" % (target, " ".join(sorted(known))))
    out("%s: %d failure(s), %.0f s" % ("FAILED" if failures else "PASSED", failures,
                                         time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
