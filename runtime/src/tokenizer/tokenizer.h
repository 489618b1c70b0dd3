/*
 * tokenizer.h - the runtime's tokenizer interface: text <-> token ids, as
 * Hugging Face's tokenizers do for the checkpoint's own files. Two
 * implementations: SentencePiece (tokenizer.model, through libsentencepiece)
 * and the HF tokenizers format (tokenizer.json, our own code).
 */
#ifndef SGC_RUNTIME_TOKENIZER_TOKENIZER_H
#define SGC_RUNTIME_TOKENIZER_TOKENIZER_H

#include "lib/support/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sgc::runtime {

class tokenizer {
public:
  virtual ~tokenizer() = default;

  /// "sentencepiece" or "tokenizer.json".
  virtual const char *kind() const = 0;
  /// Max id + 1.
  virtual int32_t vocab_size() const = 0;
  /// -1 if absent.
  virtual int32_t token_id(std::string_view piece) const = 0;
  /// nullptr if out of range.
  virtual const std::string *piece(int32_t id) const = 0;
  virtual bool is_special(int32_t id) const = 0;
  /// A byte-fallback piece <0xNN>: its text may be part of a UTF-8
  /// character spread over several tokens.
  virtual bool is_byte_piece(int32_t id) const = 0;

  /// True when decode(a + b) == decode(a) + decode(b) whenever |a| ends in
  /// a token that is neither a byte piece nor skipped (Gemma's decoder:
  /// Replace, ByteFallback, Fuse); lets the detokenizer forget what it has
  /// handed out. False for decoders that look at the whole text (Strip).
  virtual bool decode_concatenates() const { return false; }

  /// |text| must be valid UTF-8 (checked by the caller).
  virtual status encode(std::string_view text, bool add_special,
                        std::vector<int32_t> *ids) const = 0;
  /// Ids must be in range (checked by the caller).
  virtual status decode(const std::vector<int32_t> &ids, bool skip_special,
                        std::string *text) const = 0;

  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }
  int32_t pad_id() const { return pad_id_; }

protected:
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  int32_t pad_id_ = -1;
};

/// Opens a tokenizer.json, a tokenizer.model or a directory holding one
/// (tokenizer.json preferred), with tokenizer_config.json and
/// special_tokens_map.json beside it when present.
status open_tokenizer(const std::string &path,
                      std::shared_ptr<const tokenizer> *out);

/// Checks |text| is valid UTF-8 and encodes it.
status encode_checked(const tokenizer &t, std::string_view text,
                      bool add_special, std::vector<int32_t> *ids);
/// Checks every id is in range and decodes.
status decode_checked(const tokenizer &t, const std::vector<int32_t> &ids,
                      bool skip_special, std::string *text);

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_TOKENIZER_H
