#!/usr/bin/env python3
"""Plants a wrong value for the device-check tests (standard library only).

  corrupt.py safetensors FILE TENSOR DELTA   adds DELTA to element 0 of F32
                                             tensor TENSOR, in place
  corrupt.py dump FILE INDEX                 adds 1 + |v| to the first value of
                                             record INDEX (F32 or BF16) of an
                                             SGC_CUDA_DUMP file, in place;
                                             prints the record's header
  corrupt.py dump FILE INDEX VALUE [ELEMENT] sets that value (or element
                                             ELEMENT's) to VALUE instead
"""
import json
import struct
import sys


def safetensors(path, name, delta):
    with open(path, "r+b") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        info = header[name]
        assert info["dtype"] == "F32", info
        at = 8 + n + info["data_offsets"][0]
        f.seek(at)
        (v,) = struct.unpack("<f", f.read(4))
        f.seek(at)
        f.write(struct.pack("<f", v + delta))


def dump(path, index, value=None, element=0):
    with open(path, "r+b") as f:
        for i in range(index + 1):
            line = f.readline()
            h = json.loads(line)
            if i < index:
                f.seek(h["bytes"], 1)
        at = f.tell() + element * (4 if h["dtype"] == "F32" else 2)
        f.seek(at)
        if h["dtype"] == "F32":
            (v,) = struct.unpack("<f", f.read(4))
            f.seek(at)
            f.write(struct.pack("<f", v + 1 + abs(v) if value is None else value))
        elif h["dtype"] == "BF16":
            (u,) = struct.unpack("<H", f.read(2))
            (v,) = struct.unpack("<f", struct.pack("<I", u << 16))
            (w,) = struct.unpack("<I", struct.pack(
                "<f", v + 1 + abs(v) if value is None else value))
            f.seek(at)
            f.write(struct.pack("<H", w >> 16))
        else:
            sys.exit(f"record {index} is {h['dtype']}, not F32 or BF16")
        print(line.decode().strip())


if __name__ == "__main__":
    if sys.argv[1] == "safetensors":
        safetensors(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        dump(sys.argv[2], int(sys.argv[3]),
             float(sys.argv[4]) if len(sys.argv) > 4 else None,
             int(sys.argv[5]) if len(sys.argv) > 5 else 0)
