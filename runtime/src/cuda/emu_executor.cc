/*
 * emu_executor.cc - replays a CUDA model's plan through the CUDA emulator.
 */
#include "runtime/src/cuda/emu_executor.h"

#include "runtime/src/cuda/launch_plan.h"
#include "runtime/src/cuda/launch_trace.h"
#include "runtime/src/cuda_emu/emulator.h"
#include "runtime/src/memory.h"
#include "runtime/src/weights.h"

#include <cstdlib>
#include <cstring>

namespace sgc {
namespace runtime {

namespace {

constexpr uint64_t buffer_alignment = 64;
/// cuMemAlloc's alignment, which the CUDA executor keeps for every tensor.
constexpr uint64_t device_alignment = 256;

/// Schedules per launch from SGC_EMU_SCHEDULES (default 3).
status schedules_from_environment(int *out) {
  const char *text = std::getenv(emu_schedules_variable);
  *out = 3;
  if (!text || !*text)
    return status();
  char *end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end || v < 1 || v > 64)
    return usage_error(std::string(emu_schedules_variable) + "=" + quote(text) +
                       " is not a schedule count in [1, 64]");
  *out = static_cast<int>(v);
  return status();
}

class emu_executor final : public executor {
public:
  emu_executor(std::shared_ptr<model_library> model,
               const sgc_abi_variant_t *variant, const sgc_abi_cuda_emu_t *emu,
               int schedules)
      : model_(std::move(model)), variant_(variant), emu_(emu) {
    options_.schedules = schedules;
  }

  void use_sequence(int32_t) override {}
  status allocate(int64_t context, int32_t sequences) override {
    if (sequences != 1)
      return device_error("a CUDA session holds one sequence so far (asked "
                          "for " + std::to_string(sequences) + ")");
    const sgc_model_v2_t &t = model_->table();
    context_ = context;
    std::vector<uint64_t> offsets;
    uint64_t total = 0;
    status st = model_->kv_buffer_offsets(context, 1, buffer_alignment,
                                          &offsets, &total);
    if (!st.ok())
      return st;
    st = check_memory_budget(
        total + t.workspace_bytes,
        "the KV cache at context " + with_commas(context) + " (" +
            with_commas(total) + " B) and the workspace (" +
            with_commas(t.workspace_bytes) + " B)");
    if (st.ok())
      st = anon_memory::allocate(total, "the KV cache", &kv_memory_);
    if (st.ok())
      st = anon_memory::allocate(t.workspace_bytes, "the workspace",
                                 &workspace_);
    if (!st.ok())
      return st;
    kv_bytes_ = model_->kv_cache_bytes_at(context);
    int64_t max_tokens = 1;
    for (uint32_t p = 0; p < t.num_phases; ++p)
      max_tokens = std::max(max_tokens, t.phases[p].max_tokens);
    tokens_.assign(static_cast<size_t>(max_tokens), 0);
    buffers_.tokens = address(tokens_.data());
    buffers_.step_state = address(&state_);
    buffers_.workspace = address(workspace_.data());
    for (uint32_t i = 0; i < t.num_layers; ++i) {
      uint8_t *k = kv_memory_.data() + offsets[2 * i];
      uint8_t *v = kv_memory_.data() + offsets[2 * i + 1];
      buffers_.k_cache.push_back(address(k));
      buffers_.v_cache.push_back(model_->v_bytes(i) ? address(v) : 0);
    }
    return status();
  }

  status bind(const bound_weights &weights) override {
    const sgc_model_v2_t &t = model_->table();
    if (weights.pointers().size() != t.num_tensors)
      return internal_error("the weights do not match the model's manifest");
    // Placed as the CUDA executor uploads them: one allocation, every
    // tensor 256-byte aligned. A mapped checkpoint aligns a tensor only to
    // its element size, and the kernels' 128-bit loads assume more.
    std::vector<uint64_t> offsets(t.num_tensors);
    uint64_t total = 0;
    for (uint32_t i = 0; i < t.num_tensors; ++i) {
      if (!align_up(total, device_alignment, &offsets[i]) ||
          __builtin_add_overflow(offsets[i], t.tensors[i].bytes, &total))
        return internal_error("weight size overflows");
    }
    status st = check_memory_budget(total, "the emulated device's weights");
    if (st.ok())
      st = anon_memory::allocate(total, "the emulated device's weights",
                                 &weights_);
    if (!st.ok())
      return st;
    buffers_.weights.clear();
    for (uint32_t i = 0; i < t.num_tensors; ++i) {
      std::memcpy(weights_.data() + offsets[i], weights.pointers()[i],
                  static_cast<size_t>(t.tensors[i].bytes));
      buffers_.weights.push_back(address(weights_.data() + offsets[i]));
    }
    bound_ = true;
    return status();
  }

  status run(const sgc_abi_phase_t &phase, const int32_t *tokens, int64_t n,
             int64_t pos0, float *logits, bool all_positions,
             int32_t *argmax) override {
    const sgc_model_v2_t &t = model_->table();
    if (!bound_)
      return internal_error("no weights are bound");
    state_ = step_state(pos0, n, context_, all_positions);
    std::memcpy(tokens_.data(), tokens, static_cast<size_t>(n) * 4);
    for (uint32_t s = phase.first_step; s < phase.first_step + phase.num_steps;
         ++s) {
      emu::launch l;
      describe_launch(phase, s, n, &l);
      status st = emu::run(l, options_);
      if (!st.ok())
        return st;
      if (dump_) {
        std::vector<launch_dump::operand> operands;
        launch_dump::operands(*model_, t.steps[s], l.params, n, context_,
                              &operands);
        for (const launch_dump::operand &o : operands) {
          st = dump_->write(calls_, t, phase, s, n, l.kernel.c_str(), o,
                            reinterpret_cast<const void *>(
                                static_cast<uintptr_t>(o.address)));
          if (!st.ok())
            return st;
        }
      }
    }
    if (dump_) {
      status st = dump_->flush();
      if (!st.ok())
        return st;
    }
    ++calls_;
    if (argmax) {
      const sgc_abi_operand_t *best = model_->argmax(phase);
      if (!best)
        return internal_error("the phase has no argmax operand");
      std::memcpy(argmax, workspace_.data() + best->offset, sizeof *argmax);
      return status();
    }
    const sgc_abi_operand_t &lo = phase.logits;
    const uint64_t row_bytes = workspace_operand_bytes(lo, 1);
    const int64_t first = all_positions ? 0 : n - 1;
    logits_to_f32(workspace_.data() + lo.offset + first * row_bytes, lo.dtype,
                  n - first, t.vocab_size, logits);
    return status();
  }

  const char *variant_name() const override { return variant_->name; }
  uint64_t kv_cache_bytes() const override { return kv_bytes_; }
  uint64_t workspace_bytes() const override { return workspace_.size(); }
  int32_t num_threads() const override { return 1; }

  /// SGC_CUDA_DUMP (launch_trace.h): every launch's written operands.
  status open_dump(const std::string &path) {
    return launch_dump::open(path, &dump_);
  }

private:
  static uint64_t address(const void *p) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  }

  /// Step |s| as one emulator launch: the parameters the CUDA executor
  /// would pass, and each operand's memory as a buffer (the step state,
  /// tokens and weights read-only) so every access is checked against it.
  void describe_launch(const sgc_abi_phase_t &phase, uint32_t s, int64_t n,
                       emu::launch *l) const {
    const sgc_model_v2_t &t = model_->table();
    const sgc_abi_step_t &step = t.steps[s];
    l->kernel = variant_->kernels[step.function].name;
    l->where = model_->path() + ": " + step_name(t, phase, s);
    l->fn = emu_->kernels[step.function];
    launch_grid(step, n, l->grid);
    for (int d = 0; d < 3; ++d)
      l->block[d] = step.block[d];
    l->static_shared_bytes = emu_->static_shared_bytes
                                 ? emu_->static_shared_bytes[step.function]
                                 : 0;
    l->dynamic_shared_bytes = step.dynamic_shared_bytes;
    step_params(t, step, buffers_, &l->params);
    l->sites = emu_->sites;
    l->num_sites = emu_->num_sites;
    for (uint32_t j = 0; j < step.num_operands; ++j) {
      const sgc_abi_operand_t &o = t.operands[step.first_operand + j];
      emu::buffer b;
      b.data = reinterpret_cast<void *>(static_cast<uintptr_t>(l->params[j]));
      switch (o.kind) {
      case SGC_ABI_OPERAND_TOKENS:
        b.bytes = static_cast<uint64_t>(n) * sizeof(int32_t);
        b.what = "the tokens";
        break;
      case SGC_ABI_OPERAND_POSITION:
        b.bytes = sizeof(sgc_abi_step_state_t);
        b.what = "the step state";
        break;
      case SGC_ABI_OPERAND_WEIGHT:
        b.bytes = t.tensors[o.index].bytes;
        b.what = "weight " + quote(t.tensors[o.index].name);
        break;
      case SGC_ABI_OPERAND_K_CACHE:
      case SGC_ABI_OPERAND_V_CACHE: {
        const bool k = o.kind == SGC_ABI_OPERAND_K_CACHE;
        b.bytes = k ? model_->k_bytes_at(o.index, context_)
                    : model_->v_bytes_at(o.index, context_);
        b.writable = true;
        b.what =
            "layer " + std::to_string(o.index) + (k ? " K" : " V") + " cache";
        break;
      }
      default: // SGC_ABI_OPERAND_WORKSPACE
        b.bytes = workspace_operand_bytes(o, n);
        b.writable = true;
        b.what = "workspace operand " + std::to_string(j) + " (offset " +
                 std::to_string(o.offset) + ")";
        break;
      }
      bool seen = false; // an operand passed twice is one buffer
      for (const emu::buffer &other : l->buffers)
        seen |= other.data == b.data && other.bytes == b.bytes;
      if (!seen)
        l->buffers.push_back(std::move(b));
    }
  }

  std::shared_ptr<model_library> model_;
  const sgc_abi_variant_t *variant_;
  const sgc_abi_cuda_emu_t *emu_;
  emu::options options_;
  int64_t context_ = 0;
  anon_memory kv_memory_;
  uint64_t kv_bytes_ = 0;
  anon_memory workspace_;
  anon_memory weights_;
  std::vector<int32_t> tokens_;
  sgc_abi_step_state_t state_{};
  plan_buffers buffers_;
  bool bound_ = false;
  std::unique_ptr<launch_dump> dump_;
  int64_t calls_ = 0;
};

} // namespace

status create_emu_executor(std::shared_ptr<model_library> model,
                           const char *variant,
                           std::unique_ptr<executor> *out) {
  const sgc_abi_cuda_emu_t *emu = model->cuda_emu();
  if (!emu)
    return mismatch_error("model " + model->describe() +
                          " carries no kernels for the CUDA emulator");
  // The emulated variant unless another is named.
  const sgc_abi_variant_t *v = nullptr;
  status st = select_cuda_variant(
      *model, variant && *variant ? variant : emu->variant, &v);
  if (!st.ok())
    return st;
  auto bad = [&](const std::string &what) {
    return bad_input_error(model->path() +
                           ": the CUDA emulator's table: " + what);
  };
  if (!emu->variant || std::strcmp(emu->variant, v->name) != 0)
    return mismatch_error("model " + model->describe() +
                          " has emulator kernels for CUDA variant " +
                          quote(emu->variant ? emu->variant : "") + ", not " +
                          quote(v->name));
  if (emu->struct_size < SGC_ABI_CUDA_EMU_V2_2_SIZE ||
      emu->num_kernels != v->num_functions || !emu->kernels)
    return bad("it has " + std::to_string(emu->num_kernels) +
               " kernels for a variant of " + std::to_string(v->num_functions));
  for (uint32_t k = 0; k < emu->num_kernels; ++k)
    if (!emu->kernels[k])
      return bad("kernel " + std::to_string(k) + " (" +
                 quote(v->kernels[k].name) + ") is NULL");
  if (emu->num_sites && !emu->sites)
    return bad("it lists sites but no site names");
  int schedules = 3;
  st = schedules_from_environment(&schedules);
  if (!st.ok())
    return st;
  auto e = std::make_unique<emu_executor>(std::move(model), v, emu, schedules);
  const std::string dump = trace_path_from_environment(cuda_dump_variable);
  if (!dump.empty() && !(st = e->open_dump(dump)).ok())
    return st;
  *out = std::move(e);
  return status();
}

} // namespace runtime
} // namespace sgc
