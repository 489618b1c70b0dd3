//===- GgufVocabulary.h - an HF tokenizer as GGUF metadata ------*- C++ -*-===//
//
// Part of sgc. The tokenizer.* keys llama.cpp's converter writes for a
// Gemma 3 checkpoint folder (tokenizer.model and its companions) and a
// Gemma 4 one (tokenizer.json and its companions), so that
// llama.cpp and sgc-run tokenize a file sgc quantize wrote as they do the
// converter's.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_QUANTIZE_GGUFVOCABULARY_H
#define SGC_COMPILER_QUANTIZE_GGUFVOCABULARY_H

#include "lib/gguf/writer.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

#include <nlohmann/json.hpp>

namespace mlir::sgc {

/// Writes into `out` the vocabulary of the SentencePiece model `dir`/
/// tokenizer.model as the converter does (tokenizer.ggml.model "llama",
/// pieces, scores, types; added_tokens.json and tokenizer_config.json's
/// added_tokens_decoder applied; padded to the config's vocab_size when it
/// states one), the special token ids and add_bos/add_eos flags (from
/// tokenizer_config.json with tokenizer.json's added tokens, else
/// config.json's *_token_id) and the chat template. `config` is the parsed
/// config.json. Returns the token count: the embedding rows the file
/// keeps. Errors name the file.
FailureOr<int64_t> writeGemma3Vocabulary(MLIRContext *ctx, llvm::StringRef dir,
                                         const nlohmann::json &config,
                                         ::sgc::gguf::writer &out);

/// Writes into `out` the BPE vocabulary of `dir`/tokenizer.json as the
/// converter's Gemma4Model writes it (tokenizer.ggml.model "gemma4"; each
/// piece of the model's vocabulary, then the added tokens past it, score
/// -1000; <0xNN> pieces BYTE, the tokenizer's special tokens CONTROL,
/// Gemma 4's visible markers USER_DEFINED, the rest NORMAL), its merges,
/// the special ids, add-flags and chat template, add_bos_token true.
/// Returns the token count. Errors name the file.
FailureOr<int64_t> writeGemma4Vocabulary(MLIRContext *ctx, llvm::StringRef dir,
                                         const nlohmann::json &config,
                                         ::sgc::gguf::writer &out);

/// A placeholder vocabulary of `size` pieces for files run from token ids
/// (--dummy-weights): SentencePiece ("llama") with Gemma's <pad> <eos> <bos>
/// <unk> at 0..3, the 256 byte pieces llama.cpp's loader looks for, then
/// "p<id>"; add_bos. Returns `size`.
int64_t writePlaceholderVocabulary(int64_t size, ::sgc::gguf::writer &out);

} // namespace mlir::sgc

#endif // SGC_COMPILER_QUANTIZE_GGUFVOCABULARY_H
