#!/usr/bin/env python3
"""Writes crafted inputs for compare-logits-selftest.test under OUTDIR.

usage: compare-logits-selftest.py OUTDIR

OUTDIR/golden*/ are golden directories (golden.safetensors + meta.json) in
the layout of examples/tiny-*; OUTDIR/*.st are dumps in sgc-run
--dump-logits's layout. Each file but valid.st and golden/ carries one
defect the comparator must fail on. Standard library only.
"""
import copy
import json
import math
import os
import struct
import sys

S, N, V = 3, 2, 8  # prompt rows, decode rows, vocabulary
BF16_MAX = 0.01    # meta.json bf16_vs_f32.max: the bf16 bound


def logits(rows, seed):
    """Distinct, smooth, non-constant rows of V values."""
    return [[3.0 * math.sin(seed + 7 * i + 1.3 * j) + 0.1 * j
             for j in range(V)] for i in range(rows)]


def argmax(row):
    return max(range(len(row)), key=lambda j: (row[j], -j))


def write_safetensors(path, tensors):
    """tensors: [(name, dtype, shape, values)]; values is a list of numbers
    or of rows (F32, I32, F16), or raw bytes written as given (to craft a
    size that does not match the shape)."""
    header, body = {}, b""
    for name, dtype, shape, values in tensors:
        if isinstance(values, bytes):
            data = values
        else:
            flat = list(values)
            if flat and isinstance(flat[0], list):  # rows
                flat = [v for row in flat for v in row]
            code = {"F32": "f", "I32": "i", "F16": "e"}[dtype]
            data = struct.pack(f"<{len(flat)}{code}", *flat)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(body), len(body) + len(data)]}
        body += data
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body)


def f32(name, values):
    return (name, "F32", [len(values), len(values[0]) if values else V],
            values)


class Golden:
    def __init__(self):
        self.prefill = logits(S, 0)
        self.decode = logits(N, 100)
        ids = [argmax(self.prefill[-1])] + [argmax(r) for r in self.decode]
        self.decode_ids = ids[:N]
        self.next_id = ids[N]

    def write(self, directory, replace=None):
        os.makedirs(directory, exist_ok=True)
        tensors = {}
        for dt in ("f32", "bf16"):
            tensors[f"prefill_logits_{dt}"] = f32(f"prefill_logits_{dt}",
                                                  self.prefill)
            tensors[f"decode_logits_{dt}"] = f32(f"decode_logits_{dt}",
                                                 self.decode)
            tensors[f"decode_ids_{dt}"] = (f"decode_ids_{dt}", "I32", [N],
                                           self.decode_ids)
        tensors.update(replace or {})
        write_safetensors(os.path.join(directory, "golden.safetensors"),
                          list(tensors.values()))
        meta = {"bf16_vs_f32": {"max": BF16_MAX},
                "next_id_after_decode": {"f32": self.next_id,
                                         "bf16": self.next_id}}
        with open(os.path.join(directory, "meta.json"), "w") as f:
            json.dump(meta, f)


def dump(path, prefill, decode, replace=None, drop=()):
    tensors = {"prefill_logits": f32("prefill_logits", prefill),
               "decode_logits": f32("decode_logits", decode),
               "prompt_ids": ("prompt_ids", "I32", [S], list(range(S))),
               "generated_ids": ("generated_ids", "I32", [N], [0] * N)}
    tensors.update(replace or {})
    for name in drop:
        del tensors[name]
    write_safetensors(path, list(tensors.values()))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    g = Golden()
    g.write(os.path.join(out, "golden"))

    def at(path):
        return os.path.join(out, path)

    # Within tolerance, not identical: row 1 is off by 1e-6 of its range.
    pre, dec = copy.deepcopy(g.prefill), copy.deepcopy(g.decode)
    pre[1][2] += 1e-6 * (max(pre[1]) - min(pre[1]))
    dump(at("valid.st"), pre, dec)

    def with_value(rows_of, i, j, value):
        rows_ = copy.deepcopy(rows_of)
        rows_[i][j] = value
        return rows_

    nan = float("nan")
    dump(at("nan-first.st"), with_value(g.prefill, 0, 0, nan), g.decode)
    dump(at("nan-middle.st"), with_value(g.prefill, 1, V // 2, nan), g.decode)
    dump(at("nan-last.st"), g.prefill, with_value(g.decode, N - 1, V - 1, nan))
    dump(at("inf.st"), with_value(g.prefill, 2, 3, float("-inf")), g.decode)
    # Every row one column short: the last column goes uncompared by zip.
    dump(at("short-row.st"), [r[:-1] for r in g.prefill], g.decode)
    # The header says [S, V]; the data ends 2 values into the last row.
    flat = [v for r in g.prefill for v in r][:V * (S - 1) + 2]
    dump(at("partial-row.st"), g.prefill, g.decode,
         replace={"prefill_logits": ("prefill_logits", "F32", [S, V],
                                     struct.pack(f"<{len(flat)}f", *flat))})
    dump(at("missing-row.st"), g.prefill, g.decode[:-1])
    shifted = copy.deepcopy(g.prefill)
    shifted[1] = shifted[1][1:] + shifted[1][:1]
    dump(at("shifted-row.st"), shifted, g.decode)
    dump(at("wrong-dtype.st"), g.prefill, g.decode,
         replace={"prefill_logits": ("prefill_logits", "F16", [S, V],
                                     [v for r in g.prefill for v in r])})
    dump(at("missing-tensor.st"), g.prefill, g.decode, drop=["decode_logits"])
    dump(at("empty-decode.st"), g.prefill, [])

    # Defects on the reference's side, against an exact copy of ours.
    dump(at("copy.st"), g.prefill, g.decode)
    g.write(at("golden-nan"), replace={
        "prefill_logits_f32": f32("prefill_logits_f32",
                                  with_value(g.prefill, 1, V // 2, nan))})
    constant = copy.deepcopy(g.prefill)
    constant[0] = [1.5] * V
    g.write(at("golden-constant"), replace={
        "prefill_logits_f32": f32("prefill_logits_f32", constant)})
    dump(at("constant.st"), constant, g.decode)
    g.write(at("golden-dtype"), replace={
        "decode_logits_f32": ("decode_logits_f32", "F16", [N, V],
                              [v for r in g.decode for v in r])})
    g.write(at("golden-empty-decode"), replace={
        "decode_logits_f32": ("decode_logits_f32", "F32", [0, V], []),
        "decode_ids_f32": ("decode_ids_f32", "I32", [1], g.decode_ids[:1])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
