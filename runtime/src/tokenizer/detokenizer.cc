/*
 * detokenizer.cc - streaming decode (see detokenizer.h). Each step decodes
 * the tokens not yet handed out; with decoders that look at the whole text
 * (a Strip), that is the whole sequence, exact by construction.
 */
#include "runtime/src/tokenizer/detokenizer.h"

namespace sgc::runtime {

status detokenizer::emit_up_to(size_t end, std::string *out) {
  out->clear();
  if (end <= decoded_end_)
    return {};
  decoded_end_ = end;
  std::string text;
  std::vector<int32_t> head(ids_.begin(), ids_.begin() + end);
  status st = decode_checked(*tok_, head, skip_special_, &text);
  if (!st.ok())
    return st;
  if (text.size() > emitted_) {
    out->assign(text, emitted_, std::string::npos);
    emitted_ = text.size();
  }
  return {};
}

status detokenizer::push(int32_t token, std::string *out) {
  out->clear();
  if (!tok_->piece(token))
    return usage_error("token id " + std::to_string(token) +
                       " is out of range (vocabulary of " +
                       std::to_string(tok_->vocab_size()) + ")");
  ids_.push_back(token);
  // Hold back the trailing run of byte pieces (and of skipped special
  // tokens, which HF removes before decoding, so bytes around them join).
  size_t end = ids_.size();
  while (end > 0) {
    const int32_t id = ids_[end - 1];
    const bool held = tok_->is_byte_piece(id) ||
                      (skip_special_ && tok_->is_special(id));
    if (!held)
      break;
    --end;
  }
  status st = emit_up_to(end, out);
  if (st.ok() && end > 0 && tok_->decode_concatenates()) {
    // Everything before |end| is out and later tokens cannot change it:
    // keep only the held-back tail, so each push decodes a few tokens.
    ids_.erase(ids_.begin(), ids_.begin() + static_cast<long>(end));
    emitted_ = 0;
    decoded_end_ = 0;
  }
  return st;
}

status detokenizer::finish(std::string *out) {
  status st = emit_up_to(ids_.size(), out);
  reset();
  return st;
}

void detokenizer::reset() {
  ids_.clear();
  emitted_ = 0;
  decoded_end_ = 0;
}

} // namespace sgc::runtime
