//===- Linear.cpp - linears (plain and fused) as row kernels --------------===//
//
// Part of sgc. sg.linear, sg.norm_linear and sg.gated_mlp all become one
// kernel each, `@sgc_<kind>_…(x, [norm weight], weights…, outputs…,
// row_begin, row_end)`, called through a dispatcher that the emitted glue
// implements with the runtime's parallel_for over the output rows.
//
// A kernel first widens its input rows to f32 once (normalizing them first
// when the op carries the norm, rounded exactly as sg.rms_norm rounds), then
// walks one weight row at a time (row-major bf16, as the checkpoint stores
// it) with 4 independent vector<16xf32> accumulators along K, widening the
// weights exactly to f32 and fusing multiply and add: the structure CPU.md
// measured at 93-96 % of one core's read bandwidth. Each row serves every
// token of the chunk while it is in L1. Epilogues (the softcap of the LM
// head; GELU-tanh times up for the gated MLP) run on the rounded dot
// products, so fused and unfused ops round at the same points.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToLinalg/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cstring>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

/// Lanes per accumulator and accumulators per K step.
static constexpr int64_t kLanes = 16;
static constexpr int64_t kAccumulators = 4;
/// How far ahead the row kernel prefetches weights, in bf16 elements (1 KiB).
static constexpr int64_t kPrefetchElements = 512;

namespace {

enum class Epilogue { Plain, Softcap, GatedGelu };

/// Everything that distinguishes one kernel from another.
struct KernelSpec {
  int64_t k = 0;
  /// Element types of the input rows, the weights and the outputs.
  Type xType, wType, yType;
  /// Rows of each weight (a gated MLP has two weights of the same rows).
  SmallVector<int64_t> rows;
  bool norm = false, normWeight = false;
  double eps = 0;
  int64_t offset = 0;
  Epilogue epilogue = Epilogue::Plain;
  double cap = 0;

  int64_t totalRows() const {
    if (epilogue == Epilogue::GatedGelu)
      return rows.front();
    int64_t total = 0;
    for (int64_t r : rows)
      total += r;
    return total;
  }
  unsigned numOutputs() const {
    return epilogue == Epilogue::GatedGelu ? 1 : rows.size();
  }

  /// A name that differs whenever the code would.
  std::string name() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << (epilogue == Epilogue::GatedGelu ? "gated_mlp"
           : norm                          ? "norm_linear"
                                           : "linear");
    for (int64_t r : rows)
      os << "_" << r;
    os << "x" << k << "_" << xType << "_" << wType << "_" << yType;
    auto bits = [](double d) {
      uint64_t u;
      std::memcpy(&u, &d, sizeof u);
      return llvm::utohexstr(u);
    };
    if (norm)
      os << "_n" << offset << (normWeight ? "w" : "") << "_" << bits(eps);
    if (epilogue == Epilogue::Softcap)
      os << "_cap" << bits(cap);
    return s;
  }
};

/// sum_k f32(w[row, k]) * xs[s, k], 4 x 16-lane accumulators, then a 16-lane
/// tail, one reassociating horizontal add, and a scalar tail.
Value emitRowDot(OpBuilder &b, Location loc, Value xs, Value w, Value row,
                 Value s, int64_t k) {
  Type wType = cast<MemRefType>(w.getType()).getElementType();
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  auto vecW = VectorType::get({kLanes}, wType);
  int64_t kMain = k - k % (kLanes * kAccumulators);
  int64_t kVec = k - k % kLanes;
  Value zeroVec = arith::ConstantOp::create(b, loc, vecF32,
                                            DenseElementsAttr::get(vecF32, 0.0f));
  auto fma = [&](OpBuilder &b, Location loc, Value col, Value acc) -> Value {
    Value wv = vector::LoadOp::create(b, loc, vecW, w, ValueRange{row, col});
    if (wType != b.getF32Type())
      wv = arith::ExtFOp::create(b, loc, vecF32, wv);
    Value xv = vector::LoadOp::create(b, loc, vecF32, xs, ValueRange{s, col});
    return vector::FMAOp::create(b, loc, wv, xv, acc);
  };
  SmallVector<Value> inits(kAccumulators, zeroVec);
  auto main = scf::ForOp::create(
      b, loc, constIndex(b, loc, 0), constIndex(b, loc, kMain),
      constIndex(b, loc, kLanes * kAccumulators), inits,
      [&](OpBuilder &b, Location loc, Value col, ValueRange accs) {
        // Prefetch the weight stream 1 KiB ahead (the two cache lines this
        // step will need 8 steps from now): measured on Zen 3, the hardware
        // prefetcher alone leaves the kernel at 76 % of read bandwidth, this
        // brings it to 85-94 % (bench/gemv). Past the row's end it touches
        // the next row; prefetches never fault.
        for (int64_t line = 0; line < kLanes * kAccumulators * 2; line += 64) {
          Value ahead = arith::AddIOp::create(
              b, loc, col, constIndex(b, loc, kPrefetchElements + line / 2));
          memref::PrefetchOp::create(b, loc, w, ValueRange{row, ahead},
                                     /*isWrite=*/false, /*localityHint=*/3,
                                     /*isDataCache=*/true);
        }
        SmallVector<Value> next;
        for (int64_t a = 0; a < kAccumulators; ++a)
          next.push_back(fma(b, loc,
                             arith::AddIOp::create(b, loc, col,
                                                   constIndex(b, loc, a * kLanes)),
                             accs[a]));
        scf::YieldOp::create(b, loc, next);
      });
  Value acc = main.getResult(0);
  for (int64_t a = 1; a < kAccumulators; ++a)
    acc = arith::AddFOp::create(b, loc, acc, main.getResult(a));
  auto tail = scf::ForOp::create(
      b, loc, constIndex(b, loc, kMain), constIndex(b, loc, kVec),
      constIndex(b, loc, kLanes), ValueRange{acc},
      [&](OpBuilder &b, Location loc, Value col, ValueRange accs) {
        scf::YieldOp::create(b, loc, fma(b, loc, col, accs[0]));
      });
  Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                          tail.getResult(0),
                                          arith::FastMathFlags::reassoc);
  auto scalarTail = scf::ForOp::create(
      b, loc, constIndex(b, loc, kVec), constIndex(b, loc, k),
      constIndex(b, loc, 1), ValueRange{sum},
      [&](OpBuilder &b, Location loc, Value col, ValueRange accs) {
        Value wv = toF32(b, loc, memref::LoadOp::create(b, loc, w, ValueRange{row, col}));
        Value xv = memref::LoadOp::create(b, loc, xs, ValueRange{s, col});
        Value prod = arith::MulFOp::create(b, loc, wv, xv);
        scf::YieldOp::create(b, loc, Value(arith::AddFOp::create(b, loc, accs[0], prod)));
      });
  return scalarTail.getResult(0);
}

/// xs[s, :] = f32 of the input row, normalized first when the kernel carries
/// the norm (sum of squares in order, mean, rsqrt, x·r·(offset + w), rounded
/// to the input type: what sg.rms_norm computes).
void emitInputRows(OpBuilder &b, Location loc, const KernelSpec &spec, Value x,
                   Value normWeight, Value xs) {
  Value zero = constIndex(b, loc, 0);
  Value kIdx = constIndex(b, loc, spec.k);
  emitFor(b, loc, zero, dimOf(b, loc, x, 0), [&](OpBuilder &b, Location loc, Value s) {
    auto load = [&](OpBuilder &b, Location loc, Value col) -> Value {
      return memref::LoadOp::create(b, loc, x, ValueRange{s, col});
    };
    Value r = spec.norm ? emitRmsScale(b, loc, spec.k, spec.eps, load) : Value();
    emitFor(b, loc, zero, kIdx, [&](OpBuilder &b, Location loc, Value col) {
      Value v = load(b, loc, col);
      if (spec.norm) {
        Value w = normWeight ? Value(memref::LoadOp::create(b, loc, normWeight,
                                                            ValueRange{col}))
                             : Value();
        v = emitNormalize(b, loc, v, r, w, spec.offset == 1, spec.xType);
      }
      memref::StoreOp::create(b, loc, toF32(b, loc, v), xs, ValueRange{s, col});
    });
  });
}

/// Emits the kernel function for `spec`.
func::FuncOp buildKernel(OpBuilder &b, ModuleOp module, const KernelSpec &spec,
                         StringRef name) {
  Location loc = module.getLoc();
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<Type> args = {MemRefType::get({dyn, spec.k}, spec.xType)};
  if (spec.normWeight)
    args.push_back(MemRefType::get({spec.k}, spec.wType));
  for (int64_t rows : spec.rows)
    args.push_back(MemRefType::get({rows, spec.k}, spec.wType));
  for (unsigned i = 0; i < spec.numOutputs(); ++i)
    args.push_back(MemRefType::get({dyn, spec.rows[i]}, spec.yType));
  args.append({b.getIndexType(), b.getIndexType()});

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, name, b.getFunctionType(args, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  sg::SGDialect::KernelAttrHelper(b.getContext())
      .setAttr(func, b.getStringAttr(spec.name()));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  unsigned next = 0;
  Value x = entry->getArgument(next++);
  Value normWeight = spec.normWeight ? entry->getArgument(next++) : Value();
  SmallVector<Value> weights, outputs;
  for (size_t i = 0; i < spec.rows.size(); ++i)
    weights.push_back(entry->getArgument(next++));
  for (unsigned i = 0; i < spec.numOutputs(); ++i)
    outputs.push_back(entry->getArgument(next++));
  Value rowBegin = entry->getArgument(next++);
  Value rowEnd = entry->getArgument(next++);

  Value tokens = dimOf(b, loc, x, 0);
  Value xs = memref::AllocOp::create(
      b, loc, MemRefType::get({dyn, spec.k}, b.getF32Type()), ValueRange{tokens},
      b.getI64IntegerAttr(64));
  emitInputRows(b, loc, spec, x, normWeight, xs);

  Value zero = constIndex(b, loc, 0);
  Type yType = spec.yType;
  auto store = [&](OpBuilder &b, Location loc, Value v, Value out, Value s,
                   Value n) {
    memref::StoreOp::create(b, loc, v, out, ValueRange{s, n});
  };
  if (spec.epilogue == Epilogue::GatedGelu) {
    emitFor(b, loc, rowBegin, rowEnd, [&](OpBuilder &b, Location loc, Value n) {
      emitFor(b, loc, zero, tokens, [&](OpBuilder &b, Location loc, Value s) {
        Value g = roundTo(b, loc, emitRowDot(b, loc, xs, weights[0], n, s, spec.k), yType);
        Value u = roundTo(b, loc, emitRowDot(b, loc, xs, weights[1], n, s, spec.k), yType);
        Value act = roundTo(b, loc, emitGeluTanh(b, loc, toF32(b, loc, g)), yType);
        Value p = arith::MulFOp::create(b, loc, toF32(b, loc, act), toF32(b, loc, u));
        store(b, loc, roundTo(b, loc, p, yType), outputs[0], s, n);
      });
    });
  } else {
    // The weights' rows are concatenated: weight i owns [offset_i,
    // offset_i + rows_i) of [row_begin, row_end).
    int64_t offset = 0;
    for (auto [i, rows] : llvm::enumerate(spec.rows)) {
      Value off = constIndex(b, loc, offset);
      Value end = constIndex(b, loc, offset + rows);
      Value lo = arith::MaxSIOp::create(b, loc, rowBegin, off);
      Value hi = arith::MinSIOp::create(b, loc, rowEnd, end);
      hi = arith::MaxSIOp::create(b, loc, hi, lo);
      Value w = weights[i], out = outputs[i];
      emitFor(b, loc, lo, hi, [&](OpBuilder &b, Location loc, Value global) {
        Value n = arith::SubIOp::create(b, loc, global, off);
        emitFor(b, loc, zero, tokens, [&](OpBuilder &b, Location loc, Value s) {
          Value y = roundTo(b, loc, emitRowDot(b, loc, xs, w, n, s, spec.k), yType);
          if (spec.epilogue == Epilogue::Softcap)
            y = emitSoftcap(b, loc, y, spec.cap);
          store(b, loc, y, out, s, n);
        });
      });
      offset += rows;
    }
  }
  memref::DeallocOp::create(b, loc, xs);
  func::ReturnOp::create(b, loc);
  return func;
}

/// The dispatcher `sgc_dispatch_<kernel>(x, …)`: declared here, defined in
/// the emitted glue, which runs the kernel's rows on the runtime's threads.
func::FuncOp getOrCreateDispatcher(OpBuilder &b, ModuleOp module,
                                   const KernelSpec &spec) {
  std::string kernelName = "sgc_" + spec.name();
  std::string name = "sgc_dispatch_" + spec.name();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  func::FuncOp kernel = buildKernel(b, module, spec, kernelName);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto type = kernel.getFunctionType();
  // The execution context, then the kernel's buffers (not its row range).
  SmallVector<Type> inputs = {LLVM::LLVMPointerType::get(b.getContext())};
  llvm::append_range(inputs, type.getInputs().drop_back(2));
  auto decl = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(inputs, {}));
  decl.setPrivate();
  decl->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  sg::SGDialect::DispatchAttrHelper(b.getContext())
      .setAttr(decl, FlatSymbolRefAttr::get(kernel));
  sg::SGDialect::RowsAttrHelper(b.getContext())
      .setAttr(decl, b.getI64IntegerAttr(spec.totalRows()));
  return decl;
}

/// `buffer` as a memref with a dynamic leading dimension.
Value withDynamicTokens(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.isDynamicDim(0))
    return buffer;
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = ShapedType::kDynamic;
  return memref::CastOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()), buffer);
}

} // namespace

Value lowering::emitSoftcap(OpBuilder &b, Location loc, Value v, double capValue) {
  Type type = v.getType();
  Value cap = constF32(b, loc, static_cast<float>(capValue));
  Value t1 = toF32(b, loc, roundTo(b, loc,
      arith::DivFOp::create(b, loc, toF32(b, loc, v), cap), type));
  Value t2 = toF32(b, loc, roundTo(b, loc, math::TanhOp::create(b, loc, t1), type));
  return roundTo(b, loc, arith::MulFOp::create(b, loc, t2, cap), type);
}

LogicalResult lowering::lowerLinear(Operation *op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op->getLoc();
  KernelSpec spec;
  Value x, normWeight;
  SmallVector<Value> weights;
  if (auto linear = dyn_cast<sg::LinearOp>(op)) {
    x = linear.getX();
    weights.push_back(linear.getW());
  } else if (auto fused = dyn_cast<sg::NormLinearOp>(op)) {
    x = fused.getX();
    normWeight = fused.getNormWeight();
    weights.append(fused.getWeights().begin(), fused.getWeights().end());
    if (FloatAttr eps = fused.getEpsAttr()) {
      spec.norm = true;
      spec.eps = eps.getValueAsDouble();
      spec.offset = fused.getWeightOffset();
    }
    if (FloatAttr cap = fused.getSoftcapAttr()) {
      spec.epilogue = Epilogue::Softcap;
      spec.cap = cap.getValueAsDouble();
    }
  } else if (auto mlp = dyn_cast<sg::GatedMLPOp>(op)) {
    x = mlp.getX();
    normWeight = mlp.getNormWeight();
    weights = {mlp.getGate(), mlp.getUp()};
    spec.epilogue = Epilogue::GatedGelu;
    if (FloatAttr eps = mlp.getEpsAttr()) {
      spec.norm = true;
      spec.eps = eps.getValueAsDouble();
      spec.offset = mlp.getWeightOffset();
    }
  } else {
    return op->emitError("not a linear-family op");
  }
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() != 2)
    return op->emitError("convert-sg-to-linalg: linears need a [tokens, in] "
                         "input, got rank ")
           << xType.getRank();
  spec.k = xType.getDimSize(1);
  spec.xType = xType.getElementType();
  spec.wType = cast<RankedTensorType>(weights.front().getType()).getElementType();
  spec.yType = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  spec.normWeight = static_cast<bool>(normWeight);
  for (Value w : weights)
    spec.rows.push_back(cast<RankedTensorType>(w.getType()).getDimSize(0));

  func::FuncOp dispatcher = getOrCreateDispatcher(b, state.module, spec);
  SmallVector<Value> args = {state.exec,
                             withDynamicTokens(b, loc, state.lookup(x))};
  if (normWeight)
    args.push_back(state.lookup(normWeight));
  for (Value w : weights)
    args.push_back(state.lookup(w));
  for (Value result : op->getResults()) {
    Value buffer = state.bufferFor(loc, result);
    state.buffers.map(result, buffer);
    args.push_back(withDynamicTokens(b, loc, buffer));
  }
  func::CallOp::create(b, loc, dispatcher, args);
  return success();
}
