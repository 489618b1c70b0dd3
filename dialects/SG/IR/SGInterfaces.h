//===- SGInterfaces.h - sg op interfaces ------------------------*- C++ -*-===//
//
// Part of sgc. The parts a projection or an attention op consists of, as
// its interface (SGInterfaces.td) hands them to the lowerings.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGINTERFACES_H
#define SGC_DIALECTS_SG_IR_SGINTERFACES_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::sgc::sg {

/// What a projection computes after its f32 dot products: a rounding
/// (Plain), then softcap (the LM head), or GELU-tanh(gate) x up.
enum class ProjectionEpilogue { Plain, Softcap, GatedGelu };

struct ProjectionParts {
  /// The [tokens, in] rows.
  Value x;
  /// The fused RMSNorm (when `norm`): its weight (null when it has none),
  /// epsilon and weight offset (Gemma's 1 + w).
  bool norm = false;
  Value normWeight;
  double eps = 0;
  int64_t normOffset = 0;
  /// The weights; a gated projection's are gate and up.
  SmallVector<Value> weights;
  /// sg.linear's bias, or null.
  Value bias;
  ProjectionEpilogue epilogue = ProjectionEpilogue::Plain;
  /// The softcap epilogue's cap.
  double cap = 0;
  bool gated() const { return epilogue == ProjectionEpilogue::GatedGelu; }
};

struct AttentionParts {
  Value q, k, v, kCache, vCache, position;
  /// Image-block ids (one per query row), or null.
  Value blocks;
  /// The ring's slots (key j lives in slot j mod window); 0: a full cache,
  /// key j in slot j.
  int64_t window = 0;
  double scale = 1.0;
};

} // namespace mlir::sgc::sg

#include "dialects/SG/IR/SGInterfaces.h.inc"

#endif // SGC_DIALECTS_SG_IR_SGINTERFACES_H
