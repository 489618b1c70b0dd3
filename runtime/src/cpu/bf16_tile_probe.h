/*
 * bf16_tile_probe.h - how fast this core runs vdpbf16ps against f32 FMAs,
 * which decides how a model's bf16 prefill tiles compute (sgc/abi.h,
 * SGC_ABI_BF16_TILES_SYMBOL).
 */
#ifndef SGC_RUNTIME_SRC_CPU_BF16_TILE_PROBE_H
#define SGC_RUNTIME_SRC_CPU_BF16_TILE_PROBE_H

namespace sgc {
namespace runtime {

/// Instructions per nanosecond of one core, 512-bit, independent chains.
struct bf16_tile_rates {
  double dot = 0; // vdpbf16ps
  double fma = 0; // vfmadd231ps
};

/// Times both instructions on the calling thread, a few tens of
/// microseconds each, the best of several tries. Needs AVX512-BF16 (the
/// caller checks: a variant that uses the tiles requires it).
bf16_tile_rates probe_bf16_tile_rates();

/// Whether the bf16 tiles should take FMAs on widened pairs: they issue 26
/// FMA-port operations where the dot tiles issue 12 vdpbf16ps, so the FMAs
/// win from a rate ratio of 13/12 on. The bar is 1.5 to stay clear of
/// noise: the hosts met so far are far from it (Zen 4: about 1; Intel
/// Emerald Rapids: about 4).
bool bf16_tiles_on_fma(const bf16_tile_rates &rates);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CPU_BF16_TILE_PROBE_H
