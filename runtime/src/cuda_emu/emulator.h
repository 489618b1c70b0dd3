/*
 * emulator.h - runs CUDA kernels compiled for the host (sgc_abi_emu_kernel_fn_t)
 * as GPU threads on fibers, so CUDA plans are tested on machines without a
 * GPU (CUDA.md section 0.5). It models what goes wrong on a GPU, not only
 * what a kernel means: warp collectives (shuffle, mma.sync, ldmatrix) with
 * PTX's lane mapping, barriers reached in divergent code, accesses outside
 * a buffer, and races (a launch runs under several schedules; any
 * difference in what it wrote is reported).
 */
#ifndef SGC_RUNTIME_SRC_CUDA_EMU_EMULATOR_H
#define SGC_RUNTIME_SRC_CUDA_EMU_EMULATOR_H

#include "lib/support/status.h"

#include <sgc/abi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {
namespace emu {

/// A buffer a launch may touch (an operand's memory). Accesses through
/// check_access must fall inside one of these or the block's shared memory.
struct buffer {
  void *data = nullptr;
  uint64_t bytes = 0;
  /// Compared across schedules (and restored between them) when set.
  bool writable = false;
  /// For messages: "workspace", "layer 3 K cache", a tensor name.
  std::string what;
};

/// One kernel launch.
struct launch {
  /// For messages: the kernel's name, and where the launch is in the plan.
  std::string kernel;
  std::string where;
  sgc_abi_emu_kernel_fn_t fn = nullptr;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  /// Parameter values (8 bytes each, as the ABI says); the kernel receives
  /// an array of pointers to them.
  std::vector<uint64_t> params;
  std::vector<buffer> buffers;
  /// sgc_abi_cuda_emu_t.sites, for messages (may be null).
  const char *const *sites = nullptr;
  uint32_t num_sites = 0;
};

struct options {
  /// Schedules per launch: 1 = forward only; 2 adds reverse thread order
  /// between collectives; 3 and more add seeded shuffles of the lanes in a
  /// warp, the warps in a block and the blocks in the grid.
  int schedules = 3;
  uint64_t seed = 1;
  /// When not empty, only these blocks run (linear ids, x fastest): a few
  /// sampled CTAs of a kernel too large to emulate whole.
  std::vector<uint32_t> only_blocks;
};

/// Runs |l| under |o|'s schedules. An error (status_code::internal: the
/// kernel has a bug) names the kernel, l.where, the block and thread, the
/// site and what was found (divergent barrier, access out of bounds, a race:
/// the buffer and first differing byte). On success the writable buffers
/// hold what the launch wrote; after an error, what the failing schedule
/// left in them.
///
/// What the emulator defines (CUDA.md section 0.5):
/// - Warps are 32 consecutive linear thread ids (x fastest). A block whose
///   size is not a multiple of 32 has a partial last warp: its missing lanes
///   count as exited. A shuffle that reads one is an error, and mma.sync and
///   ldmatrix, which need all 32 lanes, are refused there.
/// - A shuffle is PTX shfl.sync as MLIR 22's convert-gpu-to-nvvm emits it
///   for gpu.shuffle: member mask = the first |width| lanes, clamp width - 1
///   (up: 32 - width), no segments. Every existing member lane must arrive
///   at the same site; a lane outside the mask calling it is an error (PTX
///   leaves it undefined).
/// - Shared memory (static bytes, then dynamic, 16-byte aligned) starts each
///   block filled with 0xFF bytes in schedule 0 (NaN as f32 and bf16), 0x7F
///   in schedule 1 and 0xCD after, so reading it before writing it shows up
///   as NaNs or as a difference between schedules (reported as a race).
/// - A write (check_access with is_write, or an atomic) to a buffer that is
///   not writable is an error: it would escape the comparison and restore.
/// - Atomics are plain read-modify-writes (fibers never preempt). Float
///   atomics whose order changes the sum are reported as a race: on the GPU
///   that result is not deterministic either.
/// - Blocks run one after another; a schedule orders the blocks and the
///   threads (forward, reverse, seeded shuffles of blocks, of the warps in a
///   block and of the lanes in a warp), each thread running until it waits
///   at a collective or returns. So a thread spinning on memory that
///   another block (or another thread, without a collective in the loop)
///   writes never finishes. Schedule 0 passes warp collectives in lockstep
///   (every warp of the block arrives before any goes on); the later ones
///   let the first warp of their order run on alone through its warp
///   collectives (shuffles, mma.sync, ldmatrix) until it waits at a barrier,
///   then the next warp: shared memory that only a barrier protects is then
///   overwritten before a slower warp reads it, and the results differ.
status run(const launch &l, const options &o);

} // namespace emu
} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_EMU_EMULATOR_H
