/*
 * pre_tokenizer.cc - see pre_tokenizer.h.
 */
#include "runtime/src/tokenizer/pre_tokenizer.h"

#include "runtime/src/tokenizer/normalizer.h"

#include <algorithm>
#include <utility>

namespace sgc::runtime {

namespace {

using span = std::pair<size_t, size_t>;

struct piece {
  span at;
  bool match;
};

/// |text| cut into matches of |pattern| and the gaps between them.
std::vector<piece> find_matches(std::string_view text,
                                const std::string &pattern) {
  std::vector<piece> out;
  size_t prev = 0;
  for (size_t hit = text.find(pattern); hit != std::string_view::npos;
       hit = text.find(pattern, hit + pattern.size())) {
    if (hit != prev)
      out.push_back({{prev, hit}, false});
    out.push_back({{hit, hit + pattern.size()}, true});
    prev = hit + pattern.size();
  }
  if (prev != text.size())
    out.push_back({{prev, text.size()}, false});
  return out;
}

/// HF's NormalizedString::split: which spans survive, per behavior.
std::vector<span> split_spans(std::vector<piece> pieces,
                              pre_tokenizer::behavior how) {
  using b = pre_tokenizer::behavior;
  std::vector<span> out;
  bool previous_match = false;
  switch (how) {
  case b::isolated:
    for (const piece &p : pieces)
      out.push_back(p.at);
    break;
  case b::removed:
    for (const piece &p : pieces)
      if (!p.match)
        out.push_back(p.at);
    break;
  case b::contiguous:
    for (const piece &p : pieces) {
      if (p.match == previous_match && !out.empty())
        out.back().second = p.at.second;
      else
        out.push_back(p.at);
      previous_match = p.match;
    }
    break;
  case b::merged_with_previous:
    for (const piece &p : pieces) {
      if (p.match && !previous_match && !out.empty())
        out.back().second = p.at.second;
      else
        out.push_back(p.at);
      previous_match = p.match;
    }
    break;
  case b::merged_with_next:
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
      if (it->match && !previous_match && !out.empty())
        out.back().first = it->at.first;
      else
        out.push_back(it->at);
      previous_match = it->match;
    }
    std::reverse(out.begin(), out.end());
    break;
  }
  return out;
}

} // namespace

pre_tokenizer pre_tokenizer::split(std::string pattern, behavior b) {
  pre_tokenizer p;
  p.steps_.push_back({std::move(pattern), b});
  return p;
}

status pre_tokenizer::parse(const json_cursor &c, pre_tokenizer *out) {
  *out = pre_tokenizer();
  if (c.is_null())
    return {};
  return parse_into(c, &out->steps_);
}

status pre_tokenizer::parse_into(const json_cursor &c,
                                 std::vector<step> *steps) {
  std::string type;
  if (status st = c.expect_object(); !st.ok())
    return st;
  if (status st = c.get_required("type", &type); !st.ok())
    return st;
  if (type == "Sequence") {
    const json_cursor list = c.at("pretokenizers");
    if (status st = list.expect_array(); !st.ok())
      return st;
    for (size_t i = 0; i < list.size(); ++i)
      if (status st = parse_into(list.at(i), steps); !st.ok())
        return st;
    return {};
  }
  if (type != "Split")
    return c.at("type").error(quote(type) + " is not supported");
  step s;
  if (status st = parse_string_pattern(c.at("pattern"), &s.pattern); !st.ok())
    return st;
  std::string how;
  if (status st = c.get_required("behavior", &how); !st.ok())
    return st;
  static const std::pair<const char *, behavior> names[] = {
      {"Removed", behavior::removed},
      {"Isolated", behavior::isolated},
      {"MergedWithPrevious", behavior::merged_with_previous},
      {"MergedWithNext", behavior::merged_with_next},
      {"Contiguous", behavior::contiguous}};
  bool known = false;
  for (const auto &[name, b] : names)
    if (how == name) {
      s.how = b;
      known = true;
    }
  if (!known)
    return c.at("behavior").error(quote(how) + " is not a split behavior");
  bool invert = false;
  if (status st = c.get_optional("invert", &invert); !st.ok())
    return st;
  if (invert)
    return c.at("invert").error("true is not supported");
  steps->push_back(std::move(s));
  return {};
}

std::vector<std::string> pre_tokenizer::apply(std::string_view text) const {
  std::vector<std::string> parts;
  if (!text.empty())
    parts.emplace_back(text);
  for (const step &s : steps_) {
    std::vector<std::string> next;
    for (const std::string &p : parts)
      for (const span &sp : split_spans(find_matches(p, s.pattern), s.how))
        if (sp.second > sp.first)
          next.push_back(p.substr(sp.first, sp.second - sp.first));
    parts = std::move(next);
  }
  return parts;
}

} // namespace sgc::runtime
