//===- SelectKernels.cpp - the kernel family of every op, as IR ----------===//
//
// Part of sgc. sg-select-kernels decides what each op of the sg bodies
// becomes on the target, and records it on the op (#sg.kernel) where
// --dump-ir-after-each and a test can see it; the target's lowering
// (convert-sg-to-cpu, convert-sg-to-gpu) then emits what the records say.
// On the CPU: the op's family (CpuFamilies.cpp). On CUDA, for the plan's
// bodies: Per op: the applying family of the highest benefit
// (KernelFamilies.cpp) with its options (the LM head). In decode, a row
// chain whose result only the next projection's norm reads goes into that
// projection's prologue, and a step's last chain into the next step's first
// projection (CUDA.md §1.3): the chain's ops say `prologue` or `carried`,
// the projection `prologue = "chain"`, the call that takes a carried chain
// sg.carried_prologue. A body serves several calls (the layers of one
// shape): their choices must agree.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/SGToGPU/KernelFamilies.h"
#include "compiler/Conversion/SGToCPU/CpuFamilies.h"
#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/SG/IR/SGOps.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_SELECTKERNELSPASS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

namespace {
using KernelTag = sg::SGDialect::SelectedKernelAttrHelper;
using CarriedTag = sg::SGDialect::CarriedPrologueAttrHelper;

/// Chooses the kernels of one entry's calls.
class EntrySelection {
public:
  EntrySelection(plan::EntryOp entry, const KernelFamilySet &families,
                 const CudaChip &chip, bool fuseChains, bool deviceArgmax)
      : entry(entry), families(families),
        ctx{static_cast<int64_t>(entry.getMaxTokens()), chip},
        fuseChains(fuseChains && ctx.oneToken()), deviceArgmax(deviceArgmax),
        kernelTag(entry.getContext()), carriedTag(entry.getContext()) {}

  LogicalResult run();

private:
  LogicalResult selectCall(plan::CallOp call, func::FuncOp body);
  /// Whether `op` is a projection on gemv_rows that normalizes its input:
  /// the one kind that takes a row chain in its prologue.
  bool takesChain(Operation *op) const;
  /// Records `choice` on `op`, or fails if another call of its body chose
  /// otherwise.
  LogicalResult record(Operation *op, sg::KernelAttr choice);

  plan::EntryOp entry;
  const KernelFamilySet &families;
  TargetContext ctx;
  bool fuseChains, deviceArgmax;
  KernelTag kernelTag;
  CarriedTag carriedTag;
  /// The buffer the step before wrote its carried chain's result to.
  Value carriedOut;
  llvm::SmallPtrSet<Operation *, 32> recorded;
};
} // namespace

bool EntrySelection::takesChain(Operation *op) const {
  const KernelFamily *family = op ? families.select(op, ctx) : nullptr;
  if (!family || family->name != "gemv_rows")
    return false;
  FailureOr<Projection> g = matchProjection(op);
  return succeeded(g) && g->norm;
}

LogicalResult EntrySelection::record(Operation *op, sg::KernelAttr choice) {
  if (recorded.insert(op).second) {
    kernelTag.setAttr(op, choice);
    return success();
  }
  if (kernelTag.getAttr(op) == choice)
    return success();
  return op->emitError("sg-select-kernels: the calls of this body choose ")
         << kernelTag.getAttr(op) << " and " << choice
         << " for this op; a body must have one choice";
}

LogicalResult EntrySelection::run() {
  for (plan::CallOp call : entry.getBlock().getOps<plan::CallOp>()) {
    auto body = entry->getParentOfType<ModuleOp>().lookupSymbol<func::FuncOp>(
        call.getCallee().getLeafReference());
    if (!body || body.isExternal())
      return call.emitError("sg-select-kernels: the step calls no sg body");
    if (failed(selectCall(call, body)))
      return failure();
  }
  return success();
}

LogicalResult EntrySelection::selectCall(plan::CallOp call,
                                         func::FuncOp body) {
  MLIRContext *mctx = call.getContext();
  Block &block = body.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  auto launching = [](Operation *from) -> Operation * {
    for (Operation *op = from; op; op = op->getNextNode()) {
      if (op->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      if (!isViewOp(op))
        return op;
    }
    return nullptr;
  };

  // The chain the step before carried goes into this step's first
  // projection when that normalizes the chain's result. (A record of an
  // earlier run goes first: selecting again decides again.)
  call->removeAttr(carriedTag.getName());
  if (carriedOut) {
    Operation *first = launching(&block.front());
    Value x = first && takesChain(first) ? matchProjection(first)->x : Value();
    auto arg = dyn_cast_or_null<BlockArgument>(x);
    if (arg && call.getIns()[arg.getArgNumber()] == carriedOut)
      carriedTag.setAttr(call, UnitAttr::get(mctx));
  }
  carriedOut = nullptr;

  Value logits =
      cast<plan::ReturnOp>(entry.getBlock().getTerminator()).getLogits();
  auto callOutput = [&](Value v) -> Value {
    for (auto [result, out] : llvm::zip_equal(ret.getOperands(), call.getOuts()))
      if (result == v)
        return out;
    return nullptr;
  };
  auto isLMHead = [&](Operation *op) {
    FailureOr<Projection> g = matchProjection(op);
    return succeeded(g) && !g->gated() && g->weights.size() == 1 &&
           (!ctx.oneToken() || deviceArgmax) && op->getNumResults() == 1 &&
           callOutput(op->getResult(0)) == logits;
  };
  auto kernel = [&](StringRef family, ArrayRef<NamedAttribute> options = {}) {
    return sg::KernelAttr::get(
        mctx, family,
        options.empty() ? DictionaryAttr() : DictionaryAttr::get(mctx, options));
  };

  llvm::SmallPtrSet<Operation *, 8> done;
  Operation *takesPrologue = nullptr;
  for (Operation &op : block.without_terminator()) {
    if (done.contains(&op) || isViewOp(&op))
      continue;
    // Decode: a row chain that the next projection's prologue computes, or
    // the step's last one, launches nothing of its own.
    if (fuseChains &&
        isa<sg::RMSNormOp, sg::AddOp, sg::MulOp, sg::LayerScalarOp>(op)) {
      FailureOr<RowChain> chain = matchRowChain(&op);
      if (succeeded(chain)) {
        Operation *next = launching(chain->ops.back()->getNextNode());
        bool intoNext = next && takesChain(next) &&
                        matchProjection(next)->x == chain->result;
        Value out = next ? Value() : callOutput(chain->result);
        if (intoNext || out) {
          for (Operation *chained : chain->ops) {
            done.insert(chained);
            if (failed(record(chained, kernel(intoNext
                                                  ? pseudo_family::kPrologue
                                                  : pseudo_family::kCarried))))
              return failure();
          }
          if (intoNext)
            takesPrologue = next;
          else
            carriedOut = out;
          continue;
        }
      }
    }
    for (Value operand : op.getOperands())
      if (auto quant = dyn_cast<sg::QuantType>(
              getElementTypeOrSelf(operand.getType())))
        return op.emitError("sg-select-kernels: '")
               << op.getName() << "' reads a " << quant.getEncoding()
               << " weight; the CUDA target takes bf16, f16 and f32 weights "
                  "so far (block-encoded weights run with --target=cpu)";
    const KernelFamily *family = families.select(&op, ctx);
    if (!family) {
      if (auto linear = dyn_cast<sg::LinearOp>(op); linear && !linear.isPlain())
        return op.emitError("sg-select-kernels: 'sg.linear' with a bias, an "
                            "[in, out] or a rank > 2 weight has no CUDA "
                            "kernel yet");
      if (auto attn = dyn_cast<sg::AttentionOpInterface>(op);
          attn && attn.getAttention().blocks)
        return op.emitError("sg-select-kernels: '")
               << op.getName()
               << "' with image-block ids (blocks) has no CUDA kernel yet";
      return op.emitError("sg-select-kernels: '")
             << op.getName() << "' has no CUDA kernel yet";
    }
    SmallVector<NamedAttribute> options;
    Builder a(mctx);
    if (isa<sg::ProjectionOpInterface>(op)) {
      if (isLMHead(&op))
        options.push_back(
            a.getNamedAttr(kernel_option::kLMHead, UnitAttr::get(mctx)));
      if (&op == takesPrologue)
        options.push_back(
            a.getNamedAttr(kernel_option::kPrologue, a.getStringAttr("chain")));
    }
    if (failed(record(&op, kernel(family->name, options))))
      return failure();
    // The ops its launch computes too.
    SmallVector<Operation *> fused;
    if (family->name == "row_chain") {
      if (FailureOr<RowChain> chain = matchRowChain(&op); succeeded(chain))
        fused.assign(chain->ops.begin() + 1, chain->ops.end());
    } else if (family->name == "qknorm_rope_append") {
      fused = llvm::to_vector(
          llvm::drop_begin(gatherHeadJobs(&op, ctx.oneToken(), done)));
    }
    for (Operation *f : fused) {
      done.insert(f);
      if (failed(record(f, kernel(pseudo_family::kFused))))
        return failure();
    }
  }
  return success();
}

namespace {
struct SelectKernelsPass
    : public sgc::impl::SelectKernelsPassBase<SelectKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (target == "cpu")
      return selectCpu(module);
    if (target != "cuda") {
      module.emitError("sg-select-kernels: no target '")
          << target << "' (cpu or cuda)";
      return signalPassFailure();
    }
    const CudaChip *cudaChip = CudaChip::lookup(chip);
    if (!cudaChip) {
      module.emitError("sg-select-kernels: no CUDA chip '")
          << chip << "' (sgc builds for " << CudaChip::getDefault().name
          << ")";
      return signalPassFailure();
    }
    for (plan::EntryOp entry : module.getOps<plan::EntryOp>()) {
      EntrySelection selection(entry, cudaKernelFamilies(), *cudaChip,
                               fuseRowChains, deviceArgmax);
      if (failed(selection.run()))
        return signalPassFailure();
    }
  }

  /// Every sg op of every function body, its CPU family.
  void selectCpu(ModuleOp module) {
    const lowering::CpuKernelFamilySet &families =
        lowering::cpuKernelFamilies();
    KernelTag kernelTag(module.getContext());
    WalkResult result = module.walk([&](Operation *op) {
      if (!isa<sg::SGDialect>(op->getDialect()) ||
          !isa<func::FuncOp>(op->getParentOp()))
        return WalkResult::advance();
      const lowering::CpuKernelFamily *family =
          families.select(op, lowering::CpuContext());
      if (!family) {
        op->emitError("sg-select-kernels: '")
            << op->getName()
            << "' has no CPU kernel in a function body (weights must be "
               "arguments: run sg-outline-layers first)";
        return WalkResult::interrupt();
      }
      kernelTag.setAttr(op, sg::KernelAttr::get(op->getContext(),
                                                family->name));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

SmallVector<StringRef> mlir::sgc::kernelFamilyNames(StringRef target) {
  SmallVector<StringRef> names;
  if (target == "cuda")
    for (const KernelFamily &family : cudaKernelFamilies().all())
      names.push_back(family.name);
  if (target == "cpu")
    for (const lowering::CpuKernelFamily &family :
         lowering::cpuKernelFamilies().all())
      names.push_back(family.name);
  return names;
}
