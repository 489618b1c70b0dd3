/*
 * quantize.cc - ggml's reference block quantizers, as quantize.h says.
 *
 * Built with -ffp-contract=off (lib/CMakeLists.txt): a fused multiply-add
 * rounds once where ggml's generic build rounds twice, and one different
 * rounding moves a scale search to another trial. Every sum below runs in
 * ggml's order for the same reason.
 */
#include "lib/gguf/quantize.h"

#include "lib/support/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sgc {
namespace gguf {

namespace {

/// Below this a group is all zeros (ggml's GROUP_MAX_EPS).
constexpr float group_max_eps = 1e-15f;

/// Round to nearest, ties to even, for |x| < 2^22: ggml's nearest_int,
/// which adds 1.5 * 2^23 and reads the mantissa.
int nearest_int(float x) {
  const float shifted = x + 12582912.f;
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007fffff) - 0x00400000;
}

void put_half(uint8_t *dst, float value) {
  const uint16_t h = f32_to_f16(value);
  dst[0] = static_cast<uint8_t>(h);
  dst[1] = static_cast<uint8_t>(h >> 8);
}

float get_half(const uint8_t *src) {
  return f16_to_f32(static_cast<uint16_t>(src[0] | (src[1] << 8)));
}

/// One Q8_0 block: d (f16), 32 int8.
void quantize_q8_0(const float *x, uint8_t *out) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j)
    amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(out, d);
  for (int j = 0; j < 32; ++j)
    out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x[j] * id)));
}

/// One Q4_0 block: d (f16), 16 bytes of nibbles (low: x[0..15]).
void quantize_q4_0(const float *x, uint8_t *out) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(out, d);
  for (int j = 0; j < 16; ++j) {
    const float x0 = x[j] * id;
    const float x1 = x[16 + j] * id;
    const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 8.5f)));
    const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 8.5f)));
    out[2 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
  }
}

/// ggml's make_qx_quants with rmse_type 1 (weights x^2) and no importance:
/// levels L in [0, 2 nmax) for |n| values, and the scale (0 for all-zero).
float search_symmetric_scale(int n, int nmax, const float *x, int8_t *L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < group_max_eps) {
    std::fill(L, L + n, int8_t{0});
    return 0.f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0)
      continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
      const float w = x[i] * x[i];
      const float fl = static_cast<float>(l);
      sumlx += w * x[i] * fl;
      suml2 += w * fl * fl;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * x[i]);
        L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

/// ggml's make_qkx2_quants for Q4_K (32 values, levels 0..15, trials
/// rmin -1, step 0.1, 20 steps, squared error): levels L, the scale
/// returned and the minimum's magnitude in |the_min|.
float search_scale_and_min(const float *x, const float *weights, uint8_t *L,
                           float *the_min) {
  constexpr int n = 32, nmax = 15, nstep = 20;
  constexpr float rmin = -1.f, rdelta = 0.1f;
  uint8_t Laux[32];
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min)
      min = x[i];
    if (x[i] > max)
      max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0)
    min = 0;
  if (max == min) {
    std::fill(L, L + n, uint8_t{0});
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];
    diff = diff * diff;
    best_error += weights[i] * diff;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
        diff = diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

/// One Q4_K block (256): d, dmin (f16), 12 bytes of 6-bit scales and
/// minimums, 128 bytes of nibbles (each 64 values: low nibbles the first
/// 32, high the next 32).
void quantize_q4_k(const float *x, uint8_t *out) {
  uint8_t L[256];
  float weights[32], mins[8], scales[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float *xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l)
      sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l)
      weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = search_scale_and_min(xs, weights, L + 32 * j, &mins[j]);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t *packed = out + 4;
  for (int j = 0; j < 8; ++j) {
    const uint8_t ls = std::min<uint8_t>(
        63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
    const uint8_t lm = std::min<uint8_t>(
        63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
    if (j < 4) {
      packed[j] = ls;
      packed[j + 4] = lm;
    } else {
      packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      packed[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  put_half(out, max_scale / 63.f);
  put_half(out + 2, max_min / 63.f);
  const float d_all = get_half(out), dmin_all = get_half(out + 2);
  for (int j = 0; j < 8; ++j) {
    // ggml's get_scale_min_k4.
    const int sc = j < 4 ? packed[j] & 63
                         : (packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4);
    const int m = j < 4 ? packed[j + 4] & 63
                        : (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
    const float d = d_all * static_cast<float>(sc);
    if (d == 0.0f)
      continue;
    const float dm = dmin_all * static_cast<float>(m);
    for (int i = 0; i < 32; ++i) {
      const int l = nearest_int((x[32 * j + i] + dm) / d);
      L[32 * j + i] = static_cast<uint8_t>(std::max(0, std::min(15, l)));
    }
  }
  uint8_t *q = out + 16;
  for (int j = 0; j < 256; j += 64, q += 32)
    for (int l = 0; l < 32; ++l)
      q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
}

/// One Q6_K block (256): ql (128: low nibbles), qh (64: high 2 bits), 16
/// int8 scales, d (f16).
void quantize_q6_k(const float *x, uint8_t *out) {
  int8_t L[256];
  float scales[16];
  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < 16; ++ib) {
    const float scale = search_symmetric_scale(16, 32, x + 16 * ib, L + 16 * ib);
    scales[ib] = scale;
    if (std::fabs(scale) > max_abs_scale) {
      max_abs_scale = std::fabs(scale);
      max_scale = scale;
    }
  }
  std::memset(out, 0, 210);
  if (max_abs_scale < group_max_eps)
    return;
  uint8_t *ql = out, *qh = out + 128;
  auto *sc = reinterpret_cast<int8_t *>(out + 192);
  const float iscale = -128.f / max_scale;
  put_half(out + 208, 1 / iscale);
  for (int ib = 0; ib < 16; ++ib)
    sc[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
  const float d_all = get_half(out + 208);
  for (int j = 0; j < 16; ++j) {
    const float d = d_all * static_cast<float>(sc[j]);
    if (d == 0.0f)
      continue;
    for (int i = 0; i < 16; ++i) {
      const int l = std::max(-32, std::min(31, nearest_int(x[16 * j + i] / d)));
      L[16 * j + i] = static_cast<int8_t>(l + 32);
    }
  }
  for (int j = 0; j < 256; j += 128, ql += 64, qh += 32) {
    for (int l = 0; l < 32; ++l) {
      const auto at = [&](int k) { return static_cast<uint8_t>(L[j + l + k]); };
      ql[l] = static_cast<uint8_t>((at(0) & 0xF) | ((at(64) & 0xF) << 4));
      ql[l + 32] = static_cast<uint8_t>((at(32) & 0xF) | ((at(96) & 0xF) << 4));
      qh[l] = static_cast<uint8_t>((at(0) >> 4) | ((at(32) >> 4) << 2) |
                                   ((at(64) >> 4) << 4) | ((at(96) >> 4) << 6));
    }
  }
}

} // namespace

uint32_t block_elements(ggml_type type) {
  switch (type) {
  case ggml_type::q4_0:
  case ggml_type::q8_0:
    return 32;
  case ggml_type::q4_k:
  case ggml_type::q6_k:
    return 256;
  default:
    return 1;
  }
}

uint64_t row_bytes(ggml_type type, uint64_t n) {
  switch (type) {
  case ggml_type::f32:
    return n * 4;
  case ggml_type::f16:
  case ggml_type::bf16:
    return n * 2;
  case ggml_type::q4_0:
    return n / 32 * 18;
  case ggml_type::q8_0:
    return n / 32 * 34;
  case ggml_type::q4_k:
    return n / 256 * 144;
  case ggml_type::q6_k:
    return n / 256 * 210;
  }
  return 0;
}

void quantize_rows(ggml_type type, const float *x, int64_t rows, int64_t n,
                   uint8_t *out) {
  const uint64_t count = static_cast<uint64_t>(rows) * static_cast<uint64_t>(n);
  switch (type) {
  case ggml_type::f32:
    std::memcpy(out, x, count * 4);
    return;
  case ggml_type::f16:
  case ggml_type::bf16:
    for (uint64_t i = 0; i < count; ++i) {
      const uint16_t h = type == ggml_type::f16 ? f32_to_f16(x[i]) : f32_to_bf16(x[i]);
      out[2 * i] = static_cast<uint8_t>(h);
      out[2 * i + 1] = static_cast<uint8_t>(h >> 8);
    }
    return;
  default:
    break;
  }
  const uint32_t block = block_elements(type);
  const uint64_t bytes = row_bytes(type, block);
  void (*one)(const float *, uint8_t *) =
      type == ggml_type::q8_0   ? quantize_q8_0
      : type == ggml_type::q4_0 ? quantize_q4_0
      : type == ggml_type::q4_k ? quantize_q4_k
                                : quantize_q6_k;
  for (uint64_t b = 0; b < count / block; ++b)
    one(x + b * block, out + b * bytes);
}

} // namespace gguf
} // namespace sgc
