"""Writes a broken copy of a compressed-tensors folder (config.json and
model.safetensors) for the error tests, with the Python standard library.

usage: ct-variants.py SRC DST EDIT [EDIT ...]
  config:KEY.KEY...=JSON  set a key of config.json (created if absent)
  drop:TENSOR             leave the tensor out
  shape:TENSOR=D,D        give the tensor that shape (its bytes cut or zero-padded)
  add:TENSOR=DTYPE:D,D    add a tensor of zeros
  poke:TENSOR=OFFSET:BYTE set one byte of the tensor's data
  f32:SUFFIX              every BF16 tensor whose name ends in SUFFIX as F32 (exact)
"""
import json
import os
import struct
import sys

SIZE = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "I64": 8, "F8_E4M3": 1, "I8": 1, "U8": 1}

src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
with open(os.path.join(src, "config.json")) as f:
    config = json.load(f)
with open(os.path.join(src, "model.safetensors"), "rb") as f:
    data = f.read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
meta = header.pop("__metadata__", None)
body = data[8 + n:]
tensors = {k: [v["dtype"], v["shape"], bytearray(body[v["data_offsets"][0]:v["data_offsets"][1]])]
           for k, v in header.items()}

for edit in sys.argv[3:]:
    kind, arg = edit.split(":", 1)
    if kind == "config":
        path, value = arg.split("=", 1)
        keys = path.split(".")
        node = config
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = json.loads(value)
    elif kind == "drop":
        del tensors[arg]
    elif kind == "shape":
        name, dims = arg.split("=")
        shape = [int(d) for d in dims.split(",")]
        t = tensors[name]
        size = SIZE[t[0]]
        for d in shape:
            size *= d
        t[1] = shape
        t[2] = (t[2] + bytearray(max(0, size - len(t[2]))))[:size]
    elif kind == "add":
        name, spec = arg.split("=")
        dtype, dims = spec.split(":")
        shape = [int(d) for d in dims.split(",")]
        size = SIZE[dtype]
        for d in shape:
            size *= d
        tensors[name] = [dtype, shape, bytearray(size)]
    elif kind == "poke":
        name, spec = arg.split("=")
        offset, byte = spec.split(":")
        tensors[name][2][int(offset)] = int(byte, 0)
    elif kind == "f32":
        for name, t in tensors.items():
            if name.endswith(arg) and t[0] == "BF16":
                halves = struct.unpack("<%dH" % (len(t[2]) // 2), bytes(t[2]))
                t[0], t[2] = "F32", bytearray(struct.pack("<%dI" % len(halves),
                                                          *[h << 16 for h in halves]))
    else:
        sys.exit("unknown edit " + edit)

out, offset, new_header = bytearray(), 0, {}
if meta is not None:
    new_header["__metadata__"] = meta
for name in sorted(tensors):
    dtype, shape, raw = tensors[name]
    new_header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
    out += raw
    offset += len(raw)
text = json.dumps(new_header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(os.path.join(dst, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + out)
with open(os.path.join(dst, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
