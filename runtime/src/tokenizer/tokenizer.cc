/*
 * tokenizer.cc - picks the tokenizer file and checks what goes in and out.
 */
#include "runtime/src/tokenizer/tokenizer.h"

#include "lib/support/utf8.h"
#include "runtime/src/tokenizer/factories.h"
#include "runtime/src/tokenizer/gguf_vocabulary.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace sgc::runtime {

namespace {

bool is_regular(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// A GGUF file's own vocabulary, as the tokenizer.model or tokenizer.json
/// it stands for.
status open_gguf_tokenizer(const std::string &path,
                           std::shared_ptr<const tokenizer> *out) {
  std::unique_ptr<gguf::file> f;
  if (status s = gguf::file::open(path, &f); !s.ok())
    return s;
  std::string model;
  if (status s = read_gguf_vocabulary_model(f->hdr(), path, &model); !s.ok())
    return s;
  if (model == "gemma4") {
    nlohmann::json doc;
    tokenizer_config config;
    if (status s = read_gguf_bpe_vocabulary(f->hdr(), path, &doc, &config);
        !s.ok())
      return s;
    return open_tokenizer_document(path + " (tokenizer.ggml.*)", doc, config,
                                   out);
  }
  sentencepiece_vocabulary v;
  tokenizer_config config;
  if (status s = read_gguf_vocabulary(f->hdr(), path, &v, &config); !s.ok())
    return s;
  return open_sentencepiece_model(write_sentencepiece_model(v), path, config,
                                  out);
}

bool ends_with(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

status open_tokenizer(const std::string &path,
                      std::shared_ptr<const tokenizer> *out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return bad_input_error(path + ": cannot open: " + std::strerror(errno));
  if (S_ISREG(st.st_mode) && gguf::is_gguf_file(path))
    return open_gguf_tokenizer(path, out);
  std::string file = path, dir;
  if (S_ISDIR(st.st_mode)) {
    dir = path;
    if (is_regular(path + "/tokenizer.json"))
      file = path + "/tokenizer.json";
    else if (is_regular(path + "/tokenizer.model"))
      file = path + "/tokenizer.model";
    else
      return bad_input_error(path +
                             ": no tokenizer.json or tokenizer.model in the "
                             "directory");
  } else {
    dir = dir_of(path);
  }
  tokenizer_config config;
  if (status s = read_tokenizer_config(dir, &config); !s.ok())
    return s;
  if (ends_with(file, ".json"))
    return open_tokenizer_json(file, config, out);
  return open_sentencepiece(file, config, out);
}

status encode_checked(const tokenizer &t, std::string_view text,
                      bool add_special, std::vector<int32_t> *ids) {
  size_t bad = 0;
  if (!utf8_valid(text, &bad))
    return usage_error("the text to encode is not valid UTF-8 (byte " +
                       std::to_string(bad) + ")");
  ids->clear();
  return t.encode(text, add_special, ids);
}

status decode_checked(const tokenizer &t, const std::vector<int32_t> &ids,
                      bool skip_special, std::string *text) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (!t.piece(ids[i]))
      return usage_error("token id " + std::to_string(ids[i]) + " (at " +
                         std::to_string(i) + ") is out of range (vocabulary "
                         "of " + std::to_string(t.vocab_size()) + ")");
  text->clear();
  return t.decode(ids, skip_special, text);
}

} // namespace sgc::runtime
