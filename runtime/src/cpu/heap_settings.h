/*
 * heap_settings.h - the C heap keeps what compiled CPU code frees.
 */
#ifndef SGC_RUNTIME_SRC_CPU_HEAP_SETTINGS_H
#define SGC_RUNTIME_SRC_CPU_HEAP_SETTINGS_H

#include <cstddef>

namespace sgc {
namespace runtime {

/// Blocks up to this size come from glibc's heap rather than their own
/// mmap once keep_freed_blocks() ran (glibc's largest allowed threshold).
constexpr size_t heap_block_limit = size_t(32) << 20;

/// Once per process, at the first CPU session: raises glibc's mmap and trim
/// thresholds so that blocks of up to heap_block_limit, freed by one call
/// of a compiled body, serve the next call without new page faults. A
/// compiled body allocates its activations and kernel temporaries per call
/// (the compiler does not place them in the workspace yet); served by mmap,
/// each call faulted them in again (with this, a 512-token prefill runs
/// 1.11x faster on 1 thread and 1.32x on 2: bench/README.md). Process-wide,
/// as every mallopt is; nothing on other C libraries. Returns whether the
/// settings are in effect.
bool keep_freed_blocks();

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CPU_HEAP_SETTINGS_H
