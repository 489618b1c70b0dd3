/*
 * elf_check_test.cc - damaged model libraries (runtime/src/elf_check.h):
 * the compiled fake model truncated at several lengths or with one header
 * field changed. sgc_model_open must refuse each one with a bad-input status
 * naming the file and what is wrong, before dlopen: the truncated ones are
 * opened in this very process, and dlopen of them would end it with SIGBUS.
 */
#include <sgc/runtime.h>

#include "runtime/src/elf_check.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <elf.h>
#include <functional>
#include <string>
#include <vector>

using sgc::runtime::check_elf_library;
using sgc::runtime::elf_verdict;
using sgc_test::temp_dir;

namespace {

struct open_result {
  sgc_status_code_t code = SGC_STATUS_OK;
  std::string message; ///< the error line
  std::string all;     ///< with the notes
  bool opened = false;
};

open_result open_model(const std::string &path) {
  sgc_model_t *m = nullptr;
  sgc_status_t *s = sgc_model_open(path.c_str(), &m);
  open_result r;
  r.code = sgc_status_code(s);
  r.message = sgc_status_message(s);
  r.all = r.message;
  for (size_t i = 0; i < sgc_status_note_count(s); ++i)
    r.all += std::string("\nnote: ") + sgc_status_note(s, i);
  r.opened = m != nullptr;
  sgc_status_free(s);
  sgc_model_release(m);
  return r;
}

std::string fake_model_image() {
  const std::string image = sgc_test::read_file(SGC_TEST_FAKE_MODEL);
  EXPECT_GT(image.size(), sizeof(Elf64_Ehdr));
  return image;
}

Elf64_Ehdr header_of(const std::string &image) {
  Elf64_Ehdr h;
  std::memcpy(&h, image.data(), sizeof h);
  return h;
}

void set_header(std::string *image, const Elf64_Ehdr &h) {
  std::memcpy(&(*image)[0], &h, sizeof h);
}

Elf64_Phdr segment_of(const std::string &image, unsigned i) {
  const Elf64_Ehdr h = header_of(image);
  Elf64_Phdr p;
  std::memcpy(&p, image.data() + h.e_phoff + i * sizeof p, sizeof p);
  return p;
}

void set_segment(std::string *image, unsigned i, const Elf64_Phdr &p) {
  const Elf64_Ehdr h = header_of(*image);
  std::memcpy(&(*image)[h.e_phoff + i * sizeof p], &p, sizeof p);
}

/// The index of the loadable segment that ends last in the file.
unsigned last_load(const std::string &image) {
  const Elf64_Ehdr h = header_of(image);
  unsigned best = 0;
  uint64_t best_end = 0;
  for (unsigned i = 0; i < h.e_phnum; ++i) {
    const Elf64_Phdr p = segment_of(image, i);
    if (p.p_type == PT_LOAD && p.p_offset + p.p_filesz > best_end) {
      best = i;
      best_end = p.p_offset + p.p_filesz;
    }
  }
  return best;
}

uint16_t other_machine() {
  return sgc::runtime::elf_native_machine() == EM_X86_64 ? EM_AARCH64
                                                         : EM_X86_64;
}

} // namespace

TEST(ElfCheck, RealLibrariesPass) {
  for (const char *path : {SGC_TEST_FAKE_MODEL, SGC_TEST_NOT_A_MODEL,
                           SGC_TEST_FAKE_MODEL_NO_TABLE}) {
    SCOPED_TRACE(path);
    const std::string image = sgc_test::read_file(path);
    const elf_verdict v = check_elf_library(
        reinterpret_cast<const uint8_t *>(image.data()), image.size());
    EXPECT_TRUE(v.ok()) << v.reason;
    EXPECT_TRUE(v.reason.empty());
  }
}

TEST(ElfCheck, EveryPrefixIsRejected) {
  // Whatever the length at which a copy stopped, the image is refused with
  // one line; a prefix of at least the ELF header is called truncated.
  const std::string image = fake_model_image();
  const auto *bytes = reinterpret_cast<const uint8_t *>(image.data());
  for (size_t n = 0; n < image.size(); ++n) {
    const elf_verdict v = check_elf_library(n ? bytes : nullptr, n);
    ASSERT_FALSE(v.ok()) << n;
    ASSERT_FALSE(v.reason.empty()) << n;
    ASSERT_EQ(v.reason.find('\n'), std::string::npos) << n;
    if (n == 0) {
      ASSERT_EQ(v.reason, "the file is empty");
      continue;
    }
    ASSERT_EQ(v.what, elf_verdict::kind::truncated) << n << ": " << v.reason;
    ASSERT_NE(v.reason.find("but the file has " + std::to_string(n)),
              std::string::npos)
        << n << ": " << v.reason;
  }
}

TEST(ModelOpen, DamagedLibrariesAreRefusedBeforeDlopen) {
  const std::string good = fake_model_image();
  const Elf64_Ehdr eh = header_of(good);
  const unsigned load = last_load(good);
  const Elf64_Phdr lp = segment_of(good, load);
  const std::string size = std::to_string(good.size());

  struct damage {
    std::string name;
    std::function<void(std::string *)> apply;
    std::vector<std::string> parts;
  };
  auto cut = [](size_t n) {
    return [n](std::string *image) { image->resize(n); };
  };
  const size_t mid_phdrs = eh.e_phoff + sizeof(Elf64_Phdr) * 2 + 20;
  const size_t mid_load = lp.p_offset + lp.p_filesz / 2;
  const std::vector<damage> cases = {
      {"empty.so", cut(0), {"the file is empty"}},
      {"magic_only.so", cut(4),
       {"truncated: the ELF header needs bytes up to 64 but the file has 4"}},
      {"header_only.so", cut(sizeof(Elf64_Ehdr)),
       {"truncated: the program header table needs bytes up to " +
            std::to_string(eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr)) +
            " but the file has 64",
        "interrupted copy"}},
      {"mid_phdrs.so", cut(mid_phdrs),
       {"truncated: the program header table",
        "but the file has " + std::to_string(mid_phdrs)}},
      {"mid_load.so", cut(mid_load),
       {"truncated: segment " + std::to_string(load) +
        " (PT_LOAD) needs bytes up to " +
        std::to_string(lp.p_offset + lp.p_filesz) + " but the file has " +
        std::to_string(mid_load)}},
      {"one_short.so", cut(good.size() - 1),
       {"truncated: the section header table needs bytes up to " + size +
        " but the file has " + std::to_string(good.size() - 1)}},
      {"bad_magic.so", [](std::string *image) { (*image)[1] = 'X'; },
       {"not an ELF file (it starts with 7f 58 4c 46, not 7f 45 4c 46)"}},
      {"class32.so",
       [](std::string *image) { (*image)[EI_CLASS] = ELFCLASS32; },
       {"a 32-bit ELF file (ELFCLASS32)"}},
      {"big_endian.so",
       [](std::string *image) { (*image)[EI_DATA] = ELFDATA2MSB; },
       {"a big-endian ELF file"}},
      {"executable.so",
       [&](std::string *image) {
         Elf64_Ehdr h = eh;
         h.e_type = ET_EXEC;
         set_header(image, h);
       },
       {"an executable (ET_EXEC), not a shared library"}},
      {"other_machine.so",
       [&](std::string *image) {
         Elf64_Ehdr h = eh;
         h.e_machine = other_machine();
         set_header(image, h);
       },
       {"built for " + sgc::runtime::elf_machine_name(other_machine()),
        "but this runtime runs on " +
            sgc::runtime::elf_machine_name(
                sgc::runtime::elf_native_machine())}},
      {"phoff_past_end.so",
       [&](std::string *image) {
         Elf64_Ehdr h = eh;
         h.e_phoff = image->size() + 4096;
         set_header(image, h);
       },
       {"the program header table offset " +
        std::to_string(good.size() + 4096) +
        " is past the end of the file (" + size + " bytes)"}},
      {"phoff_huge.so",
       [&](std::string *image) {
         Elf64_Ehdr h = eh;
         h.e_phoff = ~uint64_t{0} - 8;
         set_header(image, h);
       },
       {"program header table offset", "past the end of the file"}},
      {"segment_past_end.so",
       [&](std::string *image) {
         Elf64_Phdr p = lp;
         p.p_filesz = p.p_memsz = good.size();
         set_segment(image, load, p);
       },
       {"truncated: segment " + std::to_string(load) + " (PT_LOAD)"}},
      {"segment_offset_overflow.so",
       [&](std::string *image) {
         Elf64_Phdr p = lp;
         p.p_offset = ~uint64_t{0} - 16;
         set_segment(image, load, p);
       },
       {"segment " + std::to_string(load) + " (PT_LOAD): offset", "overflows"}},
      {"filesz_above_memsz.so",
       [&](std::string *image) {
         Elf64_Phdr p = lp;
         p.p_memsz = p.p_filesz - 1;
         set_segment(image, load, p);
       },
       {"segment " + std::to_string(load) + " (PT_LOAD): file size " +
        std::to_string(lp.p_filesz) + " exceeds its memory size " +
        std::to_string(lp.p_filesz - 1)}},
      {"align_not_power_of_two.so",
       [&](std::string *image) {
         Elf64_Phdr p = lp;
         p.p_align = 0x1800;
         set_segment(image, load, p);
       },
       {"alignment 6144 is not a power of two"}},
      {"align_disagrees.so",
       [&](std::string *image) {
         Elf64_Phdr p = lp;
         p.p_vaddr += 8;
         p.p_paddr += 8;
         set_segment(image, load, p);
       },
       {"differ modulo its alignment"}},
      {"phentsize.so",
       [&](std::string *image) {
         Elf64_Ehdr h = eh;
         h.e_phentsize = 32;
         set_header(image, h);
       },
       {"program header entries are 32 bytes, not 56"}},
      {"shoff_past_end.so",
       [&](std::string *image) {
         Elf64_Ehdr h = eh;
         h.e_shoff = image->size();
         set_header(image, h);
       },
       {"truncated: the section header table needs bytes up to"}},
  };

  temp_dir dir;
  for (const damage &c : cases) {
    SCOPED_TRACE(c.name);
    std::string image = good;
    c.apply(&image);
    const std::string path = dir.file(c.name);
    sgc_test::write_file(path, image);
    const open_result r = open_model(path);
    EXPECT_FALSE(r.opened);
    EXPECT_EQ(r.code, SGC_STATUS_BAD_INPUT) << r.all;
    EXPECT_NE(r.message.find("'" + path + "': not an sgc model: "),
              std::string::npos)
        << r.all;
    for (const std::string &p : c.parts)
      EXPECT_NE(r.all.find(p), std::string::npos)
          << "no '" << p << "' in " << r.all;
  }

  // The undamaged copy still opens.
  const std::string path = dir.file("intact.so");
  sgc_test::write_file(path, good);
  const open_result r = open_model(path);
  EXPECT_TRUE(r.opened) << r.all;
  EXPECT_EQ(r.code, SGC_STATUS_OK) << r.all;
}
