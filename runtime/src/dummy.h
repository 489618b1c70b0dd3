/*
 * dummy.h - deterministic stand-in weights (--load-format=dummy).
 *
 * The values are a pure function of the tensor's name, dtype, fill hint and
 * element index (documented at SGC_LOAD_FORMAT_DUMMY in sgc/runtime.h), so
 * any slice can be produced independently and in parallel, and a file
 * written by sgc_model_write_dummy_weights equals what binding produces.
 */
#ifndef SGC_RUNTIME_SRC_DUMMY_H
#define SGC_RUNTIME_SRC_DUMMY_H

#include <cstdint>

namespace sgc {
namespace runtime {

/// The seed of tensor |name| (FNV-1a-64 of its bytes).
uint64_t dummy_seed(const char *name);

/// The float value of element |index| of a random tensor with |seed|,
/// before conversion to the tensor's dtype.
float dummy_value(uint64_t seed, uint64_t index);

/// Writes elements [first, first + count) of the dummy tensor into |dst|
/// (count x dtype size bytes); of a block encoding (Q4_0, ...), blocks
/// [first, first + count) (count x block bytes).
void fill_dummy(uint64_t seed, uint32_t abi_dtype, uint32_t fill,
                uint64_t first, uint64_t count, void *dst);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_DUMMY_H
