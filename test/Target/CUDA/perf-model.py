#!/usr/bin/env python3
"""A static performance model of a CUDA model's kernels on one H200, from
`sgc compile --target=cuda:sm_90a --save-temps=DIR`: ptxas -v's report
(registers, static shared memory), the glue's launch table (grids, blocks,
dynamic shared memory, the weights and KV caches each step reads) and the
SASS of the cubin (nvdisasm). Nothing runs on a GPU: the tables are a
prediction for the GPU run to confirm or refute (bench/README.md, "the static
performance model").

  perf-model.py DIR --nvdisasm PATH [--sass LISTING] [--position P]
                [--prompt N] [--measured PROFILE.tsv] [--markdown]

Per kernel: registers, static + dynamic shared memory, threads per block,
blocks per SM and what limits it, the decode grid and its waves (a grid
whose last wave is under a quarter full is flagged `tail`), the widest
global load and the count of narrow (<= 2 byte) ones, bytes in flight per
SM against Little's law, HMMA per shared load (tensor-core families), the
predicted microseconds of a launch in decode and in prefill. Per phase:
launches, summed kernel time, launch gaps, tok/s. --measured adds the
median time of each kernel's decode launches from an SGC_CUDA_PROFILE file
(launch_trace.h; the first call, a warm-up, left out).

The H200 (sources; "lead" = to be calibrated by the GPU run):
  132 SMs, 65536 registers, 2048 threads, 32 blocks and 228 KiB of shared
  memory per SM (227 KiB a block, 1 KiB reserved per block), registers
  allocated 256 per warp: CUDA C Programming Guide, compute capability 9.0.
  HBM 4.8 TB/s (datasheet); BW = 4.3 TB/s, a device copy measured on this
  workplace's H200 (/work/.library/device/KINDS.md, 2026-10-28/11-04).
  bf16 dense 790 TFLOP/s measured there (torch matmul); mma.sync reaches
  about MMA_SYNC_SHARE of it (lead: public Hopper microbenchmarks, e.g.
  Luo et al., arXiv 2402.13499, find the full rate only with wgmma).
  DRAM latency under load L = 0.65 us (lead: Hopper pointer-chase
  microbenchmarks give ~0.45-0.5 us idle; queueing at full bandwidth adds).
  L2 hit latency L2 = 0.2 us (lead: ~270 cycles idle at 1.98 GHz, plus
  the far partition and contention of a whole-GPU prologue).
  Clock 1.98 GHz (the SM clock seen under load, KINDS.md).
  Launch gap between dependent kernels in a CUDA graph without PDL:
  GAP = 2 us (lead: 1.5-2.5 us is the usual range).
  Little's law: bytes in flight needed = BW x L = 2.8 MB, 21 KiB per SM.

Formulas (one launch):
  blocks/SM = min(2048 / threads, 65536 / (warps x ceil(regs x 32 / 256) x
              256), 233472 / (smem + 1 KiB, in 128-byte units), 32).
  waves = grid blocks / (132 x blocks/SM); a wave runs its blocks together.
  Main loop = the innermost SASS loop (a backward branch) with the most
  read-only (.CONSTANT) loads of the kernel's widest width, then the most
  loads of that width, then the most global-load bytes a trip; in flight a warp = 32 x those bytes (a trip's
  loads are issued together, none across trips); in flight a wave = that x
  its warps. A trip costs L + C, C = its issue time (one cycle an
  instruction, 25 a shuffle, 20 a MUFU: a warp per scheduler runs a
  dependent chain).
  Streamed bytes: gemv_rows its weights; attn_decode_* the K and V of the
  live keys at --position; other kernels their workspace operands.
  stream(wave) = bytes of the wave / min(BW, in flight of the wave /
  (L + C)).
  gemv_rows prologue (each wave): the loops before the main loop; a loop
  with global loads costs L2 a trip, one with shared loads only 30 cycles,
  trips = ceil(width / threads / (u x e)), u = the most distinct offsets
  from one base register among its loads (the unroll), e = the row's
  elements in its widest load (16-byte chunks: 8 bf16, 4 f32; 1 scalar).
  Decode attention: + the combine of the last block (its fences, atomic and
  the partials' loads: 4 x L2); on a K = V layer caching V only, + the
  rebuild of every live key from V (rebuild_seconds: 24 f64 instructions a
  rotated pair, dim / 8 pairs; 6 f32 a element; 64 FP64 and 128 FP32 lanes
  an SM; not overlapped with the stream).
  Small kernels (embed, qknorm_rope_append, kv_write, row_chain): L + one L2
  per barrier, or their bytes at BW if longer.
  embed: its output row bytes x 2.
  gemm_mma: max(2 x tokens x weight elements / (790 TFLOP/s x
  MMA_SYNC_SHARE x wave efficiency), weights / BW); attn_prefill: the same
  with 4 x heads x head_dim x tokens x mean keys (causal, window) FLOP.
  wave efficiency = waves / ceil(waves). The prefill LM head (the phase's
  last step) computes 64 tokens (the block of the last row).
  Decode: tok/s = 1e6 / (sum of kernel us + launches x GAP). Prefill: a
  --prompt token prompt in chunks of the model's max_prefill_chunk, every
  call at the full chunk's grid.
"""
import argparse
import collections
import importlib.util
import math
import os
import re
import statistics
import sys

# The ptxas report and SASS readers of check-kernels.py.
_spec = importlib.util.spec_from_file_location(
    "check_kernels", os.path.join(os.path.dirname(__file__), "check-kernels.py"))
ck = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ck)

SMS = 132
REGS_PER_SM = 65536
THREADS_PER_SM = 2048
BLOCKS_PER_SM = 32
SMEM_PER_SM = 228 * 1024
SMEM_RESERVED = 1024
REG_UNIT = 256
BW = 4.3e12
PEAK_BF16 = 790e12
MMA_SYNC_SHARE = 0.65
LAT_DRAM = 0.65e-6
LAT_L2 = 0.2e-6
CLOCK = 1.98e9
GAP_US = 2.0
LAT_SHARED = 30 / CLOCK
NEED_PER_SM = BW * LAT_DRAM / SMS
# Rebuilt keys (rebuild_seconds): f64 instructions of one cos/sin pair
# (emitCosSin: reduction, two degree-6 polynomials in r^2, conversions) and
# f32 ones per element (widen, multiply by w_k, round; the rotation's
# products and sums on a quarter); FP64 / FP32 lanes per SM and clock.
F64_PER_PAIR = 24
F32_PER_ELEMENT = 6
FP64_PER_SM_CLOCK = 64
FP32_PER_SM_CLOCK = 128
TAIL = 0.25
TENSOR = ("gemm_mma", "attn_decode_mma", "attn_prefill")
SMALL = ("embed", "qknorm_rope_append", "kv_write", "row_chain")
DTYPE_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "I64": 8}


# --- the launch table of the glue -----------------------------------------

def table(text, name):
    return text.split(name + "[] = {", 1)[1].split("};", 1)[0]


def ints(text):
    return [int(v) for v in text.split(",") if v.strip()]


def read_glue(path):
    text = open(path).read()
    g = {"model": re.search(r'\.model_id = "([^"]+)"', text).group(1),
         "chunk": int(re.search(r"\.max_prefill_chunk = (\d+)", text).group(1))}
    g["kernels"] = re.findall(r'\{"(\w+)", \d+, \w+\}',
                              table(text, "sgc_cuda_kernels"))
    g["tensors"] = [(ints(shape), int(nbytes)) for shape, nbytes in re.findall(
        r'\{"[^"]+", \w+, \d+, SGC_ABI_DTYPE_\w+, \d+, \{([^}]*)\}, (\d+)ull',
        table(text, "sgc_tensors"))]
    g["operands"] = [(kind, int(index), dtype, ints(shape))
                     for kind, index, dtype, shape in re.findall(
        r"\{SGC_ABI_OPERAND_(\w+), (\d+), \d+ull, (?:SGC_ABI_DTYPE_)?(\w+), "
        r"\d+, \{([^}]*)\}\}", table(text, "sgc_operands"))]
    # (kind, slots, bytes per slot, kv heads, head dim, keys rebuilt from V:
    # V from K with no V buffer).
    g["kv"] = [(kind, int(slots), int(per_token), int(heads), int(dim),
                vk == "1" and has_v == "0")
               for kind, slots, heads, dim, vk, has_v, per_token in re.findall(
                   r"\{SGC_ABI_KV_(\w+), \w+, (\d+), (\d+), (\d+), (\d), "
                   r"(\d), (\d+)ull", table(text, "sgc_kv_layers"))]
    g["steps"] = [dict(kernel=g["kernels"][int(f)], first=int(a), num=int(n),
                       layer=int(layer), grid=ints(grid), block=ints(block),
                       dyn=int(dyn))
                  for f, a, n, layer, grid, block, dyn in re.findall(
        r"\{(\d+), (\d+), (\d+), (-?\d+), \{([^}]*)\}, \{([^}]*)\}, (\d+), "
        r"\w+\}", table(text, "sgc_steps"))]
    g["phases"] = [(kind.lower(), int(first), int(num), int(tokens))
                   for kind, first, num, tokens in re.findall(
        r"\{SGC_ABI_PHASE_(\w+), (\d+), (\d+), \d+, (\d+),",
        table(text, "sgc_phases"))]
    return g


def operands(g, step):
    return g["operands"][step["first"]:step["first"] + step["num"]]


def weights(g, step):
    """The distinct weight tensors (shape, bytes) of a step."""
    seen = []
    for kind, index, _, _ in operands(g, step):
        if kind == "WEIGHT" and index not in seen:
            seen.append(index)
    return [g["tensors"][i] for i in seen]


def workspace_bytes(g, step, tokens):
    total = 0
    for kind, _, dtype, shape in operands(g, step):
        if kind == "WORKSPACE":
            total += DTYPE_BYTES.get(dtype, 4) * math.prod(
                tokens if d < 0 else d for d in shape)
    return total


# --- the SASS ---------------------------------------------------------------

# The instruction and loop reader of check-kernels.py.
INSN, LDG_WIDTH = ck.INSN, ck.LDG_WIDTH
ldg_width, parse_sass = ck.ldg_width, ck.parse_sass


def innermost(loops):
    return [l for l in loops
            if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]


def loads(insns, lo, hi, prefix):
    return [(op, args) for _, op, args in insns[lo:hi + 1] if op.startswith(prefix)]


def issue_seconds(insns, lo, hi):
    cycles = 0
    for _, op, _ in insns[lo:hi + 1]:
        cycles += 25 if op.startswith("SHFL") else 20 if op.startswith("MUFU") else 1
    return cycles / CLOCK


def unroll(ld):
    """The most distinct offsets from one base register among the loads."""
    offsets = collections.defaultdict(set)
    for _, args in ld:
        # desc[UR8][R2.64+0x100], [R3+0x100], [UR4+0x1e00]: the address.
        parts = re.findall(r"\[([^\]]+)\]", args)[-1].split("+")
        offset = next((p for p in parts if p.startswith("0x")), "0")
        offsets[parts[0]].add(offset)
    return max((len(v) for v in offsets.values()), default=1)


def analyze_sass(lines):
    insns, loops = parse_sass(lines)
    ldg = [op for _, op, _ in insns if op.startswith("LDG")]
    widths = [ldg_width(op) for op in ldg]
    inner = innermost(loops)
    per_trip = {l: sum(ldg_width(op) for op, _ in loads(insns, *l, "LDG"))
                for l in inner}
    # The streaming loop: the most read-only (.CONSTANT: weight) loads of
    # the kernel's widest width, then the most of that width (the weight or
    # KV loads; gemv_rows' prologue reads its row as wide), then the most
    # bytes.
    top = max(widths, default=0)

    def widest(l, constant):
        return sum(ldg_width(op) == top and (not constant or "CONSTANT" in op)
                   for op, _ in loads(insns, *l, "LDG"))

    main = max(inner, key=lambda l: (widest(l, True), widest(l, False),
                                      per_trip[l], -l[0]), default=None)
    if main is None or per_trip[main] == 0:
        main = None
    a = dict(
        widest=max(widths, default=0),
        narrow=sum(w <= 2 for w in widths),
        warp_bytes=32 * (per_trip[main] if main else sum(widths)),
        trip_s=issue_seconds(insns, *main) if main else 0.0,
        hmma=sum(op.startswith("HMMA") for _, op, _ in insns),
        lds=sum(op.startswith("LDS") for _, op, _ in insns),
        bars=sum(op.startswith("BAR.SYNC") for _, op, _ in insns),
        prologue=[])
    # The loops before the main loop: gemv_rows' dependent input-row passes.
    for l in sorted(inner):
        if main and l[1] >= main[0]:
            break
        g = loads(insns, *l, "LDG")
        s = loads(insns, *l, "LDS")
        if g or s:
            a["prologue"].append((bool(g), unroll(g or s),
                                  max(ldg_width(op) for op, _ in g or s)))
    return a


# --- occupancy and time ------------------------------------------------------

def occupancy(regs, smem, threads):
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // REG_UNIT) * REG_UNIT
    per_block = -(-(smem + SMEM_RESERVED) // 128) * 128
    limits = {"threads": THREADS_PER_SM // threads,
              "regs": REGS_PER_SM // (per_warp * warps) if regs else BLOCKS_PER_SM,
              "smem": SMEM_PER_SM // per_block,
              "blocks": BLOCKS_PER_SM}
    least = min(limits.values())
    return least, "+".join(k for k, v in limits.items() if v == least)


def waves_of(blocks, per_sm):
    return blocks / (SMS * per_sm)


def stream_seconds(nbytes, blocks, per_sm, warps, a, prologue_s):
    """Wave by wave: the wave's prologue, then its bytes at the bandwidth
    its bytes in flight allow."""
    full = SMS * per_sm
    total, left = 0.0, blocks
    while left > 0:
        wave = min(left, full)
        flight = wave * warps * a["warp_bytes"]
        bw = min(BW, flight / (LAT_DRAM + a["trip_s"])) if flight else BW
        total += prologue_s + nbytes * wave / blocks / bw
        left -= wave
    return total


def gemv_row(g, step):
    """A gemv_rows step's input row: its width (the weights' K) and the
    bytes of its elements (the dtype of the step's first workspace
    operand, the row or the chain's first input)."""
    width = max(shape[1] for shape, _ in weights(g, step) if len(shape) == 2)
    dtype = next(d for kind, _, d, _ in operands(g, step) if kind == "WORKSPACE")
    return width, DTYPE_BYTES[dtype]


def gemv_prologue_seconds(a, row, threads):
    width, element = row
    per_thread = width / threads
    return sum(math.ceil(per_thread / (u * max(1, load // element))) *
               (LAT_L2 if glob else LAT_SHARED)
               for glob, u, load in a["prologue"])


def rebuild_seconds(keys, dim):
    """The f64 and f32 work of rebuilding `keys` keys of `dim` elements from
    V (K = V layers), added to the stream (no overlap assumed): a quarter of
    the dims rotate (Gemma 4's partial RoPE: dim / 8 pairs), each pair one
    emitCosSin (F64_PER_PAIR instructions), each element F32_PER_ELEMENT."""
    f64 = keys * dim / 8 * F64_PER_PAIR / (SMS * FP64_PER_SM_CLOCK * CLOCK)
    f32 = keys * dim * F32_PER_ELEMENT / (SMS * FP32_PER_SM_CLOCK * CLOCK)
    return f64 + f32


def live_keys(g, layer, position):
    kind, slots = g["kv"][layer][:2]
    return min(position + 1, slots) if kind == "RING" else position + 1


def launch_seconds(g, step, k, a, tokens, position, per_sm, phase_tokens=None):
    fam = ck.family(step["kernel"])
    blocks = math.prod(step["grid"])
    threads = math.prod(step["block"])
    warps = -(-threads // 32)
    w = weights(g, step)
    wbytes = sum(b for _, b in w)
    if fam == "gemv_rows":
        pro = gemv_prologue_seconds(a, gemv_row(g, step), threads)
        return stream_seconds(wbytes, blocks, per_sm, warps, a, pro)
    if fam.startswith("attn_decode"):
        keys = live_keys(g, step["layer"], position)
        _, _, per_slot, heads, dim, rebuilt = g["kv"][step["layer"]]
        stream = stream_seconds(keys * per_slot, blocks, per_sm, warps, a, 0)
        return (LAT_DRAM + stream + 4 * LAT_L2 +
                (rebuild_seconds(keys * heads, dim) if rebuilt else 0))
    waves = waves_of(blocks, per_sm)
    eff = waves / math.ceil(waves)
    rate = PEAK_BF16 * MMA_SYNC_SHARE * eff
    if fam == "gemm_mma":
        if step.get("last"):
            # The LM head computes only the block of 64 tokens holding the
            # last row (first_logits_row), still streaming all its weights.
            tokens = min(tokens, 64)
        elements = sum(math.prod(shape) for shape, _ in w)
        return max(2 * tokens * elements / rate, wbytes / BW) + LAT_DRAM
    if fam == "attn_prefill":
        q = next(s for kind, _, _, s in operands(g, step) if kind == "WORKSPACE")
        heads, dim = q[-2], q[-1]
        kind, slots = g["kv"][step["layer"]][:2]
        p0 = position
        keys = [min(p0 + i + 1, slots) if kind == "RING" else p0 + i + 1
                for i in range(tokens)]
        return 4 * heads * dim * sum(keys) / rate + LAT_DRAM
    # embed gathers rows of its table: the bytes are its output's, twice.
    nbytes = workspace_bytes(g, step, tokens) * (2 if fam == "embed" else 1)
    if fam != "embed":
        nbytes += wbytes
    return max(LAT_DRAM + a["bars"] * LAT_L2, nbytes / BW)


# --- the model ---------------------------------------------------------------

def model(temps, nvdisasm, listing, position, prompt):
    g = read_glue(os.path.join(temps, "cuda-glue.c"))
    report = ck.parse_report(os.path.join(temps, "ptxas.log"))
    sass = ck.sass_by_kernel(nvdisasm, os.path.join(temps, "kernels.cubin"),
                             listing)
    sa = {n: analyze_sass(lines) for n, lines in sass.items()}
    rows = collections.OrderedDict()
    for n in g["kernels"]:
        rows[n] = dict(kernel=n, family=ck.family(n), regs=report[n]["regs"],
                       smem=report[n]["smem"], dyn=0, threads=0, grid="-",
                       decode=[], prefill=[], a=sa[n])
    phases = {}
    for kind, first, num, tokens in g["phases"]:
        steps = g["steps"][first:first + num]
        steps[-1] = dict(steps[-1], last=True)
        calls = ([(position, 1)] if kind == "decode" else
                 [(p, min(tokens, prompt - p)) for p in range(0, prompt, tokens)])
        total = 0.0
        for step in steps:
            r = rows[step["kernel"]]
            threads = math.prod(step["block"])
            r["threads"] = threads
            r["dyn"] = max(r["dyn"], step["dyn"])
            per_sm, r["limiter"] = occupancy(r["regs"], r["smem"] + step["dyn"],
                                             threads)
            r["per_sm"] = per_sm
            seconds = sum(launch_seconds(g, step, r, r["a"], n if kind != "decode"
                                         else 1, p, per_sm)
                          for p, n in calls)
            if kind == "decode":
                if r["family"] == "gemv_rows":
                    r["prologue_us"] = gemv_prologue_seconds(
                        r["a"], gemv_row(g, step), threads) * 1e6
            if r["grid"] == "-":
                # The decode grid, else the prefill chunk's.
                r["grid"] = "x".join(map(str, step["grid"]))
                r["blocks"] = math.prod(step["grid"])
            r[kind].append(seconds / len(calls) * 1e6)
            total += seconds
        phases[kind] = dict(launches=num, calls=len(calls), tokens=(
            1 if kind == "decode" else prompt), kernel_us=total * 1e6)
    return g, rows, phases


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def kernel_table(rows, measured):
    head = ["kernel", "regs", "smem", "thr", "blk/SM", "limit", "grid",
            "waves", "tail", "ldg", "narrow", "KiB/SM", "need", "hmma/lds",
            "pro_us",
            "dec", "dec_us", "pre", "pre_us"] + (["meas_us"] if measured else [])
    out = [head]
    for r in rows.values():
        a = r["a"]
        blocks = r.get("blocks", 0)
        per_sm = r.get("per_sm", 0)
        waves = waves_of(blocks, per_sm) if blocks and per_sm else None
        tail = (waves is not None and waves > 1 and
                0 < waves - math.floor(waves) < TAIL)
        resident = min(per_sm, blocks / SMS) if blocks else per_sm
        flight = resident * -(-r["threads"] // 32) * a["warp_bytes"] / 1024
        hmma = (fmt(a["hmma"] / a["lds"], 2) if r["family"] in TENSOR and a["lds"]
                else "-")
        out.append([r["kernel"], str(r["regs"]),
                    f"{r['smem']}+{r['dyn']}", str(r["threads"]), str(per_sm),
                    r.get("limiter", "-"), r["grid"], fmt(waves, 2),
                    "tail" if tail else "-", str(a["widest"]), str(a["narrow"]),
                    fmt(flight), fmt(NEED_PER_SM / 1024),
                    hmma, fmt(r.get("prologue_us")), str(len(r["decode"])),
                    fmt(statistics.mean(r["decode"])) if r["decode"] else "-",
                    str(len(r["prefill"])),
                    fmt(statistics.mean(r["prefill"])) if r["prefill"] else "-"]
                   + ([fmt(measured.get(r["kernel"]))] if measured else []))
    return out


def phase_table(g, phases, prompt, rows, measured):
    out = [["phase", "model", "launches", "kernel_us", "gap_us", "total_us",
            "tok_s"] + (["meas_kernel_us"] if measured else [])]
    for kind, p in phases.items():
        gaps = p["launches"] * p["calls"] * GAP_US
        total = p["kernel_us"] + gaps
        out.append([kind if kind == "decode" else f"{kind}-{prompt}", g["model"],
                    str(p["launches"] * p["calls"]), fmt(p["kernel_us"]),
                    fmt(gaps), fmt(total), fmt(p["tokens"] / total * 1e6)]
                   + ([fmt(sum(measured.get(r["kernel"], 0) * len(r["decode"])
                               for r in rows.values()) if kind == "decode"
                           else None)] if measured else []))
    return out


def read_measured(path):
    """{kernel: median us of its decode launches}, the first call left out."""
    times = collections.defaultdict(list)
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if line.startswith("#") or f[0] == "call" or len(f) < 11:
            continue
        if f[1] == "decode" and int(f[0]) > 0:
            times[f[4]].append(float(f[10]))
    return {k: statistics.median(v) for k, v in times.items()}


def render(rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(rows[0]) + " |",
                 "|" + "---|" * len(rows[0])]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows[1:]])
    return "\n".join("\t".join(r) for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("temps", help="the --save-temps directory")
    ap.add_argument("--nvdisasm")
    ap.add_argument("--sass", help="a saved `nvdisasm -c` listing instead")
    ap.add_argument("--position", type=int, default=1024,
                    help="the decode position (keys read by attention)")
    ap.add_argument("--prompt", type=int, default=4096,
                    help="prefill prompt tokens")
    ap.add_argument("--measured", help="an SGC_CUDA_PROFILE file")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if not args.nvdisasm and not args.sass:
        sys.exit("perf-model.py: --nvdisasm or --sass is needed")
    g, rows, phases = model(args.temps, args.nvdisasm, args.sass,
                            args.position, args.prompt)
    measured = read_measured(args.measured) if args.measured else None
    print(f"# {g['model']}: decode at position {args.position}, prefill of "
          f"{args.prompt} tokens in chunks of {g['chunk']}")
    print(f"# BW {BW / 1e12:g} TB/s, L {LAT_DRAM * 1e6:g} us, "
          f"L2 {LAT_L2 * 1e6:g} us, gap {GAP_US:g} us, "
          f"need {NEED_PER_SM / 1024:.1f} KiB/SM in flight")
    print(render(kernel_table(rows, measured), args.markdown))
    print()
    print(render(phase_table(g, phases, args.prompt, rows, measured),
                 args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
