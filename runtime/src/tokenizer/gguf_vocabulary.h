/*
 * gguf_vocabulary.h - a GGUF file's own vocabulary (tokenizer.ggml.*) as the
 * tokenizer.model and tokenizer_config.json it stands for.
 */
#ifndef SGC_RUNTIME_TOKENIZER_GGUF_VOCABULARY_H
#define SGC_RUNTIME_TOKENIZER_GGUF_VOCABULARY_H

#include "lib/gguf/gguf.h"
#include "runtime/src/tokenizer/config.h"
#include "runtime/src/tokenizer/sentencepiece_proto.h"

namespace sgc::runtime {

/// Reads the "llama" (SentencePiece-style) vocabulary of |h|; anything else
/// is a bad_input error naming |path| and the key.
status read_gguf_vocabulary(const gguf::header &h, const std::string &path,
                            sentencepiece_vocabulary *vocabulary,
                            tokenizer_config *config);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_GGUF_VOCABULARY_H
