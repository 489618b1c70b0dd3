#!/usr/bin/env python3
"""scripts/device-check's graph step: one tiny model's three runs agree.

usage: graph_check.py --graph G.safetensors --eager E.safetensors
                      --device-tokens TOKENS.txt

The same greedy generation three times on the GPU:
  - TOKENS.txt: sgc-run's output with nothing reading the logits, so every
    decode token is the device's argmax (the LM head's last block);
  - G: with --dump-logits, decode replayed from the captured CUDA graph,
    every token the host's argmax of the row copied back;
  - E: the same, launched kernel by kernel (SGC_CUDA_PROFILE set).
Checks: G and E bit-identical (prefill and decode logits, generated ids);
the host's argmax of G's rows (NaN never wins, ties go to the lowest id,
the sampler's rule) is G's generated ids; the device's tokens equal them.
Prints one line per check, then 'N passed, M failed'; exit 1 on a failure,
2 on unreadable input. Standard library only.
"""
import argparse
import importlib.util
import math
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "compare_logits",
    os.path.join(_here, "..", "..", "test", "e2e", "compare-logits.py"))
compare_logits = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_logits)


def rule_argmax(row):
    """The sampler's greedy rule: NaN never wins, ties to the lowest id,
    0 for a row of NaN."""
    best = None
    for i, v in enumerate(row):
        if math.isnan(v):
            continue
        if best is None or v > row[best]:
            best = i
    return 0 if best is None else best


def first_difference(a, b):
    """(index, a[index], b[index]) of the first differing bits, or None."""
    if a.tobytes() == b.tobytes():
        return None
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and not (math.isnan(x) and math.isnan(y)):
            return i, x, y
    return len(a), None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", required=True)
    ap.add_argument("--eager", required=True)
    ap.add_argument("--device-tokens", required=True)
    a = ap.parse_args()
    try:
        g = compare_logits.read_safetensors(a.graph)
        e = compare_logits.read_safetensors(a.eager)
        with open(a.device_tokens) as f:
            device = [int(t) for t in f.read().split()]
        names = ("prefill_logits", "decode_logits", "generated_ids")
        for name in names:
            for path, ts in ((a.graph, g), (a.eager, e)):
                if name not in ts or ts[name].values is None:
                    raise compare_logits.BadInput(f"{path}: no {name}")
    except (compare_logits.BadInput, OSError, ValueError) as err:
        print(f"graph_check: {err}", file=sys.stderr)
        return 2
    checks = compare_logits.Checks()
    for name in names:
        gt, et = g[name], e[name]
        diff = first_difference(gt.values, et.values) if gt.shape == et.shape else (0, None, None)
        checks.check(diff is None,
                     f"{name} {gt.shape}: graph replay and launch by launch "
                     + ("bit-identical" if diff is None else
                        f"differ at element {diff[0]} ({diff[1]} vs {diff[2]})"
                        if gt.shape == et.shape else f"shapes {gt.shape} vs {et.shape}"))
    ids = list(g["generated_ids"].values)
    vocab = g["prefill_logits"].shape[1]
    last_prompt = g["prefill_logits"].values[-vocab:] if g["prefill_logits"].shape[0] else []
    rows = [last_prompt] + compare_logits.rows(g["decode_logits"])
    host = [rule_argmax(r) for r in rows[:len(ids)]]
    checks.check(host == ids,
                 f"the host's argmax of each dumped row is the generated id ({len(ids)} tokens)"
                 + ("" if host == ids else f": {host} vs {ids}"))
    checks.check(device == ids,
                 f"the device's argmax tokens equal the host's ({len(device)} tokens)"
                 + ("" if device == ids else f": device {device} vs host {ids}"))
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
