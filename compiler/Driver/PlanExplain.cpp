//===- PlanExplain.cpp - `sgc explain --plan`: the plan in words ----------===//
//
// Part of sgc. Reads the plan IR (dialects/Plan) after the plan phase; the
// same IR the serializer writes into the ABI.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/PlanExplain.h"
#include "compiler/Import/Format.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::sgc;

namespace {

using import::withCommas;

std::string shapeOf(plan::BufferType type) {
  std::string s;
  for (int64_t d : type.getShape())
    s += (ShapedType::isDynamic(d) ? std::string("n") : std::to_string(d)) +
         "x";
  std::string element;
  llvm::raw_string_ostream os(element);
  os << type.getElementType();
  return s + element;
}

/// A buffer as a reader of the plan would name it.
std::string describe(Value v, plan::EntryOp entry) {
  // The entry's arguments, by the names the plan's printer gives them.
  static const char *const textArgs[] = {"tokens", "pos", "soft_tokens",
                                         "image_blocks"};
  static const char *const imageArgs[] = {"pixels", "patch_pos"};
  bool image = entry.getKind() == plan::EntryKind::encode_image;
  for (auto [i, arg] : llvm::enumerate(entry.getBlock().getArguments()))
    if (v == arg && i < (image ? 2u : 4u))
      return image ? imageArgs[i] : textArgs[i];
  if (auto cache = v.getDefiningOp<plan::KVCacheOp>())
    return (cache.getLayer() + "." + stringifyCacheHalf(cache.getHalf())).str();
  if (auto alloc = v.getDefiningOp<plan::AllocOp>())
    return "workspace@" +
           (alloc.getOffset() ? withCommas(*alloc.getOffset()) : "?") + " [" +
           shapeOf(alloc.getType()) + "]";
  if (auto weight = v.getDefiningOp<plan::WeightOp>())
    return weight.getTensor().str();
  return "?";
}

void printEntry(plan::EntryOp entry, llvm::raw_ostream &os) {
  Block &block = entry.getBlock();
  size_t steps = llvm::range_size(block.getOps<plan::StepOpInterface>());
  bool image = entry.getKind() == plan::EntryKind::encode_image;
  os << "\nentry " << entry.getSymName() << ": "
     << (image ? "" : "up to ") << withCommas(entry.getMaxTokens())
     << (image ? " patches (one image)" : " token")
     << (image || entry.getMaxTokens() == 1 ? "" : "s") << " a call, " << steps
     << " steps, workspace "
     << (entry.getWorkspace() ? withCommas(*entry.getWorkspace()) : "?")
     << " B\n";
  size_t index = 0;
  for (plan::StepOpInterface call : block.getOps<plan::StepOpInterface>()) {
    os << "  step " << index++;
    if (call.getLayer())
      os << " (layer " << *call.getLayer() << ")";
    os << ": " << call.getCalleeAttr().getLeafReference().getValue() << "(";
    // Weights are many: name the first and count the rest.
    SmallVector<std::string> reads;
    size_t weights = 0;
    std::string firstWeight;
    for (Value in : call.getIns()) {
      if (in.getDefiningOp<plan::WeightOp>()) {
        if (weights++ == 0)
          firstWeight = describe(in, entry);
        continue;
      }
      reads.push_back(describe(in, entry));
    }
    if (weights == 1)
      reads.push_back(firstWeight);
    else if (weights > 1)
      reads.push_back(firstWeight + " and " + std::to_string(weights - 1) +
                      " more weights");
    os << llvm::join(reads, ", ") << ") -> ";
    SmallVector<std::string> writes;
    for (Value out : call.getOuts())
      writes.push_back(describe(out, entry) +
                       (llvm::is_contained(call.getIns(), out) ? " (in place)"
                                                               : ""));
    os << llvm::join(writes, ", ");
    if (call.isRowwise())
      os << ", row-wise (only the last row when only its logits are wanted)";
    os << "\n";
  }
  auto ret = cast<plan::ReturnOp>(block.getTerminator());
  os << (image ? "  soft tokens: " : "  logits: ")
     << describe(ret.getLogits(), entry) << "\n";
  if (Value argmax = ret.getArgmax())
    os << "  argmax of the last row: " << describe(argmax, entry) << "\n";
}

} // namespace

LogicalResult mlir::sgc::explainPlan(MLIRContext *ctx, StringRef fileName,
                                     StringRef text,
                                     const ImportOptions &options,
                                     llvm::raw_ostream &os) {
  OwningOpRef<ModuleOp> module =
      importSystemGraph(ctx, fileName, text, options);
  if (!module)
    return failure();
  return explainPlanOf(ctx, fileName, *module, os);
}

LogicalResult mlir::sgc::explainPlan(MLIRContext *ctx, StringRef fileName,
                                     const import::GraphSpec &graph,
                                     const ImportOptions &options,
                                     llvm::raw_ostream &os) {
  OwningOpRef<ModuleOp> module = importGraphSpec(ctx, graph, options);
  if (!module)
    return failure();
  return explainPlanOf(ctx, fileName, *module, os);
}

LogicalResult mlir::sgc::explainPlanOf(MLIRContext *ctx, StringRef fileName,
                                       ModuleOp module, llvm::raw_ostream &os) {
  PassManager pm(ctx);
  for (Phase phase : {Phase::Import, Phase::GraphOpt, Phase::Fusion,
                      Phase::Plan})
    buildPhasePipeline(phase, pm, *allTargets().front());
  if (failed(pm.run(module)))
    return failure();

  int64_t tensors = 0, weightBytes = 0;
  for (plan::TensorOp t : module.getOps<plan::TensorOp>()) {
    // A block-encoded tensor counts its blocks' bytes.
    ++tensors;
    weightBytes += sg::storageBytes(t.getTensorType());
  }
  int64_t rings = 0, full = 0, kvBytes = 0;
  for (plan::KVLayerOp l : module.getOps<plan::KVLayerOp>()) {
    (l.getKind() == plan::KVKind::ring ? rings : full) += 1;
    kvBytes += l.getSlots() * l.bytesPerSlot();
  }
  os << "plan of " << fileName << " (what every target replays)\n"
     << "  manifest: " << withCommas(tensors) << " tensors, "
     << withCommas(weightBytes) << " B\n"
     << "  KV cache: " << rings << " ring and " << full << " full layers, "
     << withCommas(kvBytes) << " B\n";
  for (plan::EntryOp entry : module.getOps<plan::EntryOp>())
    printEntry(entry, os);
  return success();
}
