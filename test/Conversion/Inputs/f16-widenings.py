#!/usr/bin/env python3
"""Reads lowered IR on stdin and says whether each widening of an f16 value
to f32 (`arith.extf ... f16 to f32`, scalar or vector) is rounded to bf16 on
the next line: `f16 widenings: N, rounded to bf16: all|none|some`."""
import re
import sys

lines = sys.stdin.read().splitlines()
widen = [i for i, l in enumerate(lines)
         if re.search(r"arith\.extf .*: (vector<\d+xf16>|f16) to", l)]
rounded = [i for i in widen if i + 1 < len(lines)
           and re.search(r"arith\.truncf .* to (vector<\d+xbf16>|bf16)$", lines[i + 1])]
kind = "all" if len(rounded) == len(widen) else "none" if not rounded else "some"
print("f16 widenings: %d, rounded to bf16: %s" % (len(widen), kind))
