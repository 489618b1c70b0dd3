/*
 * elf_check.h - checks a model library's ELF image before dlopen maps it.
 *
 * The dynamic loader trusts the file: a segment that claims bytes past the
 * end of a truncated file is mapped anyway, and the first touch of such a
 * page is a SIGBUS. check_elf_library looks only at the bytes it is given
 * (a pure function over a buffer, so it can be fuzzed) and says whether the
 * loader could map the image without reading past its end.
 */
#ifndef SGC_RUNTIME_SRC_ELF_CHECK_H
#define SGC_RUNTIME_SRC_ELF_CHECK_H

#include <cstdint>
#include <string>

namespace sgc {
namespace runtime {

struct elf_verdict {
  enum class kind {
    ok,
    not_elf,        ///< no ELF magic (or an empty file)
    truncated,      ///< a header, table or segment reaches past the end
    wrong_platform, ///< class, byte order or machine of another system
    malformed,      ///< inconsistent headers
  };
  kind what = kind::ok;
  /// One line without the file name, e.g. "truncated: segment 3 (PT_LOAD)
  /// needs bytes up to 16392 but the file has 16000"; empty when ok.
  std::string reason;

  bool ok() const { return what == kind::ok; }
};

/// The ELF machine (EM_*) of this build of the runtime, 0 where this file
/// does not know it (then any machine is accepted).
uint16_t elf_native_machine();

/// A name for an EM_* value ("x86-64", "AArch64", or "machine 1234").
std::string elf_machine_name(uint16_t machine);

/// Checks that data[0, size) is the whole of a shared library this runtime
/// can load: the ELF header (magic, ELFCLASS64, the runtime's byte order,
/// version, ET_DYN, the runtime's machine), the program header table within
/// the file, every segment's file range within the file, for each PT_LOAD
/// p_filesz <= p_memsz, a power-of-two alignment that offset and address
/// agree on, ascending addresses, a PT_DYNAMIC inside a loaded segment, and
/// the section header table and every section with file contents within the
/// file. Reads nothing outside the buffer; |data| may be null when |size| is
/// 0; no alignment of |data| is assumed.
elf_verdict check_elf_library(const uint8_t *data, uint64_t size);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_ELF_CHECK_H
