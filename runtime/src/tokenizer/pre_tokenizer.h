/*
 * pre_tokenizer.h - tokenizer.json's "pre_tokenizer": Split on a literal
 * string (each of HF's five delimiter behaviors, invert false) and a
 * Sequence of them; null means none. Gemma's Split on " " runs after the
 * normalizer has replaced every space, so it changes nothing there, but it
 * is implemented as HF defines it. Other types are refused.
 */
#ifndef SGC_RUNTIME_TOKENIZER_PRE_TOKENIZER_H
#define SGC_RUNTIME_TOKENIZER_PRE_TOKENIZER_H

#include "runtime/src/tokenizer/json_cursor.h"

#include <string>
#include <string_view>
#include <vector>

namespace sgc::runtime {

class pre_tokenizer {
public:
  enum class behavior {
    removed,
    isolated,
    merged_with_previous,
    merged_with_next,
    contiguous
  };

  static status parse(const json_cursor &c, pre_tokenizer *out);
  static pre_tokenizer split(std::string pattern, behavior b);

  /// The pieces of |text| (never empty ones), in order.
  std::vector<std::string> apply(std::string_view text) const;

private:
  struct step {
    std::string pattern;
    behavior how;
  };
  static status parse_into(const json_cursor &c, std::vector<step> *steps);

  std::vector<step> steps_;
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_PRE_TOKENIZER_H
