/*
 * safetensors_fuzzer.cc - libFuzzer target for the safetensors header
 * parser and validator (lib/safetensors/reader.cc). Any input must yield
 * either a header that satisfies every invariant the reader promises, or a
 * bad_input status; never a crash, hang, leak or sanitizer report.
 *
 * Seeds: test/Inputs/safetensors/ (see scripts/test-sanitized).
 */
#include "lib/safetensors/safetensors.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sgc::safetensors::header h;
  const sgc::status st = sgc::safetensors::parse(data, size, "fuzz", &h);
  if (!st.ok()) {
    if (st.code() != sgc::status_code::bad_input || st.message().empty())
      std::abort();
    return 0;
  }
  // Invariants of an accepted image.
  if (h.data_offset != 8 + h.header_bytes ||
      h.data_offset + h.data_bytes != size)
    std::abort();
  uint64_t covered = 0;
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const sgc::safetensors::tensor_info &t = h.tensors[i];
    if (i > 0 && !(h.tensors[i - 1].name < t.name))
      std::abort(); // sorted, unique
    if (t.begin > t.end || t.end > h.data_bytes)
      std::abort();
    uint64_t count = 0;
    if (!sgc::safetensors::element_count(t.shape, &count) ||
        count * sgc::dtype_size(t.type) != t.bytes())
      std::abort();
    if (h.find(t.name) != &t)
      std::abort();
    covered += t.bytes();
  }
  if (covered != h.data_bytes) // exact tiling
    std::abort();
  return 0;
}
