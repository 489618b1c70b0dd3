#!/usr/bin/env python3
"""Prints an I32 tensor of a safetensors file as token ids:
`tensor-ids.py FILE KEY [SEP]` (e.g. long.golden.safetensors prompt_ids,
feed_ids; SEP default ','). Standard library only; exits 1 when the tensor
is absent, not I32 of rank 1, or its bytes do not match its shape."""
import array
import json
import struct
import sys

path, key = sys.argv[1], sys.argv[2]
sep = sys.argv[3] if len(sys.argv) > 3 else ","
with open(path, "rb") as f:
    data = f.read()
(n,) = struct.unpack("<Q", data[:8])
info = json.loads(data[8:8 + n]).get(key)
if not info or info["dtype"] != "I32" or len(info["shape"]) != 1:
    sys.exit(f"error: {path}: no I32 vector '{key}'")
begin, end = info["data_offsets"]
if end - begin != 4 * info["shape"][0] or 8 + n + end > len(data):
    sys.exit(f"error: {path}: '{key}' does not match its shape")
values = array.array("i")
values.frombytes(data[8 + n + begin:8 + n + end])
if sys.byteorder != "little":
    values.byteswap()
print(sep.join(str(v) for v in values))
