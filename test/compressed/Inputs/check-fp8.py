"""Holds the folder `sgc quantize HF_DIR OUT_DIR --type fp8` wrote to the
compressed-tensors FP8 format (design/QUANT.md §4), with an e4m3 rounding
of its own (Python floats, the nearest of the 127 magnitudes, ties to the
even code): every decoder layer's Linear weight X.weight is F8_E4M3 [N, K]
= e4m3(f32(w / s)) with X.weight_scale BF16 [N, 1] = bf16(f32(max|w_row| /
448)); every other tensor is the source's, byte for byte; config.json is
the source's plus a quantization_config that names the scheme, and ignores
lm_head and every matrix left unquantized; the other files are copied.
Standard library only. Prints a line per check; exits 1 on a failure.

usage: check-fp8.py SRC_DIR OUT_DIR"""
import bisect
import json
import math
import os
import struct
import sys

src, out = sys.argv[1:3]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items()}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bf16_bits(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def e4m3_value(c):
    e, m = (c >> 3) & 15, c & 7
    return m / 512.0 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)


MAGNITUDES = [e4m3_value(c) for c in range(0x7F)]  # increasing with the code


def e4m3(x):
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    if a >= 448.0:
        return sign | 0x7E
    i = bisect.bisect_left(MAGNITUDES, a)
    if MAGNITUDES[i] == a:
        return sign | i
    lo, hi = i - 1, i
    dl, dh = a - MAGNITUDES[lo], MAGNITUDES[hi] - a
    return sign | (lo if dl < dh or (dl == dh and lo % 2 == 0) else hi)


with open(os.path.join(src, "config.json")) as f:
    src_config = json.load(f)
with open(os.path.join(out, "config.json")) as f:
    config = json.load(f)
q = config.pop("quantization_config", {})
check(config == src_config, "config.json differs from the source's beyond quantization_config")
group = q.get("config_groups", {}).get("group_0", {})
w, a = group.get("weights") or {}, group.get("input_activations") or {}
check(q.get("quant_method") == "compressed-tensors" and q.get("format") == "float-quantized",
      "quant_method / format: %r / %r" % (q.get("quant_method"), q.get("format")))
check(group.get("targets") == ["Linear"], "targets %r" % group.get("targets"))
check((w.get("num_bits"), w.get("type"), w.get("strategy"), w.get("symmetric"), w.get("dynamic"))
      == (8, "float", "channel", True, False), "weights scheme %r" % w)
check((a.get("num_bits"), a.get("type"), a.get("strategy"), a.get("dynamic"))
      == (8, "float", "token", True), "input_activations %r" % a)
ignore = q.get("ignore", [])
check("lm_head" in ignore, "lm_head is not ignored")
check("re:.*norm[0-9]*$" in ignore, "the norms are not ignored")

before, after = read(os.path.join(src, "model.safetensors")), read(os.path.join(out, "model.safetensors"))
layers = [k for k in before if ".layers." in k and k.endswith("_proj.weight")]
check(len(layers) > 0, "no decoder Linear weights in the source")
quantized = values = 0
for name, (dtype, shape, raw) in sorted(before.items()):
    module = name[: -len(".weight")]
    if name not in layers:
        check(after.get(name) == (dtype, shape, raw), "%s: not copied as it was" % name)
        if len(shape) == 2 and name.endswith(".weight"):
            check(module in ignore, "%s: a matrix left unquantized but not ignored" % module)
        continue
    check(module not in ignore, "%s: quantized but ignored" % module)
    n, k = shape
    got_t, got_s = after.get(name), after.get(module + ".weight_scale")
    if not check(got_t and got_t[:2] == ("F8_E4M3", shape), "%s: %r" % (name, got_t and got_t[:2])) or \
            not check(got_s and got_s[:2] == ("BF16", [n, 1]), "%s scale: %r" % (name, got_s and got_s[:2])):
        continue
    assert dtype == "BF16"
    ws = [bf16_value(v) for v in struct.unpack("<%dH" % (n * k), raw)]
    scales = struct.unpack("<%dH" % n, got_s[2])
    bad = 0
    for r in range(n):
        row = ws[r * k:(r + 1) * k]
        want_s = bf16_bits(f32(max(abs(v) for v in row) / 448.0)) or 0x3F80
        bad += scales[r] != want_s
        s = bf16_value(scales[r])
        for c in range(k):
            bad += got_t[2][r * k + c] != e4m3(f32(row[c] / s))
        values += k
    check(bad == 0, "%s: %d bytes differ from e4m3(w / s)" % (name, bad))
    quantized += 1
extra = set(after) - set(before) - {m[: -len(".weight")] + ".weight_scale" for m in layers}
check(not extra, "tensors that are neither the source's nor scales: %s" % sorted(extra)[:3])
for f in sorted(os.listdir(src)):
    if f == "config.json" or f.endswith(".safetensors") or f.endswith(".index.json"):
        continue
    with open(os.path.join(src, f), "rb") as a_, open(os.path.join(out, f), "rb") as b_:
        check(a_.read() == b_.read(), "%s: not copied" % f)
print("fp8: %d matrices, %d values as e4m3(w / s); %d other tensors as they were; "
      "quantization_config as compressed-tensors FP8 (channel)"
      % (quantized, values, len(before) - quantized))
for f in failures[:10]:
    print("FAIL: " + f)
print("%s" % ("passed" if not failures else "%d failed" % len(failures)))
sys.exit(1 if failures else 0)
