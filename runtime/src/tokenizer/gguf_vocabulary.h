/*
 * gguf_vocabulary.h - a GGUF file's own vocabulary (tokenizer.ggml.*) as the
 * tokenizer.model and tokenizer_config.json it stands for.
 */
#ifndef SGC_RUNTIME_TOKENIZER_GGUF_VOCABULARY_H
#define SGC_RUNTIME_TOKENIZER_GGUF_VOCABULARY_H

#include "lib/gguf/gguf.h"
#include "runtime/src/tokenizer/config.h"
#include "lib/tokenizer/sentencepiece_proto.h"

#include <nlohmann/json.hpp>

namespace sgc::runtime {

/// The vocabulary's kind, tokenizer.ggml.model: "llama" or "gemma4";
/// anything else is a bad_input error naming |path| and the key.
status read_gguf_vocabulary_model(const gguf::header &h,
                                  const std::string &path, std::string *model);

/// Reads the "llama" (SentencePiece-style) vocabulary of |h|; errors are
/// bad_input and name |path| and the key.
status read_gguf_vocabulary(const gguf::header &h, const std::string &path,
                            sentencepiece_vocabulary *vocabulary,
                            tokenizer_config *config);

/// Reads the "gemma4" (BPE) vocabulary of |h| as the tokenizer.json it
/// came from.
status read_gguf_bpe_vocabulary(const gguf::header &h, const std::string &path,
                                nlohmann::json *doc, tokenizer_config *config);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_GGUF_VOCABULARY_H
