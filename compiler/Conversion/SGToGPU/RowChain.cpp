//===- RowChain.cpp - a chain of rowwise ops in one kernel ----------------===//
//
// Part of sgc. The post-norms and the residual adds between the projections
// (rms_norm -> add -> layer_scalar), and any other run of elementwise sg ops
// over [tokens, width] rows, become one kernel: one block per token row, each
// thread a strided set of chunks of 8 columns (16-byte loads of bf16 rows:
// KernelBody::forRowChunks; single columns for other widths), every op in f32 and rounded to the compute
// dtype where the CPU path (and the reference) rounds it. An RMSNorm can only
// start a chain: it needs its whole input row, which the block reads from
// the parameter.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/KernelFamilies.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;

namespace {
constexpr int64_t kThreads = 128;

/// The operands of a chain op other than the value flowing down the chain.
SmallVector<Value> sideInputs(Operation *op, Value current) {
  SmallVector<Value> side;
  if (auto norm = dyn_cast<sg::RMSNormOp>(op)) {
    if (norm.getWeight())
      side.push_back(norm.getWeight());
    return side;
  }
  for (Value v : op->getOperands())
    if (v != current)
      side.push_back(v);
  // x + x and x * x read the chain value twice.
  return side;
}

/// One step's spec entry, for the kernel's key.
std::string describe(Operation *op) {
  std::string s = op->getName().getStringRef().drop_front(3).str();
  if (auto norm = dyn_cast<sg::RMSNormOp>(op))
    s += "(eps=" + std::to_string(norm.getEps().convertToDouble()) +
         ",offset=" + std::to_string(norm.getWeightOffsetAttr().getInt()) +
         (norm.getWeight() ? ",w" : "") + ")";
  if (auto cap = dyn_cast<sg::SoftcapOp>(op))
    s += "(" + std::to_string(cap.getCap().convertToDouble()) + ")";
  return s;
}

/// One chain op applied to a chunk: `v`, the chain's value so far (in the
/// compute dtype `ct`), `side()` the chunk of its side input (null when it
/// has none: x + x reads the chain value twice), `scale` the row's RMSNorm
/// scale.
struct RowStep {
  ImplicitLocOpBuilder &b;
  Operation *op;
  Value v;
  llvm::function_ref<Value()> side;
  Value scale;
  Type ct;
};
using RowStepFn = Value (*)(const RowStep &);

/// f32(v) op f32(side), rounded once.
template <typename FloatOp>
Value binaryStep(const RowStep &s) {
  Value vf = toF32(s.b, s.v);
  Value other = s.side ? toF32(s.b, s.side()) : vf;
  Value y = FloatOp::create(s.b, vf, other);
  return roundTo(s.b, y, s.ct);
}

Value geluStep(const RowStep &s) {
  Value y = lowering::emitGeluTanh(s.b, toF32(s.b, s.v));
  return roundTo(s.b, y, s.ct);
}

Value softcapStep(const RowStep &s) {
  auto cap = cast<sg::SoftcapOp>(s.op);
  return lowering::emitSoftcap(s.b, s.v, cap.getCap().convertToDouble());
}

Value normalizeStep(const RowStep &s) {
  auto norm = cast<sg::RMSNormOp>(s.op);
  Value w = s.side ? s.side() : Value();
  return lowering::emitNormalize(
      s.b, s.v, s.scale, w, norm.getWeightOffsetAttr().getInt() == 1, s.ct);
}

/// The ops a row chain is made of, by TypeID, with what each does to a
/// chunk.
const llvm::DenseMap<TypeID, RowStepFn> &rowSteps() {
  static const llvm::DenseMap<TypeID, RowStepFn> steps = {
      {TypeID::get<sg::RMSNormOp>(), normalizeStep},
      {TypeID::get<sg::AddOp>(), binaryStep<arith::AddFOp>},
      {TypeID::get<sg::MulOp>(), binaryStep<arith::MulFOp>},
      {TypeID::get<sg::LayerScalarOp>(), binaryStep<arith::MulFOp>},
      {TypeID::get<sg::GeluTanhOp>(), geluStep},
      {TypeID::get<sg::SoftcapOp>(), softcapStep},
  };
  return steps;
}
} // namespace

bool gpu_kernels::isRowChainOp(Operation *op) {
  return rowSteps().contains(op->getName().getTypeID());
}

FailureOr<RowChain> gpu_kernels::matchRowChain(Operation *first) {
  if (!isRowChainOp(first))
    return failure();
  // The chain: each next op is the only user of the previous result, and
  // its other operands exist before the chain starts.
  RowChain rc;
  rc.ops = {first};
  auto availableBeforeChain = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || def->isBeforeInBlock(first);
  };
  auto rowType = [&](Value v) { return cast<ShapedType>(v.getType()); };
  if (rowType(first->getResult(0)).getRank() != 2)
    return failure();
  while (true) {
    Value current = rc.ops.back()->getResult(0);
    if (!current.hasOneUse())
      break;
    Operation *user = *current.getUsers().begin();
    if (!isRowChainOp(user) || isa<sg::RMSNormOp>(user) ||
        user->getBlock() != first->getBlock() ||
        user->getResult(0).getType() != current.getType())
      break;
    if (!llvm::all_of(sideInputs(user, current), availableBeforeChain))
      break;
    rc.ops.push_back(user);
  }

  // Parameters: the chain's first input, then each op's side inputs.
  Value x = isa<sg::RMSNormOp>(first) ? cast<sg::RMSNormOp>(first).getX()
                                      : first->getOperand(0);
  rc.ins = {x};
  Value current = x;
  for (Operation *op : rc.ops) {
    SmallVector<unsigned> indices;
    SmallVector<Value> side = op == first && !isa<sg::RMSNormOp>(op)
                                  ? SmallVector<Value>(
                                        op->getOperands().drop_front())
                                  : sideInputs(op, current);
    for (Value v : side) {
      auto *it = llvm::find(rc.ins, v);
      if (it == rc.ins.end()) {
        rc.ins.push_back(v);
        it = rc.ins.end() - 1;
      }
      indices.push_back(it - rc.ins.begin());
    }
    rc.sideParams.push_back(indices);
    current = op->getResult(0);
  }
  rc.result = rc.ops.back()->getResult(0);
  return rc;
}

int64_t RowChain::width() const {
  return cast<ShapedType>(result.getType()).getDimSize(1);
}

Type RowChain::elementType() const {
  return cast<ShapedType>(result.getType()).getElementType();
}

ArrayAttr RowChain::steps(Builder &a) const {
  SmallVector<Attribute> names;
  for (Operation *op : ops)
    names.push_back(a.getStringAttr(describe(op)));
  return a.getArrayAttr(names);
}

void gpu_kernels::emitRowChainRow(
    KernelBody &k, const RowChain &chain, ArrayRef<Value> params, Value t,
    int64_t threads, Value scratch,
    llvm::function_ref<void(Value, Value)> store) {
  ImplicitLocOpBuilder &b = k.b;
  int64_t width = chain.width();
  int64_t n = KernelBody::rowChunk(width);
  Type ct = chain.elementType();
  // [1] scalars (Gemma 4's layer scalar): one load before the pass, splat
  // to the chunk.
  llvm::DenseMap<unsigned, Value> scalars;
  for (const SmallVector<unsigned> &side : chain.sideParams)
    for (unsigned param : side) {
      auto type = cast<MemRefType>(params[param].getType());
      if (type.getRank() != 1 || type.getDimSize(0) != 1 ||
          scalars.count(param))
        continue;
      Value v =
          memref::LoadOp::create(b, params[param], ValueRange{k.index(0)});
      if (n > 1)
        v = vector::BroadcastOp::create(
            b, VectorType::get({n}, type.getElementType()), v);
      scalars[param] = v;
    }
  // The chunk of parameter `param` at column c: [tokens, width] rows,
  // [width] weights, [1] scalars.
  auto load = [&](unsigned param, Value c) -> Value {
    if (Value scalar = scalars.lookup(param))
      return scalar;
    Value buffer = params[param];
    if (cast<MemRefType>(buffer.getType()).getRank() == 2)
      return k.loadChunk(buffer, ValueRange{t}, c, n);
    return k.loadChunk(buffer, ValueRange{}, c, n);
  };
  Value r;
  auto norm = dyn_cast<sg::RMSNormOp>(chain.ops.front());
  if (norm) {
    Value sum = k.rowSumOfSquares(width, n, threads,
                                  [&](Value c) { return load(0, c); });
    r = k.rmsScale(k.blockSum(sum, threads, scratch), width,
                   norm.getEps().convertToDouble());
  }
  k.forRowChunks(width, n, threads, [&](Value c) {
    Value v = load(0, c);
    for (auto [op, side] : llvm::zip_equal(chain.ops, chain.sideParams)) {
      auto loadSide = [&, &side = side] { return load(side[0], c); };
      llvm::function_ref<Value()> sideChunk;
      if (!side.empty())
        sideChunk = loadSide;
      RowStep step{b, op, v, sideChunk, r, ct};
      v = rowSteps().at(op->getName().getTypeID())(step);
    }
    store(c, v);
  });
}

FailureOr<KernelUse> gpu_kernels::emitRowChain(Operation *first,
                                               EmitContext &ctx) {
  KernelModule &km = ctx.kernels;
  FailureOr<RowChain> matched = matchRowChain(first);
  if (failed(matched))
    return first->emitError("convert-sg-to-gpu: rowwise ops need [tokens, "
                            "width] values, got ")
           << first->getResult(0).getType();
  const RowChain &chain = *matched;
  SmallVector<Type> params;
  for (Value v : chain.ins)
    params.push_back(km.paramType(v, ctx.maxTokens));
  MemRefType outType = km.paramType(chain.result, ctx.maxTokens);
  params.push_back(outType);

  Builder a(first->getContext());
  auto spec = a.getDictionaryAttr(
      {a.getNamedAttr("steps", chain.steps(a)),
       a.getNamedAttr("width", a.getI64IntegerAttr(chain.width())),
       a.getNamedAttr("threads", a.getI64IntegerAttr(kThreads))});

  KernelUse use;
  use.kernel = km.getOrCreate(
      "row_chain", spec, params, {kThreads, 1, 1}, ctx.oneToken(),
      [&](KernelBody &k) {
        ImplicitLocOpBuilder &b = k.b;
        Value out = k.params.back();
        Value t = k.blockId(gpu::Dimension::x);
        Value scratch = k.sharedBuffer({kThreads / kWarp}, b.getF32Type());
        k.ifThen(k.lessThan(t, k.numTokens), [&] {
          emitRowChainRow(k, chain, ArrayRef<Value>(k.params).drop_back(), t,
                          kThreads, scratch, [&](Value c, Value v) {
                            k.storeChunk(v, out, ValueRange{t}, c);
                          });
        });
      });
  use.ins = chain.ins;
  use.outs = {chain.result};
  use.fused.assign(chain.ops.begin() + 1, chain.ops.end());
  use.grid = {ctx.maxTokens, 1, 1};
  use.block = {kThreads, 1, 1};
  return use;
}
