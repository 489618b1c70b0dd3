#!/usr/bin/env python3
"""Checks the kernels of a CUDA model from `sgc compile --save-temps=DIR`:
ptxas -v's report (no spills, no stack frame, static shared memory within a
block's 48 KiB, registers within a budget per kernel family), the launch
table of the glue (a kernel whose PTX takes dynamic shared memory gets bytes
of it in every launch, none other does; static plus dynamic within an
H200 block's 227 KiB) and, with
--nvdisasm, the SASS of the cubin (128-bit weight loads in gemv_rows, no
local memory anywhere; no 16-bit loads in gemv_rows' input-row prologue;
HMMA in every kernel of the tensor-core families, none
under a predicate; the count of HMMA). Prints one line per finding and
exits 1 if any check fails."""
import argparse
import collections
import os
import re
import subprocess
import sys

SHARED_LIMIT = 48 * 1024
# Static plus dynamic shared memory of one block on sm_90, with the opt-in.
BLOCK_SHARED_LIMIT = 227 * 1024
# Families whose products run on tensor cores (bf16 mma.sync).
TENSOR_CORE_FAMILIES = ["gemm_mma", "attn_decode_mma", "attn_prefill"]


def parse_report(path):
    kernels = {}
    current = None
    for line in open(path):
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = kernels.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            current["stack"], current["spill_st"], current["spill_ld"] = map(
                int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
    return kernels


def dynamic_shared_by_kernel(glue):
    """{kernel: [dynamic shared bytes of each launch]} from the glue's
    sgc_cuda_kernels (names in function order) and sgc_steps tables."""
    text = open(glue).read()
    names = re.findall(r'\{"(\w+)", \d+, \w+\}',
                       text.split("sgc_cuda_kernels[] = {", 1)[1].split("};")[0])
    steps = text.split("sgc_steps[] = {", 1)[1].split("};")[0]
    out = collections.defaultdict(list)
    for m in re.finditer(r"\{(\d+), \d+, \d+, -?\d+, \{[^}]*\}, "
                         r"\{[^}]*\}, (\d+), \w+\}", steps):
        out[names[int(m.group(1))]].append(int(m.group(2)))
    return out


def dynamic_shared_users(ptx):
    """The PTX entries that address the extern (dynamic) shared array."""
    text = open(ptx).read()
    arrays = re.findall(r"\.extern \.shared [^;]*?(\w+)\[\];", text)
    users = set()
    for part in re.split(r"\.visible \.entry ", text)[1:]:
        name = re.match(r"(\w+)", part).group(1)
        if any(re.search(r"\b" + a + r"\b", part) for a in arrays):
            users.add(name)
    return users


def family(name):
    return re.sub(r"_\d+$", "", name)


def sass_by_kernel(nvdisasm, cubin, listing=None):
    """{kernel: its SASS lines}: instructions and the `.L_x_N:` labels
    (branch targets, for perf-model.py's loops), from `nvdisasm -c` of the
    cubin or from |listing|, a saved one."""
    text = open(listing).read() if listing else subprocess.run(
        [nvdisasm, "-c", cubin], check=True, capture_output=True,
        text=True).stdout
    out = collections.defaultdict(list)
    current = None
    for line in text.splitlines():
        m = re.match(r"\s*\.text\.(\w+):", line) or \
            re.match(r"\s*\.section\s+\.text\.(\w+)", line)
        if m:
            current = m.group(1)
            continue
        if current and ("/*" in line or re.match(r"\.L_x_\d+:", line)):
            out[current].append(line)
    return out


INSN = re.compile(r"/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?([A-Z][\w.]*)\s*([^;]*);")
LDG_WIDTH = {"128": 16, "64": 8, "U16": 2, "S16": 2, "U8": 1, "S8": 1}


def ldg_width(op):
    for part in op.split(".")[1:]:
        if part in LDG_WIDTH:
            return LDG_WIDTH[part]
    return 4


def parse_sass(lines):
    """Instructions (address, opcode, operands) and the loops: (first, last)
    instruction indices of each backward branch's range."""
    insns, labels, branches = [], {}, []
    for line in lines:
        m = re.match(r"\s*(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(insns)
            continue
        m = INSN.search(line)
        if not m:
            continue
        insns.append((int(m.group(1), 16), m.group(3), m.group(4)))
        b = re.search(r"`\((\.L_x_\d+)\)", m.group(4))
        if m.group(3).startswith("BRA") and b:
            branches.append((len(insns) - 1, b.group(1)))
    loops = [(labels[t], i) for i, t in branches if t in labels and labels[t] <= i]
    return insns, loops


def narrow_prologue_loads(lines):
    """The 16-bit (or narrower) global loads of a gemv_rows kernel's
    prologue, the code before its first weight load (LDG.E.128.CONSTANT):
    (those in a loop, a load a column or so; those outside the loops, a
    load a block: a [1] operand such as Gemma 4's layer scalar)."""
    insns, loops = parse_sass(lines)
    first = next((i for i, (_, op, _) in enumerate(insns)
                  if op.startswith("LDG.E.128.CONSTANT")), len(insns))
    in_loop = once = 0
    for i, (_, op, _) in enumerate(insns[:first]):
        if op.startswith("LDG") and ldg_width(op) <= 2:
            if any(lo <= i <= hi for lo, hi in loops):
                in_loop += 1
            else:
                once += 1
    return in_loop, once


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("temps", help="the --save-temps directory")
    ap.add_argument("--budget", action="append", default=[],
                    help="FAMILY=REGS, the most registers a kernel of the "
                         "family may use")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--sass", help="a saved `nvdisasm -c` listing of the "
                    "cubin, read instead of running --nvdisasm")
    ap.add_argument("--tensor-core", action="append",
                    default=list(TENSOR_CORE_FAMILIES),
                    help="a family whose every kernel must have HMMA")
    ap.add_argument("--no-tensor-cores", action="store_true",
                    help="the model has no kernel of the tensor-core families "
                         "and no HMMA anywhere (f32 activations)")
    args = ap.parse_args()
    budgets = dict(b.split("=") for b in args.budget)
    kernels = parse_report(os.path.join(args.temps, "ptxas.log"))
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(("ok: " if ok else "FAIL: ") + what)
        failed += not ok

    check(len(kernels) > 0, f"{len(kernels)} kernels in the ptxas report")
    by_family = collections.Counter(family(k) for k in kernels)
    print("families: " + ", ".join(f"{f} {n}" for f, n in sorted(by_family.items())))
    spills = sum(k["spill_st"] + k["spill_ld"] for k in kernels.values())
    stack = sum(k["stack"] for k in kernels.values())
    check(spills == 0, f"spill bytes: {spills}")
    check(stack == 0, f"stack frame bytes: {stack}")
    worst = max(kernels.items(), key=lambda kv: kv[1]["smem"])
    check(worst[1]["smem"] <= SHARED_LIMIT,
          f"static shared memory at most {worst[1]['smem']} bytes ({worst[0]}) "
          f"<= {SHARED_LIMIT}")
    launches = dynamic_shared_by_kernel(os.path.join(args.temps, "cuda-glue.c"))
    users = dynamic_shared_users(os.path.join(args.temps, "kernels.ptx"))
    wrong = sorted(n for n in kernels
                   if (n in users) != any(launches.get(n, [0])) or
                   (n in users and not all(launches[n])))
    check(not wrong, f"dynamic shared memory in the launches of exactly the "
          f"{len(users)} kernels that use it" +
          (": not so for " + ", ".join(wrong) if wrong else ""))
    total = {n: k["smem"] + max(launches.get(n, [0])) for n, k in kernels.items()}
    most = max(total, key=total.get)
    check(total[most] <= BLOCK_SHARED_LIMIT,
          f"static + dynamic shared memory at most {total[most]} bytes "
          f"({most}) <= {BLOCK_SHARED_LIMIT}")
    for fam in sorted(by_family):
        if fam not in budgets:
            check(False, f"no register budget for family {fam}")
            continue
        name, k = max(((n, k) for n, k in kernels.items() if family(n) == fam),
                      key=lambda nk: nk[1]["regs"])
        check(k["regs"] <= int(budgets[fam]),
              f"{fam}: at most {k['regs']} registers ({name}) <= {budgets[fam]}")

    if args.nvdisasm or args.sass:
        sass = sass_by_kernel(args.nvdisasm,
                              os.path.join(args.temps, "kernels.cubin"),
                              args.sass)
        check(set(sass) == set(kernels),
              f"SASS for all {len(kernels)} kernels")
        local = [n for n, lines in sass.items()
                 if any(re.search(r"\b(LDL|STL)\b", l) for l in lines)]
        check(not local, "no local memory (LDL/STL) in any kernel" +
              (": " + ", ".join(sorted(local)) if local else ""))
        def missing(families, pattern):
            """The kernels of |families| and those without an instruction
            matching |pattern|."""
            kernels_of = [n for n in sass if family(n) in families]
            return kernels_of, [n for n in kernels_of
                                if not any(re.search(pattern, l)
                                           for l in sass[n])]

        for fam in ("gemv_rows",) + (() if args.no_tensor_cores
                                     else ("gemm_mma",)):
            kernels_of, narrow = missing([fam], r"LDG\.E\.128\.CONSTANT")
            check(kernels_of and not narrow,
                  f"128-bit read-only weight loads (LDG.E.128.CONSTANT) in all "
                  f"{len(kernels_of)} {fam} kernels" +
                  (": missing in " + ", ".join(narrow) if narrow else ""))
        # gemv_rows reads its input row (and a chain's residual, the norm
        # weight) in 16-byte chunks: no 16-bit loads a column before the
        # first weight load, at most one a block (a [1] operand).
        gemv = sorted(n for n in sass if family(n) == "gemv_rows")
        narrow = {n: narrow_prologue_loads(sass[n]) for n in gemv}
        scalar = [n for n in gemv if narrow[n][0] or narrow[n][1] > 1]
        check(gemv and not scalar,
              f"no 16-bit global loads in the input-row prologue of all "
              f"{len(gemv)} gemv_rows kernels (loads outside the loops, one a "
              f"kernel at most: {sum(o for _, o in narrow.values())})" +
              (": " + ", ".join(f"{n} has {l} in loops, {o} once"
                                for n, (l, o) in narrow.items() if n in scalar)
               if scalar else ""))
        hmma = sum(1 for lines in sass.values() for l in lines if "HMMA" in l)
        if args.no_tensor_cores:
            # f32 prefill projections: f32 FMAs on read-only bf16 weights.
            kernels_of, other = missing(["gemm_ffma"], r"\bFFMA\b")
            _, narrow = missing(["gemm_ffma"], r"LDG\.E\.64\.CONSTANT")
            check(kernels_of and not other and not narrow,
                  f"FFMA and read-only weight loads (LDG.E.64.CONSTANT) in all "
                  f"{len(kernels_of)} gemm_ffma kernels" +
                  (": missing in " + ", ".join(sorted(set(other + narrow)))
                   if other or narrow else ""))
            tensor = [n for n in sass if family(n) in args.tensor_core]
            check(not tensor and not hmma,
                  f"no tensor-core family kernel ({len(tensor)}) and no HMMA "
                  f"({hmma})")
        else:
            # The tensor-core families run their products on HMMA (mma.sync).
            tensor, scalar = missing(args.tensor_core,
                                     r"\bHMMA\.16816\.F32\.BF16\b")
            check(tensor and not scalar,
                  f"HMMA.16816.F32.BF16 in all {len(tensor)} kernels of the "
                  f"tensor-core families" +
                  (": missing in " + ", ".join(scalar) if scalar else ""))
        # mma.sync is not convergent in LLVM 22's NVVM intrinsics: nothing
        # stops a pass from sinking it into a divergent branch, where the
        # warp-wide product would read the lanes that skip it.
        predicated = sorted({n for n, lines in sass.items() for l in lines
                             if re.search(r"@!?U?P\w+\s+HMMA", l)})
        check(not predicated, "no predicated HMMA in any kernel" +
              (": " + ", ".join(predicated) if predicated else ""))
        print(f"HMMA instructions: {hmma}")
    print(f"{'FAILED' if failed else 'PASSED'}: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
