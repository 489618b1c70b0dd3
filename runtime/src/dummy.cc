/*
 * dummy.cc - deterministic dummy weights.
 */
#include "runtime/src/dummy.h"

#include "lib/support/dtype.h"
#include "lib/support/half.h"
#include "lib/support/hash.h"

#include <sgc/abi.h>

#include <cstring>

namespace sgc {
namespace runtime {

uint64_t dummy_seed(const char *name) {
  return fnv1a64(name, std::strlen(name));
}

float dummy_value(uint64_t seed, uint64_t index) {
  const uint64_t r = splitmix64_at(seed, index);
  const int64_t centered = static_cast<int64_t>(r >> 40) - (int64_t{1} << 23);
  return static_cast<float>(centered) * (0.02f / 8388608.0f);
}

namespace {

template <typename T>
void fill_constant(T value, uint64_t count, void *dst) {
  T *out = static_cast<T *>(dst);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = value;
}

template <typename T, typename F>
void fill_each(uint64_t first, uint64_t count, void *dst, F &&f) {
  T *out = static_cast<T *>(dst);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = f(first + i);
}

void fill_ones(uint32_t dt, uint64_t count, void *dst) {
  switch (dt) {
  case SGC_ABI_DTYPE_F32:
    return fill_constant<float>(1.0f, count, dst);
  case SGC_ABI_DTYPE_F64:
    return fill_constant<double>(1.0, count, dst);
  case SGC_ABI_DTYPE_BF16:
    return fill_constant<uint16_t>(0x3F80, count, dst);
  case SGC_ABI_DTYPE_F16:
    return fill_constant<uint16_t>(0x3C00, count, dst);
  case SGC_ABI_DTYPE_F8_E4M3:
    return fill_constant<uint8_t>(0x38, count, dst);
  case SGC_ABI_DTYPE_F8_E5M2:
    return fill_constant<uint8_t>(0x3C, count, dst);
  case SGC_ABI_DTYPE_F8_E8M0:
    return fill_constant<uint8_t>(0x7F, count, dst);
  case SGC_ABI_DTYPE_BOOL:
  case SGC_ABI_DTYPE_U8:
  case SGC_ABI_DTYPE_I8:
    return fill_constant<uint8_t>(1, count, dst);
  case SGC_ABI_DTYPE_I16:
  case SGC_ABI_DTYPE_U16:
    return fill_constant<uint16_t>(1, count, dst);
  case SGC_ABI_DTYPE_I32:
  case SGC_ABI_DTYPE_U32:
    return fill_constant<uint32_t>(1, count, dst);
  case SGC_ABI_DTYPE_I64:
  case SGC_ABI_DTYPE_U64:
    return fill_constant<uint64_t>(1, count, dst);
  default:
    return;
  }
}

/// Blocks [first, first + count) of a block-encoded tensor: random quants
/// under scales that keep every weight in about [-0.02, 0.02] (finite, as
/// the random floats are).
void fill_random_blocks(uint64_t seed, uint32_t dt, uint64_t first,
                        uint64_t count, void *dst) {
  const auto type = static_cast<sgc::dtype>(dt);
  const uint32_t block_bytes = dtype_block_bytes(type);
  auto *out = static_cast<uint8_t *>(dst);
  auto put_f16 = [](uint8_t *p, float v) {
    const uint16_t h = f32_to_f16(v);
    std::memcpy(p, &h, sizeof h);
  };
  auto put_f32 = [](uint8_t *p, float v) { std::memcpy(p, &v, sizeof v); };
  for (uint64_t b = 0; b < count; ++b) {
    uint8_t *blk = out + b * block_bytes;
    const uint64_t base = (first + b) * block_bytes;
    for (uint32_t i = 0; i < block_bytes; ++i)
      blk[i] = static_cast<uint8_t>(splitmix64_at(seed, base + i) >> 56);
    switch (dt) {
    case SGC_ABI_DTYPE_Q8_0: // d, then 32 int8 quants
      for (uint32_t i = 2; i < block_bytes; ++i)
        if (blk[i] == 0x80) // -128: keep the quants symmetric
          blk[i] = 0x81;
      put_f16(blk, 0.02f / 127.0f);
      break;
    case SGC_ABI_DTYPE_Q4_0: // d, then 16 bytes of nibbles
      put_f16(blk, 0.02f / 8.0f);
      break;
    case SGC_ABI_DTYPE_FP8_CH: // f32 s, then 32 e4m3 values (no NaN)
      for (uint32_t i = 4; i < block_bytes; ++i)
        blk[i] &= 0xBF; // |v| < 2: the exponent's top bit clear
      put_f32(blk, 0.01f);
      break;
    case SGC_ABI_DTYPE_INT4_G32: // f32 s, then nibbles
    case SGC_ABI_DTYPE_INT4_G128:
      put_f32(blk, 0.02f / 8.0f);
      break;
    case SGC_ABI_DTYPE_Q4_K: // d, dmin, 12 bytes of 6-bit scales and mins
      put_f16(blk, 0.02f / (16.0f * 64.0f));
      put_f16(blk + 2, 0.01f / 64.0f);
      break;
    default: // Q6_K: ql, qh, 16 int8 scales in [1, 64], d last
      for (uint32_t i = 192; i < 208; ++i)
        blk[i] = static_cast<uint8_t>(1 + blk[i] % 64);
      put_f16(blk + 208, 0.02f / (32.0f * 64.0f));
      break;
    }
  }
}

void fill_random(uint64_t seed, uint32_t dt, uint64_t first, uint64_t count,
                 void *dst) {
  auto r = [seed](uint64_t i) { return splitmix64_at(seed, i); };
  auto sint = [&](uint64_t i) { return static_cast<int>(r(i) % 5) - 2; };
  auto uint = [&](uint64_t i) { return static_cast<unsigned>(r(i) % 3); };
  switch (dt) {
  case SGC_ABI_DTYPE_F32:
    return fill_each<float>(first, count, dst,
                            [&](uint64_t i) { return dummy_value(seed, i); });
  case SGC_ABI_DTYPE_F64:
    return fill_each<double>(first, count, dst, [&](uint64_t i) {
      return static_cast<double>(dummy_value(seed, i));
    });
  case SGC_ABI_DTYPE_BF16:
    return fill_each<uint16_t>(first, count, dst, [&](uint64_t i) {
      return f32_to_bf16(dummy_value(seed, i));
    });
  case SGC_ABI_DTYPE_F16:
    return fill_each<uint16_t>(first, count, dst, [&](uint64_t i) {
      return f32_to_f16(dummy_value(seed, i));
    });
  case SGC_ABI_DTYPE_BOOL:
    return fill_each<uint8_t>(first, count, dst, [&](uint64_t i) {
      return static_cast<uint8_t>(r(i) & 1);
    });
  case SGC_ABI_DTYPE_I8:
    return fill_each<int8_t>(first, count, dst, sint);
  case SGC_ABI_DTYPE_U8:
    return fill_each<uint8_t>(first, count, dst, uint);
  case SGC_ABI_DTYPE_I16:
    return fill_each<int16_t>(first, count, dst, sint);
  case SGC_ABI_DTYPE_U16:
    return fill_each<uint16_t>(first, count, dst, uint);
  case SGC_ABI_DTYPE_I32:
    return fill_each<int32_t>(first, count, dst, sint);
  case SGC_ABI_DTYPE_U32:
    return fill_each<uint32_t>(first, count, dst, uint);
  case SGC_ABI_DTYPE_I64:
    return fill_each<int64_t>(first, count, dst, sint);
  case SGC_ABI_DTYPE_U64:
    return fill_each<uint64_t>(first, count, dst, uint);
  case SGC_ABI_DTYPE_Q8_0:
  case SGC_ABI_DTYPE_Q4_0:
  case SGC_ABI_DTYPE_Q6_K:
  case SGC_ABI_DTYPE_Q4_K:
  case SGC_ABI_DTYPE_FP8_CH:
  case SGC_ABI_DTYPE_INT4_G32:
  case SGC_ABI_DTYPE_INT4_G128:
    return fill_random_blocks(seed, dt, first, count, dst);
  default: // F8: storage only, zero
    std::memset(dst, 0, static_cast<size_t>(count));
    return;
  }
}

} // namespace

void fill_dummy(uint64_t seed, uint32_t abi_dtype, uint32_t fill,
                uint64_t first, uint64_t count, void *dst) {
  switch (fill) {
  case SGC_ABI_FILL_ONES:
    return fill_ones(abi_dtype, count, dst);
  case SGC_ABI_FILL_ZEROS:
    std::memset(dst, 0,
                static_cast<size_t>(count * dtype_block_bytes(
                                                static_cast<sgc::dtype>(abi_dtype))));
    return;
  default:
    return fill_random(seed, abi_dtype, first, count, dst);
  }
}

} // namespace runtime
} // namespace sgc
