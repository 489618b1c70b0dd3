//===- Kernels.cpp - kernel construction and dedup for convert-sg-to-gpu --===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/Kernels.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;

KernelBody::KernelBody(const OpBuilder &outer, gpu::GPUFuncOp func,
                       bool oneToken)
    : b(func.getLoc(), outer), loc(func.getLoc()), func(func) {
  Block &entry = func.getBody().front();
  state = entry.getArgument(0);
  for (unsigned i = 1; i < func.getNumArguments(); ++i)
    params.push_back(entry.getArgument(i));
  b.setInsertionPointToStart(&entry);
  if (oneToken) {
    numTokens = index(1);
  } else {
    Value n = memref::LoadOp::create(b, state, ValueRange{index(1)});
    numTokens = arith::IndexCastOp::create(b, b.getIndexType(), n);
  }
}

Value KernelBody::position() {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value p = memref::LoadOp::create(b, state, ValueRange{zero});
  return arith::IndexCastOp::create(b, b.getIndexType(), p);
}

Value KernelBody::rowsWanted(Value t0, int64_t rows) {
  // One statement each: argument order would differ between compilers.
  Value end = index(IndexExpr(t0) + rows);
  Value r = memref::LoadOp::create(b, state, ValueRange{index(3)});
  Value first = arith::IndexCastOp::create(b, b.getIndexType(), r);
  return lessThan(first, end);
}

Value KernelBody::threadId(gpu::Dimension d) {
  return gpu::ThreadIdOp::create(b, d);
}

Value KernelBody::blockId(gpu::Dimension d) {
  return gpu::BlockIdOp::create(b, d);
}

Value KernelBody::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value KernelBody::f32(float v) {
  return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(v));
}

void KernelBody::markReadOnly(unsigned param) {
  // Argument 0 is the step state.
  func.setArgAttr(1 + param, LLVM::LLVMDialect::getNoAliasAttrName(),
                  b.getUnitAttr());
  func.setArgAttr(1 + param, LLVM::LLVMDialect::getReadonlyAttrName(),
                  b.getUnitAttr());
}

Value KernelBody::sharedBuffer(ArrayRef<int64_t> shape, Type element) {
  auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                              space);
  BlockArgument arg = func.addWorkgroupAttribution(type, loc);
  // Attributions are aligned to their element type otherwise (CUDA.md §3.5).
  func.setWorkgroupAttributionAttr(func.getNumWorkgroupAttributions() - 1,
                                   LLVM::LLVMDialect::getAlignAttrName(),
                                   b.getI64IntegerAttr(16));
  return arg;
}

Value KernelBody::dynamicSharedBuffer(ArrayRef<int64_t> shape, Type element) {
  assert(!func->hasAttr(kDynamicSharedAttr) && "one dynamic buffer a kernel");
  auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                          gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                              space);
  int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  func->setAttr(kDynamicSharedAttr, b.getI64IntegerAttr(bytes));
  // The NVVM lowering aligns the extern array to 16 bytes (128-bit loads).
  Value raw = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), space));
  return memref::ViewOp::create(b, type, raw, index(0), ValueRange{});
}

void KernelBody::ifLastBlock(Value counters, Value slot, int64_t blocks,
                             llvm::function_ref<void()> body) {
  Value zero = index(0);
  NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
  gpu::BarrierOp::create(b);
  Value flag = sharedBuffer({1}, b.getI32Type());
  Value tid0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                     threadId(gpu::Dimension::x), zero);
  ifThen(tid0, [&] {
    Value old = memref::AtomicRMWOp::create(
        b, arith::AtomicRMWKind::addi,
        arith::ConstantIntOp::create(b, b.getI32Type(), 1), counters,
        ValueRange{slot});
    memref::StoreOp::create(b, old, flag, ValueRange{zero});
  });
  gpu::BarrierOp::create(b);
  Value seen = memref::LoadOp::create(b, flag, ValueRange{zero});
  Value last = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq, seen,
      arith::ConstantIntOp::create(b, b.getI32Type(), blocks - 1));
  ifThen(last, [&] {
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
    body();
    ifThen(tid0, [&] {
      memref::StoreOp::create(
          b, arith::ConstantIntOp::create(b, b.getI32Type(), 0), counters,
          ValueRange{slot});
    });
  });
}

static Value shuffleReduce(ImplicitLocOpBuilder &b, Value v, bool max) {
  for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
    auto shuffle =
        gpu::ShuffleOp::create(b, v, offset, kWarp, gpu::ShuffleMode::XOR);
    Value other = shuffle.getShuffleResult();
    v = max ? Value(arith::MaximumFOp::create(b, v, other))
            : Value(arith::AddFOp::create(b, v, other));
  }
  return v;
}

Value KernelBody::warpSum(Value v) { return shuffleReduce(b, v, false); }
Value KernelBody::warpMax(Value v) { return shuffleReduce(b, v, true); }

Value KernelBody::blockSum(Value v, int64_t threads, Value scratch) {
  Value sum = warpSum(v);
  int64_t warps = threads / kWarp;
  if (warps == 1)
    return sum;
  Value tid = threadId(gpu::Dimension::x);
  Value warp = index(IndexExpr(tid) / kWarp);
  Value lane = index(IndexExpr(tid) % kWarp);
  Value lane0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, index(0));
  ifThen(lane0,
         [&] { memref::StoreOp::create(b, sum, scratch, ValueRange{warp}); });
  gpu::BarrierOp::create(b);
  // Every warp adds the partial sums in the same order, so every thread
  // gets the same bits.
  Value total = f32(0.0f);
  for (int64_t w = 0; w < warps; ++w)
    total = arith::AddFOp::create(
        b, total,
        Value(memref::LoadOp::create(b, scratch, ValueRange{index(w)})));
  // The scratch may be reused right after: nobody may still be reading.
  gpu::BarrierOp::create(b);
  return total;
}

Value KernelBody::sumOfSquares(Value start, Value end, Value step,
                               llvm::function_ref<Value(Value)> load) {
  auto loop = scf::ForOp::create(
      b, start, end, step, ValueRange{f32(0.0f)},
      [&](OpBuilder &, Location, Value i, ValueRange acc) {
        Value v = lowering::toF32(b, load(i));
        Value sq = arith::MulFOp::create(b, v, v);
        Value sum = acc[0];
        if (auto vec = dyn_cast<VectorType>(sq.getType())) {
          for (int64_t e = 0; e < vec.getNumElements(); ++e)
            sum = arith::AddFOp::create(
                b, sum,
                Value(vector::ExtractOp::create(b, sq, ArrayRef<int64_t>{e})));
        } else {
          sum = arith::AddFOp::create(b, sum, sq);
        }
        scf::YieldOp::create(b, sum);
      });
  return loop.getResult(0);
}

int64_t KernelBody::rowChunk(int64_t width) {
  return width % kRowChunk == 0 ? kRowChunk : 1;
}

void KernelBody::forRowChunks(int64_t width, int64_t n, int64_t threads,
                              llvm::function_ref<void(Value)> body) {
  Value first = index(IndexExpr(threadId(gpu::Dimension::x)) * n);
  Value end = index(width);
  Value step = index(threads * n);
  forRange(first, end, step, body);
}

Value KernelBody::rowSumOfSquares(int64_t width, int64_t n, int64_t threads,
                                  llvm::function_ref<Value(Value)> load) {
  Value first = index(IndexExpr(threadId(gpu::Dimension::x)) * n);
  Value end = index(width);
  Value step = index(threads * n);
  return sumOfSquares(first, end, step, load);
}

Value KernelBody::loadChunk(Value buf, ValueRange idx, Value c, int64_t n) {
  Value v = lowering::emitRowLoad(b, buf, idx, c, n);
  if (auto load = v.getDefiningOp<vector::LoadOp>())
    load.setAlignment(16);
  return v;
}

void KernelBody::storeChunk(Value v, Value buf, ValueRange idx, Value c) {
  SmallVector<Value> indices(idx);
  indices.push_back(c);
  if (!isa<VectorType>(v.getType())) {
    memref::StoreOp::create(b, v, buf, indices);
    return;
  }
  vector::StoreOp::create(b, v, buf, indices).setAlignment(16);
}

Value KernelBody::rmsScale(Value sum, int64_t width, double eps) {
  Value mean = arith::DivFOp::create(b, sum, f32(static_cast<float>(width)));
  return math::RsqrtOp::create(
      b, Value(arith::AddFOp::create(b, mean, f32(static_cast<float>(eps)))));
}

Value KernelBody::bf16Pair(Value buf, ValueRange idx, Value col) {
  SmallVector<Value> indices(idx);
  indices.push_back(col);
  auto v = vector::LoadOp::create(b, VectorType::get({2}, b.getBF16Type()), buf,
                                  indices);
  v.setAlignment(4);
  Value bits =
      vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), v);
  return vector::ExtractOp::create(b, bits, ArrayRef<int64_t>{0});
}

Value KernelBody::packBf16(Value lo, Value hi) {
  Type bf16 = b.getBF16Type();
  auto toBf16 = [&](Value v) -> Value {
    return v.getType() == bf16 ? v : lowering::roundTo(b, v, bf16);
  };
  Value pair = vector::FromElementsOp::create(
      b, VectorType::get({2}, bf16), ValueRange{toBf16(lo), toBf16(hi)});
  Value bits =
      vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, bits, ArrayRef<int64_t>{0});
}

SmallVector<Value> KernelBody::mmaBf16(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                                       ArrayRef<Value> c) {
  Type f32Type = b.getF32Type();
  auto result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Type, f32Type, f32Type, f32Type});
  auto op = NVVM::MmaOp::create(
      b, result, a, bFrag, c, ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
      std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, op, i));
  return d;
}

void KernelBody::forRange(Value start, Value end, Value step,
                          llvm::function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, start, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

void KernelBody::ifThen(Value cond, llvm::function_ref<void()> body) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  body();
}

Value KernelBody::cacheSlot(Value j, int64_t window) {
  if (window <= 0)
    return j;
  return index(IndexExpr(j) % window);
}

Value KernelBody::firstKey(Value position, int64_t window) {
  if (window <= 0)
    return index(0);
  Value start = index(IndexExpr(position) + (1 - window));
  Value zero = index(0);
  Value positive =
      arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, start, zero);
  return arith::SelectOp::create(b, positive, start, zero);
}

Value KernelBody::lessThan(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y);
}

gpu::GPUFuncOp KernelModule::getOrCreate(
    StringRef family, DictionaryAttr spec, ArrayRef<Type> params,
    std::array<int64_t, 3> block, bool oneToken,
    llvm::function_ref<void(KernelBody &)> build) {
  MLIRContext *ctx = module.getContext();
  // The family, the parameter types (token bound included) and whether the
  // token count is static are part of the key.
  SmallVector<NamedAttribute> keyAttrs(spec.getValue());
  keyAttrs.push_back(NamedAttribute(StringAttr::get(ctx, "family"),
                                    StringAttr::get(ctx, family)));
  SmallVector<Attribute> types;
  for (Type t : params)
    types.push_back(TypeAttr::get(t));
  keyAttrs.push_back(NamedAttribute(StringAttr::get(ctx, "params"),
                                    ArrayAttr::get(ctx, types)));
  keyAttrs.push_back(NamedAttribute(StringAttr::get(ctx, "one_token"),
                                    BoolAttr::get(ctx, oneToken)));
  auto key = DictionaryAttr::get(ctx, keyAttrs);
  if (gpu::GPUFuncOp existing = bySpec.lookup(key))
    return existing;

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(kernels.getBody());
  SmallVector<Type> inputs = {MemRefType::get({4}, b.getI64Type())};
  llvm::append_range(inputs, params);
  std::string name = (family + "_" + Twine(counts[family]++)).str();
  auto func = gpu::GPUFuncOp::create(b, kernels.getLoc(), name,
                                     b.getFunctionType(inputs, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  SmallVector<int32_t> block32(block.begin(), block.end());
  func.setKnownBlockSize(block32);
  func->setAttr("sg.kernel_spec", spec);
  KernelBody body(b, func, oneToken);
  build(body);
  gpu::ReturnOp::create(body.b);
  bySpec[key] = func;
  return func;
}

MemRefType KernelModule::paramType(Value v, int64_t maxTokens) const {
  auto type = cast<ShapedType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t &d : shape)
    if (ShapedType::isDynamic(d))
      d = maxTokens;
  return MemRefType::get(shape, type.getElementType());
}

FailureOr<Projection> gpu_kernels::matchProjection(Operation *op) {
  auto projection = dyn_cast_or_null<sg::ProjectionOpInterface>(op);
  if (!projection)
    return failure();
  // No CUDA kernel reads a bias or an [in, out] weight yet.
  if (auto linear = dyn_cast<sg::LinearOp>(op); linear && !linear.isPlain())
    return failure();
  Projection g;
  static_cast<sg::ProjectionParts &>(g) = projection.getProjection();
  return g;
}

int64_t Projection::totalRows() const {
  int64_t total = 0;
  for (Value w : weights) {
    total += cast<ShapedType>(w.getType()).getDimSize(0);
    if (gated())
      break;
  }
  return total;
}

void gpu_kernels::emitProjectionNormScales(KernelBody &k, const Projection &g,
                                           Value x, int64_t width, Value t0,
                                           Value warp, Value lane,
                                           int64_t tokensPerWarp, Value scales) {
  ImplicitLocOpBuilder &b = k.b;
  Value first = k.index(IndexExpr(warp) * tokensPerWarp);
  Value zero = k.index(0), count = k.index(tokensPerWarp), one = k.index(1);
  k.forRange(zero, count, one, [&](Value i) {
    Value m = k.index(IndexExpr(first) + i);
    Value token = k.index(IndexExpr(t0) + m);
    auto ifOp = scf::IfOp::create(b, TypeRange{b.getF32Type()},
                                  k.lessThan(token, k.numTokens),
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value end = k.index(width), step = k.index(kWarp);
      Value sum = k.sumOfSquares(lane, end, step, [&](Value c) {
        return memref::LoadOp::create(b, x, ValueRange{token, c});
      });
      scf::YieldOp::create(b, k.rmsScale(k.warpSum(sum), width, g.eps));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, k.f32(0.0f));
    }
    Value lane0 =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, k.index(0));
    k.ifThen(lane0, [&] {
      memref::StoreOp::create(b, ifOp.getResult(0), scales, ValueRange{m});
    });
  });
  gpu::BarrierOp::create(b);
}

Value gpu_kernels::emitProjectionEpilogue(ImplicitLocOpBuilder &b,
                                          const Projection &g, Value v,
                                          Value up, Type yType) {
  Location loc = b.getLoc();
  using lowering::roundTo;
  using lowering::toF32;
  Value y = roundTo(b, v, yType);
  switch (g.epilogue) {
  case Projection::Epilogue::Plain:
    return y;
  case Projection::Epilogue::Softcap:
    return lowering::emitSoftcap(b, y, g.cap);
  case Projection::Epilogue::GatedGelu: {
    Value u = roundTo(b, up, yType);
    Value act = roundTo(b, lowering::emitGeluTanh(b, toF32(b, y)), yType);
    // One statement each: argument order would differ between compilers
    // (this is the order GCC built).
    Value uF = toF32(b, u);
    Value actF = toF32(b, act);
    Value prod = arith::MulFOp::create(b, actF, uF);
    return roundTo(b, prod, yType);
  }
  }
  return y;
}

void gpu_kernels::emitProjectionBlock(
    KernelBody &k, const Projection &g, Value t0, int64_t blockTokens,
    Value n0, llvm::function_ref<void()> normScales,
    llvm::function_ref<void(int w, Value rowBase)> forWeight) {
  ImplicitLocOpBuilder &b = k.b;
  Value live = k.lessThan(t0, k.numTokens);
  if (g.wantedRowsOnly)
    live = arith::AndIOp::create(b, live, k.rowsWanted(t0, blockTokens));
  k.ifThen(live, [&] {
    if (g.norm)
      normScales();
    if (g.gated()) {
      forWeight(0, n0);
      return;
    }
    int64_t offset = 0;
    for (auto [i, w] : llvm::enumerate(g.weights)) {
      int64_t rows = cast<ShapedType>(w.getType()).getDimSize(0);
      Value lo = k.index(offset), hi = k.index(offset + rows);
      Value fromLo = arith::CmpIOp::create(b, arith::CmpIPredicate::uge, n0, lo);
      Value belowHi = k.lessThan(n0, hi);
      Value inside = arith::AndIOp::create(b, fromLo, belowHi);
      k.ifThen(inside, [&] {
        forWeight(static_cast<int>(i), k.index(IndexExpr(n0) - lo));
      });
      offset += rows;
    }
  });
}

SmallVector<NamedAttribute> Projection::specAttrs(Builder &a) const {
  SmallVector<int64_t> rows;
  for (Value w : weights)
    rows.push_back(cast<ShapedType>(w.getType()).getDimSize(0));
  int64_t width = cast<ShapedType>(x.getType()).getShape().back();
  StringRef name = epilogue == Epilogue::GatedGelu ? "gated_gelu"
                   : epilogue == Epilogue::Softcap ? "softcap"
                                                   : "none";
  SmallVector<NamedAttribute> attrs = {
      a.getNamedAttr("k", a.getI64IntegerAttr(width)),
      a.getNamedAttr("rows", a.getDenseI64ArrayAttr(rows)),
      a.getNamedAttr("epilogue", a.getStringAttr(name))};
  if (wantedRowsOnly)
    attrs.push_back(a.getNamedAttr("wanted_rows_only", a.getBoolAttr(true)));
  if (norm) {
    attrs.push_back(a.getNamedAttr("norm_eps", a.getF64FloatAttr(eps)));
    attrs.push_back(a.getNamedAttr("norm_offset", a.getI64IntegerAttr(normOffset)));
    attrs.push_back(
        a.getNamedAttr("norm_weight", a.getBoolAttr(bool(normWeight))));
  }
  if (epilogue == Epilogue::Softcap)
    attrs.push_back(a.getNamedAttr("cap", a.getF64FloatAttr(cap)));
  return attrs;
}
