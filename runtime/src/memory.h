/*
 * memory.h - page-backed anonymous memory (KV caches, workspace, dummy
 * weights). Pages are zero and uncommitted until first written, so a cache
 * planned for the full context costs address space, not RAM, until used.
 */
#ifndef SGC_RUNTIME_SRC_MEMORY_H
#define SGC_RUNTIME_SRC_MEMORY_H

#include "lib/support/status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace sgc {
namespace runtime {

class anon_memory {
public:
  anon_memory() = default;
  ~anon_memory();
  anon_memory(const anon_memory &) = delete;
  anon_memory &operator=(const anon_memory &) = delete;
  anon_memory(anon_memory &&other) noexcept;
  anon_memory &operator=(anon_memory &&other) noexcept;

  /// Maps |bytes| of zeroed, page-aligned memory; |what| names the use in
  /// the error. 0 bytes gives data() == nullptr. With |huge_pages| the
  /// memory starts on a 2 MiB boundary and asks for transparent huge pages
  /// (MADV_HUGEPAGE; the kernel may still give 4 KiB pages).
  static status allocate(uint64_t bytes, const std::string &what,
                         anon_memory *out, bool huge_pages = false);

  uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }

private:
  uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
};

/// Bytes of memory the system can give without swapping (MemAvailable of
/// /proc/meminfo; SGC_MEMORY_AVAILABLE overrides it, for tests), or 0 when
/// unknown.
uint64_t available_memory_bytes();

/// Whether the kernel gives transparent huge pages to memory that asks for
/// them (/sys/kernel/mm/transparent_hugepage/enabled is always or madvise).
bool huge_pages_available();

/// Physical memory (sysconf), or 0 when unknown.
uint64_t physical_memory_bytes();

/// Fails with one error naming the parts and their bytes when |bytes| (what
/// the runtime would allocate itself) exceeds the available memory.
/// |parts| describes them ("KV cache 8,925,478,912 B + workspace ...").
status check_memory_budget(uint64_t bytes, const std::string &parts);

/// 1234567 -> "1,234,567".
std::string with_commas(uint64_t v);

/// Rounds |v| up to a multiple of |align| (a power of two); false on
/// overflow.
inline bool align_up(uint64_t v, uint64_t align, uint64_t *out) {
  uint64_t r;
  if (__builtin_add_overflow(v, align - 1, &r))
    return false;
  *out = r & ~(align - 1);
  return true;
}

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_MEMORY_H
