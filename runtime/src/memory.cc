/*
 * memory.cc - anonymous mappings.
 */
#include "runtime/src/memory.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace sgc {
namespace runtime {

anon_memory::~anon_memory() {
  if (data_)
    ::munmap(data_, size_);
}

anon_memory::anon_memory(anon_memory &&other) noexcept
    : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

anon_memory &anon_memory::operator=(anon_memory &&other) noexcept {
  if (this != &other) {
    if (data_)
      ::munmap(data_, size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

namespace {
/// The size of a transparent huge page on x86-64 and most arm64 kernels.
constexpr uint64_t huge_page_bytes = uint64_t{2} << 20;
} // namespace

status anon_memory::allocate(uint64_t bytes, const std::string &what,
                             anon_memory *out, bool huge_pages) {
  *out = anon_memory();
  if (bytes == 0)
    return status();
  if (bytes > static_cast<uint64_t>(SIZE_MAX / 2))
    return internal_error("cannot allocate " + std::to_string(bytes) +
                          " bytes for " + what + ": too large");
  // Huge pages need a 2 MiB-aligned start: map one huge page more, then
  // give back the unaligned head and what is left past the end.
  const uint64_t slack = huge_pages ? huge_page_bytes : 0;
  const size_t mapped = static_cast<size_t>(bytes + slack);
  void *p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return internal_error("cannot allocate " + std::to_string(bytes) +
                          " bytes for " + what + ": " + std::strerror(errno));
  uint8_t *data = static_cast<uint8_t *>(p);
  if (huge_pages) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (base + huge_page_bytes - 1) & ~(huge_page_bytes - 1);
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    uint64_t end = 0;
    align_up(aligned + bytes, page, &end);
    if (aligned > base)
      ::munmap(p, aligned - base);
    if (base + mapped > end)
      ::munmap(reinterpret_cast<void *>(end), base + mapped - end);
    data = reinterpret_cast<uint8_t *>(aligned);
    // Only a hint: without it the memory is still correct, just slower.
    (void)::madvise(data, static_cast<size_t>(bytes), MADV_HUGEPAGE);
  }
  out->data_ = data;
  out->size_ = bytes;
  return status();
}

bool huge_pages_available() {
  FILE *f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f)
    return false;
  char line[128] = {0};
  const bool read = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  return read && (std::strstr(line, "[always]") || std::strstr(line, "[madvise]"));
}

std::string with_commas(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

uint64_t available_memory_bytes() {
  if (const char *forced = std::getenv("SGC_MEMORY_AVAILABLE"))
    return std::strtoull(forced, nullptr, 10);
  FILE *f = std::fopen("/proc/meminfo", "r");
  if (!f)
    return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
      break;
  std::fclose(f);
  return static_cast<uint64_t>(kib) * 1024;
}

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0
             ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
             : 0;
}

status check_memory_budget(uint64_t bytes, const std::string &parts) {
  const uint64_t available = available_memory_bytes();
  if (available == 0 || bytes <= available)
    return status();
  return device_error("not enough memory: " + parts + " need " +
                      with_commas(bytes) + " B, but " +
                      with_commas(available) + " B are available")
      .note("plan for fewer positions with --max-context N (the KV cache of "
            "full-attention layers grows with the context)");
}

} // namespace runtime
} // namespace sgc
