"""Copies a safetensors file with every tensor name's prefix OLD replaced by
NEW (header rewritten, data bytes unchanged): a checkpoint that spells the
Gemma prefixes the other way. Usage: rename-tensors.py IN OUT OLD NEW"""
import json
import struct
import sys

src, dst, old, new = sys.argv[1:5]
with open(src, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
renamed = {}
for name, info in header.items():
    if name != "__metadata__" and name.startswith(old):
        name = new + name[len(old):]
    renamed[name] = info
text = json.dumps(renamed, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(dst, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
