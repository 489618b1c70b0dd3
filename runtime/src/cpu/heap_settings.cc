/*
 * heap_settings.cc - glibc's mmap and trim thresholds for compiled code.
 */
#include "runtime/src/cpu/heap_settings.h"

#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sgc {
namespace runtime {

bool keep_freed_blocks() {
  static std::once_flag once;
  static bool applied = false;
  std::call_once(once, [] {
#if defined(__GLIBC__)
    // Past the trim threshold a free at the heap's top hands memory back,
    // so it is set well above what one call allocates.
    applied = mallopt(M_MMAP_THRESHOLD, int(heap_block_limit)) == 1 &&
              mallopt(M_TRIM_THRESHOLD, int(size_t(1) << 30)) == 1;
#endif
  });
  return applied;
}

} // namespace runtime
} // namespace sgc
