#!/usr/bin/env python3
"""Checks that every kernel of a PTX file waits for its predecessor before
it touches global memory, so it may be launched with programmatic stream
serialization (PDL) without reading what the kernel before it is still
writing, or writing what that kernel still reads.

usage: check-pdl.py KERNELS.ptx

Per `.entry`: `griddepcontrol.wait` must be there, and no ld / st / atom /
red / cp.async / ldu / prefetch on global or generic addresses (anything
but .shared, .param, .local and .const) may come before it in the text.
The kernels are straight-line up to the wait (sgc-programmatic-launch
puts it first), so text order is execution order there. Prints one line
per failing kernel, an ok line with the count, then 'N passed, M failed'.
"""
import re
import sys

MEMORY = re.compile(r"^\s*(?:@!?%p\d+\s+)?(ld|st|atom|red|cp\.async|ldu|prefetch)\b([.\w]*)")
LOCAL_SPACES = (".shared", ".param", ".local", ".const")


def entries(text):
    """(name, body lines) of each .entry."""
    out = []
    for m in re.finditer(r"\.entry\s+(\w+)\s*\(", text):
        start = text.index("{", m.end())
        depth, i = 0, start
        while True:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append((m.group(1), text[start + 1:i].splitlines()))
    return out


def first_problem(lines):
    """None when the wait comes before any global access, else the reason."""
    for line in lines:
        if "griddepcontrol.wait" in line:
            return None
        m = MEMORY.match(line)
        if m and not any(s in m.group(2) for s in LOCAL_SPACES):
            return "'%s' before griddepcontrol.wait" % line.strip()
    return "no griddepcontrol.wait"


def main():
    text = open(sys.argv[1]).read()
    kernels = entries(text)
    failed = 0
    for name, lines in kernels:
        problem = first_problem(lines)
        if problem:
            print("FAIL: %s: %s" % (name, problem))
            failed += 1
    passed = 1 if kernels and not failed else 0
    if not kernels:
        print("FAIL: no .entry in %s" % sys.argv[1])
        failed += 1
    elif not failed:
        print("ok: %d kernels wait for their predecessor before any global "
              "memory access" % len(kernels))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
