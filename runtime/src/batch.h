/*
 * batch.h - sequences that join and leave a running batch between steps:
 * each in a sequence slot of its own, one prefill chunk and one batched
 * decode step per step (sgc_batch_t; sgc_session_generate_batch runs on it).
 */
#ifndef SGC_RUNTIME_SRC_BATCH_H
#define SGC_RUNTIME_SRC_BATCH_H

#include "runtime/src/session.h"

#include <deque>

namespace sgc {
namespace runtime {

class batch {
public:
  explicit batch(session &s);

  /// Starts |request| in a free slot (sgc_batch_add).
  status add(sgc_sequence_request_t *request, int32_t *out_slot);
  /// Ends |request| now, without reporting anything more; false when it is
  /// not running.
  bool cancel(const sgc_sequence_request_t *request);
  /// One prefill chunk, then one decode step for every sequence past its
  /// prompt; the sequences that ended are appended to |ended|.
  status step(std::vector<sgc_sequence_request_t *> *ended);

  int32_t running() const { return static_cast<int32_t>(active_.size()); }
  int32_t free_slots() const { return static_cast<int32_t>(free_.size()); }

private:
  /// One sequence in a slot, as far as generate() would have taken it.
  struct sequence {
    sgc_sequence_request_t *request = nullptr;
    const sgc_generate_options_t *o = nullptr;
    int32_t slot = 0;
    int64_t chunk = 0;
    /// Prompt rows prefilled, and decode steps run.
    int64_t prefilled = 0, step = 0;
    std::unique_ptr<sampler> pick;
    std::vector<int32_t> history;
    std::unordered_set<int32_t> stops;
    /// The token the next decode step feeds.
    int32_t fed = -1;

    bool prefilling() const { return prefilled < request->n_prompt; }
    /// Samples and reports the next token from |row| (logits); false when
    /// the sequence ends there.
    bool emit(const float *row, int64_t vocab);
  };

  /// Runs one prefill chunk of the first sequence still reading its prompt;
  /// marks it in |ended| when its first token ends it.
  status prefill_one(std::vector<bool> &ended);
  status decode_all(std::vector<bool> &ended);

  session &session_;
  int64_t vocab_;
  std::deque<int32_t> free_;
  std::vector<sequence> active_;
  std::vector<float> logits_;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_BATCH_H
