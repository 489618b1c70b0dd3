"""Writes the GGUF files of gguf-weights.test into the folder argv[1]:
ok.gguf (what q8_0-linear.mlir binds), q4_0.gguf (its projection in
another encoding), q4_k.gguf (in an encoding sgc does not read),
short.gguf (a truncated ok.gguf)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "backend-ops"))
import blocks  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
values = [((i * 37) % 101 - 50) / 400.0 for i in range(96 * 256)]
plain = {"embed": ("bf16", [48, 256], [((i * 13) % 29 - 14) / 16.0 for i in range(48 * 256)]),
         "out_norm": ("bf16", [96], [1.0] * 96)}


def write(name, w_type, w_payload):
    tensors = dict(plain)
    tensors["w"] = (w_type, [96, 256], w_payload)
    blocks.write_gguf(os.path.join(out, name), tensors)


write("ok.gguf", "q8_0", blocks.quantize(values, "q8_0")[0])
write("q4_0.gguf", "q4_0", blocks.quantize(values, "q4_0")[0])
# Q4_K (ggml type 12): 144 bytes a block of 256; zeros are a valid block.
write("q4_k.gguf", (12, bytes(96 * 144)), None)
with open(os.path.join(out, "ok.gguf"), "rb") as f:
    data = f.read()
with open(os.path.join(out, "short.gguf"), "wb") as f:
    f.write(data[:len(data) - 100])
