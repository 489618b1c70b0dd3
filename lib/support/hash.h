/*
 * hash.h - the stable hash and counter-based generator behind dummy weights.
 *
 * Both are fixed forever: files written with --write-dummy-weights and
 * benchmark runs with --load-format=dummy must agree across versions.
 */
#ifndef SGC_LIB_SUPPORT_HASH_H
#define SGC_LIB_SUPPORT_HASH_H

#include <cstddef>
#include <cstdint>

namespace sgc {

/// 64-bit FNV-1a of |size| bytes.
inline uint64_t fnv1a64(const void *data, size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001B3ull;
  }
  return h;
}

/// The splitmix64 finalizer.
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The |index|-th output of a splitmix64 stream seeded with |seed| (the
/// generator's state after index+1 steps, finalized): random access, so
/// tensors can be filled in parallel chunks.
inline uint64_t splitmix64_at(uint64_t seed, uint64_t index) {
  return splitmix64_mix(seed + (index + 1) * 0x9E3779B97F4A7C15ull);
}

} // namespace sgc

#endif // SGC_LIB_SUPPORT_HASH_H
