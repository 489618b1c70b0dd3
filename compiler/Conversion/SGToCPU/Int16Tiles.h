//===- Int16Tiles.h - Q4_0 prefill tiles on 16-bit activations -*- C++ -*-===//
//
// Part of sgc. Where a variant has AVX512-VNNI, Q4_0 prefill over K a
// multiple of 256 multiplies integers: the weights' q − 8 as i16 against
// the activations of the groups' records (Int8Dot.h: q = x / sa, 2^-16 of
// the block's maximum, the values decode's rows multiply), one vpdpwssd per
// token and K pair, 32 products an instruction where the bf16 tiles' FMAs
// make 16. Each block of 32 ends with one f32 multiply-add per token:
// acc += f32(Σ (q − 8) · q_x) · (d · sa), the integer sum exact (at most
// 32 · 8 · 32,767 in magnitude). The weights are exact; the bf16 tiles
// round d · (q − 8) to bf16.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_SGTOCPU_INT16TILES_H
#define SGC_COMPILER_CONVERSION_SGTOCPU_INT16TILES_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::sgc::lowering::linear {

/// Whether prefill tiles of `wType` weights over K = `k` take the i16
/// tiles (where the variant has the int8 rows): Q4_0, K a multiple of 256.
bool usesInt16Tiles(Type wType, int64_t k);

/// The i16 tiles' panel of `numBlocks` blocks of kTileRows rows: per block
/// and K pair p, the rows' pairs of q − 8 (i32: two i16, k = 2p in the low
/// half); per block and block of 32 weights, the rows' scales d (f32).
struct Int16Panel {
  Value pairs;  // memref<numBlocks · K/2 x kTileRows x i32>
  Value scales; // memref<numBlocks · K/32 x kTileRows x f32>
};
Int16Panel allocInt16Panel(ImplicitLocOpBuilder &b, Value numBlocks, int64_t k);

/// Packs rows n0 .. n0 + kTileRows of the Q4_0 weight `w` into block `nb`
/// of the panel, zero for rows at or past `hi`.
void emitPackInt16Panel(ImplicitLocOpBuilder &b, Value w, Value n0, Value hi,
                        const Int16Panel &panel, Value nb, int64_t k);

/// The dot products of tokens t0 .. t0 + kDotTileTokens − 1 (their groups'
/// records in `records`) with block `nb` of the panel: one vector of
/// kTileRows f32 sums per token, blocks of 32 in order.
SmallVector<Value> emitInt16Tile(ImplicitLocOpBuilder &b, Value records,
                                 const Int16Panel &panel, Value nb, Value t0,
                                 int64_t k);

} // namespace mlir::sgc::lowering::linear

#endif // SGC_COMPILER_CONVERSION_SGTOCPU_INT16TILES_H
