#!/usr/bin/env python3
"""Writes crafted inputs for compare-logits-rows-selftest.test under OUTDIR:
a sampled golden (the layout of examples/tiny-gemma4/long.golden.safetensors)
and dumps in sgc-run --dump-logits's layout, each but valid.st with one
defect compare-logits.py --rows must fail on. Standard library only; the
writer and the row maker are compare-logits-selftest.py's.

usage: compare-logits-rows-selftest.py OUTDIR
"""
import copy
import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location(
    "selftest", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "compare-logits-selftest.py"))
selftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(selftest)
write_safetensors, logits, V = (selftest.write_safetensors, selftest.logits,
                                selftest.V)

S, N = 3, 5                # prompt rows, decode rows: positions 0..7
POSITIONS = [0, 4, 6, 7]   # sampled: a prompt row, decode rows


def golden(path, positions=POSITIONS, drop=(), bf16=None):
    rows = logits(S + N + 1, 0)  # one more, for a position beyond the end
    tensors = {
        "prompt_ids": ("prompt_ids", "I32", [S], list(range(10, 10 + S))),
        "feed_ids": ("feed_ids", "I32", [N], list(range(20, 20 + N))),
        "positions": ("positions", "I32", [len(positions)], positions),
        "logits_f32": ("logits_f32", "F32", [len(positions), V],
                       [rows[p] for p in positions]),
    }
    if bf16:
        # A bf16 run off the f32 one by `bf16` of each row's range (its B).
        rows16 = copy.deepcopy(rows)
        for r in rows16:
            r[1] += bf16 * (max(r) - min(r))
        tensors["logits_bf16"] = ("logits_bf16", "F32", [len(positions), V],
                                  [rows16[p] for p in positions])
        rows = rows16
    for name in drop:
        del tensors[name]
    write_safetensors(path, list(tensors.values()))
    return rows[:S + N]


def dump(path, rows, prompt=None, decode_rows=N, generated=None):
    write_safetensors(path, [
        ("prefill_logits", "F32", [S, V], rows[:S]),
        ("decode_logits", "F32", [decode_rows, V], rows[S:S + decode_rows]),
        ("prompt_ids", "I32", [S], prompt or list(range(10, 10 + S))),
        ("generated_ids", "I32", [N + 1], generated or [0] * (N + 1))])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def at(name):
        return os.path.join(out, name)

    ref = golden(at("golden.st"))
    golden(at("golden-unordered.st"), [0, 6, 4, 7])
    golden(at("golden-beyond.st"), [0, 4, 6, 8])
    golden(at("golden-no-feed.st"), drop=["feed_ids"])

    def changed(p, j, value=None, by=0.0):
        rows = copy.deepcopy(ref)
        span = max(ref[p]) - min(ref[p])
        rows[p][j] = value if value is not None else rows[p][j] + by * span
        return rows[:S + N]

    dump(at("valid.st"), changed(4, 2, by=1e-6))
    # An unsampled position is not compared, however wrong.
    dump(at("unsampled-off.st"), changed(5, 1, by=10.0))
    dump(at("sampled-off.st"), changed(6, 3, by=3e-4))
    dump(at("nan.st"), changed(7, 2, value=float("nan")))
    # Every row one position late: the comparator must not pick rows by
    # index into the dump's decode rows alone.
    dump(at("shifted.st"), ref[:S] + [ref[S - 1]] + ref[S:-1])
    dump(at("short.st"), ref, decode_rows=N - 1)
    dump(at("other-prompt.st"), ref, prompt=[10, 11, 13])
    # --greedy: the generated ids start with feed_ids (20..24), then one more.
    dump(at("greedy.st"), changed(4, 2, by=1e-6),
         generated=list(range(20, 20 + N)) + [7])
    # --dtype bf16: B = 2e-3 from the golden's own two runs; ours 1.5e-3
    # from its bf16 row passes, 3e-3 fails.
    ref16 = golden(at("golden-bf16.st"), bf16=2e-3)

    def changed16(p, by):
        rows = copy.deepcopy(ref16)
        rows[p][3] += by * (max(ref16[p]) - min(ref16[p]))
        return rows[:S + N]

    dump(at("bf16-near.st"), changed16(6, 1.5e-3))
    dump(at("bf16-far.st"), changed16(6, 3e-3))


if __name__ == "__main__":
    main()
