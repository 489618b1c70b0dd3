//===- GgufNames.h - the GGUF names of a graph's tensors --------*- C++ -*-===//
//
// Part of sgc. What sgc compile model.gguf and the weights recipes share:
// llama.cpp's names of a gemma3 text model's tensors and the form of its
// norm weights.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_GGUF_GGUFNAMES_H
#define SGC_COMPILER_IMPORT_GGUF_GGUFNAMES_H

#include "compiler/Import/GraphSpec.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::sgc {

/// The GGUF name of the graph's tensor `name` (a gemma3 text model), or ""
/// when the table has none.
std::string ggufNameOf(const import::TextSpec &text, llvm::StringRef name);

/// A GGUF's Gemma 3 norm weights are stored as 1 + w (the converter folds
/// the offset in): every norm of `text` multiplies by the stored weight.
void takeStoredNormWeights(import::TextSpec &text);

/// `--weights=q8_0|q4_0|q4_k_m|q6_k` on a gemma3 or gemma4 graph: the model binds
/// the GGUF that llama.cpp's converter and `llama-quantize` make of it with
/// that type (every matrix Q8_0; or matrices Q4_0 and the tied embedding
/// Q6_K, Q8_0 when its width is no multiple of 256; or matrices Q4_K with
/// the embedding and the more-bits attn_v / ffn_down Q6_K; or every matrix
/// Q6_K (Q8_0 where the width is no multiple of 256); norms F32, Gemma
/// 3's stored as 1 + w), each tensor by its GGUF name. Errors name the graph
/// and the tensor.
LogicalResult applyWeightsRecipe(MLIRContext *ctx, import::GraphSpec &graph,
                                 llvm::StringRef recipe);

} // namespace mlir::sgc

#endif // SGC_COMPILER_IMPORT_GGUF_GGUFNAMES_H
