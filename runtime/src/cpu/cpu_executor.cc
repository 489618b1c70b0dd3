/*
 * cpu_executor.cc - replays a phase's steps on the CPU: per step, the
 * operands become memref descriptors (weights in place in the mapped
 * checkpoint, caches and workspace buffers in session memory) and the
 * variant's function runs them on the runtime's threads.
 */
#include "runtime/src/cpu/cpu_executor.h"

#include "lib/support/dtype.h"
#include "lib/support/half.h"
#include "runtime/src/cpu/cpu_features.h"
#include "runtime/src/cpu/heap_settings.h"
#include "runtime/src/cpu/host_tuning.h"
#include "runtime/src/weights.h"

#include <cstring>

namespace sgc {
namespace runtime {

namespace {
constexpr uint64_t buffer_alignment = 64;
} // namespace

status select_cpu_variant(const sgc_model_v2_t &table, const char *name,
                          uint64_t cpu_features,
                          const sgc_abi_variant_t **out) {
  const std::string have = cpu_feature_names(cpu_features);
  if (name && *name) {
    for (uint32_t i = 0; i < table.num_variants; ++i) {
      const sgc_abi_variant_t &v = table.variants[i];
      if (std::strcmp(v.name, name) != 0)
        continue;
      const uint64_t lacking = v.required_cpu_features & ~cpu_features;
      if (lacking)
        return device_error("this CPU cannot run variant " + quote(name) +
                            ": it lacks " + cpu_feature_names(lacking))
            .note("this CPU has: " + (have.empty() ? "-" : have));
      *out = &v;
      return status();
    }
    status err = usage_error("model has no CPU variant named " + quote(name));
    for (uint32_t i = 0; i < table.num_variants; ++i)
      err.note("available: " + quote(table.variants[i].name));
    return err;
  }
  for (uint32_t i = 0; i < table.num_variants; ++i) {
    const sgc_abi_variant_t &v = table.variants[i];
    if ((v.required_cpu_features & ~cpu_features) == 0) {
      *out = &v;
      return status();
    }
  }
  status err = device_error("this CPU can run none of the model's variants");
  for (uint32_t i = 0; i < table.num_variants; ++i) {
    const sgc_abi_variant_t &v = table.variants[i];
    err.note("variant " + quote(v.name) + " needs " +
             cpu_feature_names(v.required_cpu_features));
  }
  err.note("this CPU has: " + (have.empty() ? "-" : have));
  return err;
}

status cpu_executor::create(std::shared_ptr<model_library> model,
                            const char *variant, int32_t num_threads,
                            std::unique_ptr<executor> *out) {
  std::unique_ptr<cpu_executor> e(new cpu_executor());
  const uint64_t features = detect_cpu_features();
  status st = select_cpu_variant(model->table(), variant, features,
                                 &e->variant_);
  if (!st.ok())
    return st;
  constexpr uint64_t amx =
      SGC_ABI_CPU_AMX_TILE | SGC_ABI_CPU_AMX_BF16 | SGC_ABI_CPU_AMX_INT8;
  if ((e->variant_->required_cpu_features & amx) && !request_amx_permission())
    return device_error(
        "the kernel refused AMX tile state, needed by variant " +
        quote(e->variant_->name));
  // The library's host-dependent knob (sgc/abi.h), where it has one.
  if (auto *bytes = static_cast<int64_t *>(
          model->symbol(SGC_ABI_ROW_PREFETCH_SYMBOL))) {
    row_prefetch_choice choice;
    st = choose_row_prefetch(*bytes, &choice);
    if (!st.ok())
      return st;
    *bytes = choice.bytes;
    // What the library now holds, read back.
    e->tuning_ = "row prefetch " + std::to_string(*bytes) + " B (" +
                 choice.why + ")";
  }
  // The bf16 sums' instruction, where the variant has vdpbf16ps.
  auto *on_fma =
      static_cast<int64_t *>(model->symbol(SGC_ABI_BF16_ON_FMA_SYMBOL));
  if (on_fma) {
    const bool has_dot =
        e->variant_->required_cpu_features & SGC_ABI_CPU_AVX512BF16;
    bf16_sums_choice choice;
    st = choose_bf16_sums(has_dot, &choice);
    if (!st.ok())
      return st;
    *on_fma = choice.on_fma ? 1 : 0;
    if (has_dot)
      e->tuning_ += std::string(e->tuning_.empty() ? "" : "; ") +
                    "bf16 sums on " + (*on_fma ? "FMAs" : "vdpbf16ps") + " (" +
                    choice.why + ")";
  }
  keep_freed_blocks();
  e->model_ = std::move(model);
  e->pool_ = std::make_unique<thread_pool>(
      num_threads > 0 ? num_threads : physical_core_count());
  e->exec_.struct_size = sizeof(sgc_abi_cpu_exec_t);
  e->exec_.num_threads = e->pool_->size();
  e->exec_.cpu_features = features;
  e->exec_.runtime_state = e->pool_.get();
  e->exec_.parallel_for = &thread_pool::abi_parallel_for;
  e->descriptors_.resize(e->model_->max_step_operands());
  e->operands_.resize(e->model_->max_step_operands());
  *out = std::move(e);
  return status();
}

status cpu_executor::allocate(int64_t context, int32_t sequences) {
  const sgc_model_v2_t &t = model_->table();
  // KV cache: one mapping, every buffer 64-byte aligned, as the plan says
  // for |context| positions, once per sequence slot. A layer's slot stride
  // does not depend on its slot count, and no step touches a slot past the
  // positions in use, so the compiled code runs unchanged on fewer slots.
  std::vector<uint64_t> offsets;
  uint64_t total = 0;
  status st = model_->kv_buffer_offsets(context, sequences, buffer_alignment,
                                        &offsets, &total);
  if (!st.ok())
    return st;
  uint64_t needed = 0;
  if (__builtin_add_overflow(total, t.workspace_bytes, &needed))
    return internal_error("KV cache size overflows");
  st = check_memory_budget(
      needed, "the KV cache at context " + with_commas(context) +
                  (sequences > 1 ? " for " + std::to_string(sequences) +
                                       " sequences"
                                 : std::string()) +
                  " (" + with_commas(total) + " B) and the workspace (" +
                  with_commas(t.workspace_bytes) + " B)");
  if (!st.ok())
    return st;
  st = anon_memory::allocate(total, "the KV cache", &kv_memory_);
  if (!st.ok())
    return st;
  kv_bytes_ = model_->kv_cache_bytes_at(context) * sequences;
  k_cache_.resize(sequences);
  v_cache_.resize(sequences);
  for (int32_t s = 0; s < sequences; ++s)
    for (uint32_t i = 0; i < t.num_layers; ++i) {
      const size_t k = 2 * (s * t.num_layers + i);
      k_cache_[s].push_back(kv_memory_.data() + offsets[k]);
      v_cache_[s].push_back(
          model_->v_bytes(i) ? kv_memory_.data() + offsets[k + 1] : nullptr);
    }
  return anon_memory::allocate(t.workspace_bytes, "the workspace", &workspace_);
}

status cpu_executor::bind(const bound_weights &weights) {
  if (weights.pointers().size() != model_->table().num_tensors)
    return internal_error("the weights do not match the model's manifest");
  weights_ = &weights.pointers();
  return status();
}

void cpu_executor::describe(sgc_abi_memref_t *desc, const void *data,
                            uint32_t rank, const int64_t *shape) {
  desc->allocated = desc->aligned = data;
  desc->offset = 0;
  int64_t stride = 1;
  for (int i = static_cast<int>(rank) - 1; i >= 0; --i) {
    desc->sizes_strides[i] = shape[i];
    desc->sizes_strides[rank + i] = stride;
    stride *= shape[i];
  }
}

status cpu_executor::run(const sgc_abi_phase_t &phase, const int32_t *tokens,
                         int64_t n, int64_t pos0, float *logits,
                         bool all_positions, int32_t *argmax) {
  if (!weights_)
    return internal_error("no weights are bound");
  // CPU plans have no argmax operand: the session asks for logits.
  if (argmax)
    return internal_error("the CPU plan computes no argmax");
  call_inputs in;
  in.tokens = tokens;
  in.n = n;
  in.pos0 = pos0;
  in.last_row_only = !all_positions && n > 1;
  run_steps(phase, in);
  // The logits to f32: the last row, or every row.
  rows_to_f32(phase.logits, all_positions ? 0 : n - 1, n, logits);
  return status();
}

status cpu_executor::run_batch(const sgc_abi_phase_t &phase,
                               const int32_t *tokens, const int64_t *positions,
                               const int32_t *sequences, float *logits) {
  if (!weights_)
    return internal_error("no weights are bound");
  call_inputs in;
  in.tokens = tokens;
  in.n = phase.max_tokens;
  in.positions = positions;
  in.sequences = sequences;
  run_steps(phase, in);
  rows_to_f32(phase.logits, 0, in.n, logits);
  return status();
}

status cpu_executor::encode_image(const sgc_abi_phase_t &phase,
                                  const float *pixels,
                                  const int32_t *positions,
                                  float *soft_tokens) {
  if (!weights_)
    return internal_error("no weights are bound");
  call_inputs in;
  in.n = phase.max_tokens;
  in.pixels = pixels;
  in.patch_positions = positions;
  run_steps(phase, in);
  rows_to_f32(phase.logits, 0, phase.logits.shape[0], soft_tokens);
  return status();
}

void cpu_executor::run_steps(const sgc_abi_phase_t &phase, call_inputs &in) {
  const sgc_model_v2_t &t = model_->table();
  uint8_t *workspace = workspace_.data();
  const int64_t n = in.n;
  // A workspace operand's shape with the call's token count.
  auto workspace_shape = [&](const sgc_abi_operand_t &o, int64_t *shape) {
    for (uint32_t d = 0; d < o.rank; ++d)
      shape[d] = o.shape[d] == SGC_ABI_DIM_TOKENS ? n : o.shape[d];
  };
  for (uint32_t s = phase.first_step; s < phase.first_step + phase.num_steps;
       ++s) {
    const sgc_abi_step_t &step = t.steps[s];
    // A row-wise step (the LM head) runs on the last row alone when only the
    // last position's logits are wanted: a one-row view at that row.
    const bool last_row_only =
        (step.flags & SGC_ABI_STEP_ROWWISE) && in.last_row_only;
    for (uint32_t j = 0; j < step.num_operands; ++j) {
      const sgc_abi_operand_t &o = t.operands[step.first_operand + j];
      sgc_abi_memref_t *desc = &descriptors_[j];
      operands_[j] = desc;
      int64_t shape[SGC_ABI_MAX_OPERAND_RANK];
      switch (o.kind) {
      case SGC_ABI_OPERAND_TOKENS:
        describe(desc, in.tokens, 1, &n);
        break;
      case SGC_ABI_OPERAND_POSITION:
        // A batched step's operand names its row (abi.h 2.7).
        operands_[j] = in.positions
                           ? const_cast<int64_t *>(&in.positions[o.offset])
                           : &in.pos0;
        break;
      case SGC_ABI_OPERAND_PIXELS:
        describe(desc, in.pixels, 2, o.shape);
        break;
      case SGC_ABI_OPERAND_PATCH_POSITIONS:
        describe(desc, in.patch_positions, 2, o.shape);
        break;
      case SGC_ABI_OPERAND_IMAGE_EMBEDS:
        workspace_shape(o, shape);
        describe(desc, image_embeds_, 2, shape);
        break;
      case SGC_ABI_OPERAND_IMAGE_BLOCKS:
        describe(desc, image_blocks_, 1, &n);
        break;
      case SGC_ABI_OPERAND_WEIGHT: {
        const sgc_abi_tensor_t &w = t.tensors[o.index];
        describe(desc, (*weights_)[o.index], w.rank, w.shape);
        break;
      }
      case SGC_ABI_OPERAND_K_CACHE:
      case SGC_ABI_OPERAND_V_CACHE: {
        const sgc_abi_kv_layer_t &l = t.kv_layers[o.index];
        const int64_t dims[3] = {l.slots, l.kv_heads, l.head_dim};
        const int32_t seq = in.sequences ? in.sequences[o.offset] : sequence_;
        describe(desc,
                 o.kind == SGC_ABI_OPERAND_K_CACHE ? k_cache_[seq][o.index]
                                                   : v_cache_[seq][o.index],
                 3, dims);
        break;
      }
      default: { // SGC_ABI_OPERAND_WORKSPACE (the model was validated)
        workspace_shape(o, shape);
        uint8_t *data = workspace + o.offset;
        if (last_row_only && o.shape[0] == SGC_ABI_DIM_TOKENS) {
          uint64_t row_bytes = dtype_size(static_cast<dtype>(o.dtype));
          for (uint32_t d = 1; d < o.rank; ++d)
            row_bytes *= static_cast<uint64_t>(shape[d]);
          data += static_cast<uint64_t>(n - 1) * row_bytes;
          shape[0] = 1;
        }
        describe(desc, data, o.rank, shape);
        break;
      }
      }
    }
    variant_->functions[step.function](&exec_, operands_.data());
  }
}

void cpu_executor::rows_to_f32(const sgc_abi_operand_t &o, int64_t first,
                               int64_t n, float *out) const {
  const int64_t width = o.shape[1];
  const uint8_t *rows = workspace_.data() + o.offset;
  for (int64_t r = first; r < n; ++r) {
    float *dst = out + (r - first) * width;
    if (o.dtype == SGC_ABI_DTYPE_BF16) {
      const uint16_t *in = reinterpret_cast<const uint16_t *>(rows) + r * width;
      for (int64_t i = 0; i < width; ++i)
        dst[i] = bf16_to_f32(in[i]);
    } else {
      std::memcpy(dst, reinterpret_cast<const float *>(rows) + r * width,
                  static_cast<size_t>(width) * sizeof(float));
    }
  }
}

} // namespace runtime
} // namespace sgc
