/*
 * compressed_tensors.h - a compressed-tensors checkpoint's FP8 and INT4
 * weights as the block encodings the compiler reads (design/QUANT.md §4).
 *
 * Such a checkpoint stores a quantized Linear `X` as parts:
 *   FP8 (float-quantized): X.weight F8_E4M3 [N, K] and X.weight_scale
 *     [N, 1] (a scale per output channel) or [1] / [] (one for the tensor);
 *     X.input_scale (static activations) is not applied: sgc computes
 *     weight-only.
 *   INT4 (pack-quantized, symmetric): X.weight_packed I32 [N, K / 8] (the
 *     nibble of element 8w + i at bits 4i of word w, value + 8),
 *     X.weight_scale [N, K / g] (g = 32 or 128) and X.weight_shape [2].
 * Scales are BF16, F16 or F32. fold_compressed_tensors replaces each such
 * group by one tensor X.weight of dtype FP8_CH, INT4_G32 or INT4_G128
 * (<sgc/abi.h>) with no bytes in a file: the binder packs its blocks into
 * memory of its own (pack_blocks). Everything else stays as it is.
 */
#ifndef SGC_RUNTIME_SRC_COMPRESSED_TENSORS_H
#define SGC_RUNTIME_SRC_COMPRESSED_TENSORS_H

#include "lib/support/status.h"
#include "runtime/src/weight_source.h"

#include <vector>

namespace sgc {
namespace runtime {

/// Folds the compressed-tensors groups of |tensors| (sorted by name; stays
/// sorted). A group that is not one of the two forms above (a scale of the
/// wrong shape, a packed size that does not match weight_shape, zero
/// points, an act-order weight_g_idx, 128 x 128 FP8 blocks) is an error
/// naming the file and the tensor.
status fold_compressed_tensors(std::vector<source_tensor> &tensors);

/// Blocks [first, first + count) of the folded tensor |t| into |out|
/// (count x its block bytes). False when a value cannot be packed (an
/// e4m3 NaN).
bool pack_blocks(const source_tensor &t, uint64_t first, uint64_t count,
                 uint8_t *out);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_COMPRESSED_TENSORS_H
