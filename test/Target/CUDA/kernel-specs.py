#!/usr/bin/env python3
"""Prints the kernel specs of `sgc compile --target=cuda:... --compile-to=lower`
output, one line per gpu.func: `NAME key=value ...`, for the scalar and
integer-array entries of its sg.kernel_spec (nested entries are left out).
sgc-emu-sample reads these lines to know what each kernel computes."""
import re
import sys

FUNC = re.compile(r"gpu\.func @(\w+)\(.*sg\.kernel_spec = \{(.*)\}\s*(\{|$)")
# key = value : type, or key = array<i64: a, b>, or key = "text"
ENTRY = re.compile(r'(\w+) = (array<i64: ([-0-9, ]+)>|"([^"]*)"|'
                   r'(true|false)|([-+0-9.eE]+)(?: : \w+)?)')


def top_level(spec):
    """The spec text with nested [...] and {...} removed."""
    out, depth = [], 0
    for ch in spec:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: kernel-specs.py LOWERED.mlir")
    found = 0
    for line in open(sys.argv[1]):
        m = FUNC.search(line)
        if not m:
            continue
        fields = []
        for e in ENTRY.finditer(top_level(m.group(2))):
            key, arr, text, boolean, num = e.group(1), e.group(3), \
                e.group(4), e.group(5), e.group(6)
            if arr is not None:
                value = ",".join(v.strip() for v in arr.split(","))
            elif text is not None:
                value = text
            elif boolean is not None:
                value = "1" if boolean == "true" else "0"
            else:
                value = num
            fields.append(f"{key}={value}")
        print(m.group(1), " ".join(fields))
        found += 1
    if not found:
        sys.exit(f"{sys.argv[1]}: no gpu.func with an sg.kernel_spec")


if __name__ == "__main__":
    main()
