"""A one-case model: the sg .mlir of `forward`, its random weights and the
reference of its output, built together op by op. The input comes from an
`sg.embed` of random ids, the output is what `forward` returns as its
logits, so `sgc compile` builds it and `sgc-run --dump-logits` runs it on
every target like a real model."""

import blocks
import reference as ref
from numerics import ROUND

MLIR_TYPE = {"bf16": "bf16", "f16": "f16", "f32": "f32"}
MLIR_TYPE.update({e: '!sg.quant<"%s">' % blocks.MLIR_NAME[e] for e in blocks.BLOCKS})


def float_attr(v):
    """An f64 attribute's text: MLIR wants a '.' or an exponent with a
    mantissa of the form 1.0e-06."""
    return "%.17e" % v


class Value:
    def __init__(self, name, shape, rows):
        self.name, self.shape, self.rows = name, shape, rows

    def type(self, dtype):
        return "tensor<?x%sx%s>" % ("x".join(map(str, self.shape)), dtype)


class Model:
    """`ids` are the whole sequence (prompt then fed tokens), at positions
    0, 1, ...; the reference computes every row at once."""

    def __init__(self, compute, ids, normal, context):
        self.ct, self.r = compute, ROUND[compute]
        self.ids, self.normal, self.context = ids, normal, context
        self.positions = list(range(len(ids)))
        self.lines, self.weights, self.caches = [], {}, []
        # Each weight's SSA value, by name.
        self.ssa = {}
        self.count = 0

    def _name(self):
        self.count += 1
        return "%%v%d" % self.count

    def _emit(self, text, block="layer"):
        tag = '{sg.block = "embed"' if block == "embed" else \
            '{sg.block = "layer", sg.layer = 0 : i64'
        self.lines.append("    " + text.replace("{ATTRS", tag))

    def weight(self, name, shape, dtype, sigma=1.0, mean=0.0):
        """A random weight: its SSA value and its values as rows, as the
        activations read them (an f16 matrix under bf16 activations is
        rounded to bf16, as the reference runs a checkpoint in bf16; a
        block-encoded one is its dequantized values, so rounded too)."""
        n = 1
        for s in shape:
            n *= s
        values = self.normal.values(n, sigma, mean)
        if dtype in blocks.BLOCKS:
            # The file holds the blocks; the ops read what they dequantize to.
            data, values = blocks.quantize(values, dtype)
            self.weights[name] = (dtype, shape, data)
        else:
            values = [ROUND[dtype](v) for v in values]
            self.weights[name] = (dtype, shape, values)
        ssa = self.ssa[name] = self._name()
        self._emit('%s = sg.weight "%s" : tensor<%sx%s>'
                   % (ssa, name, "x".join(map(str, shape)), MLIR_TYPE[dtype]))
        width = shape[-1]
        if dtype != "bf16" and dtype != "f32" and self.ct == "bf16":
            values = [ROUND["bf16"](v) for v in values]
        return ssa, [values[i:i + width] for i in range(0, n, width)]

    # --- ops -------------------------------------------------------------
    def embed(self, vocab, width, wdtype, scale):
        w, table = self.weight("embed", [vocab, width], wdtype)
        out = Value(self._name(), [width],
                    ref.embed(table, self.ids, scale, self.r))
        self._emit("%s = sg.embed %s[%%tokens] scale(%s) {ATTRS} : "
                   "(tensor<%dx%dx%s>, tensor<?xi32>) -> %s"
                   % (out.name, w, float_attr(scale), vocab, width, MLIR_TYPE[wdtype],
                      out.type(self.ct)),
                   block="embed")
        return out

    def linear(self, x, n, wdtype, name):
        k = x.shape[-1]
        w, rows = self.weight(name, [n, k], wdtype, sigma=k ** -0.5)
        out = Value(self._name(), [n], ref.linear(x.rows, rows, self.r))
        self._emit("%s = sg.linear %s, %s {ATTRS} : (%s, tensor<%dx%dx%s>) -> %s"
                   % (out.name, x.name, w, x.type(self.ct), n, k, MLIR_TYPE[wdtype],
                      out.type(self.ct)))
        return out

    def rms_norm(self, x, name, offset=0, eps=1e-6, weighted=True):
        d = x.shape[-1]
        operands, rows = x.name, x.rows
        if weighted:
            # Random weights around the offset's complement (not exact 1s).
            w, (wv,) = self.weight(name, [d], "bf16", 0.3, 1.0 - offset)
            operands += ", " + w
        else:
            wv = None
        heads = len(x.shape) == 2
        norm = lambda rs: ref.rms_norm(rs, wv, eps, offset, self.r)
        rows = ref.heads_op(rows, lambda h: norm([h])[0]) if heads else norm(rows)
        out = Value(self._name(), x.shape, rows)
        types = x.type(self.ct) + (", tensor<%dxbf16>" % d if weighted else "")
        self._emit("%s = sg.rms_norm %s {ATTRS, eps = %s : f64, weight_offset = %d : i64} "
                   ": (%s) -> %s" % (out.name, operands, float_attr(eps), offset, types,
                                     out.type(self.ct)))
        return out

    def layer_norm(self, x, eps=1e-6):
        d = x.shape[-1]
        w, (wv,) = self.weight("ln.weight", [d], "bf16", 0.3, 1.0)
        b, (bv,) = self.weight("ln.bias", [d], "bf16", 0.3)
        out = Value(self._name(), x.shape, ref.layer_norm(x.rows, wv, bv, eps, self.r))
        self._emit("%s = sg.layer_norm %s, %s, %s {ATTRS, eps = %s : f64} : "
                   "(%s, tensor<%dxbf16>, tensor<%dxbf16>) -> %s"
                   % (out.name, x.name, w, b, float_attr(eps), x.type(self.ct), d, d,
                      out.type(self.ct)))
        return out

    def _unary(self, op, x, rows, attrs=""):
        out = Value(self._name(), x.shape, rows)
        self._emit("%s = sg.%s %s {ATTRS%s} : %s" % (out.name, op, x.name, attrs,
                                                   out.type(self.ct)))
        return out

    def gelu_tanh(self, x):
        return self._unary("gelu_tanh", x, ref.gelu_tanh(x.rows, self.r))

    def softcap(self, x, cap):
        return self._unary("softcap", x, ref.softcap(x.rows, cap, self.r),
                           ", cap = %s : f64" % float_attr(cap))

    def _binary(self, op, a, b, rows):
        out = Value(self._name(), a.shape, rows)
        self._emit("%s = sg.%s %s, %s {ATTRS} : %s" % (out.name, op, a.name, b.name,
                                                   out.type(self.ct)))
        return out

    def add(self, a, b):
        return self._binary("add", a, b, ref.add(a.rows, b.rows, self.r))

    def mul(self, a, b):
        return self._binary("mul", a, b, ref.mul(a.rows, b.rows, self.r))

    def layer_scalar(self, x):
        w, ((s,),) = self.weight("layer_scalar", [1], "bf16", 0.2, 0.7)
        out = Value(self._name(), x.shape, ref.layer_scalar(x.rows, s, self.r))
        self._emit("%s = sg.layer_scalar %s, %s {ATTRS} : %s, tensor<1xbf16>"
                   % (out.name, x.name, w, out.type(self.ct)))
        return out

    def split_heads(self, x, heads):
        out = Value(self._name(), [heads, x.shape[0] // heads],
                    ref.split_heads(x.rows, heads))
        self._emit("%s = sg.split_heads %s {ATTRS} : %s -> %s"
                   % (out.name, x.name, x.type(self.ct), out.type(self.ct)))
        return out

    def merge_heads(self, x):
        out = Value(self._name(), [x.shape[0] * x.shape[1]], ref.merge_heads(x.rows))
        self._emit("%s = sg.merge_heads %s {ATTRS} : %s -> %s"
                   % (out.name, x.name, x.type(self.ct), out.type(self.ct)))
        return out

    def rope(self, x, theta, fraction=None):
        d = x.shape[1]
        rotated = d // 2 if fraction is None else int(fraction * d) // 2
        rows = ref.rope(x.rows, self.positions, ref.inv_freq(theta, d, rotated), self.r)
        if fraction is None:
            return self._unary_at("rope", x, rows, ", theta = %s : f64" % float_attr(theta))
        return self._unary_at("partial_rope", x, rows,
                              ', basis = "head_width", rotary_fraction = %s : f64, '
                              "theta = %s : f64" % (float_attr(fraction), float_attr(theta)))

    def _unary_at(self, op, x, rows, attrs):
        out = Value(self._name(), x.shape, rows)
        self._emit("%s = sg.%s %s at %%pos0 {ATTRS%s} : %s"
                   % (out.name, op, x.name, attrs, out.type(self.ct)))
        return out

    def cache(self, slots, heads, dim):
        """A new K or V cache argument of `forward`."""
        arg = "%%cache%d" % len(self.caches)
        ty = "tensor<%dx%dx%dx%s>" % (slots, heads, dim, self.ct)
        self.caches.append([arg, ty, None])
        return len(self.caches) - 1

    def attention(self, q, k, v, window, scale, v_from_k=False, rebuild=None):
        """`rebuild` = (w_k's SSA value, theta, rotary fraction): a V-only
        cache (keys_from_values): the op reads V alone and rebuilds its keys
        RoPE(V * w_k); the reference keeps `k` (Hugging Face's keys)."""
        hkv, d = k.shape
        slots = window if window else self.context
        kc, vc = self.cache(slots, hkv, d), self.cache(slots, hkv, d)
        out = Value(self._name(), q.shape,
                    ref.attention(q.rows, k.rows, v.rows, self.positions, window,
                                  scale, self.r))
        op = "sliding_attn" if window else "full_attn"
        attrs = ", window = %d : i64" % window if window else ""
        attrs += ", scale = %s : f64" % float_attr(scale) + (", v_from_k" if v_from_k else "")
        keys, kvc, suffix, wtype = k, vc, "", ""
        if rebuild:
            # The K cache holds V; the V cache goes back untouched.
            w, theta, fraction = rebuild
            keys, kvc, suffix = v, kc, " keys_from_values(%s)" % w
            attrs += (', key_basis = "head_width", key_rotary_fraction = %s : f64, '
                      "key_theta = %s : f64" % (float_attr(fraction), float_attr(theta)))
            wtype = ", tensor<%dxbf16>" % d
        self._emit("%s = sg.%s %s, %s, %s cache(%s, %s) at %%pos0%s {ATTRS%s} : "
                   "(%s, %s, %s, %s, %s, i64%s) -> %s"
                   % (out.name, op, q.name, keys.name, v.name, self.caches[kc][0],
                      self.caches[kvc][0], suffix, attrs, q.type(self.ct),
                      keys.type(self.ct), v.type(self.ct), self.caches[kc][1],
                      self.caches[kvc][1], wtype, out.type(self.ct)))
        if rebuild:
            self.caches[vc][2] = self.caches[vc][0]
        for index, x in ((kc, v), ) if rebuild else ((kc, k), (vc, v)):
            arg, ty, _ = self.caches[index]
            written = self._name()
            wattr = ", window = %d : i64" % window if window else ""
            self._emit("%s = sg.kv_write %s into %s at %%pos0 {ATTRS%s} : %s into %s"
                       % (written, x.name, arg, wattr, x.type(self.ct), ty))
            self.caches[index][2] = written
        return out

    # --- the module --------------------------------------------------------
    def mlir(self, out):
        args = "".join(", %s: %s" % (a, t) for a, t, _ in self.caches)
        results = [out.type(self.ct)] + [t for _, t, _ in self.caches]
        values = [out.name] + [w for _, _, w in self.caches]
        return ("// Generated by test/backend-ops: one case, %s activations.\n"
                "module {\n  func.func @forward(%%tokens: tensor<?xi32>, %%pos0: i64%s)"
                " -> (%s) {\n%s\n    return %s : %s\n  }\n}\n"
                % (self.ct, args, ", ".join(results), "\n".join(self.lines),
                   ", ".join(values), ", ".join(results)))
