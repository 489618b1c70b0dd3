/*
 * json_tokenizer.cc - the Hugging Face tokenizers format (tokenizer.json).
 */
#include "runtime/src/tokenizer/factories.h"

namespace sgc::runtime {

status open_tokenizer_json(const std::string &path, const tokenizer_config &,
                           std::shared_ptr<const tokenizer> *) {
  return bad_input_error(path + ": tokenizer.json is not supported yet");
}

} // namespace sgc::runtime
