#!/usr/bin/env python3
"""Compares logits dumped by sgc-run with a Hugging Face golden.

Standard library only (tests must not need torch or numpy). The tolerance
rule is ARCHITECTURE.md §7, per position over the vocabulary:
  f32:  max|d| <= 1e-4 * (max - min of the reference row)
  bf16: max|d| <= B * (max - min), B = the reference's own bf16-vs-f32
        difference (meta.json bf16_vs_f32.max) times --bf16-factor
Greedy tokens must equal the reference's: argmax of our prefill's last row
is decode_ids[0], argmax of our decode row k is decode_ids[k+1].

usage: compare-logits.py --golden DIR --dtype f32|bf16 --ours FILE
                         [--ours-ref FILE] [--prefill-only]
Prints one line per check and 'N passed, M failed'; exits 1 on a failure.
"""
import argparse
import array
import json
import os
import struct
import sys


def read_safetensors(path):
    """Returns {name: (dtype, shape, values)} for F32 and I32 tensors."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        code = {"F32": "f", "I32": "i"}.get(info["dtype"])
        if code is None:
            continue
        values = array.array(code)
        values.frombytes(body[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        out[name] = (info["dtype"], info["shape"], values)
    return out


def rows(tensor):
    _, shape, values = tensor
    width = shape[-1]
    return [values[i * width:(i + 1) * width] for i in range(len(values) // width)]


def argmax(row):
    best = 0
    for i, v in enumerate(row):
        if v > row[best]:
            best = i
    return best


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, message):
        print(("ok: " if ok else "FAIL: ") + message)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def compare_rows(checks, what, ours, ref, bound):
    if len(ours) != len(ref):
        checks.check(False, f"{what}: {len(ours)} rows, reference has {len(ref)}")
        return
    worst = 0.0
    worst_row = -1
    for i, (a, b) in enumerate(zip(ours, ref)):
        span = max(b) - min(b)
        err = max(abs(x - y) for x, y in zip(a, b)) / span
        if err > worst:
            worst, worst_row = err, i
    checks.check(worst <= bound,
                 f"{what}: {len(ours)} rows, max|d|/range = {worst:.3e} "
                 f"(row {worst_row}) <= {bound:.3e}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--golden", required=True)
    p.add_argument("--dtype", choices=["f32", "bf16"], required=True)
    p.add_argument("--ours", required=True)
    p.add_argument("--ours-ref", help="another run of ours to match (f32 bound)")
    p.add_argument("--prefill-only", action="store_true")
    p.add_argument("--bf16-factor", type=float, default=1.0)
    args = p.parse_args()

    golden = read_safetensors(os.path.join(args.golden, "golden.safetensors"))
    with open(os.path.join(args.golden, "meta.json")) as f:
        meta = json.load(f)
    ours = read_safetensors(args.ours)
    dt = args.dtype
    bound = 1e-4 if dt == "f32" else args.bf16_factor * meta["bf16_vs_f32"]["max"]
    checks = Checks()

    ref_prefill = rows(golden[f"prefill_logits_{dt}"])
    our_prefill = rows(ours["prefill_logits"])
    compare_rows(checks, f"prefill logits ({dt})", our_prefill, ref_prefill, bound)
    decode_ids = list(golden[f"decode_ids_{dt}"][2])
    checks.check(argmax(our_prefill[-1]) == decode_ids[0],
                 f"greedy token after the prompt: {argmax(our_prefill[-1])} "
                 f"== {decode_ids[0]}")
    if not args.prefill_only:
        ref_decode = rows(golden[f"decode_logits_{dt}"])
        our_decode = rows(ours["decode_logits"])
        compare_rows(checks, f"decode logits ({dt})", our_decode, ref_decode, bound)
        ours_greedy = [argmax(r) for r in our_decode]
        expected = decode_ids[1:] + [meta["next_id_after_decode"][dt]]
        checks.check(ours_greedy == expected,
                     f"greedy tokens of {len(ours_greedy)} decode steps equal "
                     f"the reference's")
    if args.ours_ref:
        other = read_safetensors(args.ours_ref)
        compare_rows(checks, "prefill logits vs our single-chunk run",
                     our_prefill, rows(other["prefill_logits"]), 1e-4)
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
