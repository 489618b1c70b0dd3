/*
 * dtype.h - the element types of safetensors files and of the model ABI.
 *
 * The enumerator values equal the SGC_ABI_DTYPE_* codes of <sgc/abi.h> and
 * the SGC_DTYPE_* codes of <sgc/runtime.h> (checked by static_assert where
 * both are visible), so values cross those boundaries without a table.
 */
#ifndef SGC_LIB_SUPPORT_DTYPE_H
#define SGC_LIB_SUPPORT_DTYPE_H

#include <cstdint>
#include <string_view>

namespace sgc {

enum class dtype : uint32_t {
  invalid = 0,
  boolean = 1,
  u8 = 2,
  i8 = 3,
  i16 = 4,
  u16 = 5,
  f16 = 6,
  bf16 = 7,
  i32 = 8,
  u32 = 9,
  f32 = 10,
  f64 = 11,
  i64 = 12,
  u64 = 13,
  f8_e4m3 = 14,
  f8_e5m2 = 15,
  f8_e8m0 = 16,
};

/// Number of valid enumerators plus one (the largest value + 1).
constexpr uint32_t dtype_count = 17;

/// The safetensors spelling ("BF16", "F8_E4M3", "BOOL"); "INVALID" for
/// anything else.
const char *dtype_name(dtype type);

/// Parses a safetensors dtype string. Returns dtype::invalid when unknown.
dtype dtype_from_name(std::string_view name);

/// Bytes per element (1, 2, 4 or 8); 0 for dtype::invalid.
uint32_t dtype_size(dtype type);

/// True for the floating-point types the runtime can fill and convert
/// (F16, BF16, F32, F64); F8 types are storage-only for now.
bool dtype_is_computable_float(dtype type);

/// True for any valid enumerator.
bool dtype_is_valid(uint32_t raw);

} // namespace sgc

#endif // SGC_LIB_SUPPORT_DTYPE_H
