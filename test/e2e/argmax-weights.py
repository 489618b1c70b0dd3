#!/usr/bin/env python3
"""Writes a copy of a tiny model's safetensors whose (tied) embedding makes
every logit of a row equal, to check the argmax rule (NaN never wins, ties go
to the lowest id) on whatever computes it:

  argmax-weights.py IN OUT ties        every row = row 7: all logits equal
  argmax-weights.py IN OUT nan-first   the same, and row 0 NaN: logit 0 NaN

Equal rows give bit-equal logits (the same dot product, row by row). Standard
library only; the embedding must be BF16.
"""
import json
import struct
import sys

EMBEDDING = "model.language_model.embed_tokens.weight"


def main():
    src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(src, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header_bytes = f.read(n)
        data = bytearray(f.read())
    header = json.loads(header_bytes)
    info = header[EMBEDDING]
    if info["dtype"] != "BF16":
        sys.exit("argmax-weights.py: %s is %s, not BF16" %
                 (EMBEDDING, info["dtype"]))
    rows, width = info["shape"]
    begin, _ = info["data_offsets"]
    row_bytes = width * 2
    row7 = bytes(data[begin + 7 * row_bytes:begin + 8 * row_bytes])
    for r in range(rows):
        data[begin + r * row_bytes:begin + (r + 1) * row_bytes] = row7
    if mode == "nan-first":
        data[begin:begin + row_bytes] = struct.pack("<H", 0x7FC0) * width
    elif mode != "ties":
        sys.exit("argmax-weights.py: unknown mode " + mode)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", n))
        f.write(header_bytes)
        f.write(data)


if __name__ == "__main__":
    main()
