#!/usr/bin/env python3
"""Broken variants of an F16 checkpoint or graph, for the error tests.

  f16-variants.py retype SRC.safetensors DST.safetensors NAME DTYPE
      NAME re-encoded as DTYPE (BF16 or F16; values rounded), the rest as is
  f16-variants.py graph SRC.json DST.json KIND ENCODING
      the representation of the object of KIND set to ENCODING

Standard library only."""
import json
import struct
import sys


def to_float(raw, dtype):
    if dtype == "F16":
        return list(struct.unpack("<%de" % (len(raw) // 2), raw))
    bits = struct.unpack("<%dH" % (len(raw) // 2), raw)
    return [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]


def encode(values, dtype):
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)
    out = []
    for v in values:
        b = struct.unpack("<I", struct.pack("<f", v))[0]
        out.append((b + 0x7FFF + ((b >> 16) & 1)) >> 16)
    return struct.pack("<%dH" % len(out), *out)


def retype(src, dst, name, dtype):
    data = open(src, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    if name not in header:
        sys.exit("no tensor %s in %s" % (name, src))
    blobs = {}
    for k, t in header.items():
        if k == "__metadata__":
            continue
        b, e = t["data_offsets"]
        blobs[k] = data[8 + n + b:8 + n + e]
    t = header[name]
    blobs[name] = encode(to_float(blobs[name], t["dtype"]), dtype)
    t["dtype"] = dtype
    off, body = 0, b""
    for k in sorted(blobs):
        header[k]["data_offsets"] = [off, off + len(blobs[k])]
        off += len(blobs[k])
        body += blobs[k]
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    open(dst, "wb").write(struct.pack("<Q", len(text)) + text + body)


def graph(src, dst, kind, encoding):
    g = json.load(open(src))
    for o in g["objects"]:
        if o["kind"] == kind:
            o["representations"][0]["encoding"] = encoding
    json.dump(g, open(dst, "w"), indent=2)


if __name__ == "__main__":
    {"retype": retype, "graph": graph}[sys.argv[1]](*sys.argv[2:])
