#!/usr/bin/env python3
"""Reads lowered IR on stdin and says whether each widening of an f16 value
to f32 (`arith.extf ... f16 to f32`, scalar or vector) is rounded to bf16 on
the next line (`arith.truncf` to bf16, or the vcvtneps2bf16 of the pair
rows and panels): `f16 widenings: N, rounded to bf16: all|none|some`."""
import re
import sys

lines = sys.stdin.read().splitlines()
widen = [i for i, l in enumerate(lines)
         if re.search(r"arith\.extf .*: (vector<\d+xf16>|f16) to", l)]
rounded = [i for i in widen if i + 1 < len(lines)
           and re.search(r"arith\.truncf .* to (vector<\d+xbf16>|bf16)$|"
                         r"x86vector\.avx512\.cvt\.packed\.f32_to_bf16 .* -> vector<\d+xbf16>$",
                         lines[i + 1])]
kind = "all" if len(rounded) == len(widen) else "none" if not rounded else "some"
print("f16 widenings: %d, rounded to bf16: %s" % (len(widen), kind))
