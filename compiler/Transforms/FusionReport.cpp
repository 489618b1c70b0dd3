//===- FusionReport.cpp - what each fusion pass changed, per layer kind ---===//
//
// Part of sgc. A change is data first (FusionChange); the remark prints it
// and carries it as diagnostic metadata, so `sgc explain` reads the numbers
// rather than the text.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FusionUtils.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

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
  sg::SGDialect::LayerAttrHelper layerTag(root->getContext());
  sg::SGDialect::BlockAttrHelper blockTag(root->getContext());
  root->walk([&](func::FuncOp func) {
    // A layer's kind is its attention's.
    std::map<int64_t, std::string> kinds;
    std::map<int64_t, int64_t> opsPerLayer;
    std::map<std::string, int64_t> opsPerBlock;
    func.walk([&](Operation *op) {
      if (!isa<sg::SGDialect>(op->getDialect()) || isa<sg::WeightOp>(op))
        return;
      auto layer = layerTag.getAttr(op);
      if (layer) {
        ++opsPerLayer[layer.getInt()];
        if (isa<sg::SlidingAttnOp>(op))
          kinds[layer.getInt()] = "sliding";
        else if (isa<sg::FullAttnOp>(op))
          kinds[layer.getInt()] = "full";
      } else if (auto block = blockTag.getAttr(op)) {
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

/// The metadata key of a fusion remark's change.
constexpr llvm::StringLiteral kChangeKey =
    sg::SGDialect::FusionChangeAttrHelper::getNameStr();

/// Attaches `change` to `diag` as a dictionary under kChangeKey.
void attachChange(InFlightDiagnostic &diag, MLIRContext *ctx,
                  const FusionChange &change) {
  Builder b(ctx);
  NamedAttribute fields[] = {
      b.getNamedAttr("pass", b.getStringAttr(change.pass)),
      b.getNamedAttr("function", b.getStringAttr(change.function)),
      b.getNamedAttr("kind", b.getStringAttr(change.kind)),
      b.getNamedAttr("count", b.getI64IntegerAttr(change.count)),
      b.getNamedAttr("before", b.getI64IntegerAttr(change.opsBefore)),
      b.getNamedAttr("after", b.getI64IntegerAttr(change.opsAfter))};
  DictionaryAttr dict = b.getDictionaryAttr(
      b.getNamedAttr(kChangeKey, b.getDictionaryAttr(fields)));
  if (Diagnostic *d = diag.getUnderlyingDiagnostic())
    d->getMetadata().push_back(DiagnosticArgument(dict));
}

} // namespace

std::string mlir::sgc::FusionChange::describe() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << pass << " on @" << function << ", " << kind
     << (isLayer() ? " layers" : "") << " (" << count << "): " << opsBefore
     << " -> " << opsAfter << " sg ops" << (isLayer() ? " per layer" : "");
  return s;
}

void mlir::sgc::runAndReportFusion(Operation *root, StringRef pass,
                                   llvm::function_ref<void()> fuse) {
  Census before = takeCensus(root);
  fuse();
  Census after = takeCensus(root);
  for (const auto &[key, counts] : before.counts) {
    auto it = after.counts.find(key);
    if (it == after.counts.end() || it->second.second == counts.second)
      continue;
    FusionChange change;
    change.pass = pass.str();
    change.function = key.first;
    change.kind = key.second;
    change.count = counts.first;
    change.opsBefore = counts.second / counts.first;
    change.opsAfter = it->second.second / counts.first;
    auto func = dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupSymbolIn(root, key.first));
    InFlightDiagnostic diag = emitRemark(func ? func.getLoc() : root->getLoc());
    diag << "fusion: " << change.describe();
    attachChange(diag, root->getContext(), change);
  }
}

std::optional<FusionChange> mlir::sgc::getFusionChange(Diagnostic &diag) {
  for (const DiagnosticArgument &arg : diag.getMetadata()) {
    if (arg.getKind() != DiagnosticArgument::DiagnosticArgumentKind::Attribute)
      continue;
    auto outer = dyn_cast<DictionaryAttr>(arg.getAsAttribute());
    DictionaryAttr dict =
        outer ? outer.getAs<DictionaryAttr>(kChangeKey) : DictionaryAttr();
    if (!dict)
      continue;
    auto text = [&](StringRef name) {
      auto attr = dict.getAs<StringAttr>(name);
      return attr ? attr.str() : std::string();
    };
    auto number = [&](StringRef name) -> int64_t {
      auto attr = dict.getAs<IntegerAttr>(name);
      return attr ? attr.getInt() : 0;
    };
    FusionChange change;
    change.pass = text("pass");
    change.function = text("function");
    change.kind = text("kind");
    change.count = number("count");
    change.opsBefore = number("before");
    change.opsAfter = number("after");
    return change;
  }
  return std::nullopt;
}
