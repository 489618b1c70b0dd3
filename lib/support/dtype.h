/*
 * dtype.h - the element types of safetensors files and of the model ABI.
 *
 * The enumerator values equal the SGC_ABI_DTYPE_* codes of <sgc/abi.h> and
 * the SGC_DTYPE_* codes of <sgc/runtime.h> (checked by static_assert where
 * both are visible), so values cross those boundaries without a table.
 */
#ifndef SGC_LIB_SUPPORT_DTYPE_H
#define SGC_LIB_SUPPORT_DTYPE_H

#include <cstddef>
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
  // Block encodings (GGUF files only; <sgc/abi.h> has their layouts).
  q8_0 = 17,
  q4_0 = 18,
  q6_k = 19,
  q4_k = 20,
  // Compressed-tensors FP8 / INT4 weights as the runtime packs them.
  fp8_ch = 21,
  int4_g32 = 22,
  int4_g128 = 23,
};

/// Number of valid enumerators plus one (the largest value + 1).
constexpr uint32_t dtype_count = 24;

/// The safetensors spelling ("BF16", "F8_E4M3", "BOOL") or ggml's ("Q4_0");
/// "INVALID" for anything else.
const char *dtype_name(dtype type);

/// Parses a safetensors dtype string. Returns dtype::invalid when unknown
/// and for the block encodings, which safetensors files do not have.
dtype dtype_from_name(std::string_view name);

/// Bytes per element (1, 2, 4 or 8); 0 for dtype::invalid and the block
/// encodings (use dtype_tensor_bytes).
uint32_t dtype_size(dtype type);

/// True for Q8_0, Q4_0, Q6_K, Q4_K, FP8_CH, INT4_G32, INT4_G128: a row is
/// stored as whole blocks.
bool dtype_is_block(dtype type);
/// Elements per block (1 for the plain types) and bytes per block.
uint32_t dtype_block_elements(dtype type);
uint32_t dtype_block_bytes(dtype type);

/// The bytes of a row-major tensor of |type| and |shape| into |out|; false
/// when a dimension is negative, the last one is not a whole number of
/// blocks (a scalar or empty shape counts as one element), or the size
/// overflows.
bool dtype_tensor_bytes(dtype type, const int64_t *shape, size_t rank,
                        uint64_t *out);

/// True for the floating-point types the runtime can fill and convert
/// (F16, BF16, F32, F64); F8 types are storage-only for now.
bool dtype_is_computable_float(dtype type);

/// True for any valid enumerator.
bool dtype_is_valid(uint32_t raw);

} // namespace sgc

#endif // SGC_LIB_SUPPORT_DTYPE_H
