//===- HfImport.h - HF config.json -> system_graph.json ---------*- C++ -*-===//
//
// Part of sgc. `sgc import-hf` and `sgc compile|explain HF_DIR`: a schema-6
// graph from a Hugging Face config.json (Gemma 3 and Gemma 4 dense models),
// with the defaults transformers fills in, and the checkpoint's tensor
// names and shapes from its index or .safetensors when given. The graph is
// then imported like any other (Importer.h).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_HFIMPORT_H
#define SGC_COMPILER_IMPORT_HF_HFIMPORT_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::sgc {

struct HfImportOptions {
  /// A model.safetensors.index.json or a .safetensors file; empty: the
  /// family's tensor names, derived.
  std::string tensorsPath;
  /// The graph's source_artifact; empty: the config's directory name or
  /// `_name_or_path` when either names a model of the family, else
  /// "gemma-3" / "gemma-4".
  std::string artifact;
};

/// How a compressed-tensors checkpoint stores the graph's tensors: tensor
/// name -> FP8_CH, INT4_G32 or INT4_G128 for the decoder matrices its
/// quantization_config quantizes; every other tensor is BF16. Empty for a
/// BF16 or F16 checkpoint.
struct HfStorage {
  std::map<std::string, std::string> encodings;
  /// "FP8 e4m3, channel scales".
  std::string summary;
};

/// The schema-6 graph (JSON text) of `text`, the contents of the config
/// `configPath`. Every problem is a diagnostic on `ctx` naming the file
/// and the JSON path; fails at the first error. A config with a
/// quantization_config fills `storage`; without one to fill, a warning
/// says the graph describes the model, not its storage.
FailureOr<std::string> importHfConfig(MLIRContext *ctx,
                                      llvm::StringRef configPath,
                                      llvm::StringRef text,
                                      const HfImportOptions &options,
                                      HfStorage *storage = nullptr);

namespace import {
struct GraphSpec;
}
/// Binds the graph's quantized tensors to `storage`'s encodings (the
/// checkpoint's own names); `source` names the folder for messages.
void applyHfStorage(import::GraphSpec &graph, const HfStorage &storage,
                    llvm::StringRef source);

/// The files of an HF checkpoint directory: config.json, and the tensors
/// (model.safetensors.index.json, else model.safetensors; empty if
/// neither).
struct HfDirectory {
  std::string config, tensors;
};
HfDirectory findHfFiles(llvm::StringRef dir);

} // namespace mlir::sgc

#endif // SGC_COMPILER_IMPORT_HF_HFIMPORT_H
