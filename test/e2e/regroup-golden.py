#!/usr/bin/env python3
"""Writes a sampled golden (long.golden.safetensors: prompt_ids, feed_ids,
positions, logits_*) with the first N fed tokens moved into the prompt:
`regroup-golden.py IN N OUT`. The sequence and the reference's rows at each
position stay the same (the reference ran the whole sequence, teacher
forced), so the same checks hold for a run that prefills the longer prompt.
Standard library only."""
import json
import struct
import sys

src, n, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(src, "rb") as f:
    data = f.read()
(size,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8:8 + size])
body = data[8 + size:]


def raw(key):
    begin, end = header[key]["data_offsets"]
    return body[begin:end]


prompt, feed = raw("prompt_ids"), raw("feed_ids")
if not 0 < n <= len(feed) // 4:
    sys.exit(f"error: {src}: cannot move {n} of {len(feed) // 4} fed tokens")
tensors = {"prompt_ids": ("I32", [len(prompt) // 4 + n], prompt + feed[:4 * n]),
           "feed_ids": ("I32", [len(feed) // 4 - n], feed[4 * n:])}
for key, info in header.items():
    if key not in ("__metadata__", "prompt_ids", "feed_ids"):
        tensors[key] = (info["dtype"], info["shape"], raw(key))
out_header, blobs, offset = {}, [], 0
for key, (dtype, shape, blob) in tensors.items():
    out_header[key] = {"dtype": dtype, "shape": shape,
                       "data_offsets": [offset, offset + len(blob)]}
    blobs.append(blob)
    offset += len(blob)
text = json.dumps(out_header).encode()
text += b" " * (-len(text) % 8)
with open(dst, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
