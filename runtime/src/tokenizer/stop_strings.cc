/*
 * stop_strings.cc - the cut at the first stop string.
 */
#include "runtime/src/tokenizer/stop_strings.h"

namespace sgc::runtime {

bool stop_strings::push(const std::string &piece, std::string *out) {
  out->clear();
  if (matched_)
    return true;
  pending_ += piece;
  // The earliest match wins (any match starts in the pending text: what was
  // handed out never begins one).
  size_t cut = std::string::npos;
  for (const std::string &s : stops_) {
    if (s.empty())
      continue;
    const size_t at = pending_.find(s);
    if (at < cut)
      cut = at;
  }
  if (cut != std::string::npos) {
    out->assign(pending_, 0, cut);
    pending_.clear();
    matched_ = true;
    return true;
  }
  // Hold back from the first position whose rest is a proper prefix of a
  // stop string. Stop strings are valid UTF-8, so that is a character
  // boundary.
  size_t keep = pending_.size();
  for (size_t p = 0; p < pending_.size() && keep == pending_.size(); ++p)
    for (const std::string &s : stops_) {
      const size_t rest = pending_.size() - p;
      if (rest < s.size() && s.compare(0, rest, pending_, p, rest) == 0) {
        keep = p;
        break;
      }
    }
  out->assign(pending_, 0, keep);
  pending_.erase(0, keep);
  return false;
}

void stop_strings::finish(std::string *out) {
  out->clear();
  if (!matched_)
    out->swap(pending_);
  pending_.clear();
}

} // namespace sgc::runtime
