/*
 * batch_generate.cc - many sequences at once: sequence slots, a prefill
 * chunk between decode steps, one batched decode step for every running
 * sequence, each sampled with its own settings.
 */
#include "runtime/src/session.h"

#include <deque>

namespace sgc {
namespace runtime {

namespace {

/// One sequence in a slot, as far as generate() would have taken it.
struct running {
  sgc_sequence_request_t *request = nullptr;
  const sgc_generate_options_t *o = nullptr;
  int32_t slot = 0;
  int64_t chunk = 0;
  /// Prompt rows prefilled, and decode steps run.
  int64_t prefilled = 0, step = 0;
  std::unique_ptr<sampler> pick;
  std::vector<int32_t> history;
  std::unordered_set<int32_t> stops;
  /// The logits the next token is sampled from.
  std::vector<float> row;
  /// The token the next decode step feeds.
  int32_t fed = -1;

  bool prefilling() const { return prefilled < request->n_prompt; }

  /// Samples and reports the next token from |row|, as generate() does;
  /// false when the sequence ends there.
  bool emit(int64_t vocab) {
    const int32_t token = pick->sample(row.data(), vocab, history);
    ++request->num_generated;
    const bool stop_requested = o->on_token && o->on_token(o->user, token) != 0;
    if (stop_requested || stops.count(token) || step + 1 == o->max_new_tokens)
      return false;
    fed = static_cast<size_t>(step) < o->num_feed_tokens ? o->feed_tokens[step]
                                                        : token;
    history.push_back(fed);
    return true;
  }
};

} // namespace

status session::generate_batch(sgc_sequence_request_t *requests, size_t n) {
  if (n > 0 && !requests)
    return usage_error("the sequence requests are NULL");
  const int64_t vocab = model_->table().vocab_size;
  std::vector<int64_t> chunks(n);
  for (size_t i = 0; i < n; ++i) {
    sgc_sequence_request_t &r = requests[i];
    r.num_generated = 0;
    const std::string which = "sequence " + std::to_string(i) + ": ";
    if (!r.options)
      return usage_error(which + "no generate options");
    if (r.options->num_cached_tokens || r.options->prompt_image_blocks)
      return usage_error(which + "cached tokens and images are for "
                                 "sgc_session_generate");
    status st = check_generate(r.prompt, r.n_prompt, *r.options, &chunks[i]);
    if (!st.ok())
      return st.note(which.substr(0, which.size() - 2));
  }

  const int32_t keep = sequence_;
  std::deque<int32_t> free_slots;
  for (int32_t s = 0; s < num_sequences_; ++s)
    free_slots.push_back(s);
  std::vector<running> active;
  std::vector<float> logits;
  std::vector<int32_t> rows_seq, rows_tok;
  std::vector<int64_t> rows_pos;
  status st;
  size_t next = 0;
  while (st.ok() && (next < n || !active.empty())) {
    // Waiting sequences take the free slots, in order.
    while (next < n && !free_slots.empty()) {
      running r;
      r.request = &requests[next];
      r.o = r.request->options;
      r.chunk = chunks[next];
      r.slot = free_slots.front();
      free_slots.pop_front();
      r.pick = std::make_unique<sampler>(sampling_of(*r.o));
      r.history.assign(r.request->prompt,
                       r.request->prompt + r.request->n_prompt);
      r.stops = stop_tokens(*r.o);
      active.push_back(std::move(r));
      ++next;
    }

    // One prefill chunk, of the earliest sequence still reading its prompt.
    std::vector<bool> ended(active.size(), false);
    for (size_t a = 0; a < active.size(); ++a) {
      running &r = active[a];
      if (!r.prefilling())
        continue;
      const sgc_generate_options_t &o = *r.o;
      const bool all = o.prefill_all_logits != 0;
      const int64_t rows = std::min(r.chunk, r.request->n_prompt - r.prefilled);
      logits.resize(static_cast<size_t>((all ? rows : 1) * vocab));
      st = use_sequence(r.slot);
      if (st.ok())
        st = prefill(r.request->prompt + r.prefilled, rows, r.prefilled,
                     logits.data(), all);
      if (!st.ok())
        break;
      const int64_t first = r.prefilled;
      r.prefilled += rows;
      if (o.on_logits) {
        for (int64_t i = all ? 0 : rows - 1; i < rows; ++i)
          if (all || !r.prefilling())
            o.on_logits(o.user, SGC_LOGITS_PREFILL, first + i,
                        logits.data() + (all ? i : 0) * vocab, vocab);
      }
      if (!r.prefilling()) {
        const float *last = logits.data() + (all ? rows - 1 : 0) * vocab;
        r.row.assign(last, last + vocab);
        ended[a] = o.max_new_tokens == 0 || !r.emit(vocab);
      }
      break;
    }

    // One decode step for every sequence past its prompt.
    rows_seq.clear();
    rows_tok.clear();
    rows_pos.clear();
    std::vector<size_t> decoding;
    for (size_t a = 0; st.ok() && a < active.size(); ++a) {
      running &r = active[a];
      if (r.prefilling() || ended[a])
        continue;
      decoding.push_back(a);
      rows_seq.push_back(r.slot);
      rows_tok.push_back(r.fed);
      rows_pos.push_back(r.request->n_prompt + r.step);
    }
    if (st.ok() && !decoding.empty()) {
      logits.resize(decoding.size() * static_cast<size_t>(vocab));
      st = decode_batch(static_cast<int64_t>(decoding.size()), rows_seq.data(),
                        rows_tok.data(), rows_pos.data(), logits.data());
      for (size_t i = 0; st.ok() && i < decoding.size(); ++i) {
        running &r = active[decoding[i]];
        const float *row = logits.data() + i * vocab;
        r.row.assign(row, row + vocab);
        if (r.o->on_logits)
          r.o->on_logits(r.o->user, SGC_LOGITS_DECODE, r.step, row, vocab);
        ++r.step;
        ended[decoding[i]] = !r.emit(vocab);
      }
    }

    // Finished sequences free their slots.
    std::vector<running> kept;
    for (size_t a = 0; a < active.size(); ++a) {
      if (ended[a])
        free_slots.push_back(active[a].slot);
      else
        kept.push_back(std::move(active[a]));
    }
    active = std::move(kept);
  }
  // The slot the caller chose stays in use (it was valid then).
  sequence_ = keep;
  executor_->use_sequence(keep);
  return st;
}

} // namespace runtime
} // namespace sgc
