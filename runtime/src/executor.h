/*
 * executor.h - what runs a model's plan on one device. The plan (phases,
 * steps, operands) is ABI data; an executor allocates the KV cache and the
 * workspace on its device, binds the weights, and replays a phase's steps.
 * The CPU executor calls compiled functions; a CUDA executor launches
 * kernels.
 */
#ifndef SGC_RUNTIME_SRC_EXECUTOR_H
#define SGC_RUNTIME_SRC_EXECUTOR_H

#include "lib/support/status.h"

#include <sgc/abi.h>

#include <cstdint>
#include <string>

namespace sgc {
namespace runtime {

class bound_weights;

class executor {
public:
  virtual ~executor() = default;

  /// The KV cache as the plan says for |context| positions (<= the model's
  /// context length; full layers then hold fewer slots), and the workspace.
  /// Checks the bytes against the memory the device has first.
  /// |sequences| sequence slots, each with the caches of one sequence.
  virtual status allocate(int64_t context, int32_t sequences) = 0;
  /// The sequence slot prefill and decode calls read and write (< the
  /// slots allocated; checked by the session).
  virtual void use_sequence(int32_t sequence) = 0;
  /// Makes |weights| (bound to the same model) the steps' weight operands.
  virtual status bind(const bound_weights &weights) = 0;
  /// Replays |phase| for tokens[0, n) at positions pos0.. (arguments already
  /// checked against the model), then writes float32 logits: the last row,
  /// or every row when |all_positions|. With |argmax| (only where the model
  /// has the phase's argmax operand) it writes that token instead and
  /// copies no logits (|logits| unused).
  virtual status run(const sgc_abi_phase_t &phase, const int32_t *tokens,
                     int64_t n, int64_t pos0, float *logits,
                     bool all_positions, int32_t *argmax) = 0;

  /// Replays a DECODE_BATCH |phase|: row r feeds tokens[r] at positions[r]
  /// to the sequence in slot sequences[r] (max_tokens rows, distinct slots
  /// but for repeats of a row), then writes every row's float32 logits.
  virtual status run_batch(const sgc_abi_phase_t & /*phase*/,
                           const int32_t * /*tokens*/,
                           const int64_t * /*positions*/,
                           const int32_t * /*sequences*/, float * /*logits*/) {
    return device_error(std::string("the ") + variant_name() +
                        " variant has no batched decode");
  }

  /// Replays an ENCODE_IMAGE |phase| on one image: |pixels| [patches,
  /// values] and |positions| [patches, 2] as the phase's operands say
  /// (already checked), then writes its soft tokens as float32 [soft
  /// tokens, hidden]. A device without the tower's code says so.
  virtual status encode_image(const sgc_abi_phase_t & /*phase*/,
                              const float * /*pixels*/,
                              const int32_t * /*positions*/,
                              float * /*soft_tokens*/) {
    return device_error(std::string("the ") + variant_name() +
                        " variant cannot run the vision tower");
  }

  /// The buffers a prefill of a model with images reads its image rows
  /// from ([max_prefill_chunk, hidden] soft tokens, [max_prefill_chunk]
  /// blocks); the session fills them before each prefill call.
  virtual status bind_image_rows(const float * /*embeds*/,
                                 const int32_t * /*blocks*/) {
    return device_error(std::string("the ") + variant_name() +
                        " variant cannot merge images into a prompt");
  }

  virtual const char *variant_name() const = 0;
  /// The host-dependent parameters in effect and why (sgc-run -v); "" when
  /// the variant has none.
  virtual const char *tuning() const { return ""; }
  virtual uint64_t kv_cache_bytes() const = 0;
  virtual uint64_t workspace_bytes() const = 0;
  virtual int32_t num_threads() const = 0;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_EXECUTOR_H
