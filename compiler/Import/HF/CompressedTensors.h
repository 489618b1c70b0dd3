//===- CompressedTensors.h - an HF config's quantization_config -*- C++ -*-===//
//
// Part of sgc. A compressed-tensors checkpoint (design/QUANT.md §4) stores
// the Linear layers its config group targets, less its `ignore` list, as
// FP8 (float-quantized: e4m3 with channel or tensor scales) or INT4
// (pack-quantized, symmetric groups of 32 or 128); everything else stays
// BF16. sgc reads them weight-only: the runtime packs each into the block
// encoding named here (FP8_CH, INT4_G32, INT4_G128; runtime/src/
// compressed_tensors.h) and the kernels compute on the dequantized values.
// Any other scheme is refused at its JSON path.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_COMPRESSEDTENSORS_H
#define SGC_COMPILER_IMPORT_HF_COMPRESSEDTENSORS_H

#include "compiler/Import/HF/ConfigReader.h"
#include "compiler/Import/HF/TensorListing.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::sgc::import::hf {

/// The scheme of `root`'s `quantization_config`; nullopt without one.
FailureOr<std::optional<CompressedScheme>>
readQuantizationConfig(ConfigReader &r, const JsonNode &root);

/// The encoding of the checkpoint tensor `name` (a Linear's `X.weight`):
/// the scheme's when its group targets X and `ignore` does not name it,
/// else empty (BF16).
std::string compressedEncoding(const CompressedScheme &scheme,
                               llvm::StringRef name);

/// Fills `model.tensorEncodings` from its scheme: the decoder layers'
/// matrices (their Linear layers) the scheme quantizes.
void assignCompressedEncodings(HfModel &model);

/// Checks the parts `listing` stores for the quantized tensor `name`
/// (`shape` [N, K], the config's), adding their names to `parts`: the e4m3
/// weight and its weight_scale, or weight_packed, weight_scale and
/// weight_shape.
LogicalResult checkCompressedParts(MLIRContext *ctx,
                                   const TensorListing &listing,
                                   llvm::StringRef name,
                                   llvm::ArrayRef<int64_t> shape,
                                   llvm::StringRef encoding,
                                   std::vector<std::string> &parts);

} // namespace mlir::sgc::import::hf

#endif // SGC_COMPILER_IMPORT_HF_COMPRESSEDTENSORS_H
