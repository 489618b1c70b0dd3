//===- RebuiltKeys.cpp - keys rebuilt from a V-only cache, on CUDA --------===//
//
// Part of sgc. The chunk of a rebuilt key (RebuiltKeys.h): round(v · w_k)
// for the chunk, and for a rotated chunk the same of its partner, then the
// rotation of each pair with cos and sin of the f32 angle pos · inv_freq
// (one element at a time: the f64 polynomials of emitCosSin stay scalar,
// which the NVPTX backend takes as is).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToGPU/RebuiltKeys.h"
#include "compiler/Conversion/Common/KeyRotation.h"
#include "compiler/Conversion/Common/ReferenceMath.h"
#include "compiler/Conversion/Common/RowAccess.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::gpu_kernels;
using lowering::roundTo;
using lowering::toF32;

KeyRebuildSpec gpu_kernels::keyRebuildOf(Operation *op) {
  KeyRebuildSpec spec;
  auto full = dyn_cast<sg::FullAttnOp>(op);
  if (!full || !full.keysFromValues())
    return spec;
  spec.weight = full.getKeyWeight();
  spec.d = cast<ShapedType>(full.getQ().getType()).getDimSize(2);
  lowering::attention::KeyRotation rotation =
      lowering::attention::keyRotationOf(full);
  spec.rotated = rotation.rotated;
  spec.basis = rotation.basis;
  spec.theta = rotation.theta;
  spec.invFreq = lowering::inverseFrequencies(spec.d / 2, spec.rotated,
                                              spec.basis, spec.theta, 1.0);
  return spec;
}

void KeyRebuildSpec::appendSpecAttrs(
    Builder &a, SmallVectorImpl<NamedAttribute> &attrs) const {
  if (!weight)
    return;
  attrs.push_back(a.getNamedAttr("key_rotated", a.getI64IntegerAttr(rotated)));
  attrs.push_back(a.getNamedAttr("key_basis", a.getI64IntegerAttr(basis)));
  attrs.push_back(a.getNamedAttr("key_theta", a.getF64FloatAttr(theta)));
  attrs.push_back(a.getNamedAttr(
      "key_weight", TypeAttr::get(getElementTypeOrSelf(weight.getType()))));
}

KeyRebuild gpu_kernels::keyRebuildIn(KernelBody &k, const KeyRebuildSpec &spec,
                                     Value weightParam, Type ct) {
  KeyRebuild r;
  r.weight = weightParam;
  r.half = spec.d / 2;
  r.rotated = spec.rotated;
  r.ct = ct;
  auto kernels = k.func->getParentOfType<gpu::GPUModuleOp>();
  std::string name = lowering::getOrCreateInvFreqGlobal(k.b, kernels, k.loc,
                                                        spec.invFreq);
  r.invFreq = memref::GetGlobalOp::create(
      k.b, MemRefType::get({r.half}, k.b.getF32Type()), name);
  return r;
}

Value gpu_kernels::emitNormedKeyChunk(KernelBody &k, const KeyRebuild &r,
                                      Value col, int64_t n, Value v) {
  // round(v · w_k): k_norm of the raw projection, from the rounded V.
  // One op a statement (argument order differs between compilers; this is
  // the order GCC built).
  Value weight = k.loadChunk(r.weight, ValueRange{}, col, n);
  Value one = k.f32(1.0f);
  return lowering::emitNormalize(k.b, v, one, weight,
                                 /*plusOne=*/false, r.ct);
}

/// cos and sin of pos · inv_freq[c] (pos an index), rounded to ct, as f32.
static std::pair<Value, Value> cosSinAt(KernelBody &k, const KeyRebuild &r,
                                        Value pos, Value c) {
  ImplicitLocOpBuilder &b = k.b;
  Location loc = k.loc;
  Value pf = arith::UIToFPOp::create(
      b, b.getF32Type(),
      Value(arith::IndexCastOp::create(b, b.getI64Type(), pos)));
  Value f = memref::LoadOp::create(b, r.invFreq, ValueRange{c});
  auto [cosA, sinA] =
      lowering::attention::emitCosSin(b, arith::MulFOp::create(b, pf, f));
  return {toF32(b, roundTo(b, cosA, r.ct)), toF32(b, roundTo(b, sinA, r.ct))};
}

void gpu_kernels::emitRotateKeyTile(KernelBody &k, const KeyRebuild &r,
                                    Value tile, int64_t rows, Value firstPos,
                                    Value tid, int64_t threads) {
  ImplicitLocOpBuilder &b = k.b;
  Location loc = k.loc;
  Value step = k.index(threads);
  Value end = k.index(rows * r.rotated);
  k.forRange(tid, end, step, [&](Value p) {
    // Pair p: column p % rotated of tile row p / rotated, and its partner
    // half a head further.
    Value row = k.index(IndexExpr(p) / r.rotated);
    Value c = k.index(IndexExpr(p) % r.rotated);
    Value c2 = k.index(IndexExpr(c) + r.half);
    auto [cs, sn] = cosSinAt(k, r, k.index(IndexExpr(firstPos) + row), c);
    Value lo = toF32(b, memref::LoadOp::create(b, tile, ValueRange{row, c}));
    Value hi = toF32(b, memref::LoadOp::create(b, tile, ValueRange{row, c2}));
    auto [yLo, yHi] = lowering::emitRotatePair(b, lo, hi, cs, sn, r.ct);
    memref::StoreOp::create(b, yLo, tile, ValueRange{row, c});
    memref::StoreOp::create(b, yHi, tile, ValueRange{row, c2});
  });
}

Value gpu_kernels::emitRebuiltKeyChunk(KernelBody &k, const KeyRebuild &r,
                                       Value pos, Value col, int64_t n,
                                       llvm::function_ref<Value(Value)> loadV) {
  ImplicitLocOpBuilder &b = k.b;
  Location loc = k.loc;
  auto normed = [&](Value c) {
    return emitNormedKeyChunk(k, r, c, n, loadV(c));
  };
  Value key = normed(col);
  if (r.rotated == 0)
    return key;
  Value half = k.index(r.half);
  Value inLo = k.lessThan(col, k.index(r.rotated));
  Value pastHalf =
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, col, half);
  Value inHi = arith::AndIOp::create(
      b, pastHalf, k.lessThan(col, k.index(r.half + r.rotated)));
  auto rotatedChunk = scf::IfOp::create(b, TypeRange{key.getType()},
                                        arith::OrIOp::create(b, inLo, inHi),
                                        /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(rotatedChunk.elseBlock());
  scf::YieldOp::create(b, key);
  b.setInsertionPointToStart(rotatedChunk.thenBlock());
  Value freqCol = arith::SelectOp::create(
      b, inLo, col, Value(arith::SubIOp::create(b, col, half)));
  Value partner = normed(arith::SelectOp::create(
      b, inLo, Value(arith::AddIOp::create(b, col, half)), freqCol));
  Value lo = arith::SelectOp::create(b, inLo, key, partner);
  Value hi = arith::SelectOp::create(b, inLo, partner, key);
  auto element = [&](Value v, int64_t e) -> Value {
    if (n == 1)
      return v;
    return vector::ExtractOp::create(b, v, ArrayRef<int64_t>{e});
  };
  SmallVector<Value> out;
  for (int64_t e = 0; e < n; ++e) {
    auto [cosR, sinR] = cosSinAt(k, r, pos, k.index(IndexExpr(freqCol) + e));
    // One operand a statement (GCC's order, as above).
    Value hiE = toF32(b, element(hi, e));
    Value loE = toF32(b, element(lo, e));
    auto [yLo, yHi] = lowering::emitRotatePair(b, loE, hiE, cosR, sinR, r.ct);
    out.push_back(arith::SelectOp::create(b, inLo, yLo, yHi));
  }
  Value rotated = n == 1 ? out[0]
                         : Value(vector::FromElementsOp::create(
                               b, cast<VectorType>(key.getType()), out));
  scf::YieldOp::create(b, rotated);
  return rotatedChunk.getResult(0);
}
