/*
 * compressed_tensors.cc - folding compressed-tensors FP8 / INT4 weights
 * into block encodings, and packing their blocks.
 */
#include "runtime/src/compressed_tensors.h"

#include "lib/support/half.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace sgc {
namespace runtime {

namespace {

constexpr const char *scale_suffix = ".weight_scale";

bool ends_with(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

status part_error(const source_tensor &t, const std::string &what) {
  return bad_input_error("checkpoint " + quote(t.file) + ": tensor " +
                         quote(t.name) + " (" + dtype_name(t.type) + " " +
                         shape_string(t.shape) + ") " + what);
}

float scale_at(const source_tensor::parts &p, uint64_t i) {
  switch (p.scale_type) {
  case dtype::bf16: {
    uint16_t h;
    std::memcpy(&h, p.scale + 2 * i, 2);
    return bf16_to_f32(h);
  }
  case dtype::f16: {
    uint16_t h;
    std::memcpy(&h, p.scale + 2 * i, 2);
    return f16_to_f32(h);
  }
  default: {
    float f;
    std::memcpy(&f, p.scale + 4 * i, 4);
    return f;
  }
  }
}

bool is_scale_type(dtype t) {
  return t == dtype::bf16 || t == dtype::f16 || t == dtype::f32;
}

/// The values of a weight_shape tensor ([2], I32 or I64), or false.
bool read_shape(const source_tensor &t, int64_t out[2]) {
  if (t.shape.size() != 1 || t.shape[0] != 2)
    return false;
  for (int i = 0; i < 2; ++i) {
    if (t.type == dtype::i64) {
      std::memcpy(&out[i], t.data + 8 * i, 8);
    } else if (t.type == dtype::i32) {
      int32_t v;
      std::memcpy(&v, t.data + 4 * i, 4);
      out[i] = v;
    } else {
      return false;
    }
  }
  return out[0] > 0 && out[1] > 0;
}

class folder {
public:
  explicit folder(std::vector<source_tensor> &tensors) : tensors_(tensors) {
    for (size_t i = 0; i < tensors.size(); ++i)
      by_name_[tensors[i].name] = i;
  }

  status run() {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const std::string &name = tensors_[i].name;
      if (!ends_with(name, scale_suffix))
        continue;
      const std::string module =
          name.substr(0, name.size() - std::string(scale_suffix).size());
      status st = find("weight_packed", module)
                      ? fold_int4(module)
                      : fold_fp8(module);
      if (!st.ok())
        return st;
    }
    for (const source_tensor &t : tensors_)
      if (ends_with(t.name, ".weight_packed") && !dropped_.count(t.name))
        return part_error(t, "has no " + std::string(scale_suffix) +
                                 " next to it (a pack-quantized weight is "
                                 "weight_packed, weight_scale and "
                                 "weight_shape)");
    std::vector<source_tensor> kept;
    for (source_tensor &t : tensors_)
      if (!dropped_.count(t.name))
        kept.push_back(std::move(t));
    for (source_tensor &t : added_)
      kept.push_back(std::move(t));
    std::sort(kept.begin(), kept.end(),
              [](const source_tensor &a, const source_tensor &b) {
                return a.name < b.name;
              });
    tensors_ = std::move(kept);
    return status();
  }

private:
  const source_tensor *find(const std::string &part,
                            const std::string &module) const {
    auto it = by_name_.find(module + "." + part);
    return it == by_name_.end() ? nullptr : &tensors_[it->second];
  }

  /// Refuses the parts sgc does not read.
  status check_extras(const std::string &module) const {
    if (const source_tensor *z = find("weight_zero_point", module))
      return part_error(*z, "is a zero point: sgc reads symmetric "
                            "compressed-tensors weights only");
    if (const source_tensor *g = find("weight_g_idx", module))
      return part_error(*g, "is an act-order permutation (weight_g_idx), "
                            "which sgc does not read");
    return status();
  }

  /// The folded X.weight: dtype |type|, shape [n, k], packed from |parts|.
  void add(const std::string &module, const source_tensor &values, dtype type,
           int64_t n, int64_t k, source_tensor::parts parts) {
    source_tensor t;
    t.name = module + ".weight";
    t.type = type;
    t.type_name = dtype_name(type);
    t.shape = {n, k};
    dtype_tensor_bytes(type, t.shape.data(), 2, &t.bytes);
    t.file = values.file;
    t.packed_from = parts;
    added_.push_back(std::move(t));
  }

  status fold_fp8(const std::string &module) {
    const source_tensor &scale = *find("weight_scale", module);
    const source_tensor *w = find("weight", module);
    if (!w)
      return part_error(scale, "scales no " + quote(module + ".weight") +
                                   " or " + quote(module + ".weight_packed"));
    if (w->type != dtype::f8_e4m3)
      return part_error(*w, "has a weight_scale next to it, but sgc reads "
                            "scaled weights as F8_E4M3 (float-quantized) or "
                            "I32 weight_packed (pack-quantized) only");
    status st = check_extras(module);
    if (!st.ok())
      return st;
    if (w->shape.size() != 2)
      return part_error(*w, "is not a matrix");
    const int64_t n = w->shape[0], k = w->shape[1];
    if (k % 32 != 0)
      return part_error(*w, "has rows of " + std::to_string(k) +
                                ", not a multiple of 32 (sgc packs FP8 "
                                "weights in blocks of 32)");
    int64_t per_row;
    uint64_t count = 1;
    for (int64_t d : scale.shape)
      count *= static_cast<uint64_t>(d);
    if (scale.shape.size() == 2 && scale.shape[0] == n && scale.shape[1] == 1)
      per_row = 1;
    else if (scale.shape.size() <= 1 && count == 1)
      per_row = 0;
    else if (scale.shape.size() == 2 && scale.shape[0] == (n + 127) / 128 &&
             scale.shape[1] == (k + 127) / 128)
      return part_error(scale, "scales 128 x 128 blocks, which sgc does not "
                               "read (FP8 channel or tensor scales only)");
    else
      return part_error(scale, "does not fit " + quote(w->name) +
                                   ": expected [" + std::to_string(n) +
                                   ", 1] (a scale per output channel) or [1] "
                                   "(one for the tensor)");
    if (!is_scale_type(scale.type))
      return part_error(scale, "is not BF16, F16 or F32");
    dropped_.insert(w->name);
    dropped_.insert(scale.name);
    if (const source_tensor *in = find("input_scale", module))
      dropped_.insert(in->name);
    add(module, *w, dtype::fp8_ch, n, k,
        {w->data, scale.data, scale.type, per_row});
    return status();
  }

  status fold_int4(const std::string &module) {
    const source_tensor &scale = *find("weight_scale", module);
    const source_tensor &packed = *find("weight_packed", module);
    const source_tensor *shape = find("weight_shape", module);
    status st = check_extras(module);
    if (!st.ok())
      return st;
    if (!shape)
      return part_error(packed, "has no " + quote(module + ".weight_shape") +
                                    " next to it");
    int64_t nk[2];
    if (!read_shape(*shape, nk))
      return part_error(*shape, "is not two positive dimensions (I32 or I64)");
    const int64_t n = nk[0], k = nk[1];
    if (packed.type != dtype::i32 || packed.shape.size() != 2 ||
        packed.shape[0] != n || k % 8 != 0 || packed.shape[1] != k / 8)
      return part_error(packed, "does not hold weight_shape [" +
                                    std::to_string(n) + ", " +
                                    std::to_string(k) + "] as I32 [" +
                                    std::to_string(n) + ", " +
                                    std::to_string(k / 8) +
                                    "] (8 nibbles a word; rows a multiple "
                                    "of 8)");
    if (scale.shape.size() != 2 || scale.shape[0] != n || scale.shape[1] < 1 ||
        k % scale.shape[1] != 0 ||
        (k / scale.shape[1] != 32 && k / scale.shape[1] != 128))
      return part_error(scale, "does not fit weight_shape [" +
                                   std::to_string(n) + ", " +
                                   std::to_string(k) + "]: expected [" +
                                   std::to_string(n) + ", " +
                                   std::to_string(k / 32) + "] or [" +
                                   std::to_string(n) + ", " +
                                   std::to_string(k / 128) +
                                   "] (groups of 32 or 128)");
    if (!is_scale_type(scale.type))
      return part_error(scale, "is not BF16, F16 or F32");
    const int64_t group = k / scale.shape[1];
    dropped_.insert(packed.name);
    dropped_.insert(scale.name);
    dropped_.insert(shape->name);
    add(module, packed, group == 32 ? dtype::int4_g32 : dtype::int4_g128, n,
        k, {packed.data, scale.data, scale.type, scale.shape[1]});
    return status();
  }

  std::vector<source_tensor> &tensors_;
  std::map<std::string, size_t> by_name_;
  std::set<std::string> dropped_;
  std::vector<source_tensor> added_;
};

} // namespace

status fold_compressed_tensors(std::vector<source_tensor> &tensors) {
  return folder(tensors).run();
}

bool pack_blocks(const source_tensor &t, uint64_t first, uint64_t count,
                 uint8_t *out) {
  const source_tensor::parts &p = t.packed_from;
  const uint64_t k = static_cast<uint64_t>(t.shape[1]);
  const uint64_t elements = dtype_block_elements(t.type);
  const uint64_t bytes = dtype_block_bytes(t.type);
  const uint64_t per_row = k / elements;
  bool ok = true;
  for (uint64_t b = first; b < first + count; ++b, out += bytes) {
    const uint64_t row = b / per_row, j = b % per_row;
    if (t.type == dtype::fp8_ch) {
      const float s = scale_at(p, p.scales_per_row == 0 ? 0 : row);
      std::memcpy(out, &s, 4);
      const uint8_t *q = p.values + row * k + j * elements;
      std::memcpy(out + 4, q, elements);
      for (uint64_t i = 0; i < elements; ++i)
        ok &= (q[i] & 0x7F) != 0x7F; // e4m3's NaN
      continue;
    }
    // INT4: element e of the row is nibble e % 2 of byte e / 2 (the I32
    // words little-endian); each run of 32 goes out in Q4_0's order.
    const float s = scale_at(p, row * static_cast<uint64_t>(p.scales_per_row) + j);
    std::memcpy(out, &s, 4);
    const uint8_t *src = p.values + row * (k / 2) + j * (elements / 2);
    for (uint64_t run = 0; run < elements / 32; ++run) {
      const uint8_t *r = src + 16 * run;
      auto nibble = [r](uint64_t e) {
        return static_cast<uint8_t>((r[e / 2] >> (4 * (e % 2))) & 0xF);
      };
      for (uint64_t i = 0; i < 16; ++i)
        out[4 + 16 * run + i] =
            static_cast<uint8_t>(nibble(i) | (nibble(i + 16) << 4));
    }
  }
  return ok;
}

} // namespace runtime
} // namespace sgc
