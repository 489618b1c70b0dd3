/*
 * cpu_features.h - which SGC_ABI_CPU_* features this CPU and OS provide.
 */
#ifndef SGC_RUNTIME_SRC_CPU_CPU_FEATURES_H
#define SGC_RUNTIME_SRC_CPU_CPU_FEATURES_H

#include <cstdint>
#include <string>

namespace sgc {
namespace runtime {

/// Detects the features once (cpuid + xgetbv on x86-64) and caches them.
/// AMX bits are reported only when the OS enables tile state; use
/// request_amx_permission() before running AMX code.
uint64_t detect_cpu_features();

/// Who made this CPU and which model it is (cpuid leaves 0 and 1), for the
/// choices that depend on the model rather than its features
/// (host_tuning.cc). Empty vendor and zeros off x86.
struct cpu_identity {
  std::string vendor; // "AuthenticAMD", "GenuineIntel"
  unsigned family = 0, model = 0; // with the extended fields added in
};
const cpu_identity &detect_cpu_identity();

/// "avx2 fma f16c" for the bits in |features| (unknown bits as "bitN").
std::string cpu_feature_names(uint64_t features);

/// Asks Linux for permission to use AMX tile data (arch_prctl). Returns
/// false when it is refused or unsupported.
bool request_amx_permission();

/// Physical cores in this process's affinity mask (at least 1).
int physical_core_count();

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CPU_CPU_FEATURES_H
