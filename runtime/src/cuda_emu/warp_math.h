/*
 * warp_math.h - what the warp-collective instructions compute, given every
 * lane's operands (PTX ISA: shfl.sync, mma.sync m16n8k16 .row.col
 * .f32.bf16.bf16.f32, ldmatrix m8n8 .b16). The emulator gathers the lanes'
 * operands at the rendezvous and scatters these results back.
 */
#ifndef SGC_RUNTIME_SRC_CUDA_EMU_WARP_MATH_H
#define SGC_RUNTIME_SRC_CUDA_EMU_WARP_MATH_H

#include <cstdint>

namespace sgc {
namespace runtime {
namespace emu {

constexpr uint32_t warp_lanes = 32;

/// The lanes taking part in a gpu.shuffle of |width| lanes: MLIR 22's
/// convert-gpu-to-nvvm lowers it to shfl.sync with the member mask
/// (1 << width) - 1, i.e. the first |width| lanes of the warp.
uint32_t shuffle_member_mask(uint32_t width);

/// The source lane of a shfl.sync and whether it is in range (the `valid`
/// result); when not, the lane keeps its own value.
struct shuffle_source {
  int32_t lane;
  bool valid;
};

/// PTX shfl.sync's rule for |lane| with operand b = |offset| and the clamp
/// operand c that MLIR 22 derives from |width| (width - 1 for xor, down and
/// idx; 32 - width for up). |mode| is SGC_ABI_SHUFFLE_*.
shuffle_source shuffle_source_lane(uint32_t lane, uint32_t offset,
                                   uint32_t width, uint32_t mode);

/// bf16 bits to float (exact).
float bf16_to_float(uint16_t bits);

/// D = A * B + C for a 16x16 (row) by 16x8 (col) bf16 product with f32
/// accumulation, in PTX's fragment-to-lane mapping (groupID = lane / 4,
/// t = lane % 4): a[lane] = {A[g][2t..], A[g+8][2t..], A[g][2t+8..],
/// A[g+8][2t+8..]} (bf16 pairs, lower half first), b[lane] = {B[2t..][g],
/// B[2t+8..][g]}, c/d[lane] = {C[g][2t], C[g][2t+1], C[g+8][2t],
/// C[g+8][2t+1]}. Each element of D is the exact sum of its 16 products and
/// C rounded once to f32 (tensor cores may differ in the last bits).
void mma_m16n8k16_bf16(const uint32_t a[warp_lanes][4],
                       const uint32_t b[warp_lanes][2],
                       const float c[warp_lanes][4], float d[warp_lanes][4]);

/// ldmatrix.m8n8.x|num|[.trans].b16: rows[8 m + r] is row r of matrix m
/// (8 halves, supplied by lane 8 m + r). Lane l receives for matrix m the
/// pair (M[l/4][2(l%4)], M[l/4][2(l%4)+1]) or, transposed,
/// (M[2(l%4)][l/4], M[2(l%4)+1][l/4]), lower half first.
void ldmatrix_m8n8_b16(const uint16_t *const rows[warp_lanes], uint32_t num,
                       bool trans, uint32_t out[warp_lanes][4]);

} // namespace emu
} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_EMU_WARP_MATH_H
