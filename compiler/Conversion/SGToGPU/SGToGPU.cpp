//===- SGToGPU.cpp - plan steps that call sg bodies -> kernel launches ----===//
//
// Part of sgc. The pass driver: every `plan.call` of an sg body becomes the
// launches of the body's ops in program order (the view ops split_heads and
// merge_heads launch nothing: they alias their input), each an instance of
// a kernel family, deduplicated by spec into `gpu.module @sgc_kernels`.
// Values between the launches of one step live in a scratch region after
// the entry's planned workspace (they die with the step, so every step
// reuses it); a body result goes straight into the step's output buffer,
// a KV cache is updated in place. A chunk of several tokens writes its keys
// after the cache's last reader, as sg.kv_write is placed.
//
// Decode fuses each row chain (post-norm, residual add, layer scalar) into
// the prologue of the projection that reads its result (CUDA.md §1.3): the
// post-attention chain into gate/up in the same step, and a step's last
// chain, whose result is the step's output, into the next step's first
// projection (the next layer's QKV, or the LM head). A carried chain reads
// buffers of the step before, so consecutive decode steps use two scratch
// regions in turn.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_CONVERTSGTOGPUPASS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

static constexpr int64_t kAlignment = 64;

static int64_t alignUp(int64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

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
  /// Buffers of the zeroed region (their offset is set once every entry's
  /// workspace is known).
  SmallVectorImpl<plan::AllocOp> &zeroed;
  /// Scratch buffers of the second region (moved past the first region
  /// once the entry's steps are expanded).
  SmallVector<plan::AllocOp> secondRegion;
  std::optional<CarriedChain> carried;
  bool fuseChains = true;
  bool deviceArgmax = true;
  /// The buffer the LM head writes the argmax of the logits row to (its
  /// offset set past the entry's scratch regions), or null.
  plan::AllocOp argmax;
};

/// Expands one step of an entry.
class StepExpansion {
public:
  StepExpansion(plan::EntryOp entry, plan::CallOp call, func::FuncOp body,
                EmitContext &ctx, int64_t scratchBase, int region,
                EntryState &state)
      : entry(entry), call(call), body(body), ctx(ctx),
        scratchBase(scratchBase), region(region), state(state), b(call) {}

  LogicalResult run();
  /// Bytes of scratch this step used.
  int64_t scratchBytes() const { return scratch; }

  /// Launches a carried chain on its own before `at`.
  static LogicalResult launchCarried(const CarriedChain &carried,
                                     plan::EntryOp entry, Operation *at,
                                     EmitContext &ctx);

private:
  LogicalResult launch(Operation *op, const KernelUse &use,
                       Attribute layer = {});
  Value bufferFor(Value v);
  /// A buffer of `type` in the step's scratch region.
  Value scratchBuffer(MemRefType type);
  Value scratchAlloc(plan::BufferType type);
  /// The op after `op` that launches a kernel (view ops launch none), or
  /// null at the body's end.
  Operation *nextLaunching(Operation *op);

  plan::EntryOp entry;
  plan::CallOp call;
  func::FuncOp body;
  EmitContext &ctx;
  int64_t scratchBase, scratch = 0;
  /// 0 or 1: which scratch region the step's buffers use.
  int region;
  EntryState &state;
  OpBuilder b;
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
  int64_t offset = scratchBase + scratch;
  scratch += alignUp(type.getBytes(entry.getMaxTokens()));
  auto alloc = plan::AllocOp::create(b, call.getLoc(), type,
                                     b.getI64IntegerAttr(offset));
  if (region == 1)
    state.secondRegion.push_back(alloc);
  return alloc;
}

Operation *StepExpansion::nextLaunching(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (next->hasTrait<OpTrait::IsTerminator>())
      return nullptr;
    if (!isa<sg::SplitHeadsOp, sg::MergeHeadsOp>(next))
      return next;
  }
  return nullptr;
}

/// Creates the plan.call of `use` before `b`'s insertion point.
static void createCall(OpBuilder &b, Location loc, const KernelUse &use,
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
  plan::CallOp::create(b, loc, callee, ins, outs,
                       dyn_cast_or_null<IntegerAttr>(layer),
                       /*rowwise=*/false, b.getDenseI64ArrayAttr(use.grid),
                       b.getDenseI64ArrayAttr(use.block),
                       use.dynamicShared
                           ? b.getI64IntegerAttr(use.dynamicShared)
                           : IntegerAttr(),
                       tokenDim);
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
        b.getI64IntegerAttr(0));
    state.zeroed.push_back(alloc);
    outs.push_back(alloc);
  }
  if (use.writesArgmax) {
    if (state.argmax)
      return op->emitError("convert-sg-to-gpu: a second argmax in one entry");
    state.argmax = plan::AllocOp::create(
        b, call.getLoc(),
        plan::BufferType::get(b.getContext(), {1}, b.getI32Type()),
        b.getI64IntegerAttr(0));
    outs.push_back(state.argmax);
  }
  createCall(b, op->getLoc(), use, ctx, ins, outs,
             layer ? layer : call.getLayerAttr());
  return success();
}

LogicalResult StepExpansion::launchCarried(const CarriedChain &carried,
                                           plan::EntryOp entry, Operation *at,
                                           EmitContext &ctx) {
  Operation *first = carried.chain.ops.front();
  FailureOr<KernelUse> use = emitRowChain(first, ctx);
  if (failed(use))
    return failure();
  OpBuilder b(at);
  SmallVector<Value> ins = {entry.getPosition()};
  llvm::append_range(ins, carried.ins);
  createCall(b, first->getLoc(), *use, ctx, ins, ValueRange{carried.out},
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
  // projection when that reads the chain's result; else it runs first, on
  // its own.
  std::optional<CarriedChain> carried = std::move(state.carried);
  state.carried.reset();
  auto normProjection = [&](Operation *op) {
    FailureOr<Projection> g = matchProjection(op);
    return op && succeeded(g) && g->norm && !gemmMmaApplies(op, ctx) &&
           !gemmFfmaApplies(op, ctx);
  };
  Operation *carriedInto = nullptr;
  if (carried) {
    Operation *first = nullptr;
    for (Operation &op : bodyBlock.without_terminator())
      if (!isa<sg::SplitHeadsOp, sg::MergeHeadsOp>(op)) {
        first = &op;
        break;
      }
    if (first && normProjection(first) &&
        map.lookupOrNull(matchProjection(first)->x) == carried->out) {
      carriedInto = first;
      for (auto [v, buffer] : llvm::zip_equal(carried->chain.ins, carried->ins))
        resolved[v] = buffer;
      resolved[carried->chain.result] = carried->out;
    } else if (failed(launchCarried(*carried, entry, call, ctx))) {
      return failure();
    }
  }

  // The LM head (the projection that writes the entry's logits): decode's
  // also computes their argmax, a chunk's only the rows the runtime reads.
  Value logits =
      cast<plan::ReturnOp>(entry.getBlock().getTerminator()).getLogits();
  auto isLMHead = [&](Operation *op) {
    FailureOr<Projection> g = matchProjection(op);
    return succeeded(g) && !g->gated() && g->weights.size() == 1 &&
           (!ctx.oneToken() || state.deviceArgmax) &&
           op->getNumResults() == 1 &&
           outputs.lookup(op->getResult(0)) == logits;
  };

  llvm::SmallPtrSet<Operation *, 8> done;
  // A chain of this step that goes into the next projection's prologue.
  std::optional<RowChain> pending;
  for (Operation &op : bodyBlock.without_terminator()) {
    if (done.contains(&op))
      continue;
    FailureOr<KernelUse> use = failure();
    if (isa<sg::SplitHeadsOp, sg::MergeHeadsOp>(op)) {
      // Views: same bytes, another shape.
      map.map(op.getResult(0), map.lookup(op.getOperand(0)));
      continue;
    }
    // Decode: a row chain whose result only the next projection's norm
    // prologue reads first, or the step's output at its end, launches no
    // kernel of its own.
    if (state.fuseChains && ctx.oneToken() &&
        isa<sg::RMSNormOp, sg::AddOp, sg::MulOp, sg::LayerScalarOp>(op)) {
      FailureOr<RowChain> chain = matchRowChain(&op);
      if (succeeded(chain)) {
        Operation *next = nextLaunching(chain->ops.back());
        bool intoNext = next && normProjection(next) &&
                        matchProjection(next)->x == chain->result;
        bool atEnd = !next && outputs.count(chain->result);
        if (intoNext || atEnd) {
          for (Operation *chained : chain->ops)
            done.insert(chained);
          if (intoNext) {
            pending = std::move(*chain);
            continue;
          }
          CarriedChain next;
          next.chain = std::move(*chain);
          for (Value v : next.chain.ins)
            next.ins.push_back(map.lookup(v));
          next.out = outputs.lookup(next.chain.result);
          next.layer = call.getLayerAttr();
          state.carried = std::move(next);
          continue;
        }
      }
    }
    if (auto linear = dyn_cast<sg::LinearOp>(op); linear && !linear.isPlain())
      return op.emitError("convert-sg-to-gpu: 'sg.linear' with a bias, an "
                          "[in, out] or a rank > 2 weight has no CUDA kernel "
                          "yet");
    if (isa<sg::EmbedOp>(op)) {
      use = emitEmbed(&op, ctx);
    } else if (isa<sg::LinearOp, sg::NormLinearOp, sg::GatedMLPOp>(op)) {
      // A chunk of tokens on tensor cores where the shapes allow; one token
      // (decode) and f32 rows stream the weights row by row.
      const RowChain *prologue = nullptr;
      if (&op == carriedInto)
        prologue = &carried->chain;
      else if (pending && matchProjection(&op)->x == pending->result)
        prologue = &*pending;
      bool lmHead = isLMHead(&op);
      if (gemmMmaApplies(&op, ctx))
        use = emitGemmMma(&op, ctx, lmHead);
      else if (gemmFfmaApplies(&op, ctx))
        use = emitGemmFfma(&op, ctx, lmHead);
      else
        use = emitGemvRows(&op, ctx, prologue, lmHead);
      pending.reset();
    } else if (isa<sg::RMSNormOp, sg::AddOp, sg::MulOp, sg::LayerScalarOp,
                   sg::SoftcapOp, sg::GeluTanhOp>(op)) {
      use = emitRowChain(&op, ctx);
    } else if (isa<sg::NormRopeOp>(op)) {
      // The layer's q, k and v (norms, RoPE) in one launch: the later ones
      // whose inputs exist here. A one-token call also writes the caches
      // (slot p, which none of its attention reads; ring: the slot of
      // p - window), so a kv_write may move ahead of the attention. A chunk
      // of several tokens writes each cache after its last reader.
      bool append = ctx.oneToken();
      SmallVector<Operation *> group = {&op};
      auto ready = [&](Operation *other) {
        return llvm::all_of(other->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return !def || def->isBeforeInBlock(&op);
        });
      };
      for (Operation &other : llvm::make_range(std::next(op.getIterator()),
                                               bodyBlock.end()))
        if ((isa<sg::NormRopeOp>(other) ||
             (append && isa<sg::KVWriteOp>(other))) &&
            !done.contains(&other) && ready(&other))
          group.push_back(&other);
      use = emitHeadJobs(group, ctx, append);
      for (Operation *member : group) {
        auto rope = dyn_cast<sg::NormRopeOp>(member);
        if (append || failed(use) || !rope || !rope.getCache())
          continue;
        // After the cache's last reader, or after the launch.
        Operation *last = group.back();
        for (Operation *user : rope.getCache().getUsers())
          if (user->getBlock() == &bodyBlock && last->isBeforeInBlock(user))
            last = user;
        deferred.push_back({last, rope});
      }
    } else if (isa<sg::SlidingAttnOp, sg::FullAttnOp>(op)) {
      // One query splits its keys; a chunk of bf16 queries runs on tensor
      // cores; f32 and image-block calls keep the per-query kernel.
      if (attnDecodeApplies(&op, ctx))
        use = emitAttnDecode(&op, ctx);
      else if (attnPrefillApplies(&op, ctx))
        use = emitAttnPrefill(&op, ctx);
      else
        use = emitAttention(&op, ctx);
    } else if (auto write = dyn_cast<sg::KVWriteOp>(op)) {
      IntegerAttr window = write.getWindowAttr();
      use = emitKVWrite(op.getLoc(), write.getValues(), write.getCache(),
                        write.getResult(), window ? window.getInt() : 0, ctx);
    } else {
      return op.emitError("convert-sg-to-gpu: '")
             << op.getName() << "' has no CUDA kernel yet";
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
  call.erase();
  return success();
}

namespace {
struct ConvertSGToGPUPass
    : public sgc::impl::ConvertSGToGPUPassBase<ConvertSGToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto kernelModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), "sgc_kernels");
    KernelModule kernels(module, kernelModule);
    llvm::SetVector<func::FuncOp> bodies;
    SmallVector<plan::AllocOp> zeroed;
    int64_t zeroedBase = 0;
    for (plan::EntryOp entry : module.getOps<plan::EntryOp>()) {
      EmitContext ctx{kernels, static_cast<int64_t>(entry.getMaxTokens())};
      int64_t base = alignUp(entry.getWorkspace().value_or(0));
      EntryState state{zeroed};
      state.fuseChains = fuseRowChains;
      state.deviceArgmax = deviceArgmax;
      // Two scratch regions in turn where chains are carried (decode).
      bool twoRegions = fuseRowChains && ctx.oneToken();
      int64_t scratch[2] = {0, 0};
      int index = 0;
      for (plan::CallOp call :
           llvm::make_early_inc_range(entry.getBlock().getOps<plan::CallOp>())) {
        auto body = module.lookupSymbol<func::FuncOp>(
            call.getCallee().getLeafReference());
        if (!body || body.isExternal()) {
          call.emitError("convert-sg-to-gpu: the step calls no sg body");
          return signalPassFailure();
        }
        bodies.insert(body);
        int region = twoRegions ? index++ % 2 : 0;
        StepExpansion step(entry, call, body, ctx, base, region, state);
        if (failed(step.run()))
          return signalPassFailure();
        scratch[region] = std::max(scratch[region], step.scratchBytes());
      }
      // A chain carried past the last step runs on its own at the end.
      if (state.carried &&
          failed(StepExpansion::launchCarried(
              *state.carried, entry, entry.getBlock().getTerminator(), ctx)))
        return signalPassFailure();
      for (plan::AllocOp alloc : state.secondRegion)
        alloc.setOffset(*alloc.getOffset() + alignUp(scratch[0]));
      int64_t end = base + alignUp(scratch[0]) + scratch[1];
      // The argmax outlives the steps: past both scratch regions.
      if (state.argmax) {
        state.argmax.setOffset(alignUp(end));
        end = alignUp(end) + kAlignment;
        cast<plan::ReturnOp>(entry.getBlock().getTerminator())
            .getArgmaxMutable()
            .assign(state.argmax);
      }
      entry.setWorkspace(end);
      zeroedBase = std::max(zeroedBase, alignUp(end));
    }
    // The zeroed region: past every entry's workspace (the runtime shares
    // one workspace between the entries), one offset for all its buffers
    // (launches run one after another and leave it zero).
    if (!zeroed.empty()) {
      int64_t bytes = 0;
      for (plan::AllocOp alloc : zeroed) {
        alloc.setOffset(zeroedBase);
        auto type = cast<plan::BufferType>(alloc.getType());
        bytes = std::max(bytes, alignUp(type.getBytes(1)));
      }
      for (plan::EntryOp entry : module.getOps<plan::EntryOp>())
        entry.setWorkspace(zeroedBase + bytes);
    }
    for (func::FuncOp body : bodies)
      body.erase();
  }
};
} // namespace
