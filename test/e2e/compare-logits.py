#!/usr/bin/env python3
"""Compares logits dumped by sgc-run with a Hugging Face golden.

Standard library only (tests must not need torch or numpy). The tolerance
rule is ARCHITECTURE.md §7, per position over the vocabulary:
  f32:  max|d| <= 1e-4 * (max - min of the reference row)
  bf16: max|d| <= B * (max - min), B = the reference's own bf16-vs-f32
        difference (meta.json bf16_vs_f32.max) times --bf16-factor
Greedy tokens must equal the reference's: argmax of our prefill's last row
is decode_ids[0], argmax of our decode row k is decode_ids[k+1].

A comparison fails, never passes by default, when a value is not finite
(ours or the reference's), the shapes differ, a row is missing or short, a
reference row has range 0 (the rule divides by it), or there is no row at
all; a tensor that is absent, of another dtype or inconsistent with its
header fails with a message naming it.

usage: compare-logits.py --golden DIR --dtype f32|bf16 --ours FILE
                         [--ours-ref FILE] [--prefill-only] [--soft-tokens]
       compare-logits.py --rows FILE --dtype f32|bf16 --ours FILE [--greedy]
With --rows FILE (a sampled golden such as examples/tiny-gemma4/
long.golden.safetensors: prompt_ids I32 [S], feed_ids I32 [N], positions
I32 [R] increasing, logits_f32 F32 [R,V]), our dump must hold S prefill rows
and N decode rows (positions 0..S+N-1, the prompt equal to prompt_ids) and
only the rows at `positions` are compared, with the f32 rule. --dtype bf16
compares the golden's logits_bf16 instead, with B the golden's own largest
bf16-vs-f32 difference over its rows (times --bf16-factor). --greedy (feed_ids
are the reference's greedy tokens): our generated_ids must start with them.
Prints one line per check and 'N passed, M failed'; exits 1 on a failure.
"""
import argparse
import array
import json
import math
import os
import struct
import sys


class BadInput(Exception):
    """A file or tensor the checks cannot even start on."""


class Tensor:
    def __init__(self, dtype, shape, values):
        self.dtype = dtype
        self.shape = shape
        self.values = values  # None for a dtype this script does not decode


def read_safetensors(path):
    """Returns {name: Tensor}; F32 and I32 values are decoded and checked
    against the shape, other dtypes are listed with values None."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")
    if len(data) < 8:
        raise BadInput(f"{path}: not a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + n])
    except ValueError:
        raise BadInput(f"{path}: malformed header")
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape = info["dtype"], list(info["shape"])
            begin, end = info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise BadInput(f"{path}: malformed header entry '{name}'")
        code = {"F32": "f", "I32": "i"}.get(dtype)
        if code is None:
            out[name] = Tensor(dtype, shape, None)
            continue
        count = math.prod(shape)
        if not 0 <= begin <= end <= len(body) or end - begin != 4 * count:
            raise BadInput(f"{path}: '{name}' {dtype} {shape} needs "
                           f"{4 * count} bytes, its offsets [{begin}, {end}) "
                           f"hold {end - begin} of a {len(body)}-byte body")
        values = array.array(code)
        values.frombytes(body[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        out[name] = Tensor(dtype, shape, values)
    return out


def tensor(tensors, name, dtype, rank, where):
    """tensors[name], which must exist with |dtype| and |rank|."""
    t = tensors.get(name)
    if t is None:
        raise BadInput(f"{where}: no tensor '{name}'")
    if t.dtype != dtype or len(t.shape) != rank:
        raise BadInput(f"{where}: '{name}' is {t.dtype} {t.shape}, expected "
                       f"{dtype} of rank {rank}")
    return t


def rows(t):
    count, width = t.shape
    return [t.values[i * width:(i + 1) * width] for i in range(count)]


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


def first_non_finite(row):
    for j, v in enumerate(row):
        if not math.isfinite(v):
            return j
    return None


def compare_rows(checks, what, ours, ref, bound, row_names=None):
    """Every row of |ours| against |ref| (2-D Tensors): passes only if all
    rows were compared and each is within |bound|. |row_names[i]| names row
    i in the messages (default 'row i')."""
    name = (lambda i: f"row {i}") if row_names is None else row_names.__getitem__
    if ours.shape != ref.shape:
        checks.check(False, f"{what}: shape {ours.shape}, reference has "
                            f"{ref.shape}")
        return
    count, width = ours.shape
    if count == 0 or width == 0:
        checks.check(False, f"{what}: shape {ours.shape}: nothing to compare")
        return
    worst = 0.0
    worst_row = -1
    for i, (a, b) in enumerate(zip(rows(ours), rows(ref))):
        for side, row in (("ours", a), ("reference", b)):
            j = first_non_finite(row)
            if j is not None:
                checks.check(False, f"{what}: {name(i)} column {j}: {side} is "
                                    f"{row[j]}")
                return
        span = max(b) - min(b)
        if not span > 0:
            checks.check(False, f"{what}: {name(i)}: the reference's range is "
                                f"{span}, the tolerance needs it > 0")
            return
        err = max(abs(x - y) for x, y in zip(a, b)) / span
        if err > worst:
            worst, worst_row = err, i
    checks.check(worst <= bound,
                 f"{what}: {count} rows, max|d|/range = {worst:.3e} "
                 f"({name(worst_row)}) <= {bound:.3e}")


def check_greedy(checks, our_rows, expected, message):
    """argmax of each row equals |expected| (same length; no row: fail)."""
    got = [argmax(r) for r in our_rows]
    checks.check(len(got) > 0 and got == expected, message(got))


def meta_value(meta, *keys):
    value = meta
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise BadInput(f"meta.json: no {'.'.join(keys)}")
        value = value[key]
    return value


def run(args, checks):
    golden_file = os.path.join(args.golden, "golden.safetensors")
    golden = read_safetensors(golden_file)
    with open(os.path.join(args.golden, "meta.json")) as f:
        meta = json.load(f)
    ours = read_safetensors(args.ours)
    dt = args.dtype
    bound = (1e-4 if dt == "f32" else
             args.bf16_factor * meta_value(meta, "bf16_vs_f32", "max"))

    our_prefill = tensor(ours, "prefill_logits", "F32", 2, args.ours)
    compare_rows(checks, f"prefill logits ({dt})", our_prefill,
                 tensor(golden, f"prefill_logits_{dt}", "F32", 2, golden_file),
                 bound)
    decode_ids = list(tensor(golden, f"decode_ids_{dt}", "I32", 1,
                             golden_file).values)
    last = rows(our_prefill)[-1:]
    check_greedy(checks, last, decode_ids[:1],
                 lambda got: f"greedy token after the prompt: "
                             f"{got[0] if got else None} == "
                             f"{decode_ids[0] if decode_ids else None}")
    if not args.prefill_only:
        our_decode = tensor(ours, "decode_logits", "F32", 2, args.ours)
        compare_rows(checks, f"decode logits ({dt})", our_decode,
                     tensor(golden, f"decode_logits_{dt}", "F32", 2,
                            golden_file),
                     bound)
        expected = decode_ids[1:] + [meta_value(meta, "next_id_after_decode", dt)]
        check_greedy(checks, rows(our_decode), expected,
                     lambda got: f"greedy tokens of {len(got)} decode steps "
                                 f"equal the reference's")
    if args.soft_tokens:
        compare_soft_tokens(args, checks, golden, golden_file, ours)
    if args.ours_ref:
        other = read_safetensors(args.ours_ref)
        compare_rows(checks, "prefill logits vs our single-chunk run",
                     our_prefill,
                     tensor(other, "prefill_logits", "F32", 2, args.ours_ref),
                     1e-4)


def compare_soft_tokens(args, checks, golden, golden_file, ours):
    """--soft-tokens: the vision tower's output (our image_soft_tokens)
    against the golden's soft_tokens_<dtype>. f32: 1e-4 of each row's
    range; bf16: the reference's own bf16-vs-f32 difference of its soft
    tokens, per row over the bf16 row's range, times --bf16-factor."""
    dt = args.dtype
    ref = tensor(golden, f"soft_tokens_{dt}", "F32", 2, golden_file)
    bound = 1e-4
    if dt == "bf16":
        f32 = tensor(golden, "soft_tokens_f32", "F32", 2, golden_file)
        own = 0.0
        for a, b in zip(rows(ref), rows(f32)):
            span = max(a) - min(a)
            if span > 0:
                own = max(own, max(abs(x - y) for x, y in zip(a, b)) / span)
        bound = args.bf16_factor * own
    compare_rows(checks, f"image soft tokens ({dt})",
                 tensor(ours, "image_soft_tokens", "F32", 2, args.ours), ref,
                 bound)


def run_sampled(args, checks):
    """--rows: the sampled rows of a long golden against the same positions
    of our dump (prefill rows, then decode rows)."""
    golden = read_safetensors(args.rows)
    prompt = list(tensor(golden, "prompt_ids", "I32", 1, args.rows).values)
    feed = tensor(golden, "feed_ids", "I32", 1, args.rows)
    positions = list(tensor(golden, "positions", "I32", 1, args.rows).values)
    ref = tensor(golden, "logits_f32", "F32", 2, args.rows)
    bound = 1e-4
    if args.dtype == "bf16":
        # The reference's own bf16-vs-f32 difference is the rule's B.
        f32 = ref
        ref = tensor(golden, "logits_bf16", "F32", 2, args.rows)
        bound = args.bf16_factor * max(
            max(abs(x - y) for x, y in zip(a, b)) / (max(b) - min(b))
            for a, b in zip(rows(ref), rows(f32)))
    total = len(prompt) + feed.shape[0]
    if (not positions or ref.shape[0] != len(positions)
            or any(b <= a for a, b in zip(positions, positions[1:]))
            or positions[0] < 0 or positions[-1] >= total):
        raise BadInput(f"{args.rows}: positions must be increasing, within "
                       f"[0, {total}) and one per row of logits_f32 "
                       f"{ref.shape}")
    ours = read_safetensors(args.ours)
    our_prompt = list(tensor(ours, "prompt_ids", "I32", 1, args.ours).values)
    checks.check(our_prompt == prompt,
                 f"prompt ids ({len(our_prompt)}) equal the golden's "
                 f"({len(prompt)})")
    our_prefill = tensor(ours, "prefill_logits", "F32", 2, args.ours)
    our_decode = tensor(ours, "decode_logits", "F32", 2, args.ours)
    width = ref.shape[1]
    want = [[len(prompt), width], [feed.shape[0], width]]
    got = [our_prefill.shape, our_decode.shape]
    if got != want:
        checks.check(False, f"sampled logits ({args.dtype}): prefill and "
                            f"decode shapes {got}, the golden needs {want}")
        return
    if args.greedy:
        generated = list(tensor(ours, "generated_ids", "I32", 1,
                                args.ours).values)
        checks.check(generated[:feed.shape[0]] == list(feed.values),
                     f"greedy tokens {generated} start with the golden's "
                     f"{list(feed.values)}")
    all_rows = rows(our_prefill) + rows(our_decode)
    picked = array.array("f")
    for p in positions:
        picked.extend(all_rows[p])
    compare_rows(checks, f"sampled logits ({args.dtype}) at positions "
                         f"{positions[0]}..{positions[-1]} of {total}",
                 Tensor("F32", list(ref.shape), picked), ref, bound,
                 [f"position {p}" for p in positions])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--golden")
    p.add_argument("--rows", help="a sampled golden (see the usage above); "
                                  "replaces --golden")
    p.add_argument("--dtype", choices=["f32", "bf16"], required=True)
    p.add_argument("--ours", required=True)
    p.add_argument("--ours-ref", help="another run of ours to match (f32 bound)")
    p.add_argument("--prefill-only", action="store_true")
    p.add_argument("--soft-tokens", action="store_true",
                   help="also compare the vision tower's output")
    p.add_argument("--bf16-factor", type=float, default=1.0)
    p.add_argument("--greedy", action="store_true",
                   help="--rows: feed_ids are greedy tokens ours must match")
    args = p.parse_args()
    if (args.golden is None) == (args.rows is None):
        p.error("give one of --golden and --rows")
    if args.rows and (args.ours_ref or args.prefill_only):
        p.error("--rows compares without --ours-ref or --prefill-only")
    if args.greedy and not args.rows:
        p.error("--greedy applies to --rows")

    checks = Checks()
    try:
        run_sampled(args, checks) if args.rows else run(args, checks)
    except BadInput as e:
        checks.check(False, str(e))
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
