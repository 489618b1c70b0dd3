/*
 * bf16_dot_probe.cc - vdpbf16ps against f32 FMAs on this core.
 *
 * Twelve independent accumulators of each (as many as a bf16 tile has
 * tokens), so the count that retires per nanosecond is the unit's rate, not
 * its latency. The ratio is what matters and it is far from the bar on the
 * hosts met so far, so a short run suffices.
 */
#include "runtime/src/cpu/bf16_dot_probe.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sgc {
namespace runtime {

namespace {

constexpr int iterations = 2048; // x 12 instructions: ~20 us of vdpbf16ps
constexpr int tries = 7;

#if defined(__x86_64__)
#define SGC_TWELVE(X)                                                          \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

/// Twelve chains of vdpbf16ps (|dot|) or of f32 FMAs, |iterations| long.
__attribute__((target("avx512f,avx512bf16"))) float run_chains(bool dot,
                                                               float seed) {
  // Operands from the caller's value, which no compiler can fold away.
  const __m512 x = _mm512_set1_ps(seed);
  const __m512bh pairs = _mm512_cvtne2ps_pbh(x, x);
#define SGC_INIT(i) __m512 acc##i = _mm512_set1_ps(seed * i);
  SGC_TWELVE(SGC_INIT)
#undef SGC_INIT
  if (dot) {
    for (int n = 0; n < iterations; ++n) {
#define SGC_STEP(i) acc##i = _mm512_dpbf16_ps(acc##i, pairs, pairs);
      SGC_TWELVE(SGC_STEP)
#undef SGC_STEP
    }
  } else {
    for (int n = 0; n < iterations; ++n) {
#define SGC_STEP(i) acc##i = _mm512_fmadd_ps(x, x, acc##i);
      SGC_TWELVE(SGC_STEP)
#undef SGC_STEP
    }
  }
  __m512 sum = _mm512_setzero_ps();
#define SGC_SUM(i) sum = _mm512_add_ps(sum, acc##i);
  SGC_TWELVE(SGC_SUM)
#undef SGC_SUM
  return _mm512_cvtss_f32(sum);
}
#undef SGC_TWELVE

/// Instructions per nanosecond of one run_chains(dot). Its operand is 0.5
/// read through a volatile (the sums stay far from subnormals and
/// infinities, which some cores take slower); its result goes to one.
double rate(bool dot, volatile float &half, volatile float &sink) {
  auto start = std::chrono::steady_clock::now();
  sink = run_chains(dot, half);
  auto ns = std::chrono::duration<double, std::nano>(
                std::chrono::steady_clock::now() - start)
                .count();
  return ns > 0 ? 12.0 * iterations / ns : 0;
}
#endif

} // namespace

bf16_dot_rates probe_bf16_dot_rates() {
  bf16_dot_rates best;
#if defined(__x86_64__)
  volatile float half = 0.5f, sink = 0;
  // One untimed round first: the core may change its clock for 512-bit
  // work.
  rate(true, half, sink);
  rate(false, half, sink);
  for (int t = 0; t < tries; ++t) {
    best.dot = std::max(best.dot, rate(true, half, sink));
    best.fma = std::max(best.fma, rate(false, half, sink));
  }
#endif
  return best;
}

bool bf16_sums_on_fma(const bf16_dot_rates &rates) {
  return rates.dot > 0 && rates.fma >= 1.5 * rates.dot;
}

} // namespace runtime
} // namespace sgc
