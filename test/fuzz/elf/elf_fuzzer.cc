/*
 * elf_fuzzer.cc - libFuzzer target for the ELF checks made before dlopen
 * (runtime/src/elf_check.cc). Any input must be either refused with a
 * one-line reason, or accepted only if it satisfies what the loader relies
 * on, recomputed here independently: the ELF64 header, the program header
 * table and every segment's file bytes inside the input, p_filesz <=
 * p_memsz for loadable segments, and the section header table inside the
 * input. Never a crash, hang, leak or sanitizer report.
 *
 * Seeds: the fake model library of test/unit, copied at build time.
 */
#include "runtime/src/elf_check.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <elf.h>

namespace {

/// [offset, offset + length) inside [0, size), without overflow.
bool inside(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

void require(bool condition) {
  if (!condition)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const sgc::runtime::elf_verdict v =
      sgc::runtime::check_elf_library(data, size);
  if (!v.ok()) {
    require(!v.reason.empty());
    require(v.reason.find('\n') == std::string::npos);
    return 0;
  }
  require(v.reason.empty());

  Elf64_Ehdr h;
  require(size >= sizeof h);
  std::memcpy(&h, data, sizeof h);
  require(std::memcmp(h.e_ident, ELFMAG, SELFMAG) == 0);
  require(h.e_ident[EI_CLASS] == ELFCLASS64);
  require(h.e_type == ET_DYN);
  require(h.e_phentsize == sizeof(Elf64_Phdr) && h.e_phnum > 0);
  require(inside(h.e_phoff, uint64_t{h.e_phnum} * sizeof(Elf64_Phdr), size));
  bool load = false, dynamic = false;
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr p;
    std::memcpy(&p, data + h.e_phoff + i * sizeof p, sizeof p);
    if (p.p_type == PT_NULL)
      continue;
    require(p.p_filesz == 0 || inside(p.p_offset, p.p_filesz, size));
    if (p.p_type == PT_LOAD) {
      load = true;
      require(p.p_filesz <= p.p_memsz);
      require(p.p_align <= 1 || (p.p_align & (p.p_align - 1)) == 0);
    }
    dynamic = dynamic || p.p_type == PT_DYNAMIC;
  }
  require(load && dynamic);
  if (h.e_shoff != 0 && h.e_shnum != 0)
    require(inside(h.e_shoff, uint64_t{h.e_shnum} * sizeof(Elf64_Shdr), size));
  return 0;
}
