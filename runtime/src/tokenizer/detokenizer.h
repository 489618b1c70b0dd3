/*
 * detokenizer.h - streaming decode: one token in, the text it completes out.
 *
 * The text of a sequence is defined as the tokenizer's whole decode of every
 * token pushed. A token's text is held back while the sequence ends in
 * byte-fallback pieces (they may be the first bytes of a UTF-8 character,
 * and HF's ByteFallback turns a whole run into U+FFFD when it is not valid),
 * so whatever is emitted is a prefix of every later whole decode.
 */
#ifndef SGC_RUNTIME_TOKENIZER_DETOKENIZER_H
#define SGC_RUNTIME_TOKENIZER_DETOKENIZER_H

#include "runtime/src/tokenizer/tokenizer.h"

namespace sgc::runtime {

class detokenizer {
public:
  detokenizer(std::shared_ptr<const tokenizer> t, bool skip_special)
      : tok_(std::move(t)), skip_special_(skip_special) {}

  /// Appends |token|; |*out| receives the newly completed text.
  status push(int32_t token, std::string *out);
  /// The text still held back; then resets.
  status finish(std::string *out);
  void reset();

private:
  status emit_up_to(size_t end, std::string *out);

  std::shared_ptr<const tokenizer> tok_;
  bool skip_special_;
  std::vector<int32_t> ids_;
  /// Bytes of decode(ids_) already handed out, and the tokens they cover.
  size_t emitted_ = 0;
  size_t decoded_end_ = 0;
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_DETOKENIZER_H
