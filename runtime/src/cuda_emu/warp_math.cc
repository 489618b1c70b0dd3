/*
 * warp_math.cc - the warp collectives' arithmetic (warp_math.h).
 */
#include "runtime/src/cuda_emu/warp_math.h"

#include <sgc/abi.h>

#include <cstring>

namespace sgc {
namespace runtime {
namespace emu {

uint32_t shuffle_member_mask(uint32_t width) {
  return width >= 32 ? 0xffffffffu : (1u << width) - 1u;
}

shuffle_source shuffle_source_lane(uint32_t lane, uint32_t offset,
                                   uint32_t width, uint32_t mode) {
  // c as convert-gpu-to-nvvm builds it: no segment mask, only a clamp.
  const uint32_t c = mode == SGC_ABI_SHUFFLE_UP ? 32 - width : width - 1;
  const int32_t cval = static_cast<int32_t>(c & 31);
  const int32_t seg = static_cast<int32_t>((c >> 8) & 31);
  const int32_t self = static_cast<int32_t>(lane & 31);
  const int32_t b = static_cast<int32_t>(offset & 31);
  const int32_t max_lane = (self & seg) | (cval & ~seg);
  const int32_t min_lane = self & seg;
  int32_t j = self;
  bool valid = false;
  switch (mode) {
  case SGC_ABI_SHUFFLE_UP:
    j = self - b;
    valid = j >= max_lane;
    break;
  case SGC_ABI_SHUFFLE_DOWN:
    j = self + b;
    valid = j <= max_lane;
    break;
  case SGC_ABI_SHUFFLE_XOR:
    j = self ^ b;
    valid = j <= max_lane;
    break;
  default: // SGC_ABI_SHUFFLE_IDX
    j = min_lane | (b & ~seg);
    valid = j <= max_lane;
    break;
  }
  return {valid ? j : self, valid};
}

float bf16_to_float(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

static float lo(uint32_t pair) {
  return bf16_to_float(static_cast<uint16_t>(pair));
}
static float hi(uint32_t pair) {
  return bf16_to_float(static_cast<uint16_t>(pair >> 16));
}

void mma_m16n8k16_bf16(const uint32_t a[warp_lanes][4],
                       const uint32_t b[warp_lanes][2],
                       const float c[warp_lanes][4], float d[warp_lanes][4]) {
  float A[16][16], B[16][8], C[16][8];
  for (uint32_t l = 0; l < warp_lanes; ++l) {
    const uint32_t g = l / 4, t = l % 4;
    for (uint32_t r = 0; r < 4; ++r) {
      const uint32_t row = g + 8 * (r % 2), col = 2 * t + 8 * (r / 2);
      A[row][col] = lo(a[l][r]);
      A[row][col + 1] = hi(a[l][r]);
    }
    for (uint32_t r = 0; r < 2; ++r) {
      const uint32_t k = 2 * t + 8 * r;
      B[k][g] = lo(b[l][r]);
      B[k + 1][g] = hi(b[l][r]);
    }
    for (uint32_t i = 0; i < 4; ++i)
      C[g + 8 * (i / 2)][2 * t + i % 2] = c[l][i];
  }
  for (uint32_t l = 0; l < warp_lanes; ++l) {
    const uint32_t g = l / 4, t = l % 4;
    for (uint32_t i = 0; i < 4; ++i) {
      const uint32_t row = g + 8 * (i / 2), col = 2 * t + i % 2;
      // bf16 products are exact in double; the 17-term sum nearly so.
      double sum = C[row][col];
      for (uint32_t k = 0; k < 16; ++k)
        sum += static_cast<double>(A[row][k]) * B[k][col];
      d[l][i] = static_cast<float>(sum);
    }
  }
}

void ldmatrix_m8n8_b16(const uint16_t *const rows[warp_lanes], uint32_t num,
                       bool trans, uint32_t out[warp_lanes][4]) {
  for (uint32_t m = 0; m < num; ++m) {
    const uint16_t *const *M = rows + 8 * m;
    for (uint32_t l = 0; l < warp_lanes; ++l) {
      const uint32_t r = l / 4, c = 2 * (l % 4);
      const uint16_t first = trans ? M[c][r] : M[r][c];
      const uint16_t second = trans ? M[c + 1][r] : M[r][c + 1];
      out[l][m] =
          static_cast<uint32_t>(first) | (static_cast<uint32_t>(second) << 16);
    }
  }
}

} // namespace emu
} // namespace runtime
} // namespace sgc
