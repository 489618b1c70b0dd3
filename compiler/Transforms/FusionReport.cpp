//===- FusionReport.cpp - what each fusion pass changed, per layer kind ---===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionUtils.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// sg ops per layer, by function and layer kind.
struct Census {
  /// (function, kind) -> (layers, ops)
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>>
      counts;
};

Census takeCensus(Operation *root) {
  Census census;
  root->walk([&](func::FuncOp func) {
    // A layer's kind is its attention's.
    std::map<int64_t, std::string> kinds;
    std::map<int64_t, int64_t> opsPerLayer;
    std::map<std::string, int64_t> opsPerBlock;
    func.walk([&](Operation *op) {
      if (!isa<sg::SGDialect>(op->getDialect()) || isa<sg::WeightOp>(op))
        return;
      auto layer = op->getAttrOfType<IntegerAttr>("sg.layer");
      if (layer) {
        ++opsPerLayer[layer.getInt()];
        if (isa<sg::SlidingAttnOp>(op))
          kinds[layer.getInt()] = "sliding";
        else if (isa<sg::FullAttnOp>(op))
          kinds[layer.getInt()] = "full";
      } else if (auto block = op->getAttrOfType<StringAttr>("sg.block")) {
        ++opsPerBlock[block.str()];
      }
    });
    std::string name = func.getSymName().str();
    for (auto [layer, ops] : opsPerLayer) {
      std::string kind = kinds.count(layer) ? kinds[layer] : "other";
      auto &entry = census.counts[{name, kind}];
      entry.first += 1;
      entry.second += ops;
    }
    for (auto [block, ops] : opsPerBlock)
      census.counts[{name, block}] = {1, ops};
  });
  return census;
}

} // namespace

void mlir::sgc::runAndReportFusion(Operation *root, StringRef pass,
                                   llvm::function_ref<void()> fuse) {
  Census before = takeCensus(root);
  fuse();
  Census after = takeCensus(root);
  for (const auto &[key, counts] : before.counts) {
    auto it = after.counts.find(key);
    if (it == after.counts.end() || it->second.second == counts.second)
      continue;
    auto func = dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupSymbolIn(root, key.first));
    Location loc = func ? func.getLoc() : root->getLoc();
    int64_t layers = counts.first;
    bool isLayer = key.second != "embed" && key.second != "head";
    emitRemark(loc) << "fusion: " << pass << " on @" << key.first << ", "
                    << key.second << (isLayer ? " layers" : "") << " ("
                    << layers << "): " << counts.second / layers << " -> "
                    << it->second.second / layers << " sg ops"
                    << (isLayer ? " per layer" : "");
  }
}
