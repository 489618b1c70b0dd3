/*
 * batch.cc - many sequences at once: sequence slots, a prefill chunk
 * between decode steps, one batched decode step for every running
 * sequence, each sampled with its own settings.
 */
#include "runtime/src/batch.h"

namespace sgc {
namespace runtime {

bool batch::sequence::emit(const float *row, int64_t vocab) {
  const int32_t token = pick->sample(row, vocab, history);
  ++request->num_generated;
  const bool stop_requested = o->on_token && o->on_token(o->user, token) != 0;
  if (stop_requested || stops.count(token) || step + 1 == o->max_new_tokens)
    return false;
  fed = static_cast<size_t>(step) < o->num_feed_tokens ? o->feed_tokens[step]
                                                      : token;
  history.push_back(fed);
  return true;
}

batch::batch(session &s)
    : session_(s), vocab_(s.model_->table().vocab_size) {
  for (int32_t slot = 0; slot < s.num_sequences(); ++slot)
    free_.push_back(slot);
}

status batch::add(sgc_sequence_request_t *request, int32_t *out_slot) {
  if (!request)
    return usage_error("the sequence request is NULL");
  if (!request->options)
    return usage_error("no generate options");
  if (request->options->num_cached_tokens)
    return usage_error("cached tokens are for sgc_session_generate");
  if (free_.empty())
    return usage_error("every sequence slot is in use (" +
                       std::to_string(session_.num_sequences()) + ")");
  for (const sequence &r : active_)
    if (r.request == request)
      return usage_error("the request is already running");
  sequence r;
  status st = session_.check_generate(request->prompt, request->n_prompt,
                                      *request->options, &r.chunk);
  if (!st.ok())
    return st;
  request->num_generated = 0;
  r.request = request;
  r.o = request->options;
  r.slot = free_.front();
  free_.pop_front();
  r.pick = std::make_unique<sampler>(sampling_of(*r.o));
  r.history.assign(request->prompt, request->prompt + request->n_prompt);
  r.stops = session_.stop_tokens(*r.o);
  if (out_slot)
    *out_slot = r.slot;
  active_.push_back(std::move(r));
  return status();
}

bool batch::cancel(const sgc_sequence_request_t *request) {
  for (size_t a = 0; a < active_.size(); ++a) {
    if (active_[a].request != request)
      continue;
    free_.push_back(active_[a].slot);
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(a));
    return true;
  }
  return false;
}

status batch::prefill_one(std::vector<bool> &ended) {
  for (size_t a = 0; a < active_.size(); ++a) {
    sequence &r = active_[a];
    if (!r.prefilling())
      continue;
    const sgc_generate_options_t &o = *r.o;
    const bool all = o.prefill_all_logits != 0;
    int64_t rows = 0;
    status st = session_.chunk_rows(o, r.request->n_prompt, r.prefilled,
                                    r.chunk, &rows);
    logits_.resize(static_cast<size_t>((all ? rows : 1) * vocab_));
    if (st.ok())
      st = session_.use_sequence(r.slot);
    const bool images = o.prompt_image_blocks != nullptr;
    session::image_rows image{o.image_soft_tokens,
                              images ? o.prompt_soft_slots + r.prefilled
                                     : nullptr,
                              images ? o.prompt_image_blocks + r.prefilled
                                     : nullptr};
    if (st.ok())
      st = session_.prefill(r.request->prompt + r.prefilled, rows, r.prefilled,
                            logits_.data(), all, images ? &image : nullptr);
    if (!st.ok())
      return st;
    const int64_t first = r.prefilled;
    r.prefilled += rows;
    if (o.on_logits) {
      for (int64_t i = all ? 0 : rows - 1; i < rows; ++i)
        if (all || !r.prefilling())
          o.on_logits(o.user, SGC_LOGITS_PREFILL, first + i,
                      logits_.data() + (all ? i : 0) * vocab_, vocab_);
    }
    if (!r.prefilling()) {
      const float *last = logits_.data() + (all ? rows - 1 : 0) * vocab_;
      ended[a] = o.max_new_tokens == 0 || !r.emit(last, vocab_);
    }
    break;
  }
  return status();
}

status batch::decode_all(std::vector<bool> &ended) {
  std::vector<int32_t> seqs, toks;
  std::vector<int64_t> positions;
  std::vector<size_t> decoding;
  for (size_t a = 0; a < active_.size(); ++a) {
    sequence &r = active_[a];
    if (r.prefilling() || ended[a])
      continue;
    decoding.push_back(a);
    seqs.push_back(r.slot);
    toks.push_back(r.fed);
    positions.push_back(r.request->n_prompt + r.step);
  }
  if (decoding.empty())
    return status();
  logits_.resize(decoding.size() * static_cast<size_t>(vocab_));
  status st = session_.decode_batch(static_cast<int64_t>(decoding.size()),
                                    seqs.data(), toks.data(), positions.data(),
                                    logits_.data());
  for (size_t i = 0; st.ok() && i < decoding.size(); ++i) {
    sequence &r = active_[decoding[i]];
    const float *row = logits_.data() + i * vocab_;
    if (r.o->on_logits)
      r.o->on_logits(r.o->user, SGC_LOGITS_DECODE, r.step, row, vocab_);
    ++r.step;
    ended[decoding[i]] = !r.emit(row, vocab_);
  }
  return st;
}

status batch::step(std::vector<sgc_sequence_request_t *> *ended_out) {
  std::vector<bool> ended(active_.size(), false);
  status st = prefill_one(ended);
  if (st.ok())
    st = decode_all(ended);
  // Finished sequences free their slots (also after an error, so that a
  // caller can end the others and go on).
  std::vector<sequence> kept;
  for (size_t a = 0; a < active_.size(); ++a) {
    if (ended[a]) {
      free_.push_back(active_[a].slot);
      if (ended_out)
        ended_out->push_back(active_[a].request);
    } else {
      kept.push_back(std::move(active_[a]));
    }
  }
  active_ = std::move(kept);
  return st;
}

status session::generate_batch(sgc_sequence_request_t *requests, size_t n) {
  if (n > 0 && !requests)
    return usage_error("the sequence requests are NULL");
  for (size_t i = 0; i < n; ++i) {
    sgc_sequence_request_t &r = requests[i];
    r.num_generated = 0;
    const std::string which = "sequence " + std::to_string(i);
    if (!r.options)
      return usage_error(which + ": no generate options");
    if (r.options->num_cached_tokens)
      return usage_error(which + ": cached tokens are for "
                                 "sgc_session_generate");
    int64_t chunk = 0;
    status st = check_generate(r.prompt, r.n_prompt, *r.options, &chunk);
    if (!st.ok())
      return st.note(which);
  }

  const int32_t keep = sequence_;
  batch running(*this);
  status st;
  size_t next = 0;
  while (st.ok() && (next < n || running.running() > 0)) {
    // Waiting sequences take the free slots, in order.
    while (st.ok() && next < n && running.free_slots() > 0)
      st = running.add(&requests[next++], nullptr);
    if (st.ok())
      st = running.step(nullptr);
  }
  // The slot the caller chose stays in use (it was valid then).
  sequence_ = keep;
  executor_->use_sequence(keep);
  return st;
}

} // namespace runtime
} // namespace sgc
