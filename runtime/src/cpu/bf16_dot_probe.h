/*
 * bf16_dot_probe.h - how fast this core runs vdpbf16ps against f32 FMAs,
 * which decides how a model's bf16 sums compute where they can take either
 * (sgc/abi.h, SGC_ABI_BF16_ON_FMA_SYMBOL).
 */
#ifndef SGC_RUNTIME_SRC_CPU_BF16_DOT_PROBE_H
#define SGC_RUNTIME_SRC_CPU_BF16_DOT_PROBE_H

namespace sgc {
namespace runtime {

/// Instructions per nanosecond of one core, 512-bit, independent chains.
struct bf16_dot_rates {
  double dot = 0; // vdpbf16ps
  double fma = 0; // vfmadd231ps
};

/// Times both instructions on the calling thread, a few tens of
/// microseconds each, the best of several tries. Needs AVX512-BF16 (the
/// caller checks: a variant with these sums requires it).
bf16_dot_rates probe_bf16_dot_rates();

/// Whether the sums should take FMAs on widened values: a bf16 tile step
/// issues 26 FMA-port operations where the dot tile issues 12 vdpbf16ps, so
/// the FMAs win from a rate ratio of 13/12 on.
/// The bar is 1.5 to stay clear of noise: the hosts met so far are far from
/// it (Zen 4: about 1; Intel Emerald Rapids: about 4).
bool bf16_sums_on_fma(const bf16_dot_rates &rates);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CPU_BF16_DOT_PROBE_H
