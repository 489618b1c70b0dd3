//===- OutlineRows.cpp - one function for a batched step's row ops --------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_OUTLINEROWSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// One row's ops, and what they take from and give to the rest of the body.
struct RowGroup {
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs, outputs;
};

/// The inputs (values from outside, in order of first use) and outputs
/// (results used outside, in op order) of `group.ops`. Rows built by one
/// sg-specialize loop list theirs in corresponding order.
void collectBoundary(RowGroup &group) {
  llvm::SmallPtrSet<Operation *, 16> inGroup(group.ops.begin(),
                                             group.ops.end());
  llvm::SetVector<Value> inputs;
  for (Operation *op : group.ops)
    for (Value v : op->getOperands())
      if (!v.getDefiningOp() || !inGroup.contains(v.getDefiningOp()))
        inputs.insert(v);
  group.inputs.assign(inputs.begin(), inputs.end());
  for (Operation *op : group.ops)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            return !inGroup.contains(user);
          }))
        group.outputs.push_back(r);
}

/// The row function of `body` built from `group`, or an equal one already
/// made.
func::FuncOp buildRowFunction(ModuleOp module, func::FuncOp body,
                              const RowGroup &group,
                              SmallVectorImpl<func::FuncOp> &made) {
  OpBuilder b(module.getContext());
  b.setInsertionPoint(body);
  SmallVector<Type> inputTypes, outputTypes;
  for (Value v : group.inputs)
    inputTypes.push_back(v.getType());
  for (Value v : group.outputs)
    outputTypes.push_back(v.getType());
  Location loc = group.ops.front()->getLoc();
  auto fn = func::FuncOp::create(b, loc, (body.getSymName() + "_row").str(),
                                 b.getFunctionType(inputTypes, outputTypes));
  fn.setPrivate();
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  map.map(group.inputs, entry->getArguments());
  b.setInsertionPointToStart(entry);
  for (Operation *op : group.ops)
    b.clone(*op, map);
  SmallVector<Value> returned;
  for (Value v : group.outputs)
    returned.push_back(map.lookup(v));
  func::ReturnOp::create(b, loc, returned);
  sg::SGDialect::BatchInvariantAttrHelper(b.getContext())
      .setAttr(fn, b.getUnitAttr());
  for (func::FuncOp other : made)
    if (other.getFunctionType() == fn.getFunctionType() &&
        OperationEquivalence::isRegionEquivalentTo(
            &other.getBody(), &fn.getBody(),
            OperationEquivalence::IgnoreLocations)) {
      fn.erase();
      return other;
    }
  made.push_back(fn);
  return fn;
}

LogicalResult outlineRows(ModuleOp module, func::FuncOp body,
                          SmallVectorImpl<func::FuncOp> &made) {
  // A row's ops: those that take a value of the row, starting from its
  // sg.take_row results, up to the sg.stack_rows that ends the part.
  llvm::MapVector<int64_t, RowGroup> rows;
  llvm::DenseMap<Value, int64_t> rowOf;
  for (Operation &op : body.getBody().front().without_terminator()) {
    if (auto take = dyn_cast<sg::TakeRowOp>(op)) {
      rowOf[take.getResult()] = take.getRow();
      continue;
    }
    if (isa<sg::StackRowsOp>(op))
      continue;
    for (Value v : op.getOperands()) {
      auto it = rowOf.find(v);
      if (it == rowOf.end())
        continue;
      int64_t row = it->second;
      rows[row].ops.push_back(&op);
      for (Value r : op.getResults())
        rowOf[r] = row;
      break;
    }
  }
  if (rows.empty())
    return success();
  for (auto &[row, group] : rows)
    collectBoundary(group);
  RowGroup &first = rows.front().second;
  for (auto &[row, group] : rows)
    if (group.ops.size() != first.ops.size() ||
        group.inputs.size() != first.inputs.size() ||
        group.outputs.size() != first.outputs.size())
      return group.ops.front()->emitError(
                 "sg-outline-rows: row ")
             << row << " does not run the ops of row " << rows.front().first;
  func::FuncOp fn = buildRowFunction(module, body, first, made);
  OpBuilder b(body.getContext());
  for (auto &[row, group] : rows) {
    // The call goes where the row's last op was: every input is defined by
    // then, and every user of an output comes later.
    b.setInsertionPointAfter(group.ops.back());
    auto call = func::CallOp::create(b, group.ops.front()->getLoc(), fn,
                                     group.inputs);
    for (auto [from, to] : llvm::zip_equal(group.outputs, call.getResults()))
      from.replaceAllUsesWith(to);
    for (Operation *op : llvm::reverse(group.ops))
      op->erase();
  }
  return success();
}

struct OutlineRowsPass : public sgc::impl::OutlineRowsPassBase<OutlineRowsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    sg::SGDialect::BatchInvariantAttrHelper invariant(&getContext());
    SmallVector<func::FuncOp> bodies, made;
    for (auto func : module.getOps<func::FuncOp>())
      if (invariant.getAttr(func))
        bodies.push_back(func);
    for (func::FuncOp body : bodies)
      if (failed(outlineRows(module, body, made)))
        return signalPassFailure();
  }
};

} // namespace
