#!/usr/bin/env python3
"""Writes the safetensors fixtures in this folder (stdlib only).

Run from anywhere: python3 test/Inputs/safetensors/generate.py
The outputs are committed; re-running must reproduce them byte for byte.
valid_* files must open; bad_* files must each fail with the message that
test/unit/safetensors_fixtures_test.cc expects. They also seed the fuzzer
(test/fuzz/safetensors).
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def header_bytes(obj):
    text = json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()
    return text + b" " * ((8 - len(text) % 8) % 8)


def image(header, data=b"", length=None):
    """8-byte length + header (dict, str or bytes) + data."""
    if isinstance(header, dict):
        header = header_bytes(header)
    elif isinstance(header, str):
        header = header.encode()
    n = len(header) if length is None else length
    return struct.pack("<Q", n) + header + data


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def write(name, content):
    path = os.path.join(HERE, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def main():
    # --- valid ---------------------------------------------------------
    write("valid_small.safetensors", image(
        {"__metadata__": {"format": "pt"},
         "a.weight": entry("F32", [2, 2], 0, 16),
         "b.bias": entry("BF16", [3], 16, 22),
         "c.ids": entry("I64", [1], 22, 30)},
        f32(1, 2, 3, 4) + b"\x80\x3f\x00\x40\x40\x40" +
        struct.pack("<q", -7)))
    write("valid_empty.safetensors", image("{}      "))
    write("valid_scalar_and_empty.safetensors", image(
        {"scalar": entry("F64", [], 0, 8),
         "empty": entry("F16", [0, 4], 8, 8),
         "flag": entry("BOOL", [2], 8, 10)},
        struct.pack("<d", 0.5) + b"\x01\x00"))
    # Sharded: an index and two shards.
    write("sharded/model-00001-of-00002.safetensors", image(
        {"layers.0.w": entry("F32", [2], 0, 8)}, f32(1, 2)))
    write("sharded/model-00002-of-00002.safetensors", image(
        {"layers.1.w": entry("F32", [2], 0, 8),
         "norm.w": entry("F32", [1], 8, 12)}, f32(3, 4, 5)))
    write("sharded/model.safetensors.index.json", json.dumps(
        {"metadata": {"total_size": 20},
         "weight_map": {"layers.0.w": "model-00001-of-00002.safetensors",
                        "layers.1.w": "model-00002-of-00002.safetensors",
                        "norm.w": "model-00002-of-00002.safetensors"}},
        indent=2, sort_keys=True).encode() + b"\n")

    # --- bad single files ----------------------------------------------
    write("bad_empty.safetensors", b"")
    write("bad_seven_bytes.safetensors", b"\x10\x00\x00\x00\x00\x00\x00")
    write("bad_header_past_eof.safetensors",
          image('{"a":1}', length=4096))
    write("bad_header_2pow63.safetensors",
          struct.pack("<Q", 1 << 63) + b"{}")
    write("bad_header_not_json.safetensors", image('{"a": [1, 2'))
    write("bad_header_not_object.safetensors", image("[1, 2, 3]"))
    write("bad_header_leading_space.safetensors", image(" {}"))
    write("bad_name_not_utf8.safetensors", image(
        b'{"bad\xff\xfename":{"dtype":"U8","shape":[1],'
        b'"data_offsets":[0,1]}}', b"\x00"))
    write("bad_duplicate_name.safetensors", image(
        '{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"\x00\x00"))
    write("bad_overlap.safetensors", image(
        {"a": entry("F32", [2], 0, 8), "b": entry("F32", [2], 4, 12)},
        bytes(12)))
    write("bad_reversed_offsets.safetensors", image(
        {"a": entry("F32", [1], 8, 4)}, bytes(8)))
    write("bad_offsets_out_of_range.safetensors", image(
        {"a": entry("F32", [4], 0, 16)}, bytes(8)))
    write("bad_hole.safetensors", image(
        {"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 8, 12)},
        bytes(12)))
    write("bad_trailing_bytes.safetensors", image(
        {"a": entry("F32", [1], 0, 4)}, bytes(8)))
    write("bad_byte_length.safetensors", image(
        {"a": entry("F32", [3], 0, 8)}, bytes(8)))
    write("bad_shape_overflow.safetensors", image(
        {"a": entry("U8", [1 << 32, 1 << 32, 2], 0, 0)}))
    write("bad_negative_dim.safetensors", image(
        {"a": entry("F32", [-1, 4], 0, 0)}))
    write("bad_unknown_dtype.safetensors", image(
        {"a": entry("Q4_K", [2], 0, 2)}, bytes(2)))
    write("bad_truncated_data.safetensors", image(
        {"a": entry("F32", [4], 0, 16), "b": entry("F32", [4], 16, 32)},
        bytes(20)))

    # --- bad sharded checkpoints ---------------------------------------
    write("sharded_missing_shard/model-00001-of-00002.safetensors", image(
        {"a": entry("F32", [1], 0, 4)}, f32(1)))
    write("sharded_missing_shard/model.safetensors.index.json", json.dumps(
        {"weight_map": {"a": "model-00001-of-00002.safetensors",
                        "b": "model-00002-of-00002.safetensors"}},
        indent=2, sort_keys=True).encode() + b"\n")
    write("sharded_missing_tensor/model-00001-of-00001.safetensors", image(
        {"a": entry("F32", [1], 0, 4)}, f32(1)))
    write("sharded_missing_tensor/model.safetensors.index.json", json.dumps(
        {"weight_map": {"a": "model-00001-of-00001.safetensors",
                        "b": "model-00001-of-00001.safetensors"}},
        indent=2, sort_keys=True).encode() + b"\n")


if __name__ == "__main__":
    main()
