#!/usr/bin/env python3
# Writes the GGUF (version 3) fixtures in this folder for the strict C++
# GGUF reader's unit tests (lib/gguf):
#
#   valid_small.gguf, valid_aligned64.gguf, valid_empty.gguf
#       written by gguf-py's GGUFWriter (llama.cpp's own Python writer), so
#       the C++ reader is tested against an independent implementation of
#       the format. Each has a sidecar <name>.expect.json saying what a
#       reader must find in it; the sidecar is computed from what this
#       script passed to the writer and checked against gguf-py's
#       GGUFReader reading the written file (the script fails if they
#       disagree).
#   bad_<defect>.gguf
#       broken files, each with exactly one defect, crafted byte by byte
#       from a small baseline (the baseline itself is checked to be
#       byte-identical to what GGUFWriter writes for it).
#   bad_cases.tsv
#       one line per broken file: file name <TAB> the defect in a sentence.
#
# Run from anywhere (needs numpy and the `gguf` package, llama.cpp's
# gguf-py):  python3 test/Inputs/gguf/generate.py
# The outputs are committed; re-running must reproduce them byte for byte.

import hashlib
import json
import os
import struct
import sys
import tempfile

import numpy as np

import gguf
from gguf import GGMLQuantizationType as QT
from gguf import GGUFReader, GGUFValueType as VT, GGUFWriter
from gguf.constants import GGML_QUANT_SIZES

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20250614
ARCH = "gemma3"
DEFAULT_ALIGNMENT = 32


def fail(msg):
    sys.exit("generate.py: " + msg)


def check(cond, msg):
    if not cond:
        fail(msg)


# ---------------------------------------------------------------------------
# A minimal GGUF encoder of our own (struct only). It makes the broken files
# and cross-checks the bytes GGUFWriter writes for the valid ones.

SCALAR_FORMATS = {
    VT.UINT8: "<B", VT.INT8: "<b", VT.UINT16: "<H", VT.INT16: "<h",
    VT.UINT32: "<I", VT.INT32: "<i", VT.FLOAT32: "<f", VT.BOOL: "<B",
    VT.UINT64: "<Q", VT.INT64: "<q", VT.FLOAT64: "<d",
}


def pad_to(n, alignment):
    return (n + alignment - 1) // alignment * alignment


def enc_u32(v):
    return struct.pack("<I", v)


def enc_u64(v):
    return struct.pack("<Q", v)


def enc_str(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return enc_u64(len(b)) + b


def enc_value(vtype, value, elem_type=None):
    if vtype == VT.STRING:
        return enc_str(value)
    if vtype == VT.ARRAY:
        return (enc_u32(elem_type) + enc_u64(len(value)) +
                b"".join(enc_value(elem_type, v) for v in value))
    return struct.pack(SCALAR_FORMATS[vtype], value)


def enc_kv(key, vtype, value, elem_type=None):
    return enc_str(key) + enc_u32(vtype) + enc_value(vtype, value, elem_type)


def enc_tensor_info(name, dims, ggml_type, offset):
    return (enc_str(name) + enc_u32(len(dims)) +
            b"".join(enc_u64(d) for d in dims) + enc_u32(ggml_type) +
            enc_u64(offset))


def enc_image(kvs, infos, data, alignment=DEFAULT_ALIGNMENT, magic=b"GGUF",
              version=3, tensor_count=None, kv_count=None):
    """Header + kv blobs + tensor-info blobs, zero padding to |alignment|,
    then |data| (the data section, already laid out)."""
    head = (magic + enc_u32(version) +
            enc_u64(len(infos) if tensor_count is None else tensor_count) +
            enc_u64(len(kvs) if kv_count is None else kv_count) +
            b"".join(kvs) + b"".join(infos))
    return head + bytes(pad_to(len(head), alignment) - len(head)) + data


def layout(tensors, alignment):
    """tensors: [(name, gguf dims, ggml type, raw bytes)]. Places them one
    after the other as GGUFWriter does (each offset aligned, the section
    padded to the alignment) and returns (infos, offsets, data)."""
    infos, offsets, data = [], [], b""
    for name, dims, ggml_type, raw in tensors:
        offsets.append(len(data))
        infos.append(enc_tensor_info(name, dims, ggml_type, len(data)))
        data += raw + bytes(pad_to(len(raw), alignment) - len(raw))
    return infos, offsets, data


# ---------------------------------------------------------------------------
# Tensor data.

def block_bytes(qtype, n_elements):
    block, size = GGML_QUANT_SIZES[qtype]
    check(n_elements % block == 0, "%s: %d elements" % (qtype.name, n_elements))
    return n_elements // block * size


def quantize_q6_k(x):
    """Q6_K by hand (gguf-py can dequantize Q6_K but not quantize it).
    A 256-element block is ql[128] (low 4 bits), qh[64] (high 2 bits),
    int8 scales[16] (one per 16 elements), f16 d; element e is
    d * scales[e // 16] * (q[e] - 32). Not ggml's exact rounding search, but
    a valid encoding of |x| up to quantization error."""
    x = np.asarray(x, dtype=np.float32).reshape(-1, 256)
    out, recon = [], []
    for blk in x:
        sub = blk.reshape(16, 16).astype(np.float64)
        sub_scale = np.abs(sub).max(axis=1) / 31.0
        d16 = np.float16(sub_scale.max() / 127.0)
        d = float(d16)
        sc = np.clip(np.rint(sub_scale / d), 1, 127).astype(np.int8)
        q = np.clip(np.rint(sub / (d * sc.astype(np.float64)[:, None])),
                    -32, 31).astype(np.int64).reshape(256) + 32
        ql = np.zeros(128, dtype=np.uint8)
        qh = np.zeros(64, dtype=np.uint8)
        for e in range(256):
            half, r = divmod(e, 128)
            k, l = divmod(r, 32)
            v = int(q[e])
            ql[64 * half + 32 * (k & 1) + l] |= (v & 0xF) << (4 if k >= 2 else 0)
            qh[32 * half + l] |= (v >> 4) << (2 * k)
        out.append(ql.tobytes() + qh.tobytes() + sc.tobytes() + d16.tobytes())
        # The value each element decodes to, computed as ggml does (float).
        dsc = np.float32(d) * sc.astype(np.float32)
        recon.append(np.repeat(dsc, 16) * (q - 32).astype(np.float32))
    raw = np.frombuffer(b"".join(out), dtype=np.uint8).reshape(x.shape[0], 210)
    return raw, np.concatenate(recon)


def make_tensor(rng, name, qtype, shape):
    """Returns a dict with the tensor's raw bytes as the writer gets them
    (an np.ndarray) plus what the sidecar needs."""
    shape = tuple(shape)
    n = int(np.prod(shape))
    x = rng.standard_normal(size=shape).astype(np.float32)
    if qtype == QT.F32:
        arr = x
    elif qtype == QT.F16:
        arr = x.astype(np.float16)
    elif qtype in (QT.BF16, QT.Q8_0, QT.Q4_0):
        # gguf-py's quantizers (Q8_0 is bit-exact with ggml's reference).
        arr = gguf.quants.quantize(x, qtype)
    elif qtype == QT.Q6_K:
        arr, recon = quantize_q6_k(x)
        arr = arr.reshape(shape[:-1] + (shape[-1] // 256 * 210,))
        back = gguf.quants.dequantize(arr, QT.Q6_K).reshape(-1)
        check(np.array_equal(back, recon),
              "Q6_K packing disagrees with gguf-py's dequantizer")
        check(np.max(np.abs(back - x.reshape(-1))) < 0.1,
              "Q6_K quantization error too large")
    else:
        fail("no data for " + qtype.name)
    arr = np.ascontiguousarray(arr)
    check(arr.nbytes == block_bytes(qtype, n), name + ": byte size")
    return {"name": name, "qtype": qtype, "np_shape": shape,
            "dims": list(reversed(shape)), "array": arr,
            "raw": arr.tobytes()}


# ---------------------------------------------------------------------------
# Valid files: written by GGUFWriter, verified, described in a sidecar.

def f32_round(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def normalize(vtype, value):
    """The value as a reader sees it (float32 rounding applied)."""
    if vtype == VT.FLOAT32:
        return f32_round(value)
    if vtype == VT.BOOL:
        return bool(value)
    return value


def bits_hex(vtype, value):
    b = struct.pack(SCALAR_FORMATS[vtype], value)
    return "0x%0*x" % (2 * len(b), int.from_bytes(b, "little"))


def write_with_gguf_py(path, metadata, tensors, alignment):
    """metadata: [(key, vtype, value, elem_type)] with general.architecture
    first (GGUFWriter adds it itself)."""
    w = GGUFWriter(path, ARCH)
    check(metadata[0][:3] == ("general.architecture", VT.STRING, ARCH),
          "metadata must start with general.architecture")
    adders = {
        VT.UINT8: w.add_uint8, VT.INT8: w.add_int8, VT.UINT16: w.add_uint16,
        VT.INT16: w.add_int16, VT.UINT32: w.add_uint32, VT.INT32: w.add_int32,
        VT.FLOAT32: w.add_float32, VT.BOOL: w.add_bool,
        VT.STRING: w.add_string, VT.UINT64: w.add_uint64,
        VT.INT64: w.add_int64, VT.FLOAT64: w.add_float64,
    }
    for key, vtype, value, elem_type in metadata[1:]:
        if key == "general.alignment":
            check(vtype == VT.UINT32 and value == alignment, "alignment key")
            w.add_custom_alignment(value)
        elif vtype == VT.ARRAY:
            w.add_key_value(key, list(value), VT.ARRAY, sub_type=elem_type)
        else:
            adders[vtype](key, value)
    check(w.data_alignment == alignment, "writer alignment")
    for t in tensors:
        if t["qtype"] in (QT.F32, QT.F16):
            w.add_tensor(t["name"], t["array"])
        else:
            # Raw bytes (uint8): the writer derives the element shape from
            # the byte shape and the type's block size.
            w.add_tensor(t["name"], t["array"], raw_dtype=t["qtype"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def first_values(t, count=4):
    a = t["array"]
    if t["qtype"] in (QT.F32, QT.F16):
        vals = a.astype(np.float32).reshape(-1)
    else:
        vals = gguf.quants.dequantize(a, t["qtype"]).reshape(-1)
    return [float(v) for v in vals[:count]]


def make_valid(name, metadata, tensors, alignment=DEFAULT_ALIGNMENT):
    path = os.path.join(HERE, name)
    write_with_gguf_py(path, metadata, tensors, alignment)
    with open(path, "rb") as f:
        written = f.read()

    # 1. Our own encoder must produce the same bytes from the same inputs.
    kvs = [enc_kv(*m) for m in metadata]
    infos, offsets, data = layout(
        [(t["name"], t["dims"], t["qtype"], t["raw"]) for t in tensors],
        alignment)
    ours = enc_image(kvs, infos, data, alignment)
    check(ours == written, name + ": GGUFWriter's bytes differ from ours")
    data_offset = len(written) - len(data)
    check(data_offset % alignment == 0, name + ": data section unaligned")

    # 2. gguf-py's reader must find what we passed to the writer.
    r = GGUFReader(path)
    fields = list(r.fields.values())
    check([f.name for f in fields[:3]] ==
          ["GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"],
          name + ": reader pseudo-fields")
    check(int(fields[0].parts[0][0]) == 3, name + ": version")
    check(int(fields[1].parts[0][0]) == len(tensors), name + ": tensor count")
    check(int(fields[2].parts[0][0]) == len(metadata), name + ": kv count")
    fields = fields[3:]
    check(len(fields) == len(metadata), name + ": number of keys")
    meta_json = []
    for f, (key, vtype, value, elem_type) in zip(fields, metadata):
        where = "%s: key %s" % (name, key)
        check(f.name == key, where + ": name/order (reader has %s)" % f.name)
        check(f.types[0] == vtype, where + ": type")
        entry = {"key": key, "type": vtype.name, "type_id": int(vtype)}
        if vtype == VT.ARRAY:
            check(f.types[-1] == elem_type, where + ": element type")
            expect = [normalize(elem_type, v) for v in value]
            check(f.contents() == expect, where + ": values")
            check(int(f.parts[4][0]) == len(value), where + ": count")
            entry.update({"element_type": elem_type.name,
                          "element_type_id": int(elem_type),
                          "count": len(value), "values": expect})
            if elem_type != VT.STRING:
                entry["bits"] = [bits_hex(elem_type, v) for v in value]
        else:
            expect = normalize(vtype, value)
            check(f.contents() == expect, where + ": value %r != %r"
                  % (f.contents(), expect))
            entry["value"] = expect
            if vtype != VT.STRING:
                entry["bits"] = bits_hex(vtype, value)
        meta_json.append(entry)

    check(int(r.alignment) == alignment, name + ": reader alignment")
    check(int(r.data_offset) == data_offset, name + ": reader data offset")
    check(len(r.tensors) == len(tensors), name + ": number of tensors")
    tensors_json = []
    for rt, t, off in zip(r.tensors, tensors, offsets):
        where = "%s: tensor %s" % (name, t["name"])
        check(rt.name == t["name"], where + ": name/order")
        check(rt.tensor_type == t["qtype"], where + ": type")
        check([int(d) for d in rt.shape] == t["dims"], where + ": dims")
        check(int(rt.n_bytes) == len(t["raw"]), where + ": byte size")
        check(int(rt.data_offset) - data_offset == off, where + ": offset")
        check(off % alignment == 0, where + ": offset unaligned")
        check(rt.data.tobytes() == t["raw"], where + ": data")
        n = int(np.prod(t["dims"]))
        check(int(rt.n_elements) == n, where + ": elements")
        tensors_json.append({
            "name": t["name"], "type": t["qtype"].name,
            "type_id": int(t["qtype"]), "dims": t["dims"],
            "n_elements": n, "offset": off, "bytes": len(t["raw"]),
            "sha256": hashlib.sha256(t["raw"]).hexdigest(),
            "first_values": first_values(t)})

    expect = {
        "file": name,
        "writer": "gguf-py GGUFWriter",
        "version": 3,
        "file_size": len(written),
        "alignment": alignment,
        "tensor_count": len(tensors),
        "kv_count": len(metadata),
        "data_offset": data_offset,
        "data_bytes": len(written) - data_offset,
        "metadata": meta_json,
        "tensors": tensors_json,
    }
    side = os.path.join(HERE, name[:-len(".gguf")] + ".expect.json")
    with open(side, "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(expect, indent=2, ensure_ascii=False) + "\n")
    check(len(written) < 20000, name + ": too big")


def valid_files(rng):
    small_meta = [
        ("general.architecture", VT.STRING, ARCH, None),
        ("general.name", VT.STRING, "sgc GGUF reader fixture", None),
        ("general.description", VT.STRING,
         "UTF-8 text: h\u00e9llo w\u00f6rld \u2713", None),
        ("gemma3.block_count", VT.UINT32, 1, None),
        ("gemma3.context_length", VT.UINT32, 4294967295, None),
        ("gemma3.attention.sliding_window", VT.INT32, -123456789, None),
        ("gemma3.attention.layer_norm_rms_epsilon", VT.FLOAT32, 1e-6, None),
        ("gemma3.rope.freq_base", VT.FLOAT32, 1000000.0, None),
        ("tokenizer.ggml.add_bos_token", VT.BOOL, True, None),
        ("tokenizer.ggml.add_eos_token", VT.BOOL, False, None),
        ("test.uint64", VT.UINT64, 0xFEDCBA9876543210, None),
        ("test.int64", VT.INT64, -0x123456789ABCDEF, None),
        ("test.float64", VT.FLOAT64, -2.5e-300, None),
        ("test.uint8", VT.UINT8, 255, None),
        ("test.int8", VT.INT8, -128, None),
        ("test.uint16", VT.UINT16, 65535, None),
        ("test.int16", VT.INT16, -32768, None),
        ("tokenizer.ggml.tokens", VT.ARRAY, ["<pad>", "<eos>", "hello"],
         VT.STRING),
        ("tokenizer.ggml.scores", VT.ARRAY, [0.0, -1.5, 0.25], VT.FLOAT32),
        ("tokenizer.ggml.token_type", VT.ARRAY, [3, 3, 1], VT.INT32),
        ("test.array_int32", VT.ARRAY, [-2147483648, 0, 2147483647],
         VT.INT32),
        ("test.array_bool", VT.ARRAY, [True, False, True], VT.BOOL),
    ]
    small_tensors = [
        make_tensor(rng, "token_embd.weight", QT.F16, (8, 64)),
        make_tensor(rng, "blk.0.attn_q.weight", QT.Q8_0, (4, 64)),
        make_tensor(rng, "blk.0.attn_k.weight", QT.BF16, (2, 32)),
        make_tensor(rng, "blk.0.ffn_down.weight", QT.Q4_0, (2, 64)),
        make_tensor(rng, "output_norm.weight", QT.F32, (64,)),
        make_tensor(rng, "blk.0.attn_v.weight", QT.Q6_K, (1, 256)),
    ]
    make_valid("valid_small.gguf", small_meta, small_tensors)

    make_valid("valid_aligned64.gguf", [
        ("general.architecture", VT.STRING, ARCH, None),
        ("general.alignment", VT.UINT32, 64, None),
    ], [
        make_tensor(rng, "blk.0.attn_norm.weight", QT.F32, (5,)),
        make_tensor(rng, "blk.0.ffn_norm.weight", QT.F32, (3, 7)),
    ], alignment=64)

    make_valid("valid_empty.gguf",
               [("general.architecture", VT.STRING, ARCH, None)], [])


# ---------------------------------------------------------------------------
# Broken files: a small baseline, then one defect each.

def bad_files(rng):
    norm = np.arange(1, 9, dtype=np.float32) / 8     # output_norm.weight
    q = gguf.quants.quantize(
        rng.standard_normal(size=(2, 32)).astype(np.float32), QT.Q8_0)
    base_kv_specs = [
        ("general.architecture", VT.STRING, ARCH, None),
        ("gemma3.block_count", VT.UINT32, 1, None),
        ("tokenizer.ggml.add_bos_token", VT.BOOL, True, None),
        ("tokenizer.ggml.tokens", VT.ARRAY, ["<pad>", "<eos>", "hello"],
         VT.STRING),
    ]
    base_tensors = [
        ("output_norm.weight", [8], QT.F32, norm.tobytes()),
        ("blk.0.attn_q.weight", [32, 2], QT.Q8_0, q.tobytes()),
    ]
    KV_ARCH, KV_COUNT, KV_BOS, KV_TOKENS = range(4)
    T_NORM, T_Q = range(2)

    kvs = [enc_kv(*s) for s in base_kv_specs]
    infos, offsets, data = layout(base_tensors, DEFAULT_ALIGNMENT)
    check(offsets == [0, 32] and len(data) == 128, "baseline layout")
    base = enc_image(kvs, infos, data)
    data_start = len(base) - len(data)

    # The baseline must be exactly what GGUFWriter writes, and readable.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "baseline.gguf")
        write_with_gguf_py(path, base_kv_specs, [
            {"name": "output_norm.weight", "qtype": QT.F32, "array": norm},
            {"name": "blk.0.attn_q.weight", "qtype": QT.Q8_0, "array": q},
        ], DEFAULT_ALIGNMENT)
        with open(path, "rb") as f:
            check(f.read() == base, "baseline differs from GGUFWriter's")
        r = GGUFReader(path)
        check(len(r.tensors) == 2 and r.data_offset == data_start,
              "gguf-py cannot read the baseline")

    def img(kv=None, ti=None, dat=None, **kw):
        return enc_image(kvs if kv is None else kv,
                         infos if ti is None else ti,
                         data if dat is None else dat, **kw)

    def with_kv(i, blob):
        return kvs[:i] + [blob] + kvs[i + 1:]

    def with_ti(i, blob):
        return infos[:i] + [blob] + infos[i + 1:]

    def norm_info(dims=(8,), ggml_type=QT.F32, offset=0,
                  name="output_norm.weight"):
        return enc_tensor_info(name, list(dims), ggml_type, offset)

    def q_info(dims=(32, 2), ggml_type=QT.Q8_0, offset=32,
               name="blk.0.attn_q.weight"):
        return enc_tensor_info(name, list(dims), ggml_type, offset)

    check(norm_info() == infos[T_NORM] and q_info() == infos[T_Q],
          "tensor info helpers")

    cases = []

    def bad(defect, content, description):
        cases.append(("bad_%s.gguf" % defect, content, description))

    bad("magic", b"GGML" + base[4:],
        "The file starts with the magic 'GGML' instead of 'GGUF'.")
    bad("version_2", img(version=2),
        "The header says version 2; only version 3 is supported.")
    bad("version_4", img(version=4),
        "The header says version 4; only version 3 is supported.")

    cut = 24 + sum(len(k) for k in kvs[:KV_TOKENS]) + len(kvs[KV_TOKENS]) // 2
    bad("truncated_header", base[:cut],
        "The file ends after %d bytes, in the middle of the "
        "tokenizer.ggml.tokens array, before the key/value section is "
        "complete." % cut)
    cut = data_start + offsets[T_Q] + len(base_tensors[T_Q][3]) // 2
    bad("truncated_data", base[:cut],
        "The file ends after %d bytes, halfway through the data of the last "
        "tensor blk.0.attn_q.weight (34 of its 68 bytes)." % cut)

    bad("kv_count_huge", img(kv_count=1 << 60),
        "metadata_kv_count is 2^60 while the file holds 4 key/value pairs.")
    bad("tensor_count_huge", img(tensor_count=1 << 60),
        "tensor_count is 2^60 while the file holds 2 tensor infos.")

    key = b"gemma3.block_count"
    bad("string_length_past_eof",
        img(kv=with_kv(KV_COUNT, enc_u64(4096) + key + enc_u32(VT.UINT32) +
                       enc_u32(1))),
        "The length of the key gemma3.block_count is 4096, which runs past "
        "the end of the file.")
    bad("string_length_huge",
        img(kv=with_kv(KV_ARCH, enc_str("general.architecture") +
                       enc_u32(VT.STRING) + enc_u64(0xFFFFFFFFFFFFFFFF) +
                       ARCH.encode())),
        "The string value of general.architecture has length 2^64-1, so "
        "offset plus length overflows.")
    bad("value_type",
        img(kv=with_kv(KV_COUNT, enc_str(key) + enc_u32(13) + enc_u32(1))),
        "The key gemma3.block_count has value type 13, which is not a GGUF "
        "value type.")
    nested = (enc_str("test.nested") + enc_u32(VT.ARRAY) +
              enc_u32(VT.ARRAY) + enc_u64(1) +
              enc_u32(VT.INT32) + enc_u64(2) + struct.pack("<ii", 1, 2))
    bad("array_of_arrays", img(kv=kvs + [nested]),
        "The key test.nested is an array whose element type is ARRAY "
        "(holding one INT32 array [1, 2]).")
    toks = bytearray(kvs[KV_TOKENS])
    count_at = len(enc_str("tokenizer.ggml.tokens")) + 4 + 4
    check(struct.unpack_from("<Q", toks, count_at)[0] == 3, "tokens count")
    struct.pack_into("<Q", toks, count_at, (1 << 32) + 3)
    bad("array_count_past_eof", img(kv=with_kv(KV_TOKENS, bytes(toks))),
        "The array tokenizer.ggml.tokens claims 2^32+3 strings (its low 32 "
        "bits say 3, the strings present), far more than the file holds.")
    bad("duplicate_key",
        img(kv=kvs + [enc_kv("gemma3.block_count", VT.UINT32, 2)]),
        "The key gemma3.block_count appears twice (values 1 and 2).")
    bad("duplicate_tensor", img(ti=with_ti(T_Q, q_info(
        name="output_norm.weight"))),
        "Two tensors are named output_norm.weight (the second is the Q8_0 "
        "one at offset 32).")
    bad("n_dims_0", img(ti=with_ti(T_NORM, norm_info(dims=()))),
        "The tensor output_norm.weight has n_dims 0.")
    bad("n_dims_5", img(ti=with_ti(T_NORM, norm_info(dims=(8, 1, 1, 1, 1)))),
        "The tensor output_norm.weight has n_dims 5 (dims [8, 1, 1, 1, 1]); "
        "at most 4 are allowed.")
    bad("dim_0", img(ti=with_ti(T_Q, q_info(dims=(32, 0)))),
        "The tensor blk.0.attn_q.weight has a zero dimension (dims [32, 0]).")
    big = (8, 274177, 67280421310721)
    check(big[1] * big[2] == (1 << 64) + 1, "overflow dims")
    check((big[0] * big[1] * big[2]) % (1 << 64) == 8, "overflow wrap")
    bad("dims_overflow", img(ti=with_ti(T_NORM, norm_info(dims=big))),
        "The tensor output_norm.weight has dims [8, 274177, 67280421310721] "
        "whose product 8*(2^64+1) overflows uint64 (it wraps to 8, the "
        "true size of its data).")
    bad("unknown_type", img(ti=with_ti(T_NORM, norm_info(ggml_type=99))),
        "The tensor output_norm.weight has ggml type 99, which does not "
        "exist.")
    bad("block_divisibility", img(ti=with_ti(T_Q, q_info(dims=(48, 1)))),
        "The Q8_0 tensor blk.0.attn_q.weight has ne[0] = 48, not a multiple "
        "of the 32-element block.")
    bad("offset_unaligned", img(ti=with_ti(T_Q, q_info(offset=40))),
        "The tensor blk.0.attn_q.weight has offset 40, not a multiple of "
        "the alignment 32 (its data would still lie inside the file).")
    bad("offset_past_eof", img(ti=with_ti(T_Q, q_info(offset=64))),
        "The tensor blk.0.attn_q.weight has offset 64, so its 68 bytes "
        "would end at 132, past the 128-byte data section at the end of "
        "the file.")
    bad("overlap", img(ti=with_ti(T_Q, q_info(offset=0))),
        "The tensor blk.0.attn_q.weight has offset 0, so its bytes 0..68 "
        "overlap those of output_norm.weight (0..32).")

    infos48, offsets48, data48 = layout(base_tensors, 48)
    check(offsets48 == [0, 48], "layout with alignment 48")
    bad("alignment_not_pow2",
        img(kv=kvs + [enc_kv("general.alignment", VT.UINT32, 48)],
            ti=infos48, dat=data48, alignment=48),
        "general.alignment is 48, not a power of two (the file is otherwise "
        "laid out consistently with 48).")
    bad("alignment_type",
        img(kv=kvs + [enc_kv("general.alignment", VT.STRING, "32")]),
        "general.alignment is stored as the STRING \"32\" instead of a "
        "UINT32.")
    bad("key_not_utf8",
        img(kv=kvs + [enc_kv(b"gemma3.\xff\xfe", VT.UINT32, 1)]),
        "A key is the bytes 'gemma3.' followed by 0xff 0xfe, which is not "
        "valid UTF-8.")
    bad("bool_value",
        img(kv=with_kv(KV_BOS, enc_str("tokenizer.ggml.add_bos_token") +
                       enc_u32(VT.BOOL) + b"\x02")),
        "The BOOL key tokenizer.ggml.add_bos_token holds the byte 2 instead "
        "of 0 or 1.")
    bad("empty", b"", "The file is empty (0 bytes).")

    for fname, content, _ in cases:
        check(len(content) < 2048, fname + ": too big")
        check(content != base, fname + ": no defect")
        with open(os.path.join(HERE, fname), "wb") as f:
            f.write(content)
    with open(os.path.join(HERE, "bad_cases.tsv"), "w", encoding="utf-8",
              newline="\n") as f:
        for fname, _, description in cases:
            check("\t" not in description and "\n" not in description,
                  fname + ": description")
            f.write("%s\t%s\n" % (fname, description))


def main():
    rng = np.random.default_rng(SEED)
    valid_files(rng)
    bad_files(rng)


if __name__ == "__main__":
    main()
