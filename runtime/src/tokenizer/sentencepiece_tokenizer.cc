/*
 * sentencepiece_tokenizer.cc - tokenizer.model through libsentencepiece.
 */
#include "runtime/src/tokenizer/factories.h"

namespace sgc::runtime {

status open_sentencepiece(const std::string &path, const tokenizer_config &,
                          std::shared_ptr<const tokenizer> *) {
  return bad_input_error(path + ": SentencePiece models are not supported yet");
}

} // namespace sgc::runtime
