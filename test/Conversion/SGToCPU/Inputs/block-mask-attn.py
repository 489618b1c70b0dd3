"""Runs the lowered attention kernels of block-mask-attn.mlir and checks them
against the masked softmax attention written here in plain Python (no torch,
no numpy), from the rule of gemma-vision.md (G3.5, G4.7, G.9):

  sliding: allowed(q, kv) = kv > q - window and (kv <= q or same block >= 0)
  full:    allowed(q, kv) = kv <= q or same block >= 0

  driver LOWERED  prints a runnable module: the lowered functions, a body for
                  each dispatcher (all heads on one thread) and @main, which
                  calls the three functions and prints every output value.
  check OUTPUT    compares the printed values with the reference.
"""
import re
import sys

TOKENS, HQ, HKV, D = 8, 2, 1, 4
POS0, WINDOW, FULL_SLOTS, SCALE = 2, 3, 16, 0.5
# A text row, a 4-row block (longer than the window), a 2-row block right
# after it, a text row.
BLOCKS = [-1, 0, 0, 0, 0, 1, 1, -1]
TEXT = [-1] * TOKENS
# Filler of the cache slots no query may read: a read shows in the result.
UNUSED = 100.0


def value(seed, *idx):
    """Small exact binary fractions, varied enough that masks matter."""
    n = seed
    for x in idx:
        n = n * 31 + x * 7 + 3
    return ((n * 2654435761) % 17 - 8) / 8.0


def chunk(seed, heads):
    return [[[value(seed, i, h, d) for d in range(D)] for h in range(heads)]
            for i in range(TOKENS)]


Q, K, V = chunk(1, HQ), chunk(2, HKV), chunk(3, HKV)
# Positions 0 and 1 before the chunk, in ring slots j % WINDOW or slot j.
CACHED = {j: ([[value(4, j, h, d) for d in range(D)] for h in range(HKV)],
              [[value(5, j, h, d) for d in range(D)] for h in range(HKV)])
          for j in range(POS0)}


def cache(slots, ring, which):
    rows = [[[UNUSED] * D for _ in range(HKV)] for _ in range(slots)]
    for j, kv in CACHED.items():
        rows[j % WINDOW if ring else j] = kv[which]
    return rows


def reference(window, blocks):
    """out[i][h][:] of the masked attention, in double precision."""
    import math
    out = []
    for i in range(TOKENS):
        p = POS0 + i
        row = []
        for h in range(HQ):
            g = h // (HQ // HKV)
            scores, values = [], []
            for j in range(POS0 + TOKENS):
                if window and not j > p - window:
                    continue
                ahead_in_block = (j >= POS0 and blocks[i] >= 0
                                  and blocks[j - POS0] == blocks[i])
                if not (j <= p or ahead_in_block):
                    continue
                key, val = (CACHED[j][0][g], CACHED[j][1][g]) if j < POS0 \
                    else (K[j - POS0][g], V[j - POS0][g])
                scores.append(sum(a * b for a, b in zip(Q[i][h], key)) * SCALE)
                values.append(val)
            top = max(scores)
            e = [math.exp(s - top) for s in scores]
            total = sum(e)
            row.append([sum(w / total * v[d] for w, v in zip(e, values))
                        for d in range(D)])
        out.append(row)
    return out


RUNS = [("sliding", WINDOW, BLOCKS), ("full", 0, BLOCKS),
        ("sliding_text", WINDOW, TEXT)]


def memref(shape):
    return "memref<" + "x".join(map(str, shape)) + "xf32>"


def driver(lowered_path):
    text = open(lowered_path).read().strip()
    assert text.startswith("module {") and text.endswith("}"), lowered_path
    body = text[len("module {"):-1]
    # Each dispatcher declaration gets a body: the kernel over all rows.
    decl = re.compile(r"^\s*func\.func private @(\S+)\((.*)\) attributes "
                      r"\{.*sg\.dispatch = @(\S+),.*sg\.rows = (\d+) : i64\}$",
                      re.M)
    lines = ["module {", decl.sub("", body)]
    for name, types, kernel, rows in decl.findall(body):
        types = [t.strip() for t in re.split(r",\s*(?![^<]*>)", types)]
        params = ", ".join(f"%a{n}: {t}" for n, t in enumerate(types))
        args = ", ".join(f"%a{n}" for n in range(1, len(types)))
        sig = ", ".join(types[1:] + ["index", "index"])
        lines += [f"  func.func @{name}({params}) {{",
                  "    %lo = arith.constant 0 : index",
                  f"    %hi = arith.constant {rows} : index",
                  f"    call @{kernel}({args}, %lo, %hi) : ({sig}) -> ()",
                  "    return", "  }"]

    def add(name, shape, rows, elem="f32"):
        ty = "memref<" + "x".join(map(str, shape)) + f"x{elem}>"
        lines.append(f'  memref.global "private" constant @{name} : {ty} = dense<{rows}>')
    add("in_q", [TOKENS, HQ, D], Q)
    add("in_k", [TOKENS, HKV, D], K)
    add("in_v", [TOKENS, HKV, D], V)
    for name, slots, ring in (("ring", WINDOW, True), ("full", FULL_SLOTS, False)):
        add("in_kc_" + name, [slots, HKV, D], cache(slots, ring, 0))
        add("in_vc_" + name, [slots, HKV, D], cache(slots, ring, 1))
    add("in_blocks", [TOKENS], BLOCKS, "i32")

    q, kv = memref(["?", HQ, D]), memref(["?", HKV, D])
    lines += ["  func.func @main() {",
              "    %exec = llvm.mlir.zero : !llvm.ptr",
              f"    %pos = arith.constant {POS0} : i64",
              f"    %n = arith.constant {TOKENS} : index",
              "    %c0 = arith.constant 0 : index",
              "    %c1 = arith.constant 1 : index",
              f"    %nh = arith.constant {HQ} : index",
              f"    %nd = arith.constant {D} : index"]

    def get(var, name, ty, cast):
        lines.append(f"    %{var}_s = memref.get_global @{name} : {ty}")
        lines.append(f"    %{var} = memref.cast %{var}_s : {ty} to {cast}")
    get("q", "in_q", memref([TOKENS, HQ, D]), q)
    get("k", "in_k", memref([TOKENS, HKV, D]), kv)
    get("v", "in_v", memref([TOKENS, HKV, D]), kv)
    for name, slots in (("ring", WINDOW), ("full", FULL_SLOTS)):
        ty = memref([slots, HKV, D])
        get("kc_" + name, "in_kc_" + name, ty, ty)
        get("vc_" + name, "in_vc_" + name, ty, ty)
    get("b", "in_blocks", f"memref<{TOKENS}xi32>", "memref<?xi32>")
    for fn, window, blocks in RUNS:
        c = "ring" if window else "full"
        cty = memref([WINDOW if window else FULL_SLOTS, HKV, D])
        args = ["%exec", "%q", "%k", "%v", f"%kc_{c}", f"%vc_{c}", "%pos"]
        types = ["!llvm.ptr", q, kv, kv, cty, cty, "i64"]
        if blocks is BLOCKS:
            args.append("%b")
            types.append("memref<?xi32>")
        args.append(f"%out_{fn}")
        types.append(q)
        lines += [f"    %out_{fn} = memref.alloc(%n) : {q}",
                  f"    call @{fn}({', '.join(args)}) : ({', '.join(types)}) -> ()",
                  "    scf.for %i = %c0 to %n step %c1 {",
                  "      scf.for %h = %c0 to %nh step %c1 {",
                  "        scf.for %d = %c0 to %nd step %c1 {",
                  f"          %x = memref.load %out_{fn}[%i, %h, %d] : {q}",
                  "          vector.print %x : f32",
                  "        }", "      }", "    }",
                  f"    memref.dealloc %out_{fn} : {q}"]
    lines += ["    return", "  }", "}"]
    print("\n".join(lines))


def check(output_path):
    got = [float(x) for x in open(output_path).read().split()]
    per_run = TOKENS * HQ * D
    if len(got) != per_run * len(RUNS):
        sys.exit("expected %d values, got %d" % (per_run * len(RUNS), len(got)))
    failed = False
    for n, (fn, window, blocks) in enumerate(RUNS):
        ref = reference(window, blocks)
        worst = 0.0
        for i in range(TOKENS):
            for h in range(HQ):
                for d in range(D):
                    x = got[n * per_run + (i * HQ + h) * D + d]
                    err = abs(x - ref[i][h][d])
                    worst = max(worst, err)
                    if err > 1e-5:
                        failed = True
                        print("%s: out[%d][%d][%d] = %g, expected %.7g"
                              % (fn, i, h, d, x, ref[i][h][d]))
        print("%s: %d values, max error %s" % (fn, per_run,
                                               "< 1e-5" if worst <= 1e-5 else "%.3g" % worst))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    {"driver": driver, "check": check}[sys.argv[1]](sys.argv[2])
