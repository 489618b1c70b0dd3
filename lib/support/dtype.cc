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
static_assert(dtype_count == SGC_ABI_DTYPE_COUNT, "");

namespace {
struct dtype_row {
  dtype type;
  const char *name;
  uint32_t size;
};
constexpr dtype_row table[] = {
#define SGC_DTYPE_ROW(name, code, bytes) {dtype(code), #name, bytes},
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
    if (name == table[i].name)
      return table[i].type;
  return dtype::invalid;
}

uint32_t dtype_size(dtype type) {
  const auto raw = static_cast<uint32_t>(type);
  return raw < dtype_count ? table[raw].size : 0;
}

bool dtype_is_computable_float(dtype type) {
  return type == dtype::f16 || type == dtype::bf16 || type == dtype::f32 ||
         type == dtype::f64;
}

} // namespace sgc
