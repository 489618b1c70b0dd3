//===- SourceRows.h - a checkpoint tensor's values as f32 -------*- C++ -*-===//
//
// Part of sgc. sgc quantize reads BF16, F16 and F32 checkpoint tensors a
// chunk of rows at a time and quantizes their f32 values.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_QUANTIZE_SOURCEROWS_H
#define SGC_COMPILER_QUANTIZE_SOURCEROWS_H

#include "lib/support/dtype.h"
#include "lib/support/half.h"

#include <cstdint>
#include <cstring>

namespace mlir::sgc {

/// Widens `count` values of a BF16, F16 or F32 tensor to f32 and adds `add`.
inline void widenToF32(::sgc::dtype type, const uint8_t *src, uint64_t count,
                       float add, float *dst) {
  for (uint64_t i = 0; i < count; ++i) {
    float v;
    if (type == ::sgc::dtype::bf16)
      v = ::sgc::bf16_to_f32(static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8)));
    else if (type == ::sgc::dtype::f16)
      v = ::sgc::f16_to_f32(static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8)));
    else
      std::memcpy(&v, src + 4 * i, 4);
    dst[i] = add != 0.0f ? v + add : v;
  }
}

} // namespace mlir::sgc

#endif // SGC_COMPILER_QUANTIZE_SOURCEROWS_H
