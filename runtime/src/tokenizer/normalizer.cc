/*
 * normalizer.cc - see normalizer.h.
 */
#include "runtime/src/tokenizer/normalizer.h"

namespace sgc::runtime {

std::string replace_all(std::string_view text, std::string_view from,
                        std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    const size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos)
      break;
    out.append(text, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text, pos, std::string_view::npos);
  return out;
}

status parse_string_pattern(const json_cursor &c, std::string *out) {
  if (status st = c.expect_object(); !st.ok())
    return st;
  if (c.has("Regex"))
    return c.at("Regex").error("regex patterns are not supported");
  if (!c.has("String"))
    return c.error("expected {\"String\": ...}");
  if (status st = c.at("String").get(out); !st.ok())
    return st;
  if (out->empty())
    return c.at("String").error("an empty pattern is not supported");
  return {};
}

normalizer normalizer::replace(std::string from, std::string to) {
  normalizer n;
  n.steps_.push_back({step::replace, std::move(from), std::move(to)});
  return n;
}

status normalizer::parse(const json_cursor &c, normalizer *out) {
  *out = normalizer();
  if (c.is_null())
    return {};
  return parse_into(c, &out->steps_);
}

status normalizer::parse_into(const json_cursor &c, std::vector<step> *steps) {
  std::string type;
  if (status st = c.expect_object(); !st.ok())
    return st;
  if (status st = c.get_required("type", &type); !st.ok())
    return st;
  if (type == "Sequence") {
    const json_cursor list = c.at("normalizers");
    if (status st = list.expect_array(); !st.ok())
      return st;
    for (size_t i = 0; i < list.size(); ++i)
      if (status st = parse_into(list.at(i), steps); !st.ok())
        return st;
    return {};
  }
  if (type == "Replace") {
    step s{step::replace, {}, {}};
    if (status st = parse_string_pattern(c.at("pattern"), &s.pattern); !st.ok())
      return st;
    if (status st = c.get_required("content", &s.content); !st.ok())
      return st;
    steps->push_back(std::move(s));
    return {};
  }
  if (type == "Prepend") {
    step s{step::prepend, {}, {}};
    if (status st = c.get_required("prepend", &s.content); !st.ok())
      return st;
    steps->push_back(std::move(s));
    return {};
  }
  return c.at("type").error(quote(type) + " is not supported");
}

std::string normalizer::apply(std::string_view text) const {
  std::string s(text);
  for (const step &st : steps_) {
    if (st.kind == step::replace)
      s = replace_all(s, st.pattern, st.content);
    else if (!s.empty()) // HF prepends to non-empty text only
      s.insert(0, st.content);
  }
  return s;
}

} // namespace sgc::runtime
