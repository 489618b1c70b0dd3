/*
 * factories.h - the tokenizer implementations, created by open_tokenizer
 * (tokenizer.cc).
 */
#ifndef SGC_RUNTIME_TOKENIZER_FACTORIES_H
#define SGC_RUNTIME_TOKENIZER_FACTORIES_H

#include "runtime/src/tokenizer/config.h"
#include "runtime/src/tokenizer/tokenizer.h"

#include <nlohmann/json.hpp>

namespace sgc::runtime {

/// tokenizer.model through libsentencepiece (sentencepiece_tokenizer.cc).
status open_sentencepiece(const std::string &path,
                          const tokenizer_config &config,
                          std::shared_ptr<const tokenizer> *out);
/// A serialized ModelProto (|label| names its file in errors).
status open_sentencepiece_model(const std::string &bytes,
                                const std::string &label,
                                const tokenizer_config &config,
                                std::shared_ptr<const tokenizer> *out);
/// The HF tokenizers format (json_tokenizer.cc).
status open_tokenizer_json(const std::string &path,
                           const tokenizer_config &config,
                           std::shared_ptr<const tokenizer> *out);
/// A tokenizer.json document made in memory (a GGUF's BPE vocabulary);
/// |label| names where it came from in errors.
status open_tokenizer_document(const std::string &label,
                               const nlohmann::json &doc,
                               const tokenizer_config &config,
                               std::shared_ptr<const tokenizer> *out);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_FACTORIES_H
