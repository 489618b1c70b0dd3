/*
 * dtype.cc - dtype names and sizes.
 */
#include "lib/support/dtype.h"

#include <sgc/abi.h>

namespace sgc {

static_assert(static_cast<uint32_t>(dtype::bf16) == SGC_ABI_DTYPE_BF16, "");
static_assert(static_cast<uint32_t>(dtype::f32) == SGC_ABI_DTYPE_F32, "");
static_assert(static_cast<uint32_t>(dtype::f8_e8m0) == SGC_ABI_DTYPE_F8_E8M0,
              "");
static_assert(static_cast<uint32_t>(dtype::q8_0) == SGC_ABI_DTYPE_Q8_0, "");
static_assert(static_cast<uint32_t>(dtype::q4_0) == SGC_ABI_DTYPE_Q4_0, "");
static_assert(static_cast<uint32_t>(dtype::q6_k) == SGC_ABI_DTYPE_Q6_K, "");
static_assert(static_cast<uint32_t>(dtype::q4_k) == SGC_ABI_DTYPE_Q4_K, "");
static_assert(static_cast<uint32_t>(dtype::int4_g128) ==
                  SGC_ABI_DTYPE_INT4_G128,
              "");
static_assert(dtype_count == SGC_ABI_DTYPE_COUNT, "");

namespace {
struct dtype_row {
  dtype type;
  const char *name;
  uint32_t block_bytes;
  uint32_t block_elements;
};
constexpr dtype_row table[] = {
#define SGC_DTYPE_ROW(name, code, block_bytes, block_elements)                \
  {dtype(code), #name, block_bytes, block_elements},
    SGC_ABI_DTYPES(SGC_DTYPE_ROW)
#undef SGC_DTYPE_ROW
};
static_assert(sizeof(table) / sizeof(table[0]) == dtype_count, "");
// Row i holds code i (dtype_name and dtype_size index by code).
constexpr bool rowsInCodeOrder() {
  for (uint32_t i = 0; i < dtype_count; ++i)
    if (static_cast<uint32_t>(table[i].type) != i)
      return false;
  return true;
}
static_assert(rowsInCodeOrder(), "");
} // namespace

bool dtype_is_valid(uint32_t raw) { return raw > 0 && raw < dtype_count; }

const char *dtype_name(dtype type) {
  const auto raw = static_cast<uint32_t>(type);
  return raw < dtype_count ? table[raw].name : "INVALID";
}

dtype dtype_from_name(std::string_view name) {
  for (uint32_t i = 1; i < dtype_count; ++i)
    if (name == table[i].name && !dtype_is_block(table[i].type))
      return table[i].type;
  return dtype::invalid;
}

bool dtype_is_block(dtype type) { return dtype_block_elements(type) > 1; }

uint32_t dtype_block_elements(dtype type) {
  const auto raw = static_cast<uint32_t>(type);
  return raw < dtype_count ? table[raw].block_elements : 1;
}

uint32_t dtype_block_bytes(dtype type) {
  const auto raw = static_cast<uint32_t>(type);
  return raw < dtype_count ? table[raw].block_bytes : 0;
}

uint32_t dtype_size(dtype type) {
  return dtype_is_block(type) ? 0 : dtype_block_bytes(type);
}

bool dtype_tensor_bytes(dtype type, const int64_t *shape, size_t rank,
                        uint64_t *out) {
  const uint64_t per_block = dtype_block_elements(type);
  uint64_t blocks = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      return false;
    uint64_t n = static_cast<uint64_t>(shape[d]);
    if (d + 1 == rank) {
      if (n % per_block != 0)
        return false;
      n /= per_block;
    }
    if (__builtin_mul_overflow(blocks, n, &blocks))
      return false;
  }
  if (rank == 0 && per_block != 1)
    return false;
  return !__builtin_mul_overflow(blocks, uint64_t{dtype_block_bytes(type)},
                                 out);
}

bool dtype_is_computable_float(dtype type) {
  return type == dtype::f16 || type == dtype::bf16 || type == dtype::f32 ||
         type == dtype::f64;
}

} // namespace sgc
