/*
 * session.h - a model + weights on a device: KV cache, workspace, threads,
 * and the generation loop.
 */
#ifndef SGC_RUNTIME_SRC_SESSION_H
#define SGC_RUNTIME_SRC_SESSION_H

#include "runtime/src/memory.h"
#include "runtime/src/model.h"
#include "runtime/src/thread_pool.h"
#include "runtime/src/weights.h"

#include <sgc/abi.h>
#include <sgc/runtime.h>

#include <memory>
#include <vector>

namespace sgc {
namespace runtime {

class session {
public:
  /// See sgc_session_create.
  static status create(std::shared_ptr<model_library> model,
                       std::shared_ptr<bound_weights> weights,
                       const sgc_session_options_t &options,
                       std::unique_ptr<session> *out);

  status prefill(const int32_t *tokens, int64_t n, int64_t pos0, float *logits,
                 bool all_positions);
  status decode(int32_t token, int64_t pos, float *logits);
  status generate(const int32_t *prompt, int64_t n_prompt,
                  const sgc_generate_options_t &options,
                  int64_t *out_num_generated);

  uint64_t kv_cache_bytes() const { return kv_bytes_; }
  uint64_t workspace_bytes() const { return workspace_.size(); }
  int32_t num_threads() const { return pool_->size(); }
  const char *cpu_variant() const { return variant_->name; }

private:
  session() = default;
  status check_tokens(const int32_t *tokens, int64_t n) const;
  status entry_status(int32_t rc, const char *entry) const;

  std::shared_ptr<model_library> model_;
  std::shared_ptr<bound_weights> weights_;
  const sgc_abi_cpu_variant_t *variant_ = nullptr;
  std::unique_ptr<thread_pool> pool_;
  anon_memory kv_memory_;
  anon_memory workspace_;
  uint64_t kv_bytes_ = 0;
  std::vector<void *> k_cache_;
  std::vector<void *> v_cache_;
  sgc_abi_call_context_t ctx_{};
};

/// Picks the CPU variant: by |name| when given, else the first the CPU
/// supports. Usage error for an unknown name; device_unavailable when the
/// CPU lacks the features.
status select_cpu_variant(const sgc_model_v1_t &table, const char *name,
                          uint64_t cpu_features,
                          const sgc_abi_cpu_variant_t **out);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_SESSION_H
