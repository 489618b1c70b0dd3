/*
 * stop_strings.h - a generated text cut at the first stop string: text that
 * could still become one is held back until a later piece settles it, so
 * what is handed out is never taken back (sgc_text_stream_t).
 */
#ifndef SGC_RUNTIME_TOKENIZER_STOP_STRINGS_H
#define SGC_RUNTIME_TOKENIZER_STOP_STRINGS_H

#include <string>
#include <vector>

namespace sgc::runtime {

class stop_strings {
public:
  explicit stop_strings(std::vector<std::string> stops)
      : stops_(std::move(stops)) {}

  /// Appends |piece|; |*out| receives the text now settled. True once a
  /// stop string has matched: the text ends before it, and later pieces
  /// are dropped.
  bool push(const std::string &piece, std::string *out);
  /// The text still held back (the sequence ended without a match).
  void finish(std::string *out);
  bool matched() const { return matched_; }

private:
  std::vector<std::string> stops_;
  /// Text not handed out yet: a proper prefix of some stop string.
  std::string pending_;
  bool matched_ = false;
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_STOP_STRINGS_H
