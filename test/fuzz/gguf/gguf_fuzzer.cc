/*
 * gguf_fuzzer.cc - libFuzzer target for the GGUF reader (lib/gguf). Any
 * input must yield either a header that satisfies every invariant the
 * reader promises, or a bad_input status; never a crash, hang, leak or
 * sanitizer report.
 *
 * Seeds: test/Inputs/gguf/ (see scripts/test-sanitized).
 */
#include "lib/gguf/gguf.h"

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sgc::gguf::header h;
  const sgc::status st = sgc::gguf::parse(data, size, "fuzz", &h);
  if (!st.ok()) {
    if (st.code() != sgc::status_code::bad_input || st.message().empty())
      std::abort();
    return 0;
  }
  // Invariants of an accepted image.
  if (h.version != sgc::gguf::supported_version || h.alignment == 0 ||
      (h.alignment & (h.alignment - 1)) != 0 ||
      h.data_offset % h.alignment != 0 || h.data_offset + h.data_bytes != size)
    std::abort();
  std::set<std::string> keys, names;
  for (const sgc::gguf::metadata_entry &e : h.metadata)
    if (e.key.empty() || !keys.insert(e.key).second)
      std::abort();
  for (const sgc::gguf::tensor_info &t : h.tensors) {
    const sgc::gguf::type_traits *traits = sgc::gguf::find_type(t.type);
    if (!traits || t.name.empty() || !names.insert(t.name).second ||
        t.dims.empty() || t.dims.size() > 4 ||
        t.dims[0] % traits->block_elements != 0 ||
        t.elements() / traits->block_elements * traits->block_bytes !=
            t.bytes ||
        t.offset % h.alignment != 0 || t.offset > h.data_bytes ||
        t.bytes > h.data_bytes - t.offset)
      std::abort();
    for (const sgc::gguf::tensor_info &u : h.tensors)
      if (&u != &t && u.offset < t.offset + t.bytes &&
          t.offset < u.offset + u.bytes)
        std::abort(); // overlapping data
  }
  return 0;
}
