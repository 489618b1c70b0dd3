# Prints a safetensors file's tensors (name dtype shape), sorted, and the
# first values of the named I64 tensor, for FileCheck. Standard library only.
import json
import struct
import sys

with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    head = json.loads(f.read(n))
    base = 8 + n
    for name in sorted(k for k in head if k != "__metadata__"):
        t = head[name]
        print(name, t["dtype"], t["shape"])
    if len(sys.argv) > 2:
        t = head[sys.argv[2]]
        f.seek(base + t["data_offsets"][0])
        count = int(sys.argv[3])
        print(sys.argv[2], list(struct.unpack(f"<{count}q", f.read(8 * count))))
