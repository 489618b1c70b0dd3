/*
 * launch_plan.h - a CUDA model's plan as kernel launches, shared by the
 * CUDA executor and the emulator executor so both pass the very same
 * parameters: the variant, the checks of its kernels against the steps,
 * each step's parameter values (abi.h: one 8-byte address per operand),
 * and the logits rows back to float32.
 */
#ifndef SGC_RUNTIME_SRC_CUDA_LAUNCH_PLAN_H
#define SGC_RUNTIME_SRC_CUDA_LAUNCH_PLAN_H

#include "lib/support/status.h"
#include "runtime/src/model.h"

#include <sgc/abi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {

/// Picks the CUDA variant: by |name| when given (usage error naming the
/// ones there are otherwise), else the first. Then checks its kernels
/// against the plan: every kernel named, every step's launch geometry
/// non-zero and its kernel taking one parameter per operand (bad input
/// naming the model, step and kernel otherwise).
status select_cuda_variant(const model_library &model, const char *name,
                           const sgc_abi_variant_t **out);

/// The most dynamic shared memory any step launching kernel |kernel| asks
/// for (0 when none launches it).
uint32_t max_dynamic_shared_bytes(const sgc_model_v2_t &t, uint32_t kernel);

/// Where a session keeps the plan's buffers, as 64-bit addresses: device
/// addresses on CUDA, host addresses in the emulator.
struct plan_buffers {
  uint64_t tokens = 0;     ///< int32 [max tokens of any phase]
  uint64_t step_state = 0; ///< sgc_abi_step_state_t
  uint64_t workspace = 0;
  std::vector<uint64_t> weights; ///< per manifest tensor
  std::vector<uint64_t> k_cache; ///< per layer
  std::vector<uint64_t> v_cache; ///< per layer; 0 without a V buffer
};

/// The parameter values of |step| (abi.h, above sgc_abi_cuda_kernel_t):
/// out[i] is operand i's address. |out| gets step.num_operands values.
void step_params(const sgc_model_v2_t &t, const sgc_abi_step_t &step,
                 const plan_buffers &buffers, std::vector<uint64_t> *out);

/// The grid |step| launches for a call of |n| tokens: a GRID_TOKENS_X/Y
/// step's token dimension shrinks from the most a call takes to |n| (the
/// blocks past it would do nothing); other steps keep their grid.
void launch_grid(const sgc_abi_step_t &step, int64_t n, uint32_t grid[3]);

/// The step state of a call of |n| tokens from |pos0|, with |full_slots|
/// slots in a full layer's cache; the LM head computes every row when
/// |all_positions|, else the last.
sgc_abi_step_state_t step_state(int64_t pos0, int64_t n, int64_t full_slots,
                                bool all_positions);

/// Bytes of a WORKSPACE operand when the call has |n| tokens.
uint64_t workspace_operand_bytes(const sgc_abi_operand_t &o, int64_t n);

/// "prefill step 3 (layer 2)" for messages.
std::string step_name(const sgc_model_v2_t &t, const sgc_abi_phase_t &phase,
                      uint32_t step);

/// Converts |rows| rows of |vocab| logits of |dtype| (F32 or BF16, the
/// phase's logits dtype) at |in| to float32 at |out|.
void logits_to_f32(const void *in, uint32_t dtype, int64_t rows, int64_t vocab,
                   float *out);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_LAUNCH_PLAN_H
