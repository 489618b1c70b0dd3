//===- TensorListing.h - the tensors a checkpoint holds ---------*- C++ -*-===//
//
// Part of sgc. What `--tensors` names: a `model.safetensors.index.json`
// (its `weight_map`, and each shard's header when the shard is next to
// it) or one `.safetensors` file (its header). The importer takes the
// checkpoint's tensor-name prefixes from it and checks the tensor table it
// derives from the config against it.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_TENSORLISTING_H
#define SGC_COMPILER_IMPORT_HF_TENSORLISTING_H

#include "compiler/Import/HF/HfModel.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::sgc::import::hf {

struct ListedTensor {
  /// The file that holds it (the shard, or the .safetensors itself).
  std::string file;
  /// From the file's header; absent when only an index names the tensor
  /// (its shard is not there).
  std::optional<std::string> dtype;
  std::vector<int64_t> shape;
};

struct TensorListing {
  /// The index or .safetensors file read.
  std::string path;
  std::map<std::string, ListedTensor> tensors;
};

/// "[4, 96]": a shape as the messages print it.
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// Reads `path` (an index JSON or a .safetensors file). Errors name the
/// file and, where it applies, the tensor or JSON key.
FailureOr<TensorListing> readTensorListing(MLIRContext *ctx,
                                           llvm::StringRef path);

/// Takes the text decoder's and the vision tower's tensor-name prefixes
/// from `listing`, then checks every tensor the family table derives for
/// `model`: present, and where the header is known, the derived shape and
/// BF16, or F16 for the matrices of the embedding or the decoder layers (one
/// encoding per object, recorded in `model.matrixEncodings`). A tensor of
/// the listing that the table does not derive is a warning.
LogicalResult applyListing(MLIRContext *ctx, const TensorListing &listing,
                           HfModel &model);

} // namespace mlir::sgc::import::hf

#endif // SGC_COMPILER_IMPORT_HF_TENSORLISTING_H
