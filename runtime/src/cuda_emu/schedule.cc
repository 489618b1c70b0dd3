/*
 * schedule.cc - the orders the emulator runs a block's threads in.
 */
#include "runtime/src/cuda_emu/schedule.h"

#include "runtime/src/cuda_emu/warp_math.h"

#include <string>
#include <utility>

namespace sgc {
namespace runtime {
namespace emu {

/// Fisher-Yates with an explicit draw, so a seed means the same on every
/// standard library.
static void shuffle(std::vector<uint32_t> &v, std::mt19937_64 &rng) {
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[rng() % i]);
}

std::vector<uint32_t> order_of(uint32_t n, int schedule, std::mt19937_64 &rng,
                               bool by_warps) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i)
    v[i] = schedule == 1 ? n - 1 - i : i;
  if (schedule < 2)
    return v;
  if (!by_warps) {
    shuffle(v, rng);
    return v;
  }
  // Warps in a random order, the lanes of each in a random order.
  std::vector<uint32_t> warps((n + warp_lanes - 1) / warp_lanes);
  for (uint32_t w = 0; w < warps.size(); ++w)
    warps[w] = w;
  shuffle(warps, rng);
  v.clear();
  for (uint32_t w : warps) {
    std::vector<uint32_t> lanes;
    for (uint32_t i = w * warp_lanes; i < n && i < (w + 1) * warp_lanes; ++i)
      lanes.push_back(i);
    shuffle(lanes, rng);
    v.insert(v.end(), lanes.begin(), lanes.end());
  }
  return v;
}

std::string schedule_name(int s, uint64_t seed) {
  if (s == 0)
    return "0 (forward)";
  if (s == 1)
    return "1 (reverse)";
  return std::to_string(s) + " (shuffled, seed " + std::to_string(seed) + ")";
}

uint8_t shared_fill(int s) { return s == 0 ? 0xFF : s == 1 ? 0x7F : 0xCD; }

} // namespace emu
} // namespace runtime
} // namespace sgc
