//===- GgufImport.h - a GGUF file -> the graph it describes -----*- C++ -*-===//
//
// Part of sgc. `sgc compile model.gguf`: the graph of a llama.cpp GGUF
// (version 3) as llama.cpp's loader reads it (design/QUANT.md §2), with
// each tensor's encoding from the file. The metadata becomes the HF config
// it stands for (so the family readers and completions are the HF route's),
// the graph is parsed like any other, and then takes the file's facts: the
// tensors' encodings and names, Gemma 3's norm weights stored with their +1
// (the converter folds it in), the vocabulary the file's embedding has.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_GGUF_GGUFIMPORT_H
#define SGC_COMPILER_IMPORT_GGUF_GGUFIMPORT_H

#include "compiler/Import/Gguf/GgufNames.h"
#include "compiler/Import/GraphSpec.h"
#include "compiler/Import/Importer.h"

#include "mlir/IR/MLIRContext.h"

namespace mlir::sgc {

/// The graph of the GGUF file `path`. Errors name the file and the
/// metadata key or tensor; families other than gemma3 are refused by name.
FailureOr<import::GraphSpec> graphFromGguf(MLIRContext *ctx,
                                           llvm::StringRef path,
                                           const ImportOptions &options);

/// Whether `contents` starts with GGUF's magic.
bool isGgufContents(llvm::StringRef contents);

} // namespace mlir::sgc

#endif // SGC_COMPILER_IMPORT_GGUF_GGUFIMPORT_H
