/*
 * elf_check.cc - the ELF checks made before dlopen (see elf_check.h). Every
 * header is copied out of the buffer with memcpy (the buffer may have any
 * alignment) after its range has been checked, and every sum of two file
 * quantities is checked for overflow first.
 */
#include "runtime/src/elf_check.h"

#include <cstdio>
#include <cstring>
#include <elf.h>

namespace sgc {
namespace runtime {

namespace {

using kind = elf_verdict::kind;

elf_verdict fail(kind k, std::string reason) {
  elf_verdict v;
  v.what = k;
  v.reason = std::move(reason);
  return v;
}

std::string num(uint64_t v) { return std::to_string(v); }

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string segment_type_name(uint32_t type) {
  switch (type) {
  case PT_NULL: return "PT_NULL";
  case PT_LOAD: return "PT_LOAD";
  case PT_DYNAMIC: return "PT_DYNAMIC";
  case PT_INTERP: return "PT_INTERP";
  case PT_NOTE: return "PT_NOTE";
  case PT_SHLIB: return "PT_SHLIB";
  case PT_PHDR: return "PT_PHDR";
  case PT_TLS: return "PT_TLS";
  case PT_GNU_EH_FRAME: return "PT_GNU_EH_FRAME";
  case PT_GNU_STACK: return "PT_GNU_STACK";
  case PT_GNU_RELRO: return "PT_GNU_RELRO";
  case PT_GNU_PROPERTY: return "PT_GNU_PROPERTY";
  default: return "type " + hex(type);
  }
}

std::string file_type_name(uint16_t type) {
  switch (type) {
  case ET_NONE: return "an ELF file of no type (ET_NONE)";
  case ET_REL: return "a relocatable object file (ET_REL)";
  case ET_EXEC: return "an executable (ET_EXEC)";
  case ET_CORE: return "a core file (ET_CORE)";
  default: return "an ELF file of type " + hex(type);
  }
}

/// The whole of the image, with range checks.
class image {
public:
  image(const uint8_t *data, uint64_t size) : data_(data), size_(size) {}
  uint64_t size() const { return size_; }

  /// Whether [offset, offset + length) lies inside the file.
  bool contains(uint64_t offset, uint64_t length) const {
    return length <= ~uint64_t{0} - offset && offset + length <= size_;
  }

  /// Copies the T at |offset|, which contains() has accepted.
  template <typename T> T read(uint64_t offset) const {
    T out;
    std::memcpy(&out, data_ + offset, sizeof(T));
    return out;
  }

  const uint8_t *at(uint64_t offset) const { return data_ + offset; }

  /// "truncated: WHAT needs bytes up to END but the file has SIZE", or an
  /// overflow message when the range does not fit in 64 bits.
  elf_verdict past_end(const std::string &what, uint64_t offset,
                       uint64_t length) const {
    if (length > ~uint64_t{0} - offset)
      return fail(kind::malformed, what + ": offset " + num(offset) +
                                       " plus size " + num(length) +
                                       " overflows");
    return fail(kind::truncated, "truncated: " + what +
                                     " needs bytes up to " +
                                     num(offset + length) +
                                     " but the file has " + num(size_));
  }

private:
  const uint8_t *data_;
  uint64_t size_;
};

elf_verdict check_header(const image &img, Elf64_Ehdr *out) {
  static const uint8_t magic[4] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3};
  if (img.size() == 0)
    return fail(kind::not_elf, "the file is empty");
  const uint64_t head = img.size() < 4 ? img.size() : 4;
  if (std::memcmp(img.at(0), magic, head) != 0) {
    std::string bytes;
    for (uint64_t i = 0; i < head; ++i) {
      char b[4];
      std::snprintf(b, sizeof b, "%02x", img.at(0)[i]);
      bytes += (i ? " " : "") + std::string(b);
    }
    return fail(kind::not_elf,
                "not an ELF file (it starts with " + bytes +
                    ", not 7f 45 4c 46)");
  }
  if (!img.contains(0, sizeof(Elf64_Ehdr)))
    return img.past_end("the ELF header", 0, sizeof(Elf64_Ehdr));
  const Elf64_Ehdr h = img.read<Elf64_Ehdr>(0);

  const uint8_t cls = h.e_ident[EI_CLASS];
  if (cls == ELFCLASS32)
    return fail(kind::wrong_platform,
                "a 32-bit ELF file (ELFCLASS32); this runtime loads 64-bit "
                "libraries (ELFCLASS64)");
  if (cls != ELFCLASS64)
    return fail(kind::malformed, "unknown ELF class " + num(cls));
  const uint8_t enc = h.e_ident[EI_DATA];
  const uint8_t ours =
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      ELFDATA2MSB;
#else
      ELFDATA2LSB;
#endif
  if (enc != ELFDATA2LSB && enc != ELFDATA2MSB)
    return fail(kind::malformed, "unknown ELF byte order " + num(enc));
  if (enc != ours)
    return fail(kind::wrong_platform,
                std::string("a ") +
                    (enc == ELFDATA2MSB ? "big" : "little") +
                    "-endian ELF file; this runtime is " +
                    (ours == ELFDATA2MSB ? "big" : "little") + "-endian");
  if (h.e_ident[EI_VERSION] != EV_CURRENT || h.e_version != EV_CURRENT)
    return fail(kind::malformed,
                "unknown ELF version " +
                    num(h.e_ident[EI_VERSION] != EV_CURRENT
                            ? h.e_ident[EI_VERSION]
                            : h.e_version));
  if (h.e_type != ET_DYN)
    return fail(kind::malformed,
                file_type_name(h.e_type) + ", not a shared library (ET_DYN)");
  const uint16_t native = elf_native_machine();
  if (native != 0 && h.e_machine != native)
    return fail(kind::wrong_platform,
                "built for " + elf_machine_name(h.e_machine) +
                    " (e_machine " + num(h.e_machine) +
                    "), but this runtime runs on " +
                    elf_machine_name(native) + " (" + num(native) + ")");
  if (h.e_ehsize < sizeof(Elf64_Ehdr))
    return fail(kind::malformed, "the ELF header size " + num(h.e_ehsize) +
                                     " is below " + num(sizeof(Elf64_Ehdr)));
  *out = h;
  return elf_verdict();
}

elf_verdict check_segments(const image &img, const Elf64_Ehdr &h) {
  if (h.e_phnum == 0)
    return fail(kind::malformed, "no program headers");
  if (h.e_phnum == PN_XNUM)
    return fail(kind::malformed,
                "extended program header numbering (PN_XNUM) is not "
                "supported");
  if (h.e_phentsize != sizeof(Elf64_Phdr))
    return fail(kind::malformed, "program header entries are " +
                                     num(h.e_phentsize) + " bytes, not " +
                                     num(sizeof(Elf64_Phdr)));
  if (h.e_phoff > img.size())
    return fail(kind::malformed, "the program header table offset " +
                                     num(h.e_phoff) +
                                     " is past the end of the file (" +
                                     num(img.size()) + " bytes)");
  const uint64_t table = uint64_t{h.e_phnum} * sizeof(Elf64_Phdr);
  if (!img.contains(h.e_phoff, table))
    return img.past_end("the program header table", h.e_phoff, table);

  // Every segment's file range, and the loadable ones' layout.
  unsigned loads = 0;
  uint64_t previous_end = 0;
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    const Elf64_Phdr p =
        img.read<Elf64_Phdr>(h.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
    const std::string what =
        "segment " + num(i) + " (" + segment_type_name(p.p_type) + ")";
    if (p.p_type == PT_NULL)
      continue;
    if (p.p_filesz > 0 && !img.contains(p.p_offset, p.p_filesz))
      return img.past_end(what, p.p_offset, p.p_filesz);
    if (p.p_align > 1 && !power_of_two(p.p_align))
      return fail(kind::malformed, what + ": alignment " + num(p.p_align) +
                                       " is not a power of two");
    if (p.p_type != PT_LOAD)
      continue;
    ++loads;
    if (p.p_filesz > p.p_memsz)
      return fail(kind::malformed, what + ": file size " + num(p.p_filesz) +
                                       " exceeds its memory size " +
                                       num(p.p_memsz));
    if (p.p_align > 1 && (p.p_offset & (p.p_align - 1)) !=
                             (p.p_vaddr & (p.p_align - 1)))
      return fail(kind::malformed,
                  what + ": offset " + hex(p.p_offset) + " and address " +
                      hex(p.p_vaddr) + " differ modulo its alignment " +
                      hex(p.p_align));
    if (p.p_memsz > ~uint64_t{0} - p.p_vaddr)
      return fail(kind::malformed, what + ": address " + hex(p.p_vaddr) +
                                       " plus size " + num(p.p_memsz) +
                                       " overflows");
    if (loads > 1 && p.p_vaddr < previous_end)
      return fail(kind::malformed,
                  what + ": address " + hex(p.p_vaddr) +
                      " is below the end of the previous loadable segment (" +
                      hex(previous_end) + ")");
    previous_end = p.p_vaddr + p.p_memsz;
  }
  if (loads == 0)
    return fail(kind::malformed, "no loadable segments (PT_LOAD)");

  // The loader reads the dynamic section from the mapped image.
  bool dynamic = false;
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    const Elf64_Phdr d =
        img.read<Elf64_Phdr>(h.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
    if (d.p_type != PT_DYNAMIC)
      continue;
    dynamic = true;
    bool inside = d.p_memsz <= ~uint64_t{0} - d.p_vaddr;
    bool found = false;
    for (unsigned j = 0; inside && !found && j < h.e_phnum; ++j) {
      const Elf64_Phdr l =
          img.read<Elf64_Phdr>(h.e_phoff + uint64_t{j} * sizeof(Elf64_Phdr));
      found = l.p_type == PT_LOAD && d.p_vaddr >= l.p_vaddr &&
              d.p_vaddr + d.p_memsz <= l.p_vaddr + l.p_memsz;
    }
    if (!inside || !found)
      return fail(kind::malformed,
                  "segment " + num(i) + " (PT_DYNAMIC) at address " +
                      hex(d.p_vaddr) + " is outside every loadable segment");
  }
  if (!dynamic)
    return fail(kind::malformed,
                "no dynamic segment (PT_DYNAMIC); not a shared library");
  return elf_verdict();
}

elf_verdict check_sections(const image &img, const Elf64_Ehdr &h) {
  if (h.e_shoff == 0)
    return elf_verdict(); // no section header table: nothing to check
  if (h.e_shentsize != sizeof(Elf64_Shdr))
    return fail(kind::malformed, "section header entries are " +
                                     num(h.e_shentsize) + " bytes, not " +
                                     num(sizeof(Elf64_Shdr)));
  uint64_t count = h.e_shnum;
  uint64_t names = h.e_shstrndx;
  if (count == 0 || names == SHN_XINDEX) {
    // Extended numbering: section 0 holds the real count and index.
    if (!img.contains(h.e_shoff, sizeof(Elf64_Shdr)))
      return img.past_end("the section header table", h.e_shoff,
                          sizeof(Elf64_Shdr));
    const Elf64_Shdr zero = img.read<Elf64_Shdr>(h.e_shoff);
    if (count == 0)
      count = zero.sh_size;
    if (names == SHN_XINDEX)
      names = zero.sh_link;
  }
  if (count > ~uint64_t{0} / sizeof(Elf64_Shdr))
    return fail(kind::malformed,
                "the section count " + num(count) + " is impossibly large");
  const uint64_t table = count * sizeof(Elf64_Shdr);
  if (!img.contains(h.e_shoff, table))
    return img.past_end("the section header table", h.e_shoff, table);
  if (names != SHN_UNDEF && names >= count)
    return fail(kind::malformed, "the section name table index " +
                                     num(names) + " is not below the count " +
                                     num(count));

  // Section names, where the name table is intact.
  Elf64_Shdr strtab{};
  bool have_names = false;
  if (names != SHN_UNDEF) {
    strtab = img.read<Elf64_Shdr>(h.e_shoff + names * sizeof(Elf64_Shdr));
    have_names = strtab.sh_type != SHT_NOBITS &&
                 img.contains(strtab.sh_offset, strtab.sh_size);
  }
  auto name_of = [&](uint32_t at) -> std::string {
    if (!have_names || at >= strtab.sh_size)
      return "";
    const uint8_t *s = img.at(strtab.sh_offset + at);
    const void *nul = std::memchr(s, 0, strtab.sh_size - at);
    if (!nul)
      return "";
    const size_t n = static_cast<const uint8_t *>(nul) - s;
    if (n == 0 || n > 64)
      return "";
    for (size_t k = 0; k < n; ++k)
      if (s[k] < 0x21 || s[k] > 0x7e)
        return "";
    return std::string(reinterpret_cast<const char *>(s), n);
  };

  for (uint64_t i = 1; i < count; ++i) {
    const Elf64_Shdr s =
        img.read<Elf64_Shdr>(h.e_shoff + i * sizeof(Elf64_Shdr));
    if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL || s.sh_size == 0)
      continue;
    if (!img.contains(s.sh_offset, s.sh_size)) {
      const std::string name = name_of(s.sh_name);
      return img.past_end("section " + num(i) +
                              (name.empty() ? "" : " (" + name + ")"),
                          s.sh_offset, s.sh_size);
    }
  }
  return elf_verdict();
}

} // namespace

uint16_t elf_native_machine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__powerpc64__)
  return EM_PPC64;
#elif defined(__riscv)
  return EM_RISCV;
#elif defined(__s390x__)
  return EM_S390;
#else
  return 0;
#endif
}

std::string elf_machine_name(uint16_t machine) {
  switch (machine) {
  case EM_386: return "x86 (32-bit)";
  case EM_X86_64: return "x86-64";
  case EM_ARM: return "ARM (32-bit)";
  case EM_AARCH64: return "AArch64";
  case EM_PPC64: return "PowerPC64";
  case EM_RISCV: return "RISC-V";
  case EM_S390: return "s390x";
  case EM_CUDA: return "CUDA";
  default: return "machine " + num(machine);
  }
}

elf_verdict check_elf_library(const uint8_t *data, uint64_t size) {
  const image img(data, size);
  Elf64_Ehdr h;
  elf_verdict v = check_header(img, &h);
  if (!v.ok())
    return v;
  v = check_segments(img, h);
  if (!v.ok())
    return v;
  return check_sections(img, h);
}

} // namespace runtime
} // namespace sgc
