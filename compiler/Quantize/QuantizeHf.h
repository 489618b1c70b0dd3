//===- QuantizeHf.h - sgc quantize: an HF checkpoint -> a GGUF --*- C++ -*-===//
//
// Part of sgc. `sgc quantize HF_DIR OUT.gguf --type q8_0|q4_0|q4_k_m|q6_k`:
// the file llama.cpp's convert_hf_to_gguf.py (bf16) and llama-quantize
// (TYPE) would make of a Gemma 3 checkpoint, in one pass that streams each
// tensor in chunks of rows (memory stays at a few chunks, whatever the
// checkpoint's size).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_QUANTIZE_QUANTIZEHF_H
#define SGC_COMPILER_QUANTIZE_QUANTIZEHF_H

#include "compiler/Import/GraphSpec.h"
#include "compiler/Import/HF/HfImport.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

#include <string>

namespace mlir::sgc {

struct QuantizeOptions {
  /// q8_0, q4_0, q4_k_m or q6_k.
  std::string type;
  /// Threads that quantize a chunk's rows (0: one per core).
  unsigned threads = 0;
  /// Seeded random values instead of the checkpoint's (none is read: the
  /// config alone makes a full-size file for benchmarks), and a placeholder
  /// vocabulary when the folder has no tokenizer.
  bool dummyWeights = false;
};

/// A BF16 / F16 checkpoint folder as sgc quantize reads it: its files, its
/// config and the graph of the `sgc compile HF_DIR` path.
struct SourceFolder {
  HfDirectory files;
  std::unique_ptr<llvm::MemoryBuffer> config;
  import::GraphSpec graph;
};

/// Reads `dir`, refusing a folder without config.json, without a tensors
/// file (unless `configOnly`) or quantized already.
FailureOr<SourceFolder> readSourceFolder(MLIRContext *ctx, llvm::StringRef dir,
                                         bool configOnly);

/// Writes the GGUF of the HF checkpoint folder `dir` to `outPath` (whole,
/// or nothing: a failure leaves no partial file and an existing file as it
/// was). Progress and notes go to `log`. Errors are diagnostics on `ctx`
/// naming the file and the tensor or JSON path.
LogicalResult quantizeHfCheckpoint(MLIRContext *ctx, llvm::StringRef dir,
                                   llvm::StringRef outPath,
                                   const QuantizeOptions &options,
                                   llvm::raw_ostream &log);

} // namespace mlir::sgc

#endif // SGC_COMPILER_QUANTIZE_QUANTIZEHF_H
