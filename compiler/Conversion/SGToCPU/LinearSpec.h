//===- LinearSpec.h - what one CPU projection kernel is ---------*- C++ -*-===//
//
// Part of sgc. The CPU projection lowering (Linear.cpp) and its kernel
// builder (LinearKernel.cpp) share these: the tile sizes, the input rows'
// spec (widening, the fused norm) and the kernel's spec (shapes, dtypes,
// epilogue), each with the name that keys the emitted function.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOCPU_LINEARSPEC_H
#define SGC_COMPILER_CONVERSION_SGTOCPU_LINEARSPEC_H

#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "dialects/SG/IR/SGDialect.h"
#include "dialects/SG/IR/SGInterfaces.h"

#include "llvm/ADT/StringExtras.h"

#include <cstring>
#include <string>

namespace mlir::sgc::lowering::linear {

/// Lanes per accumulator and accumulators per K step of the row path.
constexpr int64_t kLanes = 16;
constexpr int64_t kAccumulators = 4;
/// How far ahead the row kernel prefetches weights, in bf16 elements (1 KiB).
constexpr int64_t kPrefetchElements = 512;
/// The same for the bf16-pair rows of a block encoding (4 KiB of bf16
/// weights ahead). Plain bf16 pair rows read the distance at run time
/// (kRowPrefetchGlobal, Lowering.h): on the znver5 host B1 decode ran 5-12 %
/// faster at 4 KiB than at 1 KiB on 1 thread, on znver4 fastest without.
constexpr int64_t kPairPrefetchElements = 2048;
/// The register tile of the token path: tokens x output rows (one vector).
constexpr int64_t kTileTokens = 6;
constexpr int64_t kTileRows = 16;
/// Tokens of a batched decode step that share each weight row's loads (4 x 4
/// accumulators of 16 lanes: half the vector registers).
constexpr int64_t kRowGroup = 4;
/// K steps per iteration of the tile loop (K % kUnroll run one at a time);
/// K pairs in the bf16 path.
constexpr int64_t kUnroll = 4;
/// Tokens of a bf16 tile: 12 accumulators cover vdpbf16ps's latency at two
/// a cycle, one 64-byte panel load and 12 broadcast pairs feed them.
constexpr int64_t kDotTileTokens = 12;
static_assert(kDotTileTokens % kTileTokens == 0, "xs pads to both tiles");

/// The type of xb, the bf16 copy of the input rows the vdpbf16ps paths read:
/// rows of K columns, padded by one 64-byte line where K columns fill an even
/// number of lines. A bf16 tile reads its 12 token rows at the same column;
/// rows 4 KiB apart (K = 2048) fall in one L1 set, 12 lines in 8 ways, and
/// every broadcast missed L1 (znver4: the down projection ran at 61 % of the
/// dot peak against 80 % for K = 640). An odd number of lines a row puts the
/// 12 in different sets. Columns past K are never read.
inline MemRefType bf16RowsType(MLIRContext *context, int64_t k) {
  int64_t columns = (2 * k) % 128 == 0 ? k + 32 : k;
  return MemRefType::get({ShapedType::kDynamic, columns},
                         BFloat16Type::get(context));
}

/// The type of xs, the f32 copy of the input rows (the f32 tiles and rows,
/// and the bf16 tiles on FMAs, which broadcast from it): rows of K columns,
/// padded by one 64-byte line where a row is a multiple of 4 KiB (K = 2048
/// in B1's down projection, 15360 and 21504 in the seeds'), whose 12 token
/// rows at one column would all fall in one L1 set. Columns past K are
/// never read.
inline MemRefType f32RowsType(MLIRContext *context, int64_t k) {
  int64_t columns = (4 * k) % 4096 == 0 ? k + 16 : k;
  return MemRefType::get({ShapedType::kDynamic, columns},
                         Float32Type::get(context));
}

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
  /// Block weights with int8 rows (hasInt8Dot), in a kernel with the bf16
  /// paths: decode rows run as integer dot products where the variant has
  /// AVX512-VNNI, taking the int8 activations (Int8Dot.h) after xb.
  bool int8Dot = false;
  /// Every token takes the row path, whatever the token count: a batched
  /// decode step sums each row as a one-token decode does (the tiles sum in
  /// another order), so a sequence's logits do not depend on its batch.
  bool rowsOnly = false;

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
    os << "x" << k << "_";
    // Symbol-safe: a block encoding by its name (`q4_0`), not its type.
    if (auto quant = dyn_cast<sg::QuantType>(wType))
      os << quant.getEncoding().lower();
    else
      os << wType;
    os << "_" << yType << (bf16Dot ? "_dot" : "") << (int8Dot ? "_i8" : "")
       << (rowsOnly ? "_rows" : "");
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

/// The transpose of 8 vectors of 8 elements (rows) as its 8 columns, in
/// three stages of two-input shuffles that x86 has as single instructions
/// (unpack low/high, shufps, vperm2f128) (LinearPanels.cpp).
SmallVector<Value> emitTranspose8x8(ImplicitLocOpBuilder &b,
                                    ArrayRef<Value> rows);
/// panel[k, j] = f32(w[n0 + j, k]) for j < kTileRows, the weights (of
/// logical type `wType`) as activations of type `ct` read them: the f32
/// tiles' panel of one block of rows (LinearPanels.cpp).
void emitPackPanel(ImplicitLocOpBuilder &b, Value w, Type wType, Value n0,
                   Value panel, int64_t k, Type ct);

/// panel[base + p, 2j + e] = w[n0 + j, 2p + e] as bf16 for j < kTileRows,
/// zero for rows at or past `hi`: the bf16 tiles' pairs of one block of
/// rows, K-pair-major (LinearPanels.cpp).
void emitPackPairPanel(ImplicitLocOpBuilder &b, Value w, Type wType, Value n0,
                       Value hi, Value panel, Value base, int64_t k);

/// i1: whether a call of `tokens` tokens runs the tiles (enough tokens to
/// fill one, and a spec that allows them); the other calls take the row
/// path (LinearKernel.cpp).
Value tilesInUse(ImplicitLocOpBuilder &b, const KernelSpec &spec, Value tokens);

/// Emits the kernel function `name` for `spec` (LinearKernel.cpp).
func::FuncOp buildKernel(OpBuilder &b, ModuleOp module, const KernelSpec &spec,
                         StringRef name);

} // namespace mlir::sgc::lowering::linear

#endif // SGC_COMPILER_CONVERSION_SGTOCPU_LINEARSPEC_H
