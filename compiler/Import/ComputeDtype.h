//===- ComputeDtype.h - the activation dtype of the IR ----------*- C++ -*-===//
//
// Part of sgc. `--compute-dtype`, parsed once by the driver, and the one
// rounding of a constant to it that the importer and `sgc explain` share.
// LLVM only, so the import fuzzer builds it as it is.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_COMPUTEDTYPE_H
#define SGC_COMPILER_IMPORT_COMPUTEDTYPE_H

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::sgc {

/// The dtype activations are computed and stored in.
enum class ComputeDtype { BF16, F32 };

/// The flag's spelling, also the value of `sg.compute_dtype`.
inline llvm::StringRef computeDtypeName(ComputeDtype dtype) {
  return dtype == ComputeDtype::BF16 ? "bf16" : "f32";
}

/// `name` ("bf16", "f32") as a dtype; nullopt for any other spelling.
inline std::optional<ComputeDtype> parseComputeDtype(llvm::StringRef name) {
  if (name == "bf16")
    return ComputeDtype::BF16;
  if (name == "f32")
    return ComputeDtype::F32;
  return std::nullopt;
}

/// `value` as the reference holds it in `dtype`: cast to f32 (its constant
/// buffer), then to the dtype, round to nearest, ties to even.
inline double roundToComputeDtype(double value, ComputeDtype dtype) {
  llvm::APFloat f(static_cast<float>(value));
  if (dtype == ComputeDtype::BF16) {
    bool losesInfo = false;
    f.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
  }
  return f.convertToDouble();
}

} // namespace mlir::sgc

#endif // SGC_COMPILER_IMPORT_COMPUTEDTYPE_H
