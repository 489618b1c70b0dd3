#!/usr/bin/env python3
"""Reads `nm -D --undefined-only` output and fails unless every strong
undefined symbol is a versioned glibc symbol (libc, libm, the dynamic
loader). Standard library only."""
import sys

bad = []
with open(sys.argv[1]) as f:
    for line in f:
        parts = line.split()
        if not parts:
            continue
        kind, name = parts[-2], parts[-1]
        if kind in ("w", "v"):  # weak references (crt hooks) need nothing
            continue
        if "@GLIBC_" not in name:
            bad.append(name)
for name in bad:
    print(f"not a libc/libm symbol: {name}")
print(f"{0 if bad else 1} passed, {1 if bad else 0} failed")
sys.exit(1 if bad else 0)
