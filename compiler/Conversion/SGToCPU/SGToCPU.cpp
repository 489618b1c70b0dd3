//===- SGToCPU.cpp - sg functions -> CPU kernels on buffers --------------===//
//
// Part of sgc. The pass driver: rebuilds each function that holds sg ops with
// the buffer calling convention (see Passes.td) and hands each op to its
// family's lowering.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/SGToCPU/CpuFamilies.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <algorithm>

namespace mlir::sgc {
#define GEN_PASS_DEF_CONVERTSGTOCPUPASS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

/// The buffer type of a tensor type (other types unchanged); a
/// block-encoded weight is a buffer of its bytes.
static Type bufferType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    auto [shape, element] = sg::storageOf(tensor);
    return MemRefType::get(shape, element);
  }
  return type;
}

/// For each result of `func`: the argument it updates in place (a kv_write
/// into an argument cache), or -1 for a result returned in an output buffer.
static SmallVector<int64_t> resultSlots(func::FuncOp func) {
  SmallVector<int64_t> slots;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (Value v : ret.getOperands()) {
    // The cache a result was written into in place, if any: an sg.kv_write,
    // or the new cache of a fused sg.norm_rope.
    Value cache;
    if (isa<BlockArgument>(v))
      cache = v; // a cache returned untouched (its layer caches V only)
    else if (auto write = v.getDefiningOp<sg::KVWriteOp>())
      cache = write.getCache();
    else if (auto fused = v.getDefiningOp<sg::NormRopeOp>()) {
      if (v == fused.getNewCache())
        cache = fused.getCache();
    } else if (auto call = v.getDefiningOp<func::CallOp>()) {
      // A lowered callee's result updated in place: that call operand.
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (auto calleeSlots = callee ? sg::SGDialect::ResultSlotsAttrHelper(
                                          func.getContext())
                                          .getAttr(callee)
                                    : ArrayAttr()) {
        int64_t arg = cast<IntegerAttr>(
                          calleeSlots[cast<OpResult>(v).getResultNumber()])
                          .getInt();
        if (arg >= 0)
          cache = call.getOperand(arg);
      }
    }
    int64_t slot = -1;
    if (auto arg = dyn_cast_or_null<BlockArgument>(cache))
      if (arg.getOwner() == &func.getBody().front())
        slot = arg.getArgNumber();
    slots.push_back(slot);
  }
  return slots;
}

/// Lowers `op` with the CPU family sg-select-kernels recorded on it.
static LogicalResult lowerOp(Operation *op, FunctionLowering &state) {
  sg::KernelAttr choice =
      sg::SGDialect::SelectedKernelAttrHelper(op->getContext()).getAttr(op);
  if (!choice)
    return op->emitError("convert-sg-to-cpu: no kernel was selected for "
                         "this op (sg-select-kernels=target=cpu runs first)");
  const CpuKernelFamily *family =
      cpuKernelFamilies().lookup(choice.getFamily().getValue());
  if (!family)
    return op->emitError("convert-sg-to-cpu: no CPU kernel family '")
           << choice.getFamily().getValue() << "'";
  return family->lower(op, state);
}

/// A call of another body (a batched decode step's row function, lowered
/// before its callers): its buffers, outputs updated in place where the
/// callee's result slots say so.
static LogicalResult lowerCall(func::CallOp call, FunctionLowering &state) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  auto slots = callee ? sg::SGDialect::ResultSlotsAttrHelper(call.getContext())
                            .getAttr(callee)
                      : ArrayAttr();
  if (!slots)
    return call.emitError("convert-sg-to-cpu: the callee is not a lowered "
                          "body");
  SmallVector<Value> args = {state.exec};
  for (Value v : call.getOperands())
    args.push_back(state.lookup(v));
  for (auto [result, slot] : llvm::zip_equal(call.getResults(), slots)) {
    int64_t arg = cast<IntegerAttr>(slot).getInt();
    Value buffer = arg >= 0 ? args[1 + arg]
                            : state.bufferFor(call.getLoc(), result);
    if (arg < 0)
      args.push_back(buffer);
    state.buffers.map(result, buffer);
  }
  func::CallOp::create(state.b, call.getLoc(), callee, args);
  return success();
}

/// Rebuilds `func` on buffers; the new function replaces it.
static LogicalResult lowerFunction(func::FuncOp func, ModuleOp module) {
  Block &oldBody = func.getBody().front();
  auto ret = cast<func::ReturnOp>(oldBody.getTerminator());
  SmallVector<int64_t> slots = resultSlots(func);

  // The execution context first, then the body's arguments and outputs.
  SmallVector<Type> inputs = {LLVM::LLVMPointerType::get(func.getContext())};
  for (Type t : func.getArgumentTypes())
    inputs.push_back(bufferType(t));
  for (auto [slot, type] : llvm::zip_equal(slots, func.getResultTypes()))
    if (slot < 0)
      inputs.push_back(bufferType(type));

  OpBuilder b(func);
  auto lowered = func::FuncOp::create(b, func.getLoc(), func.getSymName(),
                                      b.getFunctionType(inputs, {}));
  for (NamedAttribute attr : func->getDiscardableAttrs())
    lowered->setAttr(attr.getName(), attr.getValue());
  sg::SGDialect::ResultSlotsAttrHelper(b.getContext())
      .setAttr(lowered, b.getI64ArrayAttr(slots));
  lowered->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = lowered.addEntryBlock();
  b.setInsertionPointToStart(entry);

  FunctionLowering state(b, module);
  state.exec = entry->getArgument(0);
  for (BlockArgument arg : oldBody.getArguments())
    state.buffers.map(arg, entry->getArgument(1 + arg.getArgNumber()));
  // The token count: the leading dimension of the first dynamic argument.
  for (BlockArgument arg : entry->getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (type && type.getRank() > 0 && type.isDynamicDim(0)) {
      state.tokens = dimOf(b, func.getLoc(), arg, 0);
      break;
    }
  }
  // Each returned value with an output argument, in result order; the op
  // that computes it writes there directly when it can.
  SmallVector<std::pair<Value, Value>> outputs;
  unsigned nextOut = 1 + oldBody.getNumArguments();
  for (auto [slot, v] : llvm::zip_equal(slots, ret.getOperands()))
    if (slot < 0)
      outputs.push_back({v, entry->getArgument(nextOut++)});
  for (auto [v, out] : outputs)
    if (!isa<BlockArgument>(v))
      state.destinations.try_emplace(v, out);

  for (Operation &op : oldBody.without_terminator()) {
    auto call = dyn_cast<func::CallOp>(op);
    if (failed(call ? lowerCall(call, state) : lowerOp(&op, state)))
      return failure();
    for (auto &[after, emit] : state.deferred)
      if (after == &op)
        emit();
  }

  // Results computed elsewhere than in their output buffer are copied there.
  for (auto [v, out] : outputs) {
    Value buffer = state.lookup(v);
    if (buffer != out)
      linalg::CopyOp::create(b, ret.getLoc(), buffer, out);
  }
  for (Value buffer : state.allocated)
    memref::DeallocOp::create(b, ret.getLoc(), buffer);
  func::ReturnOp::create(b, ret.getLoc());
  func.erase();
  return success();
}

namespace {
struct ConvertSGToCPUPass
    : public sgc::impl::ConvertSGToCPUPassBase<ConvertSGToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> todo;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool hasSG = false;
      func.walk([&](Operation *op) {
        hasSG |= isa<sg::SGDialect>(op->getDialect());
      });
      if (hasSG)
        todo.push_back(func);
    }
    // Callees first: a caller's call takes the lowered callee's signature.
    std::stable_partition(todo.begin(), todo.end(), [](func::FuncOp func) {
      return func.getOps<func::CallOp>().empty();
    });
    for (func::FuncOp func : todo)
      if (failed(lowerFunction(func, module)))
        return signalPassFailure();
  }
};
} // namespace
