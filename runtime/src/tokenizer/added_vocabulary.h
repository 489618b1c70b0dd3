/*
 * added_vocabulary.h - added tokens (tokenizer.json's "added_tokens", or a
 * SentencePiece model's control and user-defined pieces with the flags of
 * tokenizer_config.json) and how HF finds them in text: the leftmost
 * longest literal first, tokens with normalized=false in the raw text,
 * then the others in the normalized rest; single_word keeps a match only
 * between non-word characters, lstrip/rstrip swallow the whitespace to the
 * left/right.
 */
#ifndef SGC_RUNTIME_TOKENIZER_ADDED_VOCABULARY_H
#define SGC_RUNTIME_TOKENIZER_ADDED_VOCABULARY_H

#include "runtime/src/tokenizer/config.h"
#include "runtime/src/tokenizer/normalizer.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sgc::runtime {

/// A run of text to tokenize (id -1; already normalized) or an added token.
struct segment {
  std::string text;
  int32_t id = -1;
};

class added_vocabulary {
public:
  /// Adds or replaces the token of |t.id| (empty contents are ignored, as
  /// HF does). |n| normalizes the content of normalized tokens.
  void add(const added_token &t, const normalizer &n);

  /// Splits |text| into added tokens and normalized runs.
  std::vector<segment> split(std::string_view text, const normalizer &n) const;

  /// The token of |id|, or nullptr.
  const added_token *find(int32_t id) const;
  /// The string HF's decoder sees for |id| (the normalized content of a
  /// normalized token), or nullptr when |id| is not an added token.
  const std::string *decode_form(int32_t id) const;
  /// Whether |form| is the content of a special token (HF's decode skips
  /// tokens by this test on the string it would decode).
  bool is_special_content(const std::string &form) const;
  const std::unordered_map<int32_t, added_token> &tokens() const {
    return tokens_;
  }

private:
  struct match {
    size_t start, stop;
    int32_t id;
  };
  void split_pass(std::string_view text, bool normalized,
                  std::vector<segment> *out) const;

  std::unordered_map<int32_t, added_token> tokens_;
  /// What is searched for: the content, normalized for normalized tokens.
  std::unordered_map<int32_t, std::string> pattern_;
  /// HF keeps a content once marked special in its set.
  std::unordered_set<std::string> special_contents_;
  /// [normalized][first byte of the pattern]: ids, longest pattern first.
  std::vector<int32_t> by_first_[2][256];
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_ADDED_VOCABULARY_H
