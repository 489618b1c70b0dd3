//===- CpuFamilies.cpp - the CPU kernel families, one line each ----------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/CpuFamilies.h"
#include "dialects/SG/IR/SGOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

namespace {
template <typename... Ops>
bool isOneOf(Operation *op, const CpuContext &) {
  return isa<Ops...>(op);
}

CpuKernelFamilySet buildCpuFamilies() {
  CpuKernelFamilySet set;
  // Projections: a rows kernel over the widened (and normalized) input and
  // a dispatcher the glue spreads over the threads (Linear.cpp).
  set.add({"cpu_projection", 1, isOneOf<sg::ProjectionOpInterface>,
           lowerLinear});
  set.add({"cpu_norm_rope", 1, isOneOf<sg::NormRopeOp>, lowerNormRope});
  set.add({"cpu_attention", 1,
           isOneOf<sg::AttentionOpInterface, sg::EncoderAttnOp>,
           lowerAttentionFamily});
  set.add({"cpu_kv_write", 1, isOneOf<sg::KVWriteOp>, lowerAttentionFamily});
  set.add({"cpu_vision", 1,
           isOneOf<sg::LayerNormOp, sg::AffineOp, sg::StandardizeOp,
                   sg::AxialRopeOp, sg::AddPositionEmbeddingOp,
                   sg::AvgPool2DOp, sg::PositionPoolOp, sg::MergeImageRowsOp>,
           lowerVisionFamily});
  set.add({"cpu_elementwise", 1,
           isOneOf<sg::EmbedOp, sg::RMSNormOp, sg::SplitHeadsOp,
                   sg::MergeHeadsOp, sg::TakeRowOp, sg::StackRowsOp, sg::RopeOp, sg::PartialRopeOp,
                   sg::GeluTanhOp, sg::MulOp, sg::AddOp, sg::LayerScalarOp,
                   sg::SoftcapOp>,
           lowerElementwiseFamily});
  return set;
}
} // namespace

const CpuKernelFamilySet &lowering::cpuKernelFamilies() {
  static const CpuKernelFamilySet families = buildCpuFamilies();
  return families;
}
