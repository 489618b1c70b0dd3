//===- QuantizeFp8.h - sgc quantize --type fp8 ------------------*- C++ -*-===//
//
// Part of sgc. `sgc quantize HF_DIR OUT_DIR --type fp8`: the compressed-
// tensors FP8 folder (float-quantized, design/QUANT.md §4) vLLM and sgc
// read, of a BF16 / F16 / F32 checkpoint: every decoder layer's Linear
// weight as e4m3 with a scale per output channel (s = bf16(max |w_row| /
// 448), q = e4m3(w / s), nearest-even, clamped at +-448), activations
// dynamic per token in the config; the embedding (the tied LM head), the
// norms and the vision tower as they were, their Linear modules in the
// `ignore` list. The other files of the folder (tokenizer, chat template,
// processor configs) are copied.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_QUANTIZE_QUANTIZEFP8_H
#define SGC_COMPILER_QUANTIZE_QUANTIZEFP8_H

#include "compiler/Quantize/QuantizeHf.h"

namespace mlir::sgc {

/// Writes the FP8 folder of `dir` to `outDir`, which must not exist: whole
/// (a temporary folder renamed at the end) or not at all. Errors are
/// diagnostics on `ctx` naming the file and the tensor or JSON path.
LogicalResult quantizeHfToFp8(MLIRContext *ctx, llvm::StringRef dir,
                              llvm::StringRef outDir,
                              const QuantizeOptions &options,
                              llvm::raw_ostream &log);

} // namespace mlir::sgc

#endif // SGC_COMPILER_QUANTIZE_QUANTIZEFP8_H
