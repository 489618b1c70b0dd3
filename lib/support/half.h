/*
 * half.h - conversions between float and the 16- and 8-bit float formats.
 *
 * float -> bf16/f16 round to nearest, ties to even (what torch does); NaN
 * stays NaN (quiet), infinities stay infinite. And float8 e4m3fn, the FP8
 * of compressed-tensors checkpoints. Header-only so the fuzz target
 * and the model tests can use it without linking.
 */
#ifndef SGC_LIB_SUPPORT_HALF_H
#define SGC_LIB_SUPPORT_HALF_H

#include <cstdint>
#include <cstring>

namespace sgc {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float bf16_to_f32(uint16_t h) {
  return bits_float(static_cast<uint32_t>(h) << 16);
}

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) // NaN: keep sign, force quiet
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) // inf / NaN
    return bits_float(sign | 0x7F800000u | (mant << 13));
  if (exp != 0)
    return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0)
    return bits_float(sign);
  // Subnormal: normalize.
  uint32_t e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  mant &= 0x3FFu;
  return bits_float(sign | (e << 23) | (mant << 13));
}

inline uint16_t f32_to_f16(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7E00u);
  if (abs >= 0x477FF000u) // rounds to >= 65520: infinity
    return static_cast<uint16_t>(sign | 0x7C00u);
  if (abs < 0x38800000u) { // below the smallest normal f16 (2^-14)
    if (abs < 0x33000000u) // below half the smallest subnormal: zero
      return sign;
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - exp; // 14 + (113 - exp) - 1
    const uint32_t half = 1u << (shift - 1);
    const uint32_t rest = mant & ((1u << shift) - 1u);
    uint32_t r = mant >> shift;
    if (rest > half || (rest == half && (r & 1u)))
      ++r;
    return static_cast<uint16_t>(sign | r);
  }
  const uint32_t rounding = 0xFFFu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((abs - 0x38000000u + rounding) >> 13));
}

/// float -> float8 e4m3fn (OCP FP8: exponent bias 7, no infinities, 0x7F
/// and 0xFF NaN), round to nearest even, saturating at +-448 as FP8 writers
/// do (they clamp before the cast); NaN -> 0x7F.
inline uint8_t f32_to_e4m3(float f) {
  const uint32_t u = float_bits(f);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u)
    return static_cast<uint8_t>(sign | 0x7Fu);
  if (abs >= 0x43E00000u) // 448, the largest finite value
    return static_cast<uint8_t>(sign | 0x7Eu);
  if (abs < 0x3C800000u) { // below 2^-6: subnormals, multiples of 2^-9
    const float q = bits_float(abs) * 512.0f; // exact: a power of two
    uint32_t r = static_cast<uint32_t>(q);
    const float rest = q - static_cast<float>(r);
    if (rest > 0.5f || (rest == 0.5f && (r & 1u)))
      ++r; // 8 is the smallest normal's encoding, 0x08
    return static_cast<uint8_t>(sign | r);
  }
  // Keep 3 of the 23 mantissa bits, ties to even; rebias 127 -> 7.
  const uint32_t r = abs + 0x7FFFFu + ((abs >> 20) & 1u);
  return static_cast<uint8_t>(sign | ((r >> 20) - (120u << 3)));
}

/// float8 e4m3fn -> float (exact; NaN for 0x7F / 0xFF).
inline float e4m3_to_f32(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exp = (b >> 3) & 0xFu, mant = b & 7u;
  if (exp == 0xF && mant == 7)
    return bits_float(sign | 0x7FC00000u);
  if (exp == 0)
    return bits_float(sign) + (sign ? -1.0f : 1.0f) * static_cast<float>(mant) / 512.0f;
  return bits_float(sign | ((exp + 120u) << 23) | (mant << 20));
}

} // namespace sgc

#endif // SGC_LIB_SUPPORT_HALF_H
