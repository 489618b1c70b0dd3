//===- EncoderAttention.cpp - the vision towers' attention ---------------===//
//
// Part of sgc. sg.encoder_attn: every query of the image's patches over
// every key (bidirectional), masked keys at score -inf and probability 0,
// one kernel `@sgc_encoder_attn_<spec>` the glue spreads over the query
// heads.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/AttentionRows.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::attention;

namespace {
/// Everything that distinguishes one encoder attention kernel from another.
struct EncoderAttnSpec {
  int64_t hq, hkv, d, dv;
  double scale;
  Type ct;
  /// The element type of the key positions; null without a mask.
  Type maskType;

  std::string name() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "encoder_attn_" << hq << "x" << hkv << "x" << d << "x" << dv << "_"
       << ct << (maskType ? "_mask" : "") << "_"
       << llvm::utohexstr(llvm::bit_cast<uint64_t>(scale));
    return s;
  }
};

/// The kernel `@sgc_encoder_attn_…(q, k, v, [key_positions], out,
/// head_begin, head_end)`: every query of query heads [head_begin,
/// head_end) over every key, masked keys at score −inf and probability 0.
func::FuncOp buildEncoderAttnKernel(OpBuilder &outer, ModuleOp module,
                                    const EncoderAttnSpec &spec,
                                    StringRef name) {
  ImplicitLocOpBuilder b(module.getLoc(), outer);
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<Type> args = {MemRefType::get({dyn, spec.hq, spec.d}, spec.ct),
                            MemRefType::get({dyn, spec.hkv, spec.d}, spec.ct),
                            MemRefType::get({dyn, spec.hkv, spec.dv}, spec.ct)};
  if (spec.maskType)
    args.push_back(MemRefType::get({dyn, 2}, spec.maskType));
  args.append({MemRefType::get({dyn, spec.hq, spec.dv}, spec.ct),
               b.getIndexType(), b.getIndexType()});
  OpBuilder::InsertionGuard guard(b);
  func::FuncOp func =
      createKernelFunction(b, module, name, args, spec.name());
  Block *entry = &func.getBody().front();
  unsigned next = 0;
  Value q = entry->getArgument(next++), k = entry->getArgument(next++);
  Value v = entry->getArgument(next++);
  Value mask = spec.maskType ? entry->getArgument(next++) : Value();
  Value out = entry->getArgument(next++);
  Value headBegin = entry->getArgument(next++), headEnd = entry->getArgument(next++);
  Type ct = spec.ct;
  int64_t group = spec.hq / spec.hkv;

  Value queries = dimOf(b, q, 0), keys = dimOf(b, k, 0);
  Value scores =
      memref::AllocOp::create(b, MemRefType::get({dyn}, b.getF32Type()),
                              ValueRange{keys}, b.getI64IntegerAttr(64));
  Value acc =
      memref::AllocOp::create(b, MemRefType::get({spec.dv}, b.getF32Type()),
                              ValueRange{}, b.getI64IntegerAttr(64));
  Value zero = constIndex(b, 0), one = constIndex(b, 1);
  Value scale = constF32(b, static_cast<float>(spec.scale));
  Value negInf = constF32(b, -std::numeric_limits<float>::infinity());
  Value fzero = constF32(b, 0.0f);

  emitFor(b, headBegin, headEnd, [&](ImplicitLocOpBuilder &b, Value h) {
    Value g = arith::DivUIOp::create(b, h, constIndex(b, group));
    emitFor(b, zero, queries, [&](ImplicitLocOpBuilder &b, Value i) {
      // Pass 1: scores (−inf for a masked key) and their maximum.
      auto scoreLoop = scf::ForOp::create(
          b, zero, keys, one, ValueRange{negInf},
          implicitLoc([&](ImplicitLocOpBuilder &b, Value j, ValueRange maxArg) {
            auto score = [&](ImplicitLocOpBuilder &b) -> Value {
              Value qk =
                  emitDot(b, spec.d, q, ValueRange{i, h}, k, ValueRange{j, g});
              // The reference rounds q·k and the scaled score to its dtype.
              Value s = toF32(b, roundTo(b, qk, ct));
              return toF32(b,
                           roundTo(b, arith::MulFOp::create(b, s, scale), ct));
            };
            Value s;
            if (mask) {
              Value px = memref::LoadOp::create(b, mask, ValueRange{j, zero});
              Value pad = arith::CmpIOp::create(
                  b, arith::CmpIPredicate::slt, px,
                  arith::ConstantOp::create(
                      b, b.getIntegerAttr(spec.maskType, 0)));
              s = emitIfElse(
                  b, b.getF32Type(), pad,
                  [&](ImplicitLocOpBuilder &) { return negInf; }, score);
            } else {
              s = score(b);
            }
            memref::StoreOp::create(b, s, scores, ValueRange{j});
            scf::YieldOp::create(
                b, Value(arith::MaximumFOp::create(b, maxArg[0], s)));
          }));
      Value maxScore = scoreLoop.getResult(0);
      // Pass 2: exponentials (exactly 0 for a masked key) and their sum.
      auto sumLoop = scf::ForOp::create(
          b, zero, keys, one, ValueRange{fzero},
          implicitLoc([&](ImplicitLocOpBuilder &b, Value j, ValueRange sum) {
            Value s = memref::LoadOp::create(b, scores, ValueRange{j});
            Value masked =
                arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, s, negInf);
            Value e = math::ExpOp::create(
                b, Value(arith::SubFOp::create(b, s, maxScore)));
            e = arith::SelectOp::create(b, masked, fzero, e);
            memref::StoreOp::create(b, e, scores, ValueRange{j});
            scf::YieldOp::create(b, Value(arith::AddFOp::create(b, sum[0], e)));
          }));
      Value total = sumLoop.getResult(0);
      // Every key masked: probabilities 0, result 0.
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, total, fzero);
      Value inv = arith::SelectOp::create(
          b, positive,
          Value(arith::DivFOp::create(b, constF32(b, 1.0f), total)), fzero);
      // Pass 3: out = round(sum_j round(p_j) * v_j).
      linalg::FillOp::create(b, fzero, acc);
      emitFor(b, zero, keys, [&](ImplicitLocOpBuilder &b, Value j) {
        Value e = memref::LoadOp::create(b, scores, ValueRange{j});
        Value pt = toF32(b, roundTo(b, arith::MulFOp::create(b, e, inv), ct));
        emitAxpy(b, spec.dv, pt, acc, v, ValueRange{j, g});
      });
      storeRoundedRow(b, zero, acc, out, i, h, spec.dv, ct);
    });
  });
  memref::DeallocOp::create(b, acc);
  memref::DeallocOp::create(b, scores);
  func::ReturnOp::create(b);
  return func;
}
} // namespace

LogicalResult lowering::lowerEncoderAttention(sg::EncoderAttnOp op,
                                              FunctionLowering &state) {
  Location loc = op.getLoc();
  ImplicitLocOpBuilder b(loc, state.b);
  Value q = state.lookup(op.getQ()), k = state.lookup(op.getK());
  Value v = state.lookup(op.getV());
  Value out = state.bufferFor(loc, op.getResult());
  Type ct = cast<MemRefType>(out.getType()).getElementType();
  for (Value t : {q, k, v})
    if (cast<MemRefType>(t.getType()).getElementType() != ct)
      return op.emitError("convert-sg-to-cpu: sg.encoder_attn needs q, k, "
                          "v and the result of one element type");
  auto qType = cast<MemRefType>(q.getType());
  auto kType = cast<MemRefType>(k.getType());
  auto vType = cast<MemRefType>(v.getType());
  Value mask = op.getKeyPositions() ? state.lookup(op.getKeyPositions()) : Value();
  EncoderAttnSpec spec{qType.getDimSize(1), kType.getDimSize(1), qType.getDimSize(2),
                       vType.getDimSize(2), op.getScale().convertToDouble(), ct,
                       mask ? cast<MemRefType>(mask.getType()).getElementType() : Type()};
  std::string name = "sgc_dispatch_" + spec.name();
  auto dispatcher = state.module.lookupSymbol<func::FuncOp>(name);
  if (!dispatcher) {
    func::FuncOp kernel = buildEncoderAttnKernel(b, state.module, spec, "sgc_" + spec.name());
    // A head is long work: two are worth two threads.
    dispatcher = declareDispatcher(b, state.module, kernel, name, spec.hq,
                                   /*parallelRows=*/2);
  }
  SmallVector<Value> args = {state.exec, withDynamicTokens(b, q),
                             withDynamicTokens(b, k), withDynamicTokens(b, v)};
  if (mask)
    args.push_back(withDynamicTokens(b, mask));
  args.push_back(withDynamicTokens(b, out));
  func::CallOp::create(b, dispatcher, args);
  state.buffers.map(op.getResult(), out);
  return success();
}
