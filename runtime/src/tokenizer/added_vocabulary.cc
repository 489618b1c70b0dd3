/*
 * added_vocabulary.cc - see added_vocabulary.h.
 */
#include "runtime/src/tokenizer/added_vocabulary.h"

#include "runtime/src/tokenizer/unicode.h"

#include <algorithm>

namespace sgc::runtime {

namespace {

bool ends_with_word(std::string_view s) {
  if (s.empty())
    return false;
  size_t len = 0;
  return unicode::is_word(unicode::decode_before(s, s.size(), &len));
}

bool starts_with_word(std::string_view s) {
  if (s.empty())
    return false;
  size_t len = 0;
  return unicode::is_word(unicode::decode_at(s, 0, &len));
}

/// Start of the whitespace run that ends |s|.
size_t trailing_space_start(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t len = 0;
    const char32_t c = unicode::decode_before(s, end, &len);
    if (!unicode::is_space(c))
      break;
    end -= len;
  }
  return end;
}

/// Length of the whitespace run that starts |s|.
size_t leading_space_length(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t len = 0;
    const char32_t c = unicode::decode_at(s, pos, &len);
    if (!unicode::is_space(c))
      break;
    pos += len;
  }
  return pos;
}

} // namespace

void added_vocabulary::add(const added_token &t, const normalizer &n) {
  if (t.content.empty())
    return;
  if (const added_token *old = find(t.id)) {
    auto &bucket = by_first_[old->normalized][static_cast<unsigned char>(
        pattern_[t.id][0])];
    bucket.erase(std::find(bucket.begin(), bucket.end(), t.id));
  }
  tokens_[t.id] = t;
  if (t.special)
    special_contents_.insert(t.content);
  std::string pattern = t.normalized ? n.apply(t.content) : t.content;
  if (pattern.empty())
    pattern = t.content;
  auto &bucket =
      by_first_[t.normalized][static_cast<unsigned char>(pattern[0])];
  const size_t len = pattern.size();
  pattern_[t.id] = std::move(pattern);
  // Keep the bucket longest first (thousands of tokens start with '<').
  bucket.insert(std::upper_bound(bucket.begin(), bucket.end(), len,
                                 [&](size_t l, int32_t id) {
                                   return l > pattern_[id].size();
                                 }),
                t.id);
}

const added_token *added_vocabulary::find(int32_t id) const {
  auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

const std::string *added_vocabulary::decode_form(int32_t id) const {
  auto it = pattern_.find(id);
  return it == pattern_.end() ? nullptr : &it->second;
}

bool added_vocabulary::is_special_content(const std::string &form) const {
  return special_contents_.count(form) != 0;
}

std::vector<segment> added_vocabulary::split(std::string_view text,
                                             const normalizer &n) const {
  std::vector<segment> raw, out;
  split_pass(text, false, &raw);
  for (segment &s : raw) {
    if (s.id >= 0)
      out.push_back(std::move(s));
    else
      split_pass(n.apply(s.text), true, &out);
  }
  return out;
}

void added_vocabulary::split_pass(std::string_view text, bool normalized,
                                  std::vector<segment> *out) const {
  // Leftmost-longest, non-overlapping matches among this pass's tokens. A
  // match refused by single_word still consumes its span (as HF's
  // automaton does).
  std::vector<match> matches;
  for (size_t pos = 0; pos < text.size();) {
    int32_t best = -1;
    size_t best_len = 0;
    for (int32_t id : by_first_[normalized][static_cast<unsigned char>(text[pos])]) {
      const std::string &p = pattern_.at(id);
      if (text.compare(pos, p.size(), p) == 0) {
        best = id;
        best_len = p.size();
        break; // the longest that matches here
      }
    }
    if (best < 0) {
      ++pos;
      continue;
    }
    matches.push_back({pos, pos + best_len, best});
    pos += best_len;
  }

  size_t offset = 0;
  for (match m : matches) {
    const added_token &t = tokens_.at(m.id);
    if (t.single_word) {
      const bool space_before =
          m.start == 0 || !ends_with_word(text.substr(0, m.start));
      const bool space_after =
          m.stop == text.size() || !starts_with_word(text.substr(m.stop));
      if (!space_before || !space_after)
        continue;
    }
    if (t.lstrip)
      m.start = std::max(trailing_space_start(text.substr(0, m.start)), offset);
    if (t.rstrip)
      m.stop += leading_space_length(text.substr(m.stop));
    if (offset < m.start)
      out->push_back({std::string(text.substr(offset, m.start - offset)), -1});
    out->push_back({std::string(text.substr(m.start, m.stop - m.start)), m.id});
    offset = m.stop;
  }
  if (offset < text.size())
    out->push_back({std::string(text.substr(offset)), -1});
}

} // namespace sgc::runtime
