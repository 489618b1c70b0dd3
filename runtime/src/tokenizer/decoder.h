/*
 * decoder.h - tokenizer.json's "decoder": a Sequence of Replace (literal
 * pattern), ByteFallback (runs of <0xNN> pieces become their UTF-8 text,
 * or one U+FFFD per byte when the run is not valid UTF-8), Fuse and Strip,
 * each applied to the list of token strings in turn, then joined. null
 * means HF's default: the strings joined with spaces. Others are refused.
 */
#ifndef SGC_RUNTIME_TOKENIZER_DECODER_H
#define SGC_RUNTIME_TOKENIZER_DECODER_H

#include "runtime/src/tokenizer/json_cursor.h"

#include <string>
#include <vector>

namespace sgc::runtime {

class decoder {
public:
  static status parse(const json_cursor &c, decoder *out);
  /// Gemma's: Replace "\u2581" -> " ", ByteFallback, Fuse.
  static decoder gemma();

  std::string apply(std::vector<std::string> tokens) const;
  /// Only per-token steps and joins (Replace, ByteFallback, Fuse): the text
  /// of a sequence is the texts of its parts, cut between non-byte tokens.
  bool concatenates() const;

private:
  struct step {
    enum kind_t { replace, byte_fallback, fuse, strip } kind;
    std::string pattern, content; ///< replace; strip: content (one char)
    size_t start = 0, stop = 0;   ///< strip
  };
  static status parse_into(const json_cursor &c, std::vector<step> *steps);

  bool none_ = true;
  std::vector<step> steps_;
};

/// The byte of a "<0xNN>" piece as HF's ByteFallback reads it, or -1.
int byte_piece_value(const std::string &piece);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_DECODER_H
