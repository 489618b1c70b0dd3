//===- LinearPanels.cpp - weights packed for the projection tiles --------===//
//
// Part of sgc. The tile paths of the projection kernel (LinearKernel.cpp)
// read a block of kTileRows weight rows from a panel packed once a call:
// f32 columns for the f32 tiles, bf16 pairs for the vdpbf16ps tiles (f16 and
// block-encoded weights dequantized into them, as the pair rows read them).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/LinearSpec.h"
#include "compiler/Conversion/SGToCPU/WeightRead.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;
using namespace mlir::sgc::lowering::linear;

SmallVector<Value> linear::emitTranspose8x8(ImplicitLocOpBuilder &b,
                                            ArrayRef<Value> rows) {
  assert(rows.size() == 8 && "an 8 x 8 block");
  auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
    return vector::ShuffleOp::create(b, x, y, mask);
  };
  // Stage 1: pairs of rows interleaved within each 128-bit half.
  SmallVector<Value> t(8), u(8), cols(8);
  for (int i = 0; i < 8; i += 2) {
    t[i] = shuffle(rows[i], rows[i + 1], {0, 8, 1, 9, 4, 12, 5, 13});
    t[i + 1] = shuffle(rows[i], rows[i + 1], {2, 10, 3, 11, 6, 14, 7, 15});
  }
  // Stage 2: four rows' elements of two columns per vector (one column a
  // 128-bit half).
  for (int q = 0; q < 8; q += 4)
    for (int h = 0; h < 2; ++h) {
      u[q + 2 * h] =
          shuffle(t[q + h], t[q + h + 2], {0, 1, 8, 9, 4, 5, 12, 13});
      u[q + 2 * h + 1] =
          shuffle(t[q + h], t[q + h + 2], {2, 3, 10, 11, 6, 7, 14, 15});
    }
  // Stage 3: the halves of rows 0-3 and 4-7 joined.
  for (int c = 0; c < 4; ++c) {
    cols[c] = shuffle(u[c], u[c + 4], {0, 1, 2, 3, 8, 9, 10, 11});
    cols[c + 4] = shuffle(u[c], u[c + 4], {4, 5, 6, 7, 12, 13, 14, 15});
  }
  return cols;
}

namespace {
/// panel[base + p, col .. col + 2) = w[row, 2p .. 2p + 2) as bf16 for p in
/// [from, to), zero pairs when `valid` is false: a bf16 weight's pair as it
/// is stored, another's as loadWeightF32 reads it under bf16 activations.
void emitPackPairsOneByOne(ImplicitLocOpBuilder &b, Value w, Type wType,
                           Value row, Value valid, Value panel, Value base,
                           Value col, int64_t from, int64_t to) {
  auto pairType = VectorType::get({2}, b.getBF16Type());
  Value zeroPair = arith::ConstantOp::create(
      b, pairType, DenseElementsAttr::get(pairType, 0.0f));
  Value first = constIndex(b, from);
  Value end = constIndex(b, to);
  emitFor(b, first, end, [&](ImplicitLocOpBuilder &b, Value p) {
    auto pair = scf::IfOp::create(
        b, valid, implicitLoc([&](ImplicitLocOpBuilder &b) {
          Value k0 = arith::MulIOp::create(b, p, constIndex(b, 2));
          if (wType.isBF16()) {
            scf::YieldOp::create(b, Value(vector::LoadOp::create(
                                        b, pairType, w, ValueRange{row, k0})));
            return;
          }
          Value k1 = arith::AddIOp::create(b, k0, constIndex(b, 1));
          SmallVector<Value, 2> halves;
          for (Value kk : {k0, k1})
            halves.push_back(roundTo(
                b, loadWeightF32(b, w, wType, row, kk, 1, b.getBF16Type()),
                b.getBF16Type()));
          scf::YieldOp::create(
              b, Value(vector::FromElementsOp::create(b, pairType, halves)));
        }),
        implicitLoc([&](ImplicitLocOpBuilder &b) {
          scf::YieldOp::create(b, zeroPair);
        }));
    vector::StoreOp::create(b, pair.getResult(0), panel,
                            ValueRange{arith::AddIOp::create(b, base, p), col});
  });
}

/// The pairs of row `row` of a weight that is not bf16 (f16, a block
/// encoding), 32 elements at a time as loadWeightPairsBF16 reads them, into
/// panel[base + p, col .. col + 2); zero pairs when `valid` is false. A
/// tail of K % 32 (f16 only) goes a pair at a time.
void emitPackDequantizedRow(ImplicitLocOpBuilder &b, Value w, Type wType,
                            Value row, Value valid, Value panel, Value base,
                            Value col, int64_t k) {
  constexpr int64_t kChunk = 32;
  auto chunkType = VectorType::get({kChunk}, b.getBF16Type());
  Value zeroChunk = arith::ConstantOp::create(
      b, chunkType, DenseElementsAttr::get(chunkType, 0.0f));
  int64_t whole = k / kChunk * kChunk;
  Value zero = constIndex(b, 0);
  Value end = constIndex(b, whole);
  Value step = constIndex(b, kChunk);
  auto chunks = scf::ForOp::create(b, zero, end, step);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(chunks.getBody());
    Value c = chunks.getInductionVar();
    auto pairs = scf::IfOp::create(
        b, valid, implicitLoc([&](ImplicitLocOpBuilder &b) {
          scf::YieldOp::create(b, loadWeightPairsBF16(b, w, wType, row, c));
        }),
        implicitLoc([&](ImplicitLocOpBuilder &b) {
          scf::YieldOp::create(b, zeroChunk);
        }));
    IndexExpr p0 = IndexExpr(base) + IndexExpr(c) / 2;
    for (int64_t p = 0; p < kChunk / 2; ++p) {
      Value pair = vector::ExtractStridedSliceOp::create(
          b, pairs.getResult(0), ArrayRef<int64_t>{2 * p}, ArrayRef<int64_t>{2},
          ArrayRef<int64_t>{1});
      vector::StoreOp::create(b, pair, panel,
                              ValueRange{(p0 + p).emit(b), col});
    }
  }
  emitPackPairsOneByOne(b, w, wType, row, valid, panel, base, col, whole / 2,
                        k / 2);
}

} // namespace

/// panel[k, j] = f32(w[n0 + j, k]) for j < kTileRows: the weights of one
/// block of rows, widened once and laid out K-major for the tile loop. Eight
/// columns of eight rows at a time, transposed in registers, so every store
/// writes 32 contiguous bytes (a store per element, 64 bytes apart, took
/// ~15 % of a K = 2048 linear's time on Zen 3); a K that is not a multiple
/// of 8 ends one column at a time.
void linear::emitPackPanel(ImplicitLocOpBuilder &b, Value w, Type wType,
                           Value n0, Value panel, int64_t k, Type ct) {
  static_assert(kTileRows % 8 == 0, "the panel packs 8 rows at a time");
  Value zero = constIndex(b, 0);
  int64_t whole = k - k % 8;
  Value wholeEnd = constIndex(b, whole);
  Value eight = constIndex(b, 8);
  scf::ForOp::create(
      b, zero, wholeEnd, eight, ValueRange{},
      implicitLoc([&](ImplicitLocOpBuilder &b, Value col, ValueRange) {
        for (int64_t j0 = 0; j0 < kTileRows; j0 += 8) {
          SmallVector<Value> rows;
          for (int64_t j = j0; j < j0 + 8; ++j) {
            Value row = (IndexExpr(n0) + j).emit(b);
            rows.push_back(loadWeightF32(b, w, wType, row, col, 8, ct));
          }
          SmallVector<Value> cols = emitTranspose8x8(b, rows);
          for (int64_t c = 0; c < 8; ++c)
            vector::StoreOp::create(
                b, cols[c], panel,
                ValueRange{arith::AddIOp::create(b, col, constIndex(b, c)),
                           constIndex(b, j0)});
        }
        scf::YieldOp::create(b);
      }));
  Value rows = constIndex(b, kTileRows);
  emitFor(b, zero, rows, [&](ImplicitLocOpBuilder &b, Value j) {
    Value row = (IndexExpr(n0) + j).emit(b);
    Value tailBegin = constIndex(b, whole);
    Value end = constIndex(b, k);
    emitFor(b, tailBegin, end, [&](ImplicitLocOpBuilder &b, Value col) {
      Value v = loadWeightF32(b, w, wType, row, col, 1, ct);
      memref::StoreOp::create(b, v, panel, ValueRange{col, j});
    });
  });
}

/// panel[base + p, 2j + e] = w[n0 + j, 2p + e] for j < kTileRows, zero for
/// rows at or past `hi`: the bf16 pairs of one block of rows, K-pair-major,
/// from row `base` of the panels (a weight that is not bf16 as its bf16
/// pairs, emitPackDequantizedRow).
void linear::emitPackPairPanel(ImplicitLocOpBuilder &b, Value w, Type wType,
                               Value n0, Value hi, Value panel, Value base,
                               int64_t k) {
  Value zero = constIndex(b, 0);
  Value rows = constIndex(b, kTileRows);
  emitFor(b, zero, rows, [&](ImplicitLocOpBuilder &b, Value j) {
    Value row = (IndexExpr(n0) + j).emit(b);
    Value col = (IndexExpr(j) * 2).emit(b);
    Value valid = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, hi);
    if (wType.isBF16())
      emitPackPairsOneByOne(b, w, wType, row, valid, panel, base, col, 0,
                            k / 2);
    else
      emitPackDequantizedRow(b, w, wType, row, valid, panel, base, col, k);
  });
}
