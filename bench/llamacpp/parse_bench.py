"""llama-bench's JSON (-o json, stdin) as the key=value lines bench/b1 reads.

One test per run: decode (n_gen > 0, n_prompt 0) gives decode_steps and
decode_ms_median (the median repetition / n_gen); prefill (n_prompt > 0,
n_gen 0) gives prefill_tokens and prefill_s_median (the median repetition).
A malformed or unexpected report is an error naming what is missing.
"""

import json
import statistics
import sys

try:
    tests = json.load(sys.stdin)
    t = tests[0]
    samples = [int(s) for s in t["samples_ns"]]
    n_prompt, n_gen, threads = int(t["n_prompt"]), int(t["n_gen"]), int(t["n_threads"])
    commit = t["build_commit"]
except (ValueError, LookupError, TypeError) as e:
    sys.exit(f"parse_bench: llama-bench JSON on stdin: {type(e).__name__}: {e}")
if len(tests) != 1 or not samples or (n_prompt > 0) == (n_gen > 0):
    sys.exit(f"parse_bench: expected one prompt-only or generate-only test, got {len(tests)} "
             f"(n_prompt {n_prompt}, n_gen {n_gen}, {len(samples)} samples)")
med = statistics.median(samples)
print(f"threads={threads}")
print(f"variant=llama.cpp {commit}")
if n_gen:
    print(f"decode_steps={n_gen}")
    print(f"decode_ms_median={med / n_gen / 1e6:.3f}")
else:
    print(f"prefill_tokens={n_prompt}")
    print(f"prefill_s_median={med / 1e9:.4f}")
