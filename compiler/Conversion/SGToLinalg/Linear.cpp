//===- Linear.cpp - linears (plain and fused) as tiles and rows -----------===//
//
// Part of sgc. sg.linear, sg.norm_linear and sg.gated_mlp each become two
// calls in the body: `@sgc_rows_…(x, [norm weight], xs)` widens the input
// rows to f32 once (normalizing them first when the op carries the norm,
// rounded exactly as sg.rms_norm rounds), then the dispatcher of the kernel
// `@sgc_<kind>_…(xs, weights…, outputs…, row_begin, row_end)`, which the
// emitted glue runs on the runtime's threads over the output rows.
//
// A chunk of at least kTileTokens tokens (prefill) goes through register
// tiles: per block of kTileRows output rows the weights are widened once
// into an f32 panel [K][kTileRows], and each tile of kTileTokens tokens x
// kTileRows rows keeps its accumulators in registers over the whole K,
// broadcasting one activation per token and reusing one panel vector for
// every token: 6 x 16 f32 accumulators are 12 of AVX2's 16 registers, and
// each loaded value feeds 6 or 2 FMAs instead of one. The sum over K runs in
// order k = 0..K-1 per output.
//
// With bf16 activations and weights (the bf16 compute dtype) and an even K,
// the kernel also carries a second tile path for CPUs with AVX512-BF16:
// each step is one vdpbf16ps (x86vector.avx512.dot) per token, 16 rows x
// one K pair, over a panel of the weights' bf16 pairs [K/2][kTileRows x 2]
// and the activation pair of each token broadcast from a bf16 copy of the
// rows. A bf16 x bf16 product is exact in f32 and the activations already
// are bf16 values, so only the order of the f32 sum changes (pairs). Tiles
// are kDotTileTokens x kTileRows; a block of fewer than kTileRows rows is
// computed with zero rows and only its rows stored, so every row sums alike
// however the rows were split over the threads. Which path runs is the
// global @sgc_cpu_bf16_dot, which the object emitter defines per CPU variant
// (LLVM folds the branch away; the baseline variant never sees the
// instruction).
//
// Fewer tokens (decode), and the rows of a range that fill no whole block,
// walk one weight row at a time (row-major bf16, as the checkpoint stores
// it) with 4 independent vector<16xf32> accumulators along K: the structure
// CPU.md measured at 93-96 % of one core's read bandwidth. Each row serves
// every token of the chunk while it is in L1. In a kernel with the bf16
// paths, a variant with AVX512-BF16 runs the rows of chunks under
// kTileTokens (decode) as vdpbf16ps over the row's bf16 pairs and the bf16
// copy of the input (no widening; CPU.md §3d: 92-94 % of 2-thread read
// bandwidth against 80-88 % for the f32 chains); its leftover rows of
// longer chunks go through zero-padded bf16 tiles. Decode and prefill then
// share one kernel per shape.
//
// Epilogues (the softcap of the LM head; GELU-tanh times up for the gated
// MLP) run on the rounded dot products in both paths, so fused and unfused
// ops round at the same points.
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
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cstring>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

/// Lanes per accumulator and accumulators per K step of the row path.
static constexpr int64_t kLanes = 16;
static constexpr int64_t kAccumulators = 4;
/// How far ahead the row kernel prefetches weights, in bf16 elements (1 KiB).
static constexpr int64_t kPrefetchElements = 512;
/// The same for the bf16-pair rows (4 KiB): on the znver5 host B1 decode
/// ran 5-12 % faster at 4 KiB than at 1 KiB in every round of an A/B on 1
/// thread, 1-17 % (noisy) on 2; 2 KiB in between, 8 KiB no better.
static constexpr int64_t kPairPrefetchElements = 2048;
/// The register tile of the token path: tokens x output rows (one vector).
static constexpr int64_t kTileTokens = 6;
static constexpr int64_t kTileRows = 16;
/// K steps per iteration of the tile loop (K % kUnroll run one at a time);
/// K pairs in the bf16 path.
static constexpr int64_t kUnroll = 4;
/// Tokens of a bf16 tile: 12 accumulators cover vdpbf16ps's latency at two
/// a cycle, one 64-byte panel load and 12 broadcast pairs feed them.
static constexpr int64_t kDotTileTokens = 12;
static_assert(kDotTileTokens % kTileTokens == 0, "xs pads to both tiles");


namespace {

using Epilogue = sg::ProjectionEpilogue;

/// What the input rows need before the kernel: widening, maybe the norm.
struct InputSpec {
  int64_t k = 0;
  Type xType, normType;
  bool norm = false, normWeight = false;
  double eps = 0;
  int64_t offset = 0;
  /// Also write the rows as bf16 (the activations of the bf16 tiles and
  /// pair rows).
  bool bf16Copy = false;

  std::string name() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "rows_" << k << "_" << xType << (bf16Copy ? "_b" : "");
    if (norm) {
      uint64_t u;
      std::memcpy(&u, &eps, sizeof u);
      os << "_n" << offset;
      if (normWeight)
        os << "w" << normType;
      os << "_" << llvm::utohexstr(u);
    }
    return s;
  }
};

/// Everything that distinguishes one kernel from another.
struct KernelSpec {
  int64_t k = 0;
  /// Element types of the weights and the outputs (the input is f32).
  Type wType, yType;
  /// Rows of each weight (a gated MLP has two weights of the same rows).
  SmallVector<int64_t> rows;
  Epilogue epilogue = Epilogue::Plain;
  double cap = 0;
  /// The element type of the bias (one plain weight only); null without.
  Type biasType;
  /// bf16 activations and weights, K even: the kernel has the bf16 tiles
  /// and pair rows and takes the bf16 copy of its input rows after the f32
  /// one.
  bool bf16Dot = false;

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
    os << (epilogue == Epilogue::GatedGelu ? "gated_mlp" : "linear");
    for (int64_t r : rows)
      os << "_" << r;
    os << "x" << k << "_" << wType << "_" << yType << (bf16Dot ? "_dot" : "");
    if (biasType)
      os << "_b" << biasType;
    if (epilogue == Epilogue::Softcap) {
      uint64_t u;
      std::memcpy(&u, &cap, sizeof u);
      os << "_cap" << llvm::utohexstr(u);
    }
    return s;
  }
};

/// Prefetches the cache lines of w[row, col .. col + bytes / 2) from
/// `ahead` elements on: the lines a chain step will read. Past the row's end
/// it touches the next row; prefetches never fault.
void emitPrefetchAhead(OpBuilder &b, Location loc, Value w, Value row,
                       Value col, int64_t ahead, int64_t bytes) {
  for (int64_t line = 0; line < bytes; line += 64) {
    Value at = arith::AddIOp::create(b, loc, col,
                                     constIndex(b, loc, ahead + line / 2));
    memref::PrefetchOp::create(b, loc, w, ValueRange{row, at},
                               /*isWrite=*/false, /*localityHint=*/3,
                               /*isDataCache=*/true);
  }
}

/// sum_k f32(w[row, k]) * xs[s, k] as emitChainedSum adds it: 4 x 16-lane
/// FMA chains along K, prefetching the weight stream.
Value emitRowDot(OpBuilder &b, Location loc, Value xs, Value w, Value row,
                 Value s, int64_t k) {
  return emitChainedSum(
      b, loc, k, kLanes, kAccumulators,
      [&](OpBuilder &b, Location loc, Value col, int64_t lanes, Value acc) -> Value {
        Value wv = emitRowLoad(b, loc, w, ValueRange{row}, col, lanes);
        Value xv = emitRowLoad(b, loc, xs, ValueRange{s}, col, lanes);
        if (lanes == 1)
          return arith::AddFOp::create(
              b, loc, acc, Value(arith::MulFOp::create(b, loc, toF32(b, loc, wv), xv)));
        return vector::FMAOp::create(b, loc, toF32(b, loc, wv), xv, acc);
      },
      [&](OpBuilder &b, Location loc, Value col) {
        // Prefetch the weight stream 1 KiB ahead (the two cache lines this
        // step will need 8 steps from now): measured on Zen 3, the hardware
        // prefetcher alone leaves the kernel at 76 % of read bandwidth, this
        // brings it to 85-94 % (bench/gemv).
        emitPrefetchAhead(b, loc, w, row, col, kPrefetchElements,
                          kLanes * kAccumulators * 2);
      });
}

/// sum_k w[row, k] · xb[s, k] over the bf16 pairs of the row: the chains of
/// emitRowDot with one vdpbf16ps per 16 pairs (32 weights: no widening, and
/// half the instructions per weight byte of the f32 chains, so more loads
/// stay in flight). Each pair adds its odd product, then its even one, as
/// the instruction does; the pairs past whole vectors (K % 32, which no
/// model's decode has) add the same way but without the instruction's
/// flushing of denormals. No other path needs these bits.
Value emitRowDotPairs(OpBuilder &b, Location loc, Value xb, Value w, Value row,
                      Value s, int64_t k) {
  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  auto vecPairs = VectorType::get({2 * kLanes}, b.getBF16Type());
  Value two = constIndex(b, loc, 2);
  return emitChainedSum(
      b, loc, k / 2, kLanes, kAccumulators,
      [&](OpBuilder &b, Location loc, Value pair, int64_t lanes, Value acc) -> Value {
        Value col = arith::MulIOp::create(b, loc, pair, two);
        if (lanes == 1) {
          Value next = arith::AddIOp::create(b, loc, col, constIndex(b, loc, 1));
          for (Value c : {next, col}) {
            Value wv = memref::LoadOp::create(b, loc, w, ValueRange{row, c});
            Value xv = memref::LoadOp::create(b, loc, xb, ValueRange{s, c});
            acc = arith::AddFOp::create(
                b, loc, acc,
                Value(arith::MulFOp::create(b, loc, toF32(b, loc, wv),
                                            toF32(b, loc, xv))));
          }
          return acc;
        }
        Value wv = vector::LoadOp::create(b, loc, vecPairs, w, ValueRange{row, col});
        Value xv = vector::LoadOp::create(b, loc, vecPairs, xb, ValueRange{s, col});
        return x86vector::DotBF16Op::create(b, loc, vecF32, acc, xv, wv);
      },
      [&](OpBuilder &b, Location loc, Value pair) {
        // The 4 cache lines a step reads, kPairPrefetchElements ahead.
        emitPrefetchAhead(b, loc, w, row, arith::MulIOp::create(b, loc, pair, two),
                          kPairPrefetchElements, kLanes * kAccumulators * 2 * 2);
      });
}

/// The function `@sgc_rows_…(x, [norm weight], xs)`: xs[s, :] = f32 of
/// input row s, normalized first when the op carries the norm (emitRmsScale,
/// then x·r·(offset + w) rounded to the input type: what sg.rms_norm
/// computes), 16 columns at a time; xs's rows past x's are zeroed (the
/// padding of the last token tile). With `bf16Copy`, xb gets the same rows
/// as bf16 (exact: they are bf16 values).
func::FuncOp getOrCreateInputRows(OpBuilder &b, ModuleOp module,
                                  const InputSpec &spec) {
  std::string name = "sgc_" + spec.name();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  Location loc = module.getLoc();
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<Type> args = {MemRefType::get({dyn, spec.k}, spec.xType)};
  if (spec.normWeight)
    args.push_back(MemRefType::get({spec.k}, spec.normType));
  args.push_back(MemRefType::get({dyn, spec.k}, b.getF32Type()));
  if (spec.bf16Copy)
    args.push_back(MemRefType::get({dyn, spec.k}, b.getBF16Type()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, name, b.getFunctionType(args, {}));
  func.setPrivate();
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value x = entry->getArgument(0);
  Value normWeight = spec.normWeight ? entry->getArgument(1) : Value();
  Value xs = entry->getArgument(spec.normWeight ? 2 : 1);
  Value xb = spec.bf16Copy ? entry->getArguments().back() : Value();
  auto storeRow = [&](OpBuilder &b, Location loc, Value v, Value s, Value col) {
    emitRowStore(b, loc, toF32(b, loc, v), xs, ValueRange{s}, col);
    if (xb)
      emitRowStore(b, loc, roundTo(b, loc, v, b.getBF16Type()), xb,
                   ValueRange{s}, col);
  };

  Value zero = constIndex(b, loc, 0);
  Value kIdx = constIndex(b, loc, spec.k);
  Value tokens = dimOf(b, loc, x, 0);
  emitFor(b, loc, zero, tokens, [&](OpBuilder &b, Location loc, Value s) {
    auto load = [&](OpBuilder &b, Location loc, Value col, int64_t lanes) {
      return emitRowLoad(b, loc, x, ValueRange{s}, col, lanes);
    };
    Value r = spec.norm ? emitRmsScale(b, loc, spec.k, spec.eps, load) : Value();
    emitRowChunks(b, loc, spec.k,
                  [&](OpBuilder &b, Location loc, Value col, int64_t lanes) {
                    Value v = load(b, loc, col, lanes);
                    if (spec.norm) {
                      Value w = normWeight ? emitRowLoad(b, loc, normWeight,
                                                         ValueRange{}, col, lanes)
                                           : Value();
                      v = emitNormalize(b, loc, v, r, w, spec.offset == 1,
                                        spec.xType);
                    }
                    storeRow(b, loc, v, s, col);
                  });
  });
  emitFor(b, loc, tokens, dimOf(b, loc, xs, 0),
          [&](OpBuilder &b, Location loc, Value s) {
            emitFor(b, loc, zero, kIdx,
                    [&](OpBuilder &b, Location loc, Value col) {
                      storeRow(b, loc, constF32(b, loc, 0.0f), s, col);
                    });
          });
  func::ReturnOp::create(b, loc);
  return func;
}

/// The transpose of 8 vectors of 8 elements (rows) as its 8 columns, in
/// three stages of two-input shuffles that x86 has as single instructions
/// (unpack low/high, shufps, vperm2f128).
SmallVector<Value> emitTranspose8x8(OpBuilder &b, Location loc,
                                    ArrayRef<Value> rows) {
  assert(rows.size() == 8 && "an 8 x 8 block");
  auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
    return vector::ShuffleOp::create(b, loc, x, y, mask);
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

/// panel[k, j] = f32(w[n0 + j, k]) for j < kTileRows: the weights of one
/// block of rows, widened once and laid out K-major for the tile loop. Eight
/// columns of eight rows at a time, transposed in registers, so every store
/// writes 32 contiguous bytes (a store per element, 64 bytes apart, took
/// ~15 % of a K = 2048 linear's time on Zen 3); a K that is not a multiple
/// of 8 ends one column at a time.
void emitPackPanel(OpBuilder &b, Location loc, Value w, Value n0, Value panel,
                   int64_t k) {
  static_assert(kTileRows % 8 == 0, "the panel packs 8 rows at a time");
  Value zero = constIndex(b, loc, 0);
  auto wide = VectorType::get({8}, b.getF32Type());
  Type wType = cast<MemRefType>(w.getType()).getElementType();
  int64_t whole = k - k % 8;
  scf::ForOp::create(
      b, loc, zero, constIndex(b, loc, whole), constIndex(b, loc, 8),
      ValueRange{}, [&](OpBuilder &b, Location loc, Value col, ValueRange) {
        for (int64_t j0 = 0; j0 < kTileRows; j0 += 8) {
          SmallVector<Value> rows;
          for (int64_t j = j0; j < j0 + 8; ++j) {
            Value row =
                arith::AddIOp::create(b, loc, n0, constIndex(b, loc, j));
            rows.push_back(
                toF32(b, loc,
                      vector::LoadOp::create(b, loc, wide.clone(wType), w,
                                             ValueRange{row, col})));
          }
          SmallVector<Value> cols = emitTranspose8x8(b, loc, rows);
          for (int64_t c = 0; c < 8; ++c)
            vector::StoreOp::create(
                b, loc, cols[c], panel,
                ValueRange{
                    arith::AddIOp::create(b, loc, col, constIndex(b, loc, c)),
                    constIndex(b, loc, j0)});
        }
        scf::YieldOp::create(b, loc);
      });
  emitFor(
      b, loc, zero, constIndex(b, loc, kTileRows),
      [&](OpBuilder &b, Location loc, Value j) {
        Value row = arith::AddIOp::create(b, loc, n0, j);
        emitFor(
            b, loc, constIndex(b, loc, whole), constIndex(b, loc, k),
            [&](OpBuilder &b, Location loc, Value col) {
              Value v = memref::LoadOp::create(b, loc, w, ValueRange{row, col});
              memref::StoreOp::create(b, loc, toF32(b, loc, v), panel,
                                      ValueRange{col, j});
            });
      });
}

/// The token rows t0, t0 + 1, ..., t0 + count - 1 of a tile.
SmallVector<Value> tileTokens(OpBuilder &b, Location loc, Value t0,
                              int64_t count) {
  SmallVector<Value> rows;
  for (int64_t i = 0; i < count; ++i)
    rows.push_back(arith::AddIOp::create(b, loc, t0, constIndex(b, loc, i)));
  return rows;
}

/// The dot products of tokens t0..t0+kTileTokens-1 with the panel's rows:
/// kTileTokens vector<kTileRows x f32> accumulators over k = 0..K-1, each
/// step one panel load and one broadcast activation per token.
SmallVector<Value> emitTile(OpBuilder &b, Location loc, Value xs, Value panel,
                            Value t0, int64_t k) {
  auto vecF32 = VectorType::get({kTileRows}, b.getF32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, loc, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  SmallVector<Value> rowsOf = tileTokens(b, loc, t0, kTileTokens);
  auto step = [&](OpBuilder &b, Location loc, Value col,
                  SmallVector<Value> &accs) {
    Value wv = vector::LoadOp::create(b, loc, vecF32, panel,
                                      ValueRange{col, constIndex(b, loc, 0)});
    for (int64_t i = 0; i < kTileTokens; ++i) {
      Value x = memref::LoadOp::create(b, loc, xs, ValueRange{rowsOf[i], col});
      Value xv = vector::BroadcastOp::create(b, loc, vecF32, x);
      accs[i] = vector::FMAOp::create(b, loc, xv, wv, accs[i]);
    }
  };
  SmallVector<Value> inits(kTileTokens, zeroVec);
  return emitUnrolledSteps(b, loc, k, kUnroll, inits, step);
}

/// panel[base + p, 2j + e] = w[n0 + j, 2p + e] for j < kTileRows, zero for
/// rows at or past `hi`: the bf16 pairs of one block of rows, K-pair-major,
/// from row `base` of the panels.
void emitPackPairPanel(OpBuilder &b, Location loc, Value w, Value n0, Value hi,
                       Value panel, Value base, int64_t k) {
  Value zero = constIndex(b, loc, 0);
  auto pairType = VectorType::get({2}, b.getBF16Type());
  Value zeroPair = arith::ConstantOp::create(
      b, loc, pairType, DenseElementsAttr::get(pairType, 0.0f));
  emitFor(b, loc, zero, constIndex(b, loc, kTileRows),
          [&](OpBuilder &b, Location loc, Value j) {
            Value row = arith::AddIOp::create(b, loc, n0, j);
            Value col = arith::MulIOp::create(b, loc, j, constIndex(b, loc, 2));
            Value valid = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::slt, row, hi);
            emitFor(b, loc, zero, constIndex(b, loc, k / 2),
                    [&](OpBuilder &b, Location loc, Value p) {
                      auto pair = scf::IfOp::create(
                          b, loc, valid,
                          [&](OpBuilder &b, Location loc) {
                            Value k0 = arith::MulIOp::create(
                                b, loc, p, constIndex(b, loc, 2));
                            scf::YieldOp::create(
                                b, loc,
                                Value(vector::LoadOp::create(
                                    b, loc, pairType, w, ValueRange{row, k0})));
                          },
                          [&](OpBuilder &b, Location loc) {
                            scf::YieldOp::create(b, loc, zeroPair);
                          });
                      vector::StoreOp::create(
                          b, loc, pair.getResult(0), panel,
                          ValueRange{arith::AddIOp::create(b, loc, base, p), col});
                    });
          });
}

/// The bf16 tile: for tokens t0..t0+kDotTileTokens-1, kTileRows dot products
/// each, one vdpbf16ps per token and K pair (its pair of activations
/// broadcast to every row), K pairs in order.
SmallVector<Value> emitDotTile(OpBuilder &b, Location loc, Value xb,
                               Value panel, Value base, Value t0, int64_t k) {
  auto vecF32 = VectorType::get({kTileRows}, b.getF32Type());
  auto vecPairs = VectorType::get({2 * kTileRows}, b.getBF16Type());
  auto pairType = VectorType::get({2}, b.getBF16Type());
  auto wordType = VectorType::get({1}, b.getI32Type());
  auto wordsType = VectorType::get({kTileRows}, b.getI32Type());
  Value zeroVec = arith::ConstantOp::create(
      b, loc, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  SmallVector<Value> rowsOf = tileTokens(b, loc, t0, kDotTileTokens);
  auto step = [&](OpBuilder &b, Location loc, Value p,
                  SmallVector<Value> &accs) {
    Value wv = vector::LoadOp::create(
        b, loc, vecPairs, panel,
        ValueRange{arith::AddIOp::create(b, loc, base, p), constIndex(b, loc, 0)});
    Value col = arith::MulIOp::create(b, loc, p, constIndex(b, loc, 2));
    for (int64_t i = 0; i < kDotTileTokens; ++i) {
      Value pair = vector::LoadOp::create(b, loc, pairType, xb,
                                          ValueRange{rowsOf[i], col});
      Value word = vector::ExtractOp::create(
          b, loc, vector::BitCastOp::create(b, loc, wordType, pair),
          ArrayRef<int64_t>{0});
      Value xv = vector::BitCastOp::create(
          b, loc, vecPairs, vector::BroadcastOp::create(b, loc, wordsType, word));
      accs[i] = x86vector::DotBF16Op::create(b, loc, vecF32, accs[i], xv, wv);
    }
  };
  SmallVector<Value> inits(kDotTileTokens, zeroVec);
  return emitUnrolledSteps(b, loc, k / 2, kUnroll, inits, step);
}

/// sum_k xs[s, k] · f32(w[row, k]) as one lane of a tile computes it: one
/// fused multiply-add per k, in order.
Value emitLaneDot(OpBuilder &b, Location loc, Value xs, Value w, Value row,
                  Value s, int64_t k) {
  auto loop = scf::ForOp::create(
      b, loc, constIndex(b, loc, 0), constIndex(b, loc, k),
      constIndex(b, loc, 1), ValueRange{constF32(b, loc, 0.0f)},
      [&](OpBuilder &b, Location loc, Value col, ValueRange acc) {
        Value x = memref::LoadOp::create(b, loc, xs, ValueRange{s, col});
        Value wv = toF32(b, loc, memref::LoadOp::create(b, loc, w,
                                                        ValueRange{row, col}));
        scf::YieldOp::create(b, loc,
                             Value(math::FmaOp::create(b, loc, x, wv, acc[0])));
      });
  return loop.getResult(0);
}

/// What the tile paths of one kernel call work in, allocated once a call.
struct TileBuffers {
  /// The input rows in f32 and (bf16 tiles only) in bf16.
  Value xs, xb;
  /// Per weight: the f32 panel of the f32 tiles (the bf16 tiles pack their
  /// own), and a [kDotTileTokens][kTileRows] spill where either tile leaves
  /// its dot products for the epilogue.
  SmallVector<Value> panels, spills;
  /// i1, true where the bf16 tiles run; null in a kernel without them.
  Value useDot;
  /// i1, the variant's bf16 dot flag: rows outside tiles (decode) take
  /// emitRowDotPairs where it is set; null in a kernel without xb.
  Value rowDot;
};

using EpilogueFn =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange, Value)>;

/// Stores `v` (scalar or the vector of rows from n on) at out[t, n].
void storeOutput(OpBuilder &b, Location loc, Value v, Value out, Value t,
                 Value n) {
  if (isa<VectorType>(v.getType()))
    vector::StoreOp::create(b, loc, v, out, ValueRange{t, n});
  else
    memref::StoreOp::create(b, loc, v, out, ValueRange{t, n});
}

/// Stores a tile's dot products (one vector of kTileRows rows per token) of
/// one weight into its spill.
void spillTile(OpBuilder &b, Location loc, ArrayRef<Value> dots, Value spill) {
  for (auto [i, dot] : llvm::enumerate(dots))
    vector::StoreOp::create(
        b, loc, dot, spill,
        ValueRange{constIndex(b, loc, i), constIndex(b, loc, 0)});
}

/// The epilogue of a tile of whole kTileRows rows from row n0: for its
/// `count` tokens from t0, the spilled dot products of every weight through
/// `epilogue` into out. One loop over the tokens (not one copy of the
/// epilogue per token), and the dot products wait in memory: left in
/// registers, a gated MLP's gate tile stays live across the up tile's K loop
/// and LLVM spills inside that loop (measured on Zen 3: the gated MLP then
/// took 1.76x the time per FLOP of the plain linears).
void emitSpilledEpilogue(OpBuilder &b, Location loc, ArrayRef<Value> spills,
                         Value out, Value t0, Value count, Value n0,
                         EpilogueFn epilogue) {
  Value zero = constIndex(b, loc, 0);
  auto vecF32 = VectorType::get({kTileRows}, b.getF32Type());
  emitFor(b, loc, zero, count, [&](OpBuilder &b, Location loc, Value i) {
    SmallVector<Value> perWeight;
    for (Value spill : spills)
      perWeight.push_back(
          vector::LoadOp::create(b, loc, vecF32, spill, ValueRange{i, zero}));
    storeOutput(b, loc, epilogue(b, loc, perWeight, n0), out,
                arith::AddIOp::create(b, loc, t0, i), n0);
  });
}

/// Tokens of a super-block of the bf16 path: the activations of that many
/// tokens (K bf16 each) stay within this much of L2 while every row block
/// of the call passes over them.
static constexpr int64_t kSuperBlockBytes = 512 * 1024;

/// The rows [lo, hi) of the weights through the bf16 tiles: every block of
/// kTileRows rows (the last one padded with zero rows) is packed once a
/// call, then per super-block of tokens (sized for L2, whole tiles) every
/// block runs its tiles of kDotTileTokens tokens over it. Each tile's dot
/// products go through the spill, so the epilogue is one loop over the
/// tile's tokens, not one copy per token. Every output still sums its K
/// pairs in order in one tile, so the blocking changes no bit.
void emitDotRows(OpBuilder &b, Location loc, const KernelSpec &spec,
                 const TileBuffers &bufs, ArrayRef<Value> weights, Value out,
                 Value lo, Value hi, Value tokens, EpilogueFn epilogue) {
  Value zero = constIndex(b, loc, 0);
  Value tileRows = constIndex(b, loc, kTileRows);
  Value pairs = constIndex(b, loc, spec.k / 2);
  Value numBlocks = arith::CeilDivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, hi, lo), tileRows);
  SmallVector<Value> panels;
  for (Value w : weights) {
    Value panel = memref::AllocOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic, 2 * kTileRows}, b.getBF16Type()),
        ValueRange{arith::MulIOp::create(b, loc, numBlocks, pairs)},
        b.getI64IntegerAttr(64));
    emitFor(b, loc, zero, numBlocks, [&](OpBuilder &b, Location loc, Value nb) {
      Value n0 = arith::AddIOp::create(
          b, loc, lo, arith::MulIOp::create(b, loc, nb, tileRows));
      emitPackPairPanel(b, loc, w, n0, hi, panel,
                        arith::MulIOp::create(b, loc, nb, pairs), spec.k);
    });
    panels.push_back(panel);
  }
  int64_t superTokens =
      std::max<int64_t>(1, kSuperBlockBytes / (spec.k * 2) / kDotTileTokens) *
      kDotTileTokens;
  Value padded = dimOf(b, loc, bufs.xb, 0);
  auto supers = scf::ForOp::create(b, loc, zero, padded,
                                   constIndex(b, loc, superTokens));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(supers.getBody());
  Value tb = supers.getInductionVar();
  Value tbEnd = arith::MinSIOp::create(
      b, loc, padded,
      arith::AddIOp::create(b, loc, tb, constIndex(b, loc, superTokens)));
  auto blocks = scf::ForOp::create(b, loc, zero, numBlocks, constIndex(b, loc, 1));
  b.setInsertionPointToStart(blocks.getBody());
  Value nb = blocks.getInductionVar();
  Value n0 = arith::AddIOp::create(b, loc, lo,
                                   arith::MulIOp::create(b, loc, nb, tileRows));
  Value base = arith::MulIOp::create(b, loc, nb, pairs);
  Value whole = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sle,
      arith::AddIOp::create(b, loc, n0, tileRows), hi);
  Value blockRows = arith::SubIOp::create(b, loc, hi, n0);
  auto tiles = scf::ForOp::create(b, loc, tb, tbEnd,
                                  constIndex(b, loc, kDotTileTokens));
  b.setInsertionPointToStart(tiles.getBody());
  Value t0 = tiles.getInductionVar();
  for (auto [panel, spill] : llvm::zip_equal(panels, bufs.spills))
    spillTile(b, loc, emitDotTile(b, loc, bufs.xb, panel, base, t0, spec.k),
              spill);
  Value count = arith::MinSIOp::create(
      b, loc, constIndex(b, loc, kDotTileTokens),
      arith::SubIOp::create(b, loc, tokens, t0));
  auto ifWhole = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
  b.setInsertionPointToStart(ifWhole.thenBlock());
  emitSpilledEpilogue(b, loc, bufs.spills, out, t0, count, n0, epilogue);
  b.setInsertionPointToStart(ifWhole.elseBlock());
  emitFor(b, loc, zero, count, [&](OpBuilder &b, Location loc, Value i) {
    emitFor(b, loc, zero, blockRows, [&](OpBuilder &b, Location loc, Value j) {
      SmallVector<Value> perWeight;
      for (Value spill : bufs.spills)
        perWeight.push_back(
            memref::LoadOp::create(b, loc, spill, ValueRange{i, j}));
      Value n = arith::AddIOp::create(b, loc, n0, j);
      storeOutput(b, loc, epilogue(b, loc, perWeight, n), out,
                  arith::AddIOp::create(b, loc, t0, i), n);
    });
  });
  b.setInsertionPointAfter(supers);
  for (Value panel : panels)
    memref::DeallocOp::create(b, loc, panel);
}

/// The f32 tiles and the row path (see the file comment).
void emitRowsF32(OpBuilder &b, Location loc, const KernelSpec &spec,
                 const TileBuffers &bufs, ArrayRef<Value> weights, Value out,
                 Value lo, Value hi, Value tokens, EpilogueFn epilogue) {
  Value xs = bufs.xs;
  ArrayRef<Value> panels = bufs.panels;
  Value zero = constIndex(b, loc, 0);
  Value tileRows = constIndex(b, loc, kTileRows);
  Value useTiles = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         tokens,
                                         constIndex(b, loc, kTileTokens));
  // blockEnd = lo + whole blocks of [lo, hi), or lo without tiles.
  Value span = arith::SubIOp::create(b, loc, hi, lo);
  Value whole = arith::MulIOp::create(
      b, loc, Value(arith::DivUIOp::create(b, loc, span, tileRows)), tileRows);
  Value blockEnd = arith::SelectOp::create(
      b, loc, useTiles, Value(arith::AddIOp::create(b, loc, lo, whole)), lo);

  auto blocks = scf::ForOp::create(b, loc, lo, blockEnd, tileRows);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(blocks.getBody());
    Value n0 = blocks.getInductionVar();
    for (auto [w, panel] : llvm::zip_equal(weights, panels))
      emitPackPanel(b, loc, w, n0, panel, spec.k);
    Value paddedTokens = dimOf(b, loc, xs, 0);
    auto tiles = scf::ForOp::create(b, loc, zero, paddedTokens,
                                    constIndex(b, loc, kTileTokens));
    OpBuilder::InsertionGuard tileGuard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value t0 = tiles.getInductionVar();
    // One weight's tile at a time: the gate's dot products wait in the
    // spill while the up tile accumulates.
    for (auto [panel, spill] : llvm::zip_equal(panels, bufs.spills))
      spillTile(b, loc, emitTile(b, loc, xs, panel, t0, spec.k), spill);
    Value count = arith::MinSIOp::create(
        b, loc, constIndex(b, loc, kTileTokens),
        arith::SubIOp::create(b, loc, tokens, t0));
    emitSpilledEpilogue(b, loc, bufs.spills, out, t0, count, n0, epilogue);
  }
  // The other rows. With tiles in use they sum exactly as a tile lane does,
  // so which rows fill whole blocks (that depends on how the rows were split
  // over the threads) changes no bit.
  emitFor(b, loc, blockEnd, hi, [&](OpBuilder &b, Location loc, Value n) {
    emitFor(b, loc, zero, tokens, [&](OpBuilder &b, Location loc, Value s) {
      SmallVector<Value> perWeight;
      for (Value w : weights) {
        auto dot = scf::IfOp::create(
            b, loc, useTiles,
            [&](OpBuilder &b, Location loc) {
              scf::YieldOp::create(b, loc,
                                   emitLaneDot(b, loc, xs, w, n, s, spec.k));
            },
            [&](OpBuilder &b, Location loc) {
              if (!bufs.rowDot) {
                scf::YieldOp::create(b, loc,
                                     emitRowDot(b, loc, xs, w, n, s, spec.k));
                return;
              }
              auto pairs = scf::IfOp::create(
                  b, loc, bufs.rowDot,
                  [&](OpBuilder &b, Location loc) {
                    scf::YieldOp::create(
                        b, loc, emitRowDotPairs(b, loc, bufs.xb, w, n, s, spec.k));
                  },
                  [&](OpBuilder &b, Location loc) {
                    scf::YieldOp::create(b, loc,
                                         emitRowDot(b, loc, xs, w, n, s, spec.k));
                  });
              scf::YieldOp::create(b, loc, pairs.getResult(0));
            });
        perWeight.push_back(dot.getResult(0));
      }
      storeOutput(b, loc, epilogue(b, loc, perWeight, n), out, s, n);
    });
  });
}

/// The rows [lo, hi) of the weights (local row numbers) for every token,
/// written to `out`, through whichever path the call takes.
/// `epilogue(b, loc, dots, n)` turns f32 dot products (scalar, or a vector
/// of the rows from n on) of local row `n` into the stored values.
void emitRows(OpBuilder &b, Location loc, const KernelSpec &spec,
              const TileBuffers &bufs, ArrayRef<Value> weights, Value out,
              Value lo, Value hi, Value tokens, EpilogueFn epilogue) {
  if (!bufs.useDot) {
    emitRowsF32(b, loc, spec, bufs, weights, out, lo, hi, tokens, epilogue);
    return;
  }
  auto path = scf::IfOp::create(b, loc, bufs.useDot, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(path.thenBlock());
  emitDotRows(b, loc, spec, bufs, weights, out, lo, hi, tokens, epilogue);
  b.setInsertionPointToStart(path.elseBlock());
  emitRowsF32(b, loc, spec, bufs, weights, out, lo, hi, tokens, epilogue);
}

/// Emits the kernel function for `spec`.
func::FuncOp buildKernel(OpBuilder &b, ModuleOp module, const KernelSpec &spec,
                         StringRef name) {
  Location loc = module.getLoc();
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<Type> args = {MemRefType::get({dyn, spec.k}, b.getF32Type())};
  if (spec.bf16Dot)
    args.push_back(MemRefType::get({dyn, spec.k}, b.getBF16Type()));
  for (int64_t rows : spec.rows)
    args.push_back(MemRefType::get({rows, spec.k}, spec.wType));
  if (spec.biasType)
    args.push_back(MemRefType::get({spec.rows.front()}, spec.biasType));
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
  TileBuffers bufs;
  bufs.xs = entry->getArgument(next++);
  if (spec.bf16Dot)
    bufs.xb = entry->getArgument(next++);
  SmallVector<Value> weights, outputs;
  for (size_t i = 0; i < spec.rows.size(); ++i)
    weights.push_back(entry->getArgument(next++));
  Value bias = spec.biasType ? entry->getArgument(next++) : Value();
  for (unsigned i = 0; i < spec.numOutputs(); ++i)
    outputs.push_back(entry->getArgument(next++));
  Value rowBegin = entry->getArgument(next++);
  Value rowEnd = entry->getArgument(next++);

  Value tokens = dimOf(b, loc, outputs.front(), 0);
  // One panel per weight a block reads (the gated MLP's gate and up), of
  // the path that runs; empty when the chunk is too short for tiles (decode
  // allocates nothing worth a system call).
  Value useTiles = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         tokens, constIndex(b, loc, kTileTokens));
  Value f32Tiles = useTiles;
  if (spec.bf16Dot) {
    bufs.rowDot = loadBf16DotFlag(b, loc, module);
    bufs.useDot = arith::AndIOp::create(b, loc, useTiles, bufs.rowDot);
    f32Tiles = arith::XOrIOp::create(b, loc, useTiles, bufs.useDot);
  }
  auto rowsIf = [&](Value cond, int64_t rows) -> Value {
    return arith::SelectOp::create(b, loc, cond, constIndex(b, loc, rows),
                                   constIndex(b, loc, 0));
  };
  unsigned numPanels = spec.epilogue == Epilogue::GatedGelu ? 2 : 1;
  for (unsigned i = 0; i < numPanels; ++i) {
    bufs.panels.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic, kTileRows}, b.getF32Type()),
        ValueRange{rowsIf(f32Tiles, spec.k)}, b.getI64IntegerAttr(64)));
    bufs.spills.push_back(memref::AllocaOp::create(
        b, loc, MemRefType::get({kDotTileTokens, kTileRows}, b.getF32Type()),
        b.getI64IntegerAttr(64)));
  }
  Type yType = spec.yType;
  if (spec.epilogue == Epilogue::GatedGelu) {
    emitRows(b, loc, spec, bufs, weights, outputs[0], rowBegin, rowEnd, tokens,
             [&](OpBuilder &b, Location loc, ValueRange dots, Value) -> Value {
               Value g = roundTo(b, loc, dots[0], yType);
               Value u = roundTo(b, loc, dots[1], yType);
               Value act =
                   roundTo(b, loc, emitGeluTanh(b, loc, toF32(b, loc, g)), yType);
               Value p = arith::MulFOp::create(b, loc, toF32(b, loc, act),
                                               toF32(b, loc, u));
               return roundTo(b, loc, p, yType);
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
      Value localLo = arith::SubIOp::create(b, loc, lo, off);
      Value localHi = arith::SubIOp::create(b, loc, hi, off);
      emitRows(b, loc, spec, bufs, {weights[i]}, outputs[i], localLo, localHi,
               tokens,
               [&](OpBuilder &b, Location loc, ValueRange dots,
                   Value n) -> Value {
                 Value dot = dots[0];
                 // The bias joins the f32 sum before its one rounding.
                 if (bias) {
                   Value bv;
                   if (auto vec = dyn_cast<VectorType>(dot.getType()))
                     bv = vector::LoadOp::create(
                         b, loc, vec.clone(spec.biasType), bias, ValueRange{n});
                   else
                     bv = memref::LoadOp::create(b, loc, bias, ValueRange{n});
                   dot = arith::AddFOp::create(b, loc, dot, toF32(b, loc, bv));
                 }
                 Value y = roundTo(b, loc, dot, yType);
                 if (spec.epilogue == Epilogue::Softcap)
                   y = emitSoftcap(b, loc, y, spec.cap);
                 return y;
               });
      offset += rows;
    }
  }
  for (Value panel : bufs.panels)
    memref::DeallocOp::create(b, loc, panel);
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
  return declareDispatcher(b, module, kernel, name, spec.totalRows());
}

} // namespace

Value lowering::emitSoftcap(OpBuilder &b, Location loc, Value v, double capValue) {
  Type type = getElementTypeOrSelf(v.getType());
  Value cap = constF32Like(b, loc, static_cast<float>(capValue), v.getType());
  Value t1 = toF32(b, loc, roundTo(b, loc,
      arith::DivFOp::create(b, loc, toF32(b, loc, v), cap), type));
  Value t2 = toF32(b, loc, roundTo(b, loc, math::TanhOp::create(b, loc, t1), type));
  return roundTo(b, loc, arith::MulFOp::create(b, loc, t2, cap), type);
}

LogicalResult lowering::lowerLinear(Operation *op, FunctionLowering &state) {
  OpBuilder &b = state.b;
  Location loc = op->getLoc();
  InputSpec input;
  KernelSpec spec;
  Value x, normWeight;
  SmallVector<Value> weights;
  auto projection = dyn_cast<sg::ProjectionOpInterface>(op);
  if (!projection)
    return op->emitError("not a linear-family op");
  sg::ProjectionParts parts = projection.getProjection();
  x = parts.x;
  normWeight = parts.normWeight;
  weights = parts.weights;
  Value bias = parts.bias;
  if (bias)
    spec.biasType = cast<RankedTensorType>(bias.getType()).getElementType();
  if (parts.norm) {
    input.norm = true;
    input.eps = parts.eps;
    input.offset = parts.normOffset;
  }
  spec.epilogue = parts.epilogue;
  spec.cap = parts.cap;
  auto xType = cast<RankedTensorType>(x.getType());
  if (xType.getRank() != 2)
    return op->emitError("convert-sg-to-linalg: linears need a [tokens, in] "
                         "input, got rank ")
           << xType.getRank();
  input.k = spec.k = xType.getDimSize(1);
  input.xType = xType.getElementType();
  if (normWeight) {
    input.normWeight = true;
    input.normType = cast<RankedTensorType>(normWeight.getType()).getElementType();
  }
  spec.wType = cast<RankedTensorType>(weights.front().getType()).getElementType();
  spec.yType = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  // The kernels read [out, in] weights: a weight of rank > 2 is viewed as
  // one, an [in, out] weight copied transposed into one.
  SmallVector<Value> weightBuffers;
  for (Value w : weights)
    weightBuffers.push_back(state.lookup(w));
  if (auto linear = dyn_cast<sg::LinearOp>(op)) {
    Value &w = weightBuffers.front();
    auto wType = cast<MemRefType>(w.getType());
    if (linear.isInOut()) {
      Value t = state.allocTemp(loc, {wType.getDimSize(1), wType.getDimSize(0)},
                                wType.getElementType());
      Value zero = constIndex(b, loc, 0);
      emitFor(b, loc, zero, constIndex(b, loc, wType.getDimSize(0)),
              [&](OpBuilder &b, Location loc, Value k) {
                emitFor(b, loc, zero, constIndex(b, loc, wType.getDimSize(1)),
                        [&](OpBuilder &b, Location loc, Value n) {
                          Value v = memref::LoadOp::create(b, loc, w, ValueRange{k, n});
                          memref::StoreOp::create(b, loc, v, t, ValueRange{n, k});
                        });
              });
      w = t;
    } else if (wType.getRank() > 2) {
      ReassociationIndices trailing;
      for (int64_t d = 1; d < wType.getRank(); ++d)
        trailing.push_back(d);
      w = memref::CollapseShapeOp::create(
          b, loc, w, ArrayRef<ReassociationIndices>{{0}, trailing});
    }
  }
  for (Value w : weightBuffers)
    spec.rows.push_back(cast<MemRefType>(w.getType()).getDimSize(0));
  // The bf16 paths (tiles, and pair rows for decode) where they can run:
  // bf16 rows and weights, K in pairs. Decode and prefill then call one
  // kernel per shape.
  spec.bf16Dot = input.bf16Copy = input.xType.isBF16() && spec.wType.isBF16() &&
                                  spec.k % 2 == 0;

  // xs (and xb): the input rows, padded to whole token tiles of either path
  // when the kernel will use tiles (kDotTileTokens is a multiple of
  // kTileTokens).
  Value tokens = dimOf(b, loc, state.lookup(x), 0);
  Value pad = constIndex(b, loc, spec.bf16Dot ? kDotTileTokens : kTileTokens);
  Value padded = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, tokens,
                            constIndex(b, loc, kTileTokens)),
      arith::MulIOp::create(
          b, loc, Value(arith::CeilDivUIOp::create(b, loc, tokens, pad)), pad),
      tokens);
  SmallVector<Value> inputRows;
  for (Type type : {b.getF32Type(), b.getBF16Type()}) {
    if (type.isBF16() && !spec.bf16Dot)
      break;
    inputRows.push_back(memref::AllocOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic, input.k}, type),
        ValueRange{padded}, b.getI64IntegerAttr(64)));
    state.allocated.push_back(inputRows.back());
  }
  SmallVector<Value> rowArgs = {withDynamicTokens(b, loc, state.lookup(x))};
  if (normWeight)
    rowArgs.push_back(state.lookup(normWeight));
  llvm::append_range(rowArgs, inputRows);
  func::CallOp::create(b, loc, getOrCreateInputRows(b, state.module, input),
                       rowArgs);

  func::FuncOp dispatcher = getOrCreateDispatcher(b, state.module, spec);
  SmallVector<Value> args = {state.exec};
  llvm::append_range(args, inputRows);
  llvm::append_range(args, weightBuffers);
  if (bias)
    args.push_back(state.lookup(bias));
  for (Value result : op->getResults()) {
    Value buffer = state.bufferFor(loc, result);
    state.buffers.map(result, buffer);
    args.push_back(withDynamicTokens(b, loc, buffer));
  }
  func::CallOp::create(b, loc, dispatcher, args);
  return success();
}
