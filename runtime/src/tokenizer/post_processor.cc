/*
 * post_processor.cc - see post_processor.h.
 */
#include "runtime/src/tokenizer/post_processor.h"

#include <climits>

namespace sgc::runtime {

status post_processor::parse(const json_cursor &c, post_processor *out) {
  *out = post_processor();
  if (c.is_null())
    return {};
  std::string type;
  if (status st = c.expect_object(); !st.ok())
    return st;
  if (status st = c.get_required("type", &type); !st.ok())
    return st;
  if (type != "TemplateProcessing")
    return c.at("type").error(quote(type) + " is not supported");
  const json_cursor single = c.at("single");
  const json_cursor specials = c.at("special_tokens");
  if (status st = single.expect_array(); !st.ok())
    return st;
  bool seen_sequence = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const json_cursor item = single.at(i);
    if (status st = item.expect_object(); !st.ok())
      return st;
    if (item.has("Sequence")) {
      std::string which;
      if (status st = item.at("Sequence").get_required("id", &which); !st.ok())
        return st;
      if (which != "A" || seen_sequence)
        return item.at("Sequence").error("expected one sequence $A");
      seen_sequence = true;
      continue;
    }
    if (!item.has("SpecialToken"))
      return item.error("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    std::string name;
    if (status st = item.at("SpecialToken").get_required("id", &name); !st.ok())
      return st;
    // The ids come from special_tokens[name].ids, as HF reads them.
    const json_cursor entry = specials.at(name.c_str());
    if (!specials.has(name.c_str()))
      return entry.error("missing (named by " + item.path() + ")");
    const json_cursor ids = entry.at("ids");
    if (status st = ids.expect_array(); !st.ok())
      return st;
    for (size_t k = 0; k < ids.size(); ++k) {
      int64_t id = 0;
      if (status st = ids.at(k).get(&id); !st.ok())
        return st;
      if (id < 0 || id > INT32_MAX)
        return ids.at(k).error("not a token id");
      (seen_sequence ? out->suffix : out->prefix)
          .push_back(static_cast<int32_t>(id));
    }
  }
  if (!seen_sequence)
    return single.error("no sequence $A");
  return {};
}

} // namespace sgc::runtime
