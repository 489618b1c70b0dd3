/*
 * normalizer.h - tokenizer.json's "normalizer": what Gemma's files use.
 * Replace (a literal string pattern), Prepend, and a Sequence of them;
 * null means none. Other types (NFC, Lowercase, Regex patterns, ...) are
 * refused when the file is read, naming the JSON path.
 */
#ifndef SGC_RUNTIME_TOKENIZER_NORMALIZER_H
#define SGC_RUNTIME_TOKENIZER_NORMALIZER_H

#include "runtime/src/tokenizer/json_cursor.h"

#include <string>
#include <string_view>
#include <vector>

namespace sgc::runtime {

class normalizer {
public:
  /// Reads |c| (null, or an object with "type").
  static status parse(const json_cursor &c, normalizer *out);
  /// Replace |from| with |to| everywhere (Gemma: " " -> "\u2581").
  static normalizer replace(std::string from, std::string to);

  bool empty() const { return steps_.empty(); }
  std::string apply(std::string_view text) const;

private:
  struct step {
    enum kind_t { replace, prepend } kind;
    std::string pattern; ///< replace: what is replaced
    std::string content; ///< replace: the replacement; prepend: the prefix
  };
  static status parse_into(const json_cursor &c, std::vector<step> *steps);

  std::vector<step> steps_;
};

/// Replaces every non-overlapping |from| in |text| with |to|, left to
/// right (|from| non-empty). Shared with the Replace decoder.
std::string replace_all(std::string_view text, std::string_view from,
                        std::string_view to);

/// Reads a Replace component's "pattern" ({"String": s}); a Regex pattern
/// is refused.
status parse_string_pattern(const json_cursor &c, std::string *out);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_NORMALIZER_H
