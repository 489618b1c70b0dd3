/*
 * gguf_files.cc - what model_files.h reads from a GGUF file instead of the
 * files beside a safetensors checkpoint.
 */
#include "sgc/runtime/model_files.h"

#include "lib/gguf/gguf.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

extern "C" {

int sgc_weights_is_gguf(const char *weights_path) {
  return weights_path && sgc::gguf::is_gguf_file(weights_path) ? 1 : 0;
}

int sgc_read_gguf_chat_template(const char *path, char **out, char *error,
                                size_t size) {
  *out = nullptr;
  std::unique_ptr<sgc::gguf::file> f;
  if (sgc::status s = sgc::gguf::file::open(path, &f); !s.ok()) {
    std::snprintf(error, size, "%s", s.message().c_str());
    return 1;
  }
  const sgc::gguf::value *v = f->hdr().find("tokenizer.chat_template");
  if (!v)
    return 0;
  if (v->type != sgc::gguf::value_type::string) {
    std::snprintf(error, size,
                  "%s: tokenizer.chat_template: is %s, expected STRING", path,
                  sgc::gguf::value_type_name(v->type));
    return 1;
  }
  *out = strdup(v->text.c_str());
  if (!*out) {
    std::snprintf(error, size, "%s: out of memory", path);
    return 1;
  }
  return 0;
}

} // extern "C"
