"""A GGUF file read in pure Python (no numpy): what sgc quantize's test and
the generator of its figures (tools/gen-golden/gen_quantize.py) both use, so
that a figure and the value it is compared with come from the same code.

    f = GgufFile(path)
    f.metadata      [(key, type name, digest of the value)] in file order
    f.tensors       [Tensor(name, type, dims, offset, nbytes)] in file order
    f.data(t)       a tensor's bytes
    f.values(t)     a Q4_K or Q6_K tensor as floats (ggml's dequantizers)
"""

import hashlib
import struct
from collections import namedtuple

VALUE_TYPES = {0: ("UINT8", "<B"), 1: ("INT8", "<b"), 2: ("UINT16", "<H"),
               3: ("INT16", "<h"), 4: ("UINT32", "<I"), 5: ("INT32", "<i"),
               6: ("FLOAT32", "<f"), 7: ("BOOL", "<B"), 8: ("STRING", None),
               9: ("ARRAY", None), 10: ("UINT64", "<Q"), 11: ("INT64", "<q"),
               12: ("FLOAT64", "<d")}
# ggml type -> (name, elements per block, bytes per block)
TENSOR_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18),
                8: ("Q8_0", 32, 34), 12: ("Q4_K", 256, 144), 14: ("Q6_K", 256, 210),
                30: ("BF16", 1, 2)}

Tensor = namedtuple("Tensor", "name type dims offset nbytes")


class GgufError(Exception):
    pass


class GgufFile:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.raw = f.read()
        self.path = path
        self.pos = 0
        if self.raw[:4] != b"GGUF":
            raise GgufError("%s: not a GGUF file" % path)
        self.pos = 4
        version, n_tensors, n_kv = self._get("<I"), self._get("<Q"), self._get("<Q")
        if version != 3:
            raise GgufError("%s: version %d" % (path, version))
        self.metadata = []
        alignment = 32
        for _ in range(n_kv):
            key = self._text()
            vtype = self._get("<I")
            value = self._value(vtype)
            if key == "general.alignment":
                alignment = value
            self.metadata.append((key, self._type_name(vtype, value), digest(value)))
        infos = []
        for _ in range(n_tensors):
            name = self._text()
            dims = [self._get("<Q") for _ in range(self._get("<I"))]
            infos.append((name, self._get("<I"), dims, self._get("<Q")))
        data_start = (self.pos + alignment - 1) // alignment * alignment
        self.tensors = []
        for name, ttype, dims, offset in infos:
            tname, block, block_bytes = TENSOR_TYPES[ttype]
            count = 1
            for d in dims:
                count *= d
            self.tensors.append(Tensor(name, tname, dims, data_start + offset,
                                       count // block * block_bytes))

    def _get(self, fmt):
        (v,) = struct.unpack_from(fmt, self.raw, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def _text(self):
        n = self._get("<Q")
        s = self.raw[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def _value(self, vtype):
        if vtype == 8:
            return self._text()
        if vtype == 9:
            etype, n = self._get("<I"), self._get("<Q")
            return ("array", etype, [self._value(etype) for _ in range(n)])
        v = self._get(VALUE_TYPES[vtype][1])
        return bool(v) if vtype == 7 else v

    @staticmethod
    def _type_name(vtype, value):
        if vtype == 9:
            return "ARRAY[%s]" % VALUE_TYPES[value[1]][0]
        return VALUE_TYPES[vtype][0]

    def data(self, t):
        return self.raw[t.offset:t.offset + t.nbytes]

    def values(self, t):
        """ggml's dequantize_row_q4_K / dequantize_row_q6_K, in doubles."""
        raw = self.data(t)
        out = []
        if t.type == "Q4_K":
            for b in range(0, len(raw), 144):
                d, dmin = struct.unpack_from("<ee", raw, b)
                sc, qs = raw[b + 4:b + 16], raw[b + 16:b + 144]
                for j in range(8):  # get_scale_min_k4
                    if j < 4:
                        s, m = sc[j] & 63, sc[j + 4] & 63
                    else:
                        s = (sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4)
                        m = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4)
                    q = qs[32 * (j // 2):32 * (j // 2) + 32]
                    shift = 4 * (j % 2)
                    out.extend(d * s * ((x >> shift) & 0xF) - dmin * m for x in q)
        elif t.type == "Q6_K":
            for b in range(0, len(raw), 210):
                ql, qh = raw[b:b + 128], raw[b + 128:b + 192]
                sc = struct.unpack_from("<16b", raw, b + 192)
                (d,) = struct.unpack_from("<e", raw, b + 208)
                block = [0.0] * 256
                for half in range(2):
                    for l in range(32):
                        lo, hi = ql[64 * half + l], ql[64 * half + l + 32]
                        h = qh[32 * half + l]
                        qv = ((lo & 0xF) | ((h & 3) << 4), (hi & 0xF) | (((h >> 2) & 3) << 4),
                              (lo >> 4) | (((h >> 4) & 3) << 4), (hi >> 4) | (((h >> 6) & 3) << 4))
                        for k in range(4):
                            i = 128 * half + 32 * k + l
                            block[i] = d * sc[i // 16] * (qv[k] - 32)
                out.extend(block)
        else:
            raise GgufError("%s: %s: no dequantizer for %s" % (self.path, t.name, t.type))
        return out


def digest(value):
    """A short digest of a metadata value (arrays element by element)."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def bf16_checkpoint(path):
    """name -> floats of a bf16 safetensors file (the test's checkpoint)."""
    import json
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack_from("<Q", raw, 0)
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "BF16", (name, e["dtype"])
        a, b = e["data_offsets"]
        half = struct.unpack_from("<%dH" % ((b - a) // 2), raw, 8 + n + a)
        out[name] = [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in half]
    return out
