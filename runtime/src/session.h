/*
 * session.h - a model + weights on a device (its executor), argument checks
 * and the generation loop.
 */
#ifndef SGC_RUNTIME_SRC_SESSION_H
#define SGC_RUNTIME_SRC_SESSION_H

#include "runtime/src/executor.h"
#include "runtime/src/model.h"
#include "runtime/src/weights.h"

#include <sgc/abi.h>
#include <sgc/runtime.h>

#include "runtime/src/sampler.h"

#include <memory>
#include <unordered_set>
#include <vector>

struct sgc_image_t;

namespace sgc {
namespace runtime {

/// The sampler settings of |o|.
sampling sampling_of(const sgc_generate_options_t &o);

class session {
public:
  /// See sgc_session_create.
  static status create(std::shared_ptr<model_library> model,
                       std::shared_ptr<bound_weights> weights,
                       const sgc_session_options_t &options,
                       std::unique_ptr<session> *out);
  friend class batch;

  /// A prefill call's image rows: per row its slot in |soft_tokens| ([*,
  /// hidden] f32) or -1, and its image block.
  struct image_rows {
    const float *soft_tokens;
    const int64_t *soft_slots;
    const int32_t *blocks;
  };
  status prefill(const int32_t *tokens, int64_t n, int64_t pos0, float *logits,
                 bool all_positions, const image_rows *images = nullptr);
  /// One decode call: its logits row, or with |argmax| (where
  /// decodes_argmax()) only the row's argmax, computed on the device.
  status decode(int32_t token, int64_t pos, float *logits,
                int32_t *argmax = nullptr);
  /// Whether the model's decode phase computes the argmax of its row.
  bool decodes_argmax() const;
  /// The vision tower on |image| (sgc_session_encode_image).
  status encode_image(const sgc_image_t &image, float *soft_tokens,
                      int64_t *count);
  status generate(const int32_t *prompt, int64_t n_prompt,
                  const sgc_generate_options_t &options,
                  int64_t *out_num_generated);
  /// sgc_session_use_sequence.
  status use_sequence(int32_t sequence);
  int32_t num_sequences() const { return num_sequences_; }
  /// sgc_session_decode_batch.
  status decode_batch(int64_t n, const int32_t *sequences,
                      const int32_t *tokens, const int64_t *positions,
                      float *logits);
  /// sgc_session_generate_batch (batch.cc).
  status generate_batch(sgc_sequence_request_t *requests, size_t n);

  uint64_t kv_cache_bytes() const { return executor_->kv_cache_bytes(); }
  uint64_t workspace_bytes() const { return executor_->workspace_bytes(); }
  int32_t num_threads() const { return executor_->num_threads(); }
  const char *variant() const { return executor_->variant_name(); }
  const char *tuning() const { return executor_->tuning(); }
  int64_t context() const { return context_; }

private:
  session() = default;
  status check_tokens(const int32_t *tokens, int64_t n) const;
  /// "context length 512", or "context of 40 (--max-context; ...)".
  std::string context_name() const;
  /// The argument checks of generate (and of each generate_batch
  /// sequence); the prefill chunk to use.
  status check_generate(const int32_t *prompt, int64_t n_prompt,
                        const sgc_generate_options_t &o,
                        int64_t *out_chunk) const;
  /// Rows of the prefill chunk at prompt row |pos|: |chunk|, or fewer so
  /// that an image block is not split.
  status chunk_rows(const sgc_generate_options_t &o, int64_t n_prompt,
                    int64_t pos, int64_t chunk, int64_t *rows) const;
  /// What ends a sequence: its stop tokens, and the model's unless
  /// ignore_eos.
  std::unordered_set<int32_t> stop_tokens(const sgc_generate_options_t &o) const;
  /// Fills the image-row buffers for a prefill of |n| rows (none: text).
  void set_image_rows(const image_rows *images, int64_t n);

  std::shared_ptr<model_library> model_;
  std::shared_ptr<bound_weights> weights_;
  std::unique_ptr<executor> executor_;
  /// Positions this session holds (the model's, or fewer by max_context).
  int64_t context_ = 0;
  bool context_limited_ = false;
  int32_t num_sequences_ = 1;
  int32_t sequence_ = 0;
  /// A batched decode call's rows, padded to the entry's size.
  std::vector<int32_t> batch_tokens_, batch_sequences_;
  std::vector<int64_t> batch_positions_;
  std::vector<float> batch_logits_;
  /// The image rows of the prefill call being run (models with a tower).
  std::vector<float> image_embeds_;
  std::vector<int32_t> image_blocks_;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_SESSION_H
