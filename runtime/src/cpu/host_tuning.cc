/*
 * host_tuning.cc - per-host parameters of compiled CPU code, by CPU model.
 */
#include "runtime/src/cpu/host_tuning.h"

#include "runtime/src/cpu/bf16_dot_probe.h"
#include "runtime/src/cpu/cpu_features.h"

#include <cstdio>
#include <cstdlib>

namespace sgc {
namespace runtime {

namespace {

/// A CPU model range and the row prefetch distance B1 decode measured
/// fastest on it (bench/README.md, the host's table).
struct model_entry {
  const char *vendor;
  unsigned family, model_lo, model_hi;
  const char *name;
  int64_t bytes;
};

constexpr model_entry kMeasured[] = {
    // Zen 4 (Genoa, Raphael, Phoenix, Bergamo): the hardware prefetchers
    // alone kept the bf16 rows fastest on 1 and 2 threads.
    {"AuthenticAMD", 0x19, 0x10, 0x1f, "Zen 4", 0},
    {"AuthenticAMD", 0x19, 0x60, 0x7f, "Zen 4", 0},
    {"AuthenticAMD", 0x19, 0xa0, 0xaf, "Zen 4", 0},
    // Zen 5: 4 KiB ahead, 5-12 % faster than 1 KiB on 1 thread.
    {"AuthenticAMD", 0x1a, 0x00, 0xff, "Zen 5", 4096},
    // Emerald Rapids: 4 KiB; none was 19 % slower, 2 KiB 2-4 %, 8 KiB level.
    {"GenuineIntel", 0x06, 0xcf, 0xcf, "Emerald Rapids", 4096},
};

std::string hex(unsigned v) {
  char text[16];
  std::snprintf(text, sizeof text, "%xh", v);
  return text;
}

} // namespace

status choose_row_prefetch(int64_t compiled_default, row_prefetch_choice *out) {
  constexpr int64_t limit = int64_t(1) << 20;
  if (const char *set = std::getenv("SGC_ROW_PREFETCH_BYTES")) {
    char *end = nullptr;
    long long v = std::strtoll(set, &end, 10);
    if (!*set || *end || v < 0 || v > limit)
      return usage_error(std::string("SGC_ROW_PREFETCH_BYTES='") + set +
                         "' is not a byte count from 0 to " +
                         std::to_string(limit));
    *out = {v, "SGC_ROW_PREFETCH_BYTES"};
    return status();
  }
  const cpu_identity &m = detect_cpu_identity();
  const std::string model =
      m.vendor + " family " + hex(m.family) + " model " + hex(m.model);
  for (const model_entry &e : kMeasured)
    if (m.vendor == e.vendor && e.family == m.family &&
        m.model >= e.model_lo && m.model <= e.model_hi) {
      *out = {e.bytes, model + ": " + e.name};
      return status();
    }
  *out = {compiled_default, model + ": the compiled default"};
  return status();
}

status choose_bf16_sums(bool variant_has_dot, bf16_sums_choice *out) {
  if (const char *set = std::getenv("SGC_BF16_SUMS")) {
    const std::string value = set;
    if (value != "dot" && value != "fma")
      return usage_error("SGC_BF16_SUMS='" + value +
                         "' is neither 'dot' nor 'fma'");
    *out = {variant_has_dot && value == "fma", "SGC_BF16_SUMS"};
    return status();
  }
  if (!variant_has_dot) {
    *out = {false, "the variant has no vdpbf16ps"};
    return status();
  }
  // Once a process, as the CPU's features are: every session (sgc-serve
  // opens many) would otherwise time the same core again.
  static const bf16_dot_rates rates = probe_bf16_dot_rates();
  char why[96];
  std::snprintf(why, sizeof why, "probed: vdpbf16ps %.2f/ns, FMA %.2f/ns",
                rates.dot, rates.fma);
  *out = {bf16_sums_on_fma(rates), why};
  return status();
}

} // namespace runtime
} // namespace sgc
