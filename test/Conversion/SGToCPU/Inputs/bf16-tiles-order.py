"""Runs a lowered bf16 linear kernel's tiles (bf16-tiles-order.test) on
inputs whose sums depend on the order of their rounded adds, and checks them
against that order written here in plain Python (no numpy).

Each output is four products of K = 4 (two K pairs) added one FMA at a time
to an f32 sum from 0: vdpbf16ps adds a pair's odd product first, then the
even one, and the FMA tiles must do the same. The products are integers,
one of them +-2^24, so an add rounds (ties to even) at f32's 24 bits and
another order gives another result.

  driver LOWERED KNOB  prints a runnable module: the lowered functions, the
                       CPU globals defined (bf16 dot flag 1, the tiles-on-FMA
                       knob KNOB), and @main, which runs the kernel over all
                       16 rows for 12 tokens (one tile) and prints each value.
  check OUTPUT         compares the printed values with the reference.
"""
import re
import struct
import sys

TOKENS, ROWS, K = 12, 16, 4
BIG = float(1 << 24)


def x_row(t):
    """Activations of token t: small integers, exact in bf16."""
    return [1.0, 1.0, float(t % 5 + 1), 1.0]


def w_row(r):
    """Weights of row r: odd k carries +-2^24, so the even products land
    below f32's last bit of the sum when the odd one goes first."""
    return [float(r % 7 + 1), BIG, float(r % 3 + 1), -BIG]


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def reference(t, r):
    """Pairs in order; in a pair the odd product, then the even one."""
    x, w = x_row(t), w_row(r)
    acc = 0.0
    for pair in range(K // 2):
        for k in (2 * pair + 1, 2 * pair):
            # The sum of integers below 2^53 is exact in Python's double,
            # so one rounding to f32 is the FMA's.
            acc = f32(acc + x[k] * w[k])
    return acc


def sequential(t, r):
    """k in order (what another order would give), to show the inputs
    tell the two apart."""
    x, w = x_row(t), w_row(r)
    acc = 0.0
    for k in range(K):
        acc = f32(acc + x[k] * w[k])
    return acc


def driver(lowered_path, knob):
    text = open(lowered_path).read().strip()
    assert text.startswith("module {") and text.endswith("}"), lowered_path
    body = text[len("module {"):-1]
    # The globals the object emitter and the glue define for a library.
    values = {"sgc_cpu_bf16_dot": ("i8", 1),
              "sgc_cpu_bf16_on_fma": ("i64", knob),
              "sgc_cpu_row_prefetch_bytes": ("i64", 0)}
    decl = re.compile(r"^\s*llvm\.mlir\.global external (constant )?@(\w+)\(\).*$",
                      re.M)
    names = [m.group(2) for m in decl.finditer(body)]
    assert sorted(names) == sorted(values), names
    body = decl.sub("", body)
    # The dispatcher's declaration goes: @main calls the kernel itself.
    body = re.sub(r"^\s*func\.func private @sgc_dispatch_\S+\(.*$", "", body,
                  flags=re.M)
    body = re.sub(r"^\s*func\.func @proj\(.*?^  \}$", "", body,
                  flags=re.M | re.S)
    lines = ["module {", body]
    for name, (ty, v) in values.items():
        lines.append(f"  llvm.mlir.global internal @{name}({v} : {ty}) : {ty}")

    def add(name, shape, rows, elem):
        ty = "memref<" + "x".join(map(str, shape)) + f"x{elem}>"
        lines.append(f'  memref.global "private" constant @{name} : {ty} = dense<{rows}>')
    xs = [x_row(t) for t in range(TOKENS)]
    add("in_xs", [TOKENS, K], xs, "f32")
    add("in_xb", [TOKENS, K], xs, "bf16")
    add("in_w", [ROWS, K], [w_row(r) for r in range(ROWS)], "bf16")
    lines += [
        "  func.func @main() {",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        f"    %nt = arith.constant {TOKENS} : index",
        f"    %nr = arith.constant {ROWS} : index",
        f"    %xs_s = memref.get_global @in_xs : memref<{TOKENS}x{K}xf32>",
        f"    %xs = memref.cast %xs_s : memref<{TOKENS}x{K}xf32> to memref<?x{K}xf32>",
        f"    %xb_s = memref.get_global @in_xb : memref<{TOKENS}x{K}xbf16>",
        f"    %xb = memref.cast %xb_s : memref<{TOKENS}x{K}xbf16> to memref<?x{K}xbf16>",
        f"    %w = memref.get_global @in_w : memref<{ROWS}x{K}xbf16>",
        f"    %out = memref.alloc(%nt) : memref<?x{ROWS}xbf16>",
        f"    call @sgc_linear_{ROWS}x{K}_bf16_bf16_dot(%xs, %xb, %w, %out, %c0, %nr)"
        f" : (memref<?x{K}xf32>, memref<?x{K}xbf16>, memref<{ROWS}x{K}xbf16>,"
        f" memref<?x{ROWS}xbf16>, index, index) -> ()",
        "    scf.for %t = %c0 to %nt step %c1 {",
        "      scf.for %r = %c0 to %nr step %c1 {",
        f"        %v = memref.load %out[%t, %r] : memref<?x{ROWS}xbf16>",
        "        %f = arith.extf %v : bf16 to f32",
        "        vector.print %f : f32",
        "      }",
        "    }",
        "    return",
        "  }",
        "}"]
    print("\n".join(lines))


def check(output_path):
    got = [float(v) for v in open(output_path).read().split()]
    if len(got) != TOKENS * ROWS:
        print(f"FAIL: {len(got)} values, expected {TOKENS * ROWS}")
        return 1
    want = [reference(t, r) for t in range(TOKENS) for r in range(ROWS)]
    other = [sequential(t, r) for t in range(TOKENS) for r in range(ROWS)]
    differ = sum(w != o for w, o in zip(want, other))
    bad = [(i // ROWS, i % ROWS, g, w)
           for i, (g, w) in enumerate(zip(got, want)) if g != w]
    for t, r, g, w in bad[:5]:
        print(f"FAIL: token {t} row {r}: {g}, expected {w}")
    print(f"{len(got) - len(bad)} of {len(got)} values in vdpbf16ps's order "
          f"({differ} of them differ in k order)")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "driver":
        driver(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(check(sys.argv[2]))
