/*
 * launch_plan.cc - the CUDA variant, its checks, and each step's kernel
 * parameters.
 */
#include "runtime/src/cuda/launch_plan.h"

#include "lib/support/dtype.h"
#include "lib/support/half.h"

#include <cstring>

namespace sgc {
namespace runtime {

namespace {

status check_kernels(const model_library &model, const sgc_abi_variant_t &v) {
  const sgc_model_v2_t &t = model.table();
  auto bad = [&](const std::string &what) {
    return bad_input_error(model.path() + ": CUDA variant " + quote(v.name) +
                           ": " + what);
  };
  for (uint32_t k = 0; k < v.num_functions; ++k)
    if (!v.kernels[k].name || !*v.kernels[k].name)
      return bad("kernel " + std::to_string(k) + " has no name");
  // The dynamic shared memory each kernel uses (2.4, in the emulator's table
  // of the same kernels): a launch that brings less would run past it.
  const sgc_abi_cuda_emu_t *emu = model.cuda_emu();
  const uint32_t *dynamic_needs =
      emu && emu->struct_size >= sizeof(sgc_abi_cuda_emu_t) &&
              emu->num_kernels == v.num_functions
          ? emu->dynamic_shared_bytes
          : nullptr;
  for (uint32_t p = 0; p < t.num_phases; ++p) {
    const sgc_abi_phase_t &ph = t.phases[p];
    for (uint32_t s = ph.first_step; s < ph.first_step + ph.num_steps; ++s) {
      const sgc_abi_step_t &st = t.steps[s];
      const sgc_abi_cuda_kernel_t &k = v.kernels[st.function];
      const std::string where =
          step_name(t, ph, s) + " (kernel " + quote(k.name) + "): ";
      if (k.num_params != st.num_operands)
        return bad(where + "the kernel takes " + std::to_string(k.num_params) +
                   " parameters, the step " + "passes " +
                   std::to_string(st.num_operands));
      for (int d = 0; d < 3; ++d)
        if (st.grid[d] == 0 || st.block[d] == 0)
          return bad(where + "a zero grid or block dimension");
      const uint64_t threads =
          uint64_t{st.block[0]} * st.block[1] * st.block[2];
      if (threads > 1024)
        return bad(where + std::to_string(threads) +
                   " threads per block (at most 1024)");
      if (dynamic_needs && st.dynamic_shared_bytes < dynamic_needs[st.function])
        return bad(where + "the kernel uses " +
                   std::to_string(dynamic_needs[st.function]) +
                   " bytes of dynamic shared memory, the launch asks for " +
                   std::to_string(st.dynamic_shared_bytes));
    }
  }
  return status();
}

} // namespace

status select_cuda_variant(const model_library &model, const char *name,
                           const sgc_abi_variant_t **out) {
  const sgc_model_v2_t &t = model.table();
  const sgc_abi_variant_t *chosen = nullptr;
  for (uint32_t i = 0; i < t.num_variants && !chosen; ++i) {
    const sgc_abi_variant_t &v = t.variants[i];
    if (v.device == SGC_ABI_DEVICE_CUDA &&
        (!name || !*name || std::strcmp(v.name, name) == 0))
      chosen = &v;
  }
  if (!chosen) {
    status err = usage_error("model has no CUDA variant named " +
                             quote(name ? name : ""));
    for (uint32_t i = 0; i < t.num_variants; ++i)
      err.note("available: " + quote(t.variants[i].name));
    return err;
  }
  status st = check_kernels(model, *chosen);
  if (!st.ok())
    return st;
  *out = chosen;
  return status();
}

uint32_t max_dynamic_shared_bytes(const sgc_model_v2_t &t, uint32_t kernel) {
  uint32_t most = 0;
  for (uint32_t s = 0; s < t.num_steps; ++s)
    if (t.steps[s].function == kernel && t.steps[s].dynamic_shared_bytes > most)
      most = t.steps[s].dynamic_shared_bytes;
  return most;
}

void step_params(const sgc_model_v2_t &t, const sgc_abi_step_t &step,
                 const plan_buffers &b, std::vector<uint64_t> *out) {
  out->resize(step.num_operands);
  for (uint32_t j = 0; j < step.num_operands; ++j) {
    const sgc_abi_operand_t &o = t.operands[step.first_operand + j];
    uint64_t v = 0;
    switch (o.kind) {
    case SGC_ABI_OPERAND_TOKENS:
      v = b.tokens;
      break;
    case SGC_ABI_OPERAND_POSITION: // the step state holds the position
      v = b.step_state;
      break;
    case SGC_ABI_OPERAND_WEIGHT:
      v = b.weights[o.index];
      break;
    case SGC_ABI_OPERAND_K_CACHE:
      v = b.k_cache[o.index];
      break;
    case SGC_ABI_OPERAND_V_CACHE:
      v = b.v_cache[o.index];
      break;
    default: // SGC_ABI_OPERAND_WORKSPACE (the model was validated)
      v = b.workspace + o.offset;
      break;
    }
    (*out)[j] = v;
  }
}

void launch_grid(const sgc_abi_step_t &step, int64_t n, uint32_t grid[3]) {
  for (int d = 0; d < 3; ++d)
    grid[d] = step.grid[d];
  const int d = (step.flags & SGC_ABI_STEP_GRID_TOKENS_X)   ? 0
                : (step.flags & SGC_ABI_STEP_GRID_TOKENS_Y) ? 1
                                                            : -1;
  if (d >= 0 && n >= 1 && static_cast<uint64_t>(n) < grid[d])
    grid[d] = static_cast<uint32_t>(n);
}

sgc_abi_step_state_t step_state(int64_t pos0, int64_t n, int64_t full_slots,
                                bool all_positions) {
  sgc_abi_step_state_t state{};
  state.position = pos0;
  state.num_tokens = n;
  state.full_slots = full_slots;
  state.first_logits_row = all_positions ? 0 : n - 1;
  return state;
}

uint64_t workspace_operand_bytes(const sgc_abi_operand_t &o, int64_t n) {
  uint64_t bytes = dtype_size(static_cast<dtype>(o.dtype));
  for (uint32_t d = 0; d < o.rank; ++d)
    bytes *= static_cast<uint64_t>(
        o.shape[d] == SGC_ABI_DIM_TOKENS ? n : o.shape[d]);
  return bytes;
}

std::string step_name(const sgc_model_v2_t &t, const sgc_abi_phase_t &phase,
                      uint32_t step) {
  const char *kind = phase.kind == SGC_ABI_PHASE_PREFILL  ? "prefill"
                     : phase.kind == SGC_ABI_PHASE_DECODE ? "decode"
                                                          : "phase";
  std::string name =
      std::string(kind) + " step " + std::to_string(step - phase.first_step);
  if (t.steps[step].layer >= 0)
    name += " (layer " + std::to_string(t.steps[step].layer) + ")";
  return name;
}

void logits_to_f32(const void *in, uint32_t dtype, int64_t rows, int64_t vocab,
                   float *out) {
  const size_t count = static_cast<size_t>(rows * vocab);
  if (dtype == SGC_ABI_DTYPE_BF16) {
    const uint16_t *h = static_cast<const uint16_t *>(in);
    for (size_t i = 0; i < count; ++i)
      out[i] = bf16_to_f32(h[i]);
  } else {
    std::memcpy(out, in, count * sizeof(float));
  }
}

} // namespace runtime
} // namespace sgc
