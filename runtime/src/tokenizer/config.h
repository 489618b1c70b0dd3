/*
 * config.h - what the runtime reads from tokenizer_config.json and
 * special_tokens_map.json beside a tokenizer file: whether to add BOS/EOS,
 * the names of the bos/eos/pad/unk tokens, and the added tokens
 * (added_tokens_decoder), which a SentencePiece tokenizer needs to find
 * special-token literals in text as HF does.
 */
#ifndef SGC_RUNTIME_TOKENIZER_CONFIG_H
#define SGC_RUNTIME_TOKENIZER_CONFIG_H

#include "lib/support/status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sgc::runtime {

/// One added token: tokenizer.json's added_tokens[i] or
/// tokenizer_config.json's added_tokens_decoder entry.
struct added_token {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool single_word = false;
};

struct tokenizer_config {
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  /// Token contents; empty when not given.
  std::string bos_token, eos_token, pad_token, unk_token;
  std::vector<added_token> added_tokens;
};

/// Reads tokenizer_config.json, then special_tokens_map.json (which fills
/// names the first left unset) from |dir|; absent files are fine.
status read_tokenizer_config(const std::string &dir, tokenizer_config *out);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_CONFIG_H
