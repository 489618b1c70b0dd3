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

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CPU_HOST_TUNING_H
