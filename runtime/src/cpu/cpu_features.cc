/*
 * cpu_features.cc - cpuid/xgetbv feature detection and core counting.
 */
#include "runtime/src/cpu/cpu_features.h"

#include <sgc/abi.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sched.h>
#include <set>
#include <thread>
#include <unistd.h>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <sys/syscall.h>
#define SGC_X86 1
#endif

namespace sgc {
namespace runtime {

namespace {

#ifdef SGC_X86
uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

uint64_t detect_x86() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
    return 0;
  const unsigned max_leaf = eax;
  uint64_t f = 0;
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  const bool osxsave = ecx & (1u << 27);
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool ymm = (xcr0 & 0x6) == 0x6;           // SSE + AVX state
  const bool zmm = ymm && (xcr0 & 0xE0) == 0xE0;  // opmask + ZMM state
  const bool tiles = (xcr0 & 0x60000) == 0x60000; // XTILECFG + XTILEDATA
  if (ecx & (1u << 20))
    f |= SGC_ABI_CPU_SSE42;
  if ((ecx & (1u << 28)) && ymm)
    f |= SGC_ABI_CPU_AVX;
  if ((ecx & (1u << 12)) && ymm)
    f |= SGC_ABI_CPU_FMA;
  if ((ecx & (1u << 29)) && ymm)
    f |= SGC_ABI_CPU_F16C;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const unsigned b7 = ebx, c7 = ecx, d7 = edx;
    if ((b7 & (1u << 5)) && ymm)
      f |= SGC_ABI_CPU_AVX2;
    if (b7 & (1u << 8))
      f |= SGC_ABI_CPU_BMI2;
    if (zmm) {
      if (b7 & (1u << 16))
        f |= SGC_ABI_CPU_AVX512F;
      if (b7 & (1u << 17))
        f |= SGC_ABI_CPU_AVX512DQ;
      if (b7 & (1u << 28))
        f |= SGC_ABI_CPU_AVX512CD;
      if (b7 & (1u << 30))
        f |= SGC_ABI_CPU_AVX512BW;
      if (b7 & (1u << 31))
        f |= SGC_ABI_CPU_AVX512VL;
      if (c7 & (1u << 11))
        f |= SGC_ABI_CPU_AVX512VNNI;
      if (d7 & (1u << 23))
        f |= SGC_ABI_CPU_AVX512FP16;
    }
    if (tiles) {
      if (d7 & (1u << 24))
        f |= SGC_ABI_CPU_AMX_TILE;
      if (d7 & (1u << 22))
        f |= SGC_ABI_CPU_AMX_BF16;
      if (d7 & (1u << 25))
        f |= SGC_ABI_CPU_AMX_INT8;
    }
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    if ((eax & (1u << 4)) && ymm)
      f |= SGC_ABI_CPU_AVX_VNNI;
    if ((eax & (1u << 5)) && zmm)
      f |= SGC_ABI_CPU_AVX512BF16;
  }
  return f;
}
#endif

const std::pair<uint64_t, const char *> feature_names[] = {
    {SGC_ABI_CPU_SSE42, "sse4.2"},
    {SGC_ABI_CPU_AVX, "avx"},
    {SGC_ABI_CPU_AVX2, "avx2"},
    {SGC_ABI_CPU_FMA, "fma"},
    {SGC_ABI_CPU_F16C, "f16c"},
    {SGC_ABI_CPU_BMI2, "bmi2"},
    {SGC_ABI_CPU_AVX_VNNI, "avxvnni"},
    {SGC_ABI_CPU_AVX512F, "avx512f"},
    {SGC_ABI_CPU_AVX512BW, "avx512bw"},
    {SGC_ABI_CPU_AVX512VL, "avx512vl"},
    {SGC_ABI_CPU_AVX512DQ, "avx512dq"},
    {SGC_ABI_CPU_AVX512CD, "avx512cd"},
    {SGC_ABI_CPU_AVX512BF16, "avx512bf16"},
    {SGC_ABI_CPU_AVX512VNNI, "avx512vnni"},
    {SGC_ABI_CPU_AVX512FP16, "avx512fp16"},
    {SGC_ABI_CPU_AMX_TILE, "amx-tile"},
    {SGC_ABI_CPU_AMX_BF16, "amx-bf16"},
    {SGC_ABI_CPU_AMX_INT8, "amx-int8"},
    {SGC_ABI_CPU_NEON, "neon"},
    {SGC_ABI_CPU_SVE, "sve"},
    {SGC_ABI_CPU_ARM_BF16, "bf16"},
    {SGC_ABI_CPU_ARM_I8MM, "i8mm"},
};

cpu_identity read_identity() {
  cpu_identity id;
#ifdef SGC_X86
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
    return id;
  char vendor[12];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  id.vendor.assign(vendor, sizeof vendor);
  __cpuid(1, eax, ebx, ecx, edx);
  const unsigned base_family = (eax >> 8) & 0xf, base_model = (eax >> 4) & 0xf;
  id.family = base_family + (base_family == 0xf ? (eax >> 20) & 0xff : 0);
  id.model = base_model | ((base_family == 0xf || base_family == 0x6)
                               ? ((eax >> 16) & 0xf) << 4
                               : 0);
#endif
  return id;
}

} // namespace

const cpu_identity &detect_cpu_identity() {
  static const cpu_identity id = read_identity();
  return id;
}

uint64_t detect_cpu_features() {
#ifdef SGC_X86
  static const uint64_t features = detect_x86();
  return features;
#else
  return 0;
#endif
}

std::string cpu_feature_names(uint64_t features) {
  std::string out;
  uint64_t known = 0;
  for (const auto &[bit, name] : feature_names) {
    known |= bit;
    if (features & bit) {
      if (!out.empty())
        out += ' ';
      out += name;
    }
  }
  for (int b = 0; b < 64; ++b) {
    const uint64_t bit = uint64_t{1} << b;
    if ((features & bit) && !(known & bit)) {
      if (!out.empty())
        out += ' ';
      out += "bit" + std::to_string(b);
    }
  }
  return out;
}

bool request_amx_permission() {
#if defined(SGC_X86) && defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long arch_req_xcomp_perm = 0x1023;
  constexpr long xfeature_xtiledata = 18;
  return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
  return false;
#endif
}

namespace {
/// CPUs granted by a cgroup v2 quota ("max" or "QUOTA PERIOD"); 0 = none.
int cgroup_cpu_limit() {
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (!(f >> quota >> period) || quota == "max" || period <= 0)
    return 0;
  const long long q = std::atoll(quota.c_str());
  if (q <= 0)
    return 0;
  return static_cast<int>((q + period - 1) / period);
}

int physical_cores_in_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? static_cast<int>(n) : 1;
  }
  std::set<std::pair<int, int>> cores;
  int logical = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set))
      continue;
    ++logical;
    const std::string base =
        "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream core_file(base + "core_id");
    std::ifstream pkg_file(base + "physical_package_id");
    int core = -1, pkg = -1;
    if (!(core_file >> core) || !(pkg_file >> pkg))
      return logical > 0 ? CPU_COUNT(&set) : 1; // no topology: count CPUs
    cores.insert({pkg, core});
  }
  if (cores.empty())
    return logical > 0 ? logical : 1;
  return static_cast<int>(cores.size());
}
} // namespace

int physical_core_count() {
  int n = physical_cores_in_affinity();
  const int limit = cgroup_cpu_limit();
  if (limit > 0 && limit < n)
    n = limit;
  return n < 1 ? 1 : n;
}

} // namespace runtime
} // namespace sgc
