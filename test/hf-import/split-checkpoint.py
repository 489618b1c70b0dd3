#!/usr/bin/env python3
"""Writes a sharded copy of a .safetensors checkpoint (standard library only), as Hugging Face
ships large models: OUTDIR/model-0000K-of-0000N.safetensors plus model.safetensors.index.json
({"metadata": {"total_size": ...}, "weight_map": {name: shard}}).  Tensors go to shards in name
order, split into N runs of about equal bytes.  Faults for the refusal tests:

  --drop-shard K     do not write shard K (1-based); the index still names it
  --also-in K NAME   write tensor NAME into shard K as well (the index keeps its own shard)
  --omit NAME        leave tensor NAME out of every shard; the index still lists it
"""

import argparse
import json
import os
import struct


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    base = 8 + n
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        out[name] = (t["dtype"], t["shape"], data[base + a:base + b])
    return out


def write(path, tensors):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, blob = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("outdir")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--drop-shard", type=int)
    ap.add_argument("--also-in", nargs=2, metavar=("K", "NAME"))
    ap.add_argument("--omit")
    args = ap.parse_args()
    tensors = read(args.checkpoint)
    names = sorted(tensors)
    total = sum(len(tensors[n][2]) for n in names)
    n = args.shards
    files = [f"model-{k:05d}-of-{n:05d}.safetensors" for k in range(1, n + 1)]
    groups, acc = [[] for _ in range(n)], 0
    for name in names:
        k = min(n - 1, acc * n // total)
        groups[k].append(name)
        acc += len(tensors[name][2])
    weight_map = {name: files[k] for k in range(n) for name in groups[k]}
    os.makedirs(args.outdir, exist_ok=True)
    for k in range(n):
        if args.drop_shard == k + 1:
            continue
        part = {name: tensors[name] for name in groups[k] if name != args.omit}
        if args.also_in and int(args.also_in[0]) == k + 1:
            part[args.also_in[1]] = tensors[args.also_in[1]]
        write(os.path.join(args.outdir, files[k]), part)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(args.outdir, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
