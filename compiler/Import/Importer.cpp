//===- Importer.cpp - system_graph.json (schema 6) -> sg IR ---------------===//
//
// Part of sgc. Glue: parse and validate, build the module, verify it, and
// check that the IR binds exactly the tensors the family table derives.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Importer.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::sgc;

/// The IR and the tensor table are written separately; they must name the
/// same tensors with the same shapes, or the runtime would bind tensors the
/// explain output never mentioned. A mismatch is a bug in sgc.
static LogicalResult checkBindings(ModuleOp module,
                                   const import::GraphSpec &graph) {
  llvm::StringMap<std::vector<int64_t>> table;
  for (const import::TensorSpec &tensor : import::textTensors(graph.text))
    table[tensor.name] = tensor.shape;
  // The tower, when the importer built it.
  if (module.lookupSymbol("encode_image"))
    for (const import::VisionSpec &component : graph.opaqueComponents)
      if (component.modality == "image") {
        for (const import::TensorSpec &tensor : import::perceptionTensors(
                 component, graph.text.hiddenSize))
          table[tensor.name] = tensor.shape;
        break;
      }
  llvm::StringMap<bool> used;
  WalkResult result = module.walk([&](sg::WeightOp op) {
    auto it = table.find(op.getName());
    ArrayRef<int64_t> shape = op.getType().getShape();
    if (it == table.end() || ArrayRef<int64_t>(it->second) != shape) {
      op.emitError("internal error: the IR binds '")
          << op.getName() << "' " << op.getType()
          << ", which the family tensor table does not list";
      return WalkResult::interrupt();
    }
    used[op.getName()] = true;
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (const auto &entry : table)
    if (!used.count(entry.getKey()))
      return emitError(module.getLoc(), "internal error: tensor '")
             << entry.getKey() << "' of the family table is never bound";
  return success();
}

OwningOpRef<ModuleOp> mlir::sgc::importSystemGraph(
    MLIRContext *ctx, StringRef fileName, StringRef text,
    const ImportOptions &options) {
  FailureOr<import::GraphSpec> graph =
      parseSystemGraph(ctx, fileName, text, options);
  if (failed(graph))
    return nullptr;
  if (options.maxSoftTokens > 0)
    for (import::VisionSpec &component : graph->opaqueComponents) {
      if (component.family != import::Family::Gemma4) {
        emitError(import::makeLoc(ctx, fileName, component.pos))
            << "--max-soft-tokens: component '" << component.id
            << "' is not a Gemma 4 tower (its soft tokens per image are "
               "fixed by its image size)";
        return nullptr;
      }
      component.softTokensPerImage = options.maxSoftTokens;
    }
  return importGraphSpec(ctx, *graph, options);
}

OwningOpRef<ModuleOp>
mlir::sgc::importGraphSpec(MLIRContext *ctx, const import::GraphSpec &graph,
                           const ImportOptions &options) {
  OwningOpRef<ModuleOp> module = buildModule(ctx, graph, options);
  if (!module || failed(verify(*module)) ||
      failed(checkBindings(*module, graph)))
    return nullptr;
  return module;
}
