#!/usr/bin/env python3
"""Writes a sampled golden (long.golden.safetensors: prompt_ids, feed_ids,
positions, logits_*) with the first N fed tokens moved into the prompt:
`regroup-golden.py IN N OUT [UNTIL]`. The sequence and the reference's rows
at each position stay the same (the reference ran the whole sequence,
teacher forced), so the same checks hold for a run that prefills the longer
prompt. With UNTIL the sequence ends before position UNTIL (the fed tokens
and sampled rows past it dropped): a shorter run, the same checks. Standard
library only."""
import json
import struct
import sys

src, n, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
until = int(sys.argv[4]) if len(sys.argv) > 4 else None
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
total = (len(prompt) + len(feed)) // 4
if until is not None:
    if not len(prompt) // 4 + n < until <= total:
        sys.exit(f"error: {src}: cannot end at {until}: the prompt holds "
                 f"{len(prompt) // 4 + n} and the sequence {total} positions")
    feed = feed[:4 * (until - len(prompt) // 4)]
tensors = {"prompt_ids": ("I32", [len(prompt) // 4 + n], prompt + feed[:4 * n]),
           "feed_ids": ("I32", [len(feed) // 4 - n], feed[4 * n:])}
positions = list(struct.unpack(f"<{len(raw('positions')) // 4}i", raw("positions")))
kept = sum(1 for p in positions if until is None or p < until)
for key, info in header.items():
    if key in ("__metadata__", "prompt_ids", "feed_ids"):
        continue
    # Every other tensor is per sampled position (positions, logits rows).
    shape = [kept] + info["shape"][1:]
    row = len(raw(key)) // info["shape"][0]
    tensors[key] = (info["dtype"], shape, raw(key)[:kept * row])
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
