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
    {dtype::invalid, "INVALID", 0}, {dtype::boolean, "BOOL", 1},
    {dtype::u8, "U8", 1},           {dtype::i8, "I8", 1},
    {dtype::i16, "I16", 2},         {dtype::u16, "U16", 2},
    {dtype::f16, "F16", 2},         {dtype::bf16, "BF16", 2},
    {dtype::i32, "I32", 4},         {dtype::u32, "U32", 4},
    {dtype::f32, "F32", 4},         {dtype::f64, "F64", 8},
    {dtype::i64, "I64", 8},         {dtype::u64, "U64", 8},
    {dtype::f8_e4m3, "F8_E4M3", 1}, {dtype::f8_e5m2, "F8_E5M2", 1},
    {dtype::f8_e8m0, "F8_E8M0", 1},
};
static_assert(sizeof(table) / sizeof(table[0]) == dtype_count, "");
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
