/*
 * host_tuning.h - the parameters of compiled CPU code that depend on the host
 * rather than on the model: chosen here at run time, written into the model
 * library before its first call.
 */
#ifndef SGC_RUNTIME_SRC_CPU_HOST_TUNING_H
#define SGC_RUNTIME_SRC_CPU_HOST_TUNING_H

#include "lib/support/status.h"

#include <cstdint>
#include <string>

namespace sgc {
namespace runtime {

/// How many bytes ahead of its reads the bf16 pair rows (decode) prefetch
/// the weight stream, and where that number came from.
struct row_prefetch_choice {
  int64_t bytes = 0;
  std::string why;
};

/// The environment's SGC_ROW_PREFETCH_BYTES (0..1048576) when set, else the
/// value measured best for this CPU's family and model (cpuid), else
/// |compiled_default|. Derived from the CPU model rather than probed at
/// start: a probe costs seconds at every start and its timings are noisy on
/// shared hosts, while hosts of one model behave alike (bench/README.md).
/// Any value computes the same results. A malformed variable is a usage
/// error naming it.
status choose_row_prefetch(int64_t compiled_default, row_prefetch_choice *out);

/// Whether the bf16 sums that can take either (the prefill tiles) run on
/// FMAs instead of vdpbf16ps, and why.
struct bf16_sums_choice {
  bool on_fma = false;
  std::string why;
};

/// For a variant with AVX512-BF16 (|variant_has_dot|): the environment's
/// SGC_BF16_SUMS ("dot" or "fma") when set, else what probe_bf16_dot_rates
/// measured on this core (bf16_dot_probe.h; once a process), the rates named
/// in |why|.
/// Probed rather than looked up by CPU model: the ratio of the two rates
/// differs 4x between the hosts met so far, so a probe of a fraction of a
/// millisecond tells them apart on any host, known or not, and either choice
/// computes the same sums. For another variant: vdpbf16ps (it has no such
/// sums), no probe. A malformed variable is a usage error naming it,
/// whatever the variant.
status choose_bf16_sums(bool variant_has_dot, bf16_sums_choice *out);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CPU_HOST_TUNING_H
