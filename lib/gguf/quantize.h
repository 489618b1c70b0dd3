/*
 * quantize.h - rows of f32 weights into ggml's block encodings, the way
 * llama-quantize stores them when it has no importance matrix.
 *
 * Each encoding follows ggml's reference quantizer (quantize_row_*_ref)
 * step for step, in the same float operations and the same order, so a
 * build without FMA contraction writes the bytes llama-quantize writes:
 *   Q8_0  per 32: d = max|x| / 127, q = round(x / d) (ties away from 0).
 *   Q4_0  per 32: d = (the x of largest magnitude) / -8,
 *         q = min(15, trunc(x / d + 8.5)); nibbles: low = first 16.
 *   Q6_K  per 256: 16 sub-blocks of 16, each scale chosen by ggml's
 *         make_qx_quants search (weights x^2, 18 trial scales); the scales
 *         as int8 of d = -max_scale / 128.
 *   Q4_K  per 256: 8 sub-blocks of 32, scale and minimum chosen by ggml's
 *         make_qkx2_quants search (weights sqrt(mean x^2) + |x|, 21
 *         trials); both as 6 bits of d and dmin = max / 63.
 * F32, F16 and BF16 are stored as they are (16-bit: round to nearest even).
 */
#ifndef SGC_LIB_GGUF_QUANTIZE_H
#define SGC_LIB_GGUF_QUANTIZE_H

#include <cstddef>
#include <cstdint>

namespace sgc {
namespace gguf {

/// The ggml type numbers sgc writes.
enum class ggml_type : uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q8_0 = 8,
  q4_k = 12,
  q6_k = 14,
  bf16 = 30,
};

/// Elements per block of |type| (1 for the plain types).
uint32_t block_elements(ggml_type type);
/// Bytes of one row of |n| elements of |type|; |n| must be a whole number
/// of blocks.
uint64_t row_bytes(ggml_type type, uint64_t n);

/// Encodes |rows| rows of |n| floats each (|x|, row-major) as |type| into
/// |out| (rows * row_bytes(type, n) bytes). |n| is a whole number of the
/// type's blocks.
void quantize_rows(ggml_type type, const float *x, int64_t rows, int64_t n,
                   uint8_t *out);

} // namespace gguf
} // namespace sgc

#endif // SGC_LIB_GGUF_QUANTIZE_H
