//===- SGToCPU.cpp - sg functions -> CPU kernels on buffers --------------===//
//
// Part of sgc. The pass driver: rebuilds each function that holds sg ops with
// the buffer calling convention (see Passes.td); the dialect conversion
// driver then lowers its ops in program order, an sg op by its pattern
// (the family sg-select-kernels recorded), a call of a lowered body and the
// return by theirs.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/SGToCPU/CpuFamilies.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/DialectConversion.h"

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

/// The CPU family sg-select-kernels recorded on `op`, which lowers its kind;
/// null after an error at `op`.
static const CpuKernelFamily *recordedFamily(Operation *op) {
  sg::KernelAttr choice =
      sg::SGDialect::SelectedKernelAttrHelper(op->getContext()).getAttr(op);
  if (!choice) {
    op->emitError("convert-sg-to-cpu: no kernel was selected for this op "
                  "(sg-select-kernels=target=cpu runs first)");
    return nullptr;
  }
  const CpuKernelFamily *family =
      cpuKernelFamilies().lookup(choice.getFamily().getValue());
  if (!family) {
    op->emitError("convert-sg-to-cpu: no CPU kernel family '")
        << choice.getFamily().getValue() << "'";
    return nullptr;
  }
  if (!family->find(op)) {
    op->emitError("convert-sg-to-cpu: the CPU kernel family '")
        << family->name << "' does not lower '" << op->getName() << "'";
    return nullptr;
  }
  return family;
}

/// Lowers `op` with the CPU family sg-select-kernels recorded on it.
static LogicalResult lowerOp(Operation *op, FunctionLowering &state) {
  const CpuKernelFamily *family = recordedFamily(op);
  return family ? family->lower(op, state) : failure();
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

namespace {

/// What the patterns of one body share: the lowering state, built on the
/// conversion's rewriter at the body's first op from what the rebuild set
/// up (the arguments' buffers, the token count, the execution context, the
/// destinations).
class BodyConversion {
public:
  BodyConversion(FunctionLowering &&setup) : setup(std::move(setup)) {}

  FunctionLowering &stateFor(ConversionPatternRewriter &rewriter) {
    if (!live) {
      live.emplace(rewriter, setup.module);
      live->buffers = std::move(setup.buffers);
      live->tokens = setup.tokens;
      live->exec = setup.exec;
      live->destinations = std::move(setup.destinations);
    }
    return *live;
  }

  /// The rebuilt function's argument `buffer` stands for `tensor`.
  void mapArgument(Value tensor, Value buffer) {
    setup.buffers.map(tensor, buffer);
  }

  /// Per output argument: the result index it returns, and the argument.
  SmallVector<std::pair<unsigned, Value>> outputs;
  /// Set once the body's return is rewritten (the new return is legal).
  bool returned = false;

private:
  FunctionLowering setup;
  std::optional<FunctionLowering> live;
};

/// Lowers one op of a body with `lower`: the operands' buffers, the lowering
/// at the op's place, the results replaced by the buffers the lowering
/// mapped them to, then the code that waited for this op (a cache write
/// after the cache's last reader).
static LogicalResult
lowerBodyOp(Operation *op, BodyConversion &body,
            ConversionPatternRewriter &rewriter,
            llvm::function_ref<LogicalResult(FunctionLowering &)> lower) {
  FunctionLowering &state = body.stateFor(rewriter);
  if (failed(lower(state)))
    return failure();
  SmallVector<Value> buffers;
  for (Value result : op->getResults())
    buffers.push_back(state.lookup(result));
  for (auto &[after, emit] : state.deferred)
    if (after == op)
      emit();
  rewriter.replaceOp(op, buffers);
  return success();
}

/// Any sg op: the CPU family sg-select-kernels recorded on it.
class SGOpLowering : public ConversionPattern {
public:
  SGOpLowering(const TypeConverter &converter, MLIRContext *ctx,
               BodyConversion &body)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        body(body) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value>,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<sg::SGDialect>(op->getDialect()))
      return failure();
    return lowerBodyOp(op, body, rewriter, [&](FunctionLowering &state) {
      return lowerOp(op, state);
    });
  }

private:
  BodyConversion &body;
};

/// A call of another, already lowered, body.
class BodyCallLowering : public OpConversionPattern<func::CallOp> {
public:
  BodyCallLowering(const TypeConverter &converter, MLIRContext *ctx,
                   BodyConversion &body)
      : OpConversionPattern(converter, ctx), body(body) {}

  LogicalResult
  matchAndRewrite(func::CallOp call, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return lowerBodyOp(call, body, rewriter, [&](FunctionLowering &state) {
      return lowerCall(call, state);
    });
  }

private:
  BodyConversion &body;
};

/// The body's end: results computed elsewhere than in their output buffer
/// are copied there, temporaries freed, and the function returns nothing.
class BodyReturnLowering : public OpConversionPattern<func::ReturnOp> {
public:
  BodyReturnLowering(const TypeConverter &converter, MLIRContext *ctx,
                     BodyConversion &body)
      : OpConversionPattern(converter, ctx), body(body) {}

  LogicalResult
  matchAndRewrite(func::ReturnOp ret, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FunctionLowering &state = body.stateFor(rewriter);
    for (auto [index, out] : body.outputs) {
      Value buffer = state.lookup(ret.getOperand(index));
      if (buffer != out)
        linalg::CopyOp::create(rewriter, ret.getLoc(), buffer, out);
    }
    for (Value buffer : state.allocated)
      memref::DeallocOp::create(rewriter, ret.getLoc(), buffer);
    body.returned = true;
    rewriter.replaceOpWithNewOp<func::ReturnOp>(ret);
    return success();
  }

private:
  BodyConversion &body;
};

} // namespace

/// Rebuilds `func` on buffers; the new function replaces it. The new
/// signature is the calling convention (Passes.td); the body's ops move
/// into it and the dialect conversion driver lowers them in program order,
/// each by its pattern (a tensor value's buffer is a memref of its
/// storage: `bufferType`).
static LogicalResult lowerFunction(func::FuncOp func, ModuleOp module) {
  Block &oldBody = func.getBody().front();
  auto ret = cast<func::ReturnOp>(oldBody.getTerminator());
  // Every op's record first: an op no family lowers is refused here, with
  // one error, before the conversion starts.
  bool recorded = true;
  for (Operation &op : oldBody.without_terminator())
    if (isa<sg::SGDialect>(op.getDialect()))
      recorded &= recordedFamily(&op) != nullptr;
  if (!recorded)
    return failure();
  SmallVector<int64_t> slots = resultSlots(func);

  // The execution context first, then the body's arguments and outputs.
  SmallVector<Type> inputs = {LLVM::LLVMPointerType::get(func.getContext())};
  for (Type t : func.getArgumentTypes())
    inputs.push_back(bufferType(t));
  for (auto [slot, type] : llvm::zip_equal(slots, func.getResultTypes()))
    if (slot < 0)
      inputs.push_back(bufferType(type));

  ImplicitLocOpBuilder b(func.getLoc(), func);
  auto lowered =
      func::FuncOp::create(b, func.getSymName(), b.getFunctionType(inputs, {}));
  for (NamedAttribute attr : func->getDiscardableAttrs())
    lowered->setAttr(attr.getName(), attr.getValue());
  sg::SGDialect::ResultSlotsAttrHelper(b.getContext())
      .setAttr(lowered, b.getI64ArrayAttr(slots));
  lowered->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = lowered.addEntryBlock();
  b.setInsertionPointToStart(entry);

  FunctionLowering setup(b, module);
  setup.exec = entry->getArgument(0);
  // The token count: the leading dimension of the first dynamic argument.
  for (BlockArgument arg : entry->getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (type && type.getRank() > 0 && type.isDynamicDim(0)) {
      setup.tokens = dimOf(b, arg, 0);
      break;
    }
  }
  // Each returned value with an output argument, in result order; the op
  // that computes it writes there directly when it can.
  SmallVector<std::pair<unsigned, Value>> outputs;
  unsigned nextOut = 1 + oldBody.getNumArguments();
  for (auto [index, slot, v] :
       llvm::enumerate(slots, ret.getOperands())) {
    if (slot >= 0)
      continue;
    Value out = entry->getArgument(nextOut++);
    outputs.push_back({static_cast<unsigned>(index), out});
    if (!isa<BlockArgument>(v))
      setup.destinations.try_emplace(v, out);
  }
  BodyConversion body(std::move(setup));
  body.outputs = std::move(outputs);

  // The body's ops move over. They keep reading tensors (their lowerings
  // read the tensor types): each argument as a cast of its buffer, which
  // dies with the last of them.
  SmallVector<Operation *> argCasts;
  for (BlockArgument arg : oldBody.getArguments()) {
    Value buffer = entry->getArgument(1 + arg.getArgNumber());
    auto cast = UnrealizedConversionCastOp::create(b, func.getLoc(),
                                                   arg.getType(), buffer);
    arg.replaceAllUsesWith(cast.getResult(0));
    body.mapArgument(cast.getResult(0), buffer);
    argCasts.push_back(cast);
  }
  entry->getOperations().splice(entry->end(), oldBody.getOperations());
  func.erase();

  MLIRContext *ctx = module.getContext();
  TypeConverter converter;
  converter.addConversion([](Type type) { return bufferType(type); });
  ConversionTarget target(*ctx);
  auto onBuffers = [](Operation *op) {
    auto isTensor = [](Type t) { return isa<TensorType>(t); };
    return llvm::none_of(op->getOperandTypes(), isTensor) &&
           llvm::none_of(op->getResultTypes(), isTensor);
  };
  target.markUnknownOpDynamicallyLegal(onBuffers);
  target.addLegalOp<UnrealizedConversionCastOp>();
  target.addIllegalDialect<sg::SGDialect>();
  target.addDynamicallyLegalOp<func::ReturnOp>([&](func::ReturnOp op) {
    return op->getParentOp() != lowered || body.returned;
  });
  RewritePatternSet patterns(ctx);
  patterns.add<SGOpLowering, BodyCallLowering, BodyReturnLowering>(
      converter, ctx, body);
  if (failed(applyPartialConversion(lowered, target, std::move(patterns))))
    return failure();
  for (Operation *cast : argCasts)
    cast->erase();
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
