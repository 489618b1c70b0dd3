/*
 * cpu_executor.h - the plan on the CPU: a variant the CPU can run, the
 * runtime's threads, the KV cache and workspace in host memory, and the
 * replay of a phase's steps as calls of the variant's functions.
 */
#ifndef SGC_RUNTIME_SRC_CPU_CPU_EXECUTOR_H
#define SGC_RUNTIME_SRC_CPU_CPU_EXECUTOR_H

#include "runtime/src/executor.h"
#include "runtime/src/memory.h"
#include "runtime/src/model.h"
#include "runtime/src/thread_pool.h"

#include <memory>
#include <vector>

namespace sgc {
namespace runtime {

/// Picks the CPU variant: by |name| when given, else the first the CPU
/// supports. Usage error for an unknown name; device_unavailable when the
/// CPU lacks the features.
status select_cpu_variant(const sgc_model_v2_t &table, const char *name,
                          uint64_t cpu_features,
                          const sgc_abi_variant_t **out);

class cpu_executor final : public executor {
public:
  /// Chooses the variant (|variant| by name, or the best) and starts
  /// |num_threads| - 1 workers (0 = one per physical core).
  static status create(std::shared_ptr<model_library> model,
                       const char *variant, int32_t num_threads,
                       std::unique_ptr<executor> *out);

  status allocate(int64_t context, int32_t sequences) override;
  void use_sequence(int32_t sequence) override { sequence_ = sequence; }
  status run_batch(const sgc_abi_phase_t &phase, const int32_t *tokens,
                   const int64_t *positions, const int32_t *sequences,
                   float *logits) override;
  status bind(const bound_weights &weights) override;
  status run(const sgc_abi_phase_t &phase, const int32_t *tokens, int64_t n,
             int64_t pos0, float *logits, bool all_positions,
             int32_t *argmax) override;
  status encode_image(const sgc_abi_phase_t &phase, const float *pixels,
                      const int32_t *positions, float *soft_tokens) override;
  status bind_image_rows(const float *embeds, const int32_t *blocks) override {
    image_embeds_ = embeds;
    image_blocks_ = blocks;
    return status();
  }

  const char *variant_name() const override { return variant_->name; }
  const char *tuning() const override { return tuning_.c_str(); }
  uint64_t kv_cache_bytes() const override { return kv_bytes_; }
  uint64_t workspace_bytes() const override { return workspace_.size(); }
  int32_t num_threads() const override { return pool_->size(); }

private:
  /// What one call of a phase passes: tokens and position (prefill,
  /// decode) or an image's pixels and patch positions (encode_image).
  struct call_inputs {
    const int32_t *tokens = nullptr;
    int64_t n = 1;
    int64_t pos0 = 0;
    /// A batched decode step: each row's position and sequence slot.
    const int64_t *positions = nullptr;
    const int32_t *sequences = nullptr;
    const float *pixels = nullptr;
    const int32_t *patch_positions = nullptr;
    bool last_row_only = false;
  };
  cpu_executor() = default;
  /// Runs the steps of |phase| on |in|.
  void run_steps(const sgc_abi_phase_t &phase, call_inputs &in);
  /// Rows [first, n) of workspace operand |o| ([n, width], F32 or BF16) as
  /// float32 into |out|.
  void rows_to_f32(const sgc_abi_operand_t &o, int64_t first, int64_t n,
                   float *out) const;
  /// Points |desc| at |data| with |shape|, row-major.
  static void describe(sgc_abi_memref_t *desc, const void *data, uint32_t rank,
                       const int64_t *shape);

  std::shared_ptr<model_library> model_;
  const sgc_abi_variant_t *variant_ = nullptr;
  std::unique_ptr<thread_pool> pool_;
  sgc_abi_cpu_exec_t exec_{};
  anon_memory kv_memory_;
  uint64_t kv_bytes_ = 0;
  anon_memory workspace_;
  /// Per sequence slot, per layer: its K and V buffers.
  std::vector<std::vector<void *>> k_cache_, v_cache_;
  int32_t sequence_ = 0;
  const std::vector<const void *> *weights_ = nullptr;
  const float *image_embeds_ = nullptr;
  const int32_t *image_blocks_ = nullptr;
  /// Per operand of the step being run: its descriptor and what it passes.
  std::vector<sgc_abi_memref_t> descriptors_;
  std::vector<void *> operands_;
  /// What host_tuning.cc chose ("row prefetch 0 B (...)").
  std::string tuning_;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CPU_CPU_EXECUTOR_H
