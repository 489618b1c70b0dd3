/*
 * schedule.h - the orders the emulator runs a block's threads in
 * (CUDA.md section 0.5): schedule 0 forward, 1 reverse, 2 and up shuffled
 * from a seed, so that a kernel whose result depends on the order of its
 * threads gives different bytes under two schedules.
 */
#ifndef SGC_RUNTIME_CUDA_EMU_SCHEDULE_H
#define SGC_RUNTIME_CUDA_EMU_SCHEDULE_H

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {
namespace emu {

/// The order of |n| threads (or blocks) under |schedule|; with |by_warps|
/// a shuffle keeps each warp's lanes together (warps in a random order,
/// the lanes of each in a random order).
std::vector<uint32_t> order_of(uint32_t n, int schedule, std::mt19937_64 &rng,
                               bool by_warps);

/// "0 (forward)", "1 (reverse)", "N (shuffled, seed S)".
std::string schedule_name(int s, uint64_t seed);

/// The byte shared memory starts as under schedule |s| (uninitialized
/// shared memory reads differ between schedules).
uint8_t shared_fill(int s);

} // namespace emu
} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_CUDA_EMU_SCHEDULE_H
