/*
 * config.cc - reads tokenizer_config.json and special_tokens_map.json.
 */
#include "runtime/src/tokenizer/config.h"

#include "runtime/src/tokenizer/json_cursor.h"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>

namespace sgc::runtime {

namespace {

bool file_exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// A token name: a string, an AddedToken object {"content": ...} or null.
status read_token_name(const json_cursor &c, std::string *out) {
  if (c.is_null())
    return {};
  if (c.is_string())
    return c.get(out);
  if (c.is_object())
    return c.get_required("content", out);
  return c.error("expected a string or an object with \"content\"");
}

status read_added_token_flags(const json_cursor &c, added_token *t) {
  if (status st = c.expect_object(); !st.ok())
    return st;
  if (status st = c.get_required("content", &t->content); !st.ok())
    return st;
  for (auto [key, flag] :
       {std::pair<const char *, bool *>{"special", &t->special},
        {"lstrip", &t->lstrip},
        {"rstrip", &t->rstrip},
        {"normalized", &t->normalized},
        {"single_word", &t->single_word}}) {
    if (status st = c.get_optional(key, flag); !st.ok())
      return st;
  }
  return {};
}

status read_config_file(const std::string &path, tokenizer_config *out) {
  nlohmann::json doc;
  if (status st = read_json_file(path, &doc); !st.ok())
    return st;
  const json_cursor root(&path, &doc);
  if (status st = root.expect_object(); !st.ok())
    return st;
  for (auto [key, flag] : {std::pair<const char *, std::optional<bool> *>{
                               "add_bos_token", &out->add_bos_token},
                           {"add_eos_token", &out->add_eos_token}}) {
    if (root.at(key).is_null())
      continue;
    bool v = false;
    if (status st = root.at(key).get(&v); !st.ok())
      return st;
    *flag = v;
  }
  for (auto [key, name] : {std::pair<const char *, std::string *>{
                               "bos_token", &out->bos_token},
                           {"eos_token", &out->eos_token},
                           {"pad_token", &out->pad_token},
                           {"unk_token", &out->unk_token}}) {
    if (!name->empty())
      continue; // tokenizer_config.json wins over special_tokens_map.json
    if (status st = read_token_name(root.at(key), name); !st.ok())
      return st;
  }
  const json_cursor decoder = root.at("added_tokens_decoder");
  if (decoder.is_null())
    return {};
  if (status st = decoder.expect_object(); !st.ok())
    return st;
  for (auto it = decoder.value().begin(); it != decoder.value().end(); ++it) {
    const json_cursor entry = decoder.at(it.key().c_str());
    added_token t;
    char *end = nullptr;
    const long id = std::strtol(it.key().c_str(), &end, 10);
    if (it.key().empty() || *end != '\0' || id < 0 || id > INT32_MAX)
      return entry.error("the key is not a token id");
    t.id = static_cast<int32_t>(id);
    if (status st = read_added_token_flags(entry, &t); !st.ok())
      return st;
    out->added_tokens.push_back(std::move(t));
  }
  return {};
}

} // namespace

status read_tokenizer_config(const std::string &dir, tokenizer_config *out) {
  *out = tokenizer_config();
  for (const char *name : {"tokenizer_config.json", "special_tokens_map.json"}) {
    const std::string path = dir + "/" + name;
    if (!file_exists(path))
      continue;
    if (status st = read_config_file(path, out); !st.ok())
      return st;
  }
  return {};
}

} // namespace sgc::runtime
