#!/usr/bin/env python3
"""Compares the kernel parameters the launch table declares (`launch-table
--params MODEL.so` on stdin) with the PTX the kernels were assembled from
(`sgc compile --save-temps=DIR`: DIR/kernels.ptx): every kernel of the table
is an .entry of the PTX with exactly the declared number of parameters, each
a 64-bit value (the runtime passes one 8-byte address per operand), and the
PTX has no entry the table lacks. Prints what it found; exits 1 on a
difference."""
import re
import sys


def ptx_entries(path):
    text = open(path).read()
    entries = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\(([^)]*)\)", text):
        params = [p.strip() for p in m.group(2).split(",") if p.strip()]
        entries[m.group(1)] = params
    return entries


def main():
    if len(sys.argv) != 2:
        print("usage: launch-table --params MODEL.so | check-params.py DIR",
              file=sys.stderr)
        return 2
    entries = ptx_entries(sys.argv[1] + "/kernels.ptx")
    declared = {}
    failed = 0
    for line in sys.stdin:
        m = re.match(r"kernel (\w+) params (\d+)$", line.strip())
        if m:
            declared[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"steps: (\d+), operand counts differing from their "
                     r"kernel's: (\d+)$", line.strip())
        if m:
            print(f"{'ok' if m.group(2) == '0' else 'FAIL'}: {m.group(1)} "
                  f"steps, {m.group(2)} with another operand count than "
                  f"their kernel's")
            failed += m.group(2) != "0"
        elif line.startswith("step "):
            print("FAIL: " + line.strip())
    for name, count in sorted(declared.items()):
        params = entries.get(name)
        if params is None:
            print(f"FAIL: {name}: not an .entry of kernels.ptx")
            failed += 1
        elif len(params) != count:
            print(f"FAIL: {name}: {count} params declared, {len(params)} in "
                  f"the PTX")
            failed += 1
        elif not all(re.match(r"\.param\s+\.(u64|b64|s64)\s", p)
                     for p in params):
            print(f"FAIL: {name}: a parameter that is not 64-bit: {params}")
            failed += 1
    for name in sorted(set(entries) - set(declared)):
        print(f"FAIL: {name}: an .entry of kernels.ptx the table lacks")
        failed += 1
    total = sum(declared.values())
    if not failed:
        print(f"ok: {len(declared)} kernels, {total} params, all 64-bit, as "
              f"in the PTX")
    print("PASSED" if not failed else f"FAILED: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
