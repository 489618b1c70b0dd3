//===- SGToGPU.cpp - plan steps that call sg bodies -> kernel launches ----===//
//
// Part of sgc. The pass: per entry, the dialect conversion driver replaces
// every `plan.call` of an sg body, in program order, by the launches of the
// body's ops in program order (the view ops split_heads and
// merge_heads launch nothing: they alias their input), each an instance of
// the kernel family sg-select-kernels recorded on the op (SelectKernels.cpp),
// deduplicated by spec into `gpu.module @sgc_kernels`.
// Values between the launches of one step get buffers of their own, which
// sg-plan-memory places after this pass, launch by launch (so does a
// kernel's own scratch); a body result goes straight into the step's output
// buffer, a KV cache is updated in place. A chunk of several tokens writes its keys
// after the cache's last reader, as sg.kv_write is placed.
//
// Decode fuses row chains (post-norm, residual add, layer scalar) into the
// prologue of the projection that reads their result (CUDA.md §1.3), as the
// records say: the post-attention chain into gate/up in the same step, and
// a step's last chain, whose result is the step's output, into the next
// step's first projection (the next layer's QKV, or the LM head). A carried
// chain reads buffers of the step before, which live until it does.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/SGToGPU/KernelFamilies.h"
#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_CONVERTSGTOGPUPASS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

namespace {
/// A row chain left at the end of a step for the next step's first
/// projection: the chain (ops of the earlier body) and the buffers of its
/// inputs and of its result (the earlier step's output).
struct CarriedChain {
  RowChain chain;
  SmallVector<Value> ins;
  Value out;
  Attribute layer;
};

/// What the steps of one entry share.
struct EntryState {
  std::optional<CarriedChain> carried;
  /// The buffer the LM head writes the argmax of the logits row to, or
  /// null.
  plan::AllocOp argmax;
  /// Set once the entry's return is rewritten (the last pattern to run).
  bool returned = false;
};

/// Expands one step of an entry: its launches go before the call, at `b`'s
/// insertion point.
class StepExpansion {
public:
  StepExpansion(plan::EntryOp entry, plan::CallOp call, func::FuncOp body,
                EmitContext &ctx, EntryState &state, OpBuilder &b)
      : entry(entry), call(call), body(body), ctx(ctx), state(state), b(b) {}

  LogicalResult run();

  /// Launches a carried chain on its own at `b`'s insertion point.
  static LogicalResult launchCarried(const CarriedChain &carried,
                                     plan::EntryOp entry, OpBuilder &b,
                                     EmitContext &ctx);

private:
  LogicalResult launch(Operation *op, const KernelUse &use,
                       Attribute layer = {});
  Value bufferFor(Value v);
  /// A buffer of `type` for the step's launches (sg-plan-memory places it).
  Value scratchBuffer(MemRefType type);
  Value scratchAlloc(plan::BufferType type);

  plan::EntryOp entry;
  plan::CallOp call;
  func::FuncOp body;
  EmitContext &ctx;
  EntryState &state;
  OpBuilder &b;
  /// Values of other steps' bodies -> their buffers (a carried chain's).
  llvm::DenseMap<Value, Value> resolved;
  /// sg values -> plan values (buffers, or the position).
  IRMapping map;
  /// Body results -> the step's output buffers.
  llvm::DenseMap<Value, Value> outputs;
  /// Cache writes to emit after an op: (after, norm_rope).
  SmallVector<std::pair<Operation *, sg::NormRopeOp>> deferred;
};
} // namespace

Value StepExpansion::bufferFor(Value v) {
  if (Value out = outputs.lookup(v))
    return out;
  auto type = cast<RankedTensorType>(v.getType());
  return scratchAlloc(plan::BufferType::get(v.getContext(), type.getShape(),
                                            type.getElementType()));
}

Value StepExpansion::scratchBuffer(MemRefType type) {
  return scratchAlloc(plan::BufferType::get(
      type.getContext(), type.getShape(), type.getElementType()));
}

Value StepExpansion::scratchAlloc(plan::BufferType type) {
  return plan::AllocOp::create(b, call.getLoc(), type, IntegerAttr());
}

/// Creates the plan.launch of `use` before `b`'s insertion point.
static void createLaunch(OpBuilder &b, Location loc, const KernelUse &use,
                       EmitContext &ctx, ValueRange ins, ValueRange outs,
                       Attribute layer) {
  gpu::GPUFuncOp kernel = use.kernel;
  auto kernels = cast<gpu::GPUModuleOp>(kernel->getParentOp());
  auto callee = SymbolRefAttr::get(
      kernels.getNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())});
  // A prefill launch has one block per token along one grid dimension.
  IntegerAttr tokenDim;
  if (!ctx.oneToken() && use.tokenGridDim >= 0)
    tokenDim = b.getI64IntegerAttr(use.tokenGridDim);
  plan::LaunchOp::create(b, loc, callee, ins, outs,
                         dyn_cast_or_null<IntegerAttr>(layer),
                         b.getDenseI64ArrayAttr(use.grid),
                         b.getDenseI64ArrayAttr(use.block),
                         b.getI64IntegerAttr(use.dynamicShared), tokenDim);
}

LogicalResult StepExpansion::launch(Operation *op, const KernelUse &use,
                                    Attribute layer) {
  // The position stands for the step state, always parameter 0.
  SmallVector<Value> ins = {entry.getPosition()};
  for (Value v : use.ins) {
    Value mapped = resolved.lookup(v);
    if (!mapped)
      mapped = map.lookupOrNull(v);
    if (!mapped)
      return op->emitError("convert-sg-to-gpu: an input of this op has no "
                           "buffer yet");
    ins.push_back(mapped);
  }
  SmallVector<Value> outs;
  for (Value v : use.outs) {
    Value buffer = resolved.lookup(v);
    if (!buffer)
      buffer = use.inPlace.count(v) ? map.lookup(use.inPlace.lookup(v))
                                    : bufferFor(v);
    map.map(v, buffer);
    outs.push_back(buffer);
  }
  for (MemRefType type : use.scratch)
    outs.push_back(scratchBuffer(type));
  for (MemRefType type : use.zeroed) {
    auto alloc = plan::AllocOp::create(
        b, call.getLoc(),
        plan::BufferType::get(type.getContext(), type.getShape(),
                              type.getElementType()),
        IntegerAttr());
    sg::SGDialect::ZeroedAttrHelper(b.getContext())
        .setAttr(alloc, b.getUnitAttr());
    outs.push_back(alloc);
  }
  if (use.writesArgmax) {
    if (state.argmax)
      return op->emitError("convert-sg-to-gpu: a second argmax in one entry");
    state.argmax = plan::AllocOp::create(
        b, call.getLoc(),
        plan::BufferType::get(b.getContext(), {1}, b.getI32Type()),
        IntegerAttr());
    outs.push_back(state.argmax);
  }
  createLaunch(b, op->getLoc(), use, ctx, ins, outs,
             layer ? layer : call.getLayerAttr());
  return success();
}

LogicalResult StepExpansion::launchCarried(const CarriedChain &carried,
                                           plan::EntryOp entry, OpBuilder &b,
                                           EmitContext &ctx) {
  Operation *first = carried.chain.ops.front();
  FailureOr<KernelUse> use = emitRowChain(first, ctx);
  if (failed(use))
    return failure();
  SmallVector<Value> ins = {entry.getPosition()};
  llvm::append_range(ins, carried.ins);
  createLaunch(b, first->getLoc(), *use, ctx, ins, ValueRange{carried.out},
             carried.layer);
  return success();
}

LogicalResult StepExpansion::run() {
  Block &bodyBlock = body.getBody().front();
  for (auto [arg, value] : llvm::zip_equal(bodyBlock.getArguments(),
                                           call.getIns()))
    map.map(arg, value);
  auto ret = cast<func::ReturnOp>(bodyBlock.getTerminator());
  for (auto [v, out] : llvm::zip_equal(ret.getOperands(), call.getOuts())) {
    if (isa<BlockArgument>(v))
      return body.emitError("convert-sg-to-gpu: a body that returns its "
                            "argument unchanged needs a copy kernel");
    outputs.try_emplace(v, out);
  }

  // A chain carried from the step before goes into this step's first
  // projection where the call says so; else it runs first, on its own.
  std::optional<CarriedChain> carried = std::move(state.carried);
  state.carried.reset();
  Operation *carriedInto = nullptr;
  if (carried) {
    if (sg::SGDialect::CarriedPrologueAttrHelper(call.getContext())
            .isAttrPresent(call)) {
      carriedInto = &*llvm::find_if(bodyBlock, [](Operation &op) {
        return !isViewOp(&op);
      });
      FailureOr<Projection> g = matchProjection(carriedInto);
      if (failed(g) || map.lookupOrNull(g->x) != carried->out)
        return call.emitError("convert-sg-to-gpu: the step's first "
                              "projection does not read the chain carried "
                              "into it");
      for (auto [v, buffer] : llvm::zip_equal(carried->chain.ins, carried->ins))
        resolved[v] = buffer;
      resolved[carried->chain.result] = carried->out;
    } else if (failed(launchCarried(*carried, entry, b, ctx))) {
      return failure();
    }
  }

  sg::SGDialect::SelectedKernelAttrHelper kernelTag(call.getContext());
  const KernelFamilySet &families = cudaKernelFamilies();
  llvm::SmallPtrSet<Operation *, 8> done;
  // A chain of this step that goes into the next projection's prologue.
  std::optional<RowChain> pending;
  for (Operation &op : bodyBlock.without_terminator()) {
    if (done.contains(&op))
      continue;
    if (isViewOp(&op)) {
      // Views: same bytes, another shape.
      map.map(op.getResult(0), map.lookup(op.getOperand(0)));
      continue;
    }
    sg::KernelAttr choice = kernelTag.getAttr(&op);
    if (!choice)
      return op.emitError("convert-sg-to-gpu: no kernel was selected for "
                          "this op (sg-select-kernels runs first)");
    StringRef name = choice.getFamily().getValue();
    // Decode: a row chain that the next projection's prologue computes, or
    // that the next step computes, launches no kernel of its own.
    if (name == pseudo_family::kPrologue || name == pseudo_family::kCarried) {
      FailureOr<RowChain> chain = matchRowChain(&op);
      if (failed(chain))
        return op.emitError("convert-sg-to-gpu: no row chain starts here");
      for (Operation *chained : chain->ops)
        done.insert(chained);
      if (name == pseudo_family::kPrologue) {
        pending = std::move(*chain);
        continue;
      }
      CarriedChain next;
      next.chain = std::move(*chain);
      for (Value v : next.chain.ins)
        next.ins.push_back(map.lookup(v));
      next.out = outputs.lookup(next.chain.result);
      next.layer = call.getLayerAttr();
      if (!next.out)
        return op.emitError("convert-sg-to-gpu: a carried row chain's result "
                            "is no result of the step");
      state.carried = std::move(next);
      continue;
    }
    const KernelFamily *family = families.lookup(name);
    if (!family)
      return op.emitError("convert-sg-to-gpu: no kernel family '")
             << name << "'";
    LaunchRequest request;
    request.choice = choice;
    SmallVector<Operation *> ops = {&op};
    if (name == "qknorm_rope_append")
      // The layer's q, k and v (norms, RoPE) in one launch: the later ones
      // whose inputs exist here. A one-token call also writes the caches
      // (slot p, which none of its attention reads; ring: the slot of
      // p - window), so a kv_write may move ahead of the attention. A chunk
      // of several tokens writes each cache after its last reader.
      ops = gatherHeadJobs(&op, ctx.oneToken(), done);
    request.ops = ops;
    if (&op == carriedInto)
      request.prologue = &carried->chain;
    else if (request.has(kernel_option::kPrologue)) {
      FailureOr<Projection> g = matchProjection(&op);
      if (!pending || failed(g) || g->x != pending->result)
        return op.emitError("convert-sg-to-gpu: no row chain before this "
                            "projection computes its input");
      request.prologue = &*pending;
    }
    FailureOr<KernelUse> use = family->emit(request, ctx);
    if (pending && request.prologue == &*pending)
      pending.reset();
    if (succeeded(use) && name == "qknorm_rope_append" && !ctx.oneToken()) {
      for (Operation *member : ops) {
        auto rope = dyn_cast<sg::NormRopeOp>(member);
        if (!rope || !rope.getCache())
          continue;
        // After the cache's last reader, or after the launch.
        Operation *last = ops.back();
        for (Operation *user : rope.getCache().getUsers())
          if (user->getBlock() == &bodyBlock && last->isBeforeInBlock(user))
            last = user;
        deferred.push_back({last, rope});
      }
    }
    if (failed(use) || failed(launch(&op, *use)))
      return failure();
    for (Operation *fused : use->fused)
      done.insert(fused);
    Operation *last = use->fused.empty() ? &op : use->fused.back();
    for (auto [after, rope] : deferred) {
      if (after != last && after != &op)
        continue;
      IntegerAttr window = rope.getWindowAttr();
      FailureOr<KernelUse> write =
          emitKVWrite(rope.getLoc(), rope.getResult(), rope.getCache(),
                      rope.getNewCache(), window ? window.getInt() : 0, ctx);
      if (failed(write) || failed(launch(rope, *write)))
        return failure();
    }
  }
  if (pending)
    return pending->ops.front()->emitError(
        "convert-sg-to-gpu: a row chain was kept for a projection that did "
        "not come");
  return success();
}

namespace {
/// What the patterns of one entry share.
struct EntryLowering {
  plan::EntryOp entry;
  EmitContext &ctx;
  EntryState &state;
  /// The bodies the steps called (erased after the conversion).
  llvm::SetVector<func::FuncOp> &bodies;
};

/// A pattern on an op of one entry, with what the entry's patterns share.
template <typename OpT>
class EntryPattern : public OpConversionPattern<OpT> {
public:
  EntryPattern(MLIRContext *ctx, EntryLowering &lowering)
      : OpConversionPattern<OpT>(ctx), lowering(lowering) {}

protected:
  EntryLowering &lowering;
};

/// A step that calls an sg body: the body's launches in its place.
class StepLowering : public EntryPattern<plan::CallOp> {
public:
  using EntryPattern::EntryPattern;

  LogicalResult
  matchAndRewrite(plan::CallOp call, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto module = call->getParentOfType<ModuleOp>();
    auto body = module.lookupSymbol<func::FuncOp>(
        call.getCallee().getLeafReference());
    if (!body || body.isExternal())
      return call.emitError("convert-sg-to-gpu: the step calls no sg body");
    lowering.bodies.insert(body);
    rewriter.setInsertionPoint(call);
    StepExpansion step(lowering.entry, call, body, lowering.ctx,
                       lowering.state, rewriter);
    if (failed(step.run()))
      return failure();
    rewriter.eraseOp(call);
    return success();
  }
};

/// The entry's end, after its last step: a chain carried past that step
/// runs on its own, and the return hands the LM head's argmax buffer to the
/// runtime.
class EntryReturnLowering : public EntryPattern<plan::ReturnOp> {
public:
  using EntryPattern::EntryPattern;

  LogicalResult
  matchAndRewrite(plan::ReturnOp ret, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    EntryState &state = lowering.state;
    rewriter.setInsertionPoint(ret);
    if (state.carried &&
        failed(StepExpansion::launchCarried(*state.carried, lowering.entry,
                                            rewriter, lowering.ctx)))
      return failure();
    state.carried.reset();
    rewriter.modifyOpInPlace(ret, [&] {
      if (state.argmax)
        ret.getArgmaxMutable().assign(state.argmax);
    });
    state.returned = true;
    return success();
  }
};

struct ConvertSGToGPUPass
    : public sgc::impl::ConvertSGToGPUPassBase<ConvertSGToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *mctx = module.getContext();
    const CudaChip *cudaChip = CudaChip::lookup(chip);
    if (!cudaChip) {
      module.emitError("convert-sg-to-gpu: no CUDA chip '") << chip << "'";
      return signalPassFailure();
    }
    OpBuilder b(mctx);
    b.setInsertionPointToEnd(module.getBody());
    auto kernelModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "sgc_kernels");
    KernelModule kernels(module, kernelModule);
    llvm::SetVector<func::FuncOp> bodies;
    for (plan::EntryOp entry : module.getOps<plan::EntryOp>()) {
      EmitContext ctx(kernels, static_cast<int64_t>(entry.getMaxTokens()),
                      *cudaChip);
      EntryState state;
      EntryLowering lowering{entry, ctx, state, bodies};
      // Every step becomes launches; the steps' state flows in program
      // order (a carried chain, the argmax), which the driver keeps.
      ConversionTarget target(*mctx);
      target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
      target.addIllegalOp<plan::CallOp>();
      target.addDynamicallyLegalOp<plan::ReturnOp>(
          [&](plan::ReturnOp) { return state.returned; });
      RewritePatternSet patterns(mctx);
      patterns.add<StepLowering, EntryReturnLowering>(mctx, lowering);
      if (failed(applyPartialConversion(entry, target, std::move(patterns))))
        return signalPassFailure();
      // The steps' placement does not hold for the launches: sg-plan-memory
      // places every buffer again.
      for (plan::AllocOp alloc : entry.getBlock().getOps<plan::AllocOp>())
        alloc.removeOffsetAttr();
      entry.removeWorkspaceAttr();
    }
    for (func::FuncOp body : bodies)
      body.erase();
  }
};
} // namespace
