//===- GgufModel.h - a Gemma graph as a GGUF's keys and tensors -*- C++ -*-===//
//
// Part of sgc. The `gemma3` / `gemma4` metadata llama.cpp's converter writes
// for a model, and the tensors llama-quantize writes of it: which checkpoint
// tensor each comes from (or the values of one the converter makes), its
// type, its shape and llama.cpp's order.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_QUANTIZE_GGUFMODEL_H
#define SGC_COMPILER_QUANTIZE_GGUFMODEL_H

#include "compiler/Import/GraphSpec.h"
#include "lib/gguf/writer.h"

#include "mlir/IR/MLIRContext.h"

#include <nlohmann/json.hpp>
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir::sgc {

/// One tensor of the file: `rows` x `columns` values of the checkpoint
/// tensor `source` (its first `rows` rows: the embedding keeps the
/// vocabulary's), plus `add` (Gemma 3's norms are stored as 1 + w), as
/// `type`; or, without a source, `values` (Gemma 4's rope_freqs). A 1-D
/// tensor is one row.
struct GgufTensor {
  std::string name, source;
  ::sgc::gguf::ggml_type type = ::sgc::gguf::ggml_type::f32;
  int64_t rows = 1, columns = 0;
  bool matrix = false;
  float add = 0;
  std::vector<float> values;
};

/// The `general.*` and `gemma3.*` / `gemma4.*` keys of `graph` (a Gemma
/// text model with --weights applied; `config` its parsed config.json) into
/// `out`: named after its `folder` and sized by its `params` (the elements
/// of the file's tensors) as the converter names and sizes them. Fails,
/// naming config.json's key, where the architecture of a GGUF cannot say
/// what the model does (Gemma 3's layer pattern or attention scale).
LogicalResult writeModelMetadata(MLIRContext *ctx,
                                 const import::GraphSpec &graph,
                                 const nlohmann::json &config,
                                 llvm::StringRef folder, uint64_t params,
                                 ::sgc::gguf::writer &out);

/// The file's tensors in llama.cpp's order (the model's own, then each
/// layer's, each group by name): Gemma 3's embedding rows cut to
/// `vocabRows`, Gemma 4's rope_freqs made.
std::vector<GgufTensor> planTensors(const import::GraphSpec &graph,
                                    int64_t vocabRows);

/// The ggml type of a --weights encoding ("Q4_K", "F32", ...).
::sgc::gguf::ggml_type ggmlTypeOf(llvm::StringRef encoding);

} // namespace mlir::sgc

#endif // SGC_COMPILER_QUANTIZE_GGUFMODEL_H
