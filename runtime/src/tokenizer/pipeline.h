/*
 * pipeline.h - what both tokenizer kinds share, in HF's order. Encode:
 * added tokens split off (added_vocabulary), the rest normalized and handed
 * to the model (BPE or SentencePiece), then the post-processor's ids
 * around. Decode: each id's string, special ones dropped on request, then
 * the decoder.
 */
#ifndef SGC_RUNTIME_TOKENIZER_PIPELINE_H
#define SGC_RUNTIME_TOKENIZER_PIPELINE_H

#include "runtime/src/tokenizer/added_vocabulary.h"
#include "runtime/src/tokenizer/config.h"
#include "runtime/src/tokenizer/decoder.h"
#include "runtime/src/tokenizer/normalizer.h"
#include "runtime/src/tokenizer/post_processor.h"
#include "runtime/src/tokenizer/tokenizer.h"

#include <unordered_map>

namespace sgc::runtime {

class pipeline_tokenizer : public tokenizer {
public:
  int32_t vocab_size() const override {
    return static_cast<int32_t>(pieces_.size());
  }
  int32_t token_id(std::string_view piece) const override;
  const std::string *piece(int32_t id) const override;
  bool is_special(int32_t id) const override;
  bool is_byte_piece(int32_t id) const override;
  status encode(std::string_view text, bool add_special,
                std::vector<int32_t> *ids) const override;
  status decode(const std::vector<int32_t> &ids, bool skip_special,
                std::string *text) const override;
  bool decode_concatenates() const override {
    return decoder_.concatenates();
  }

protected:
  /// Appends the ids of a normalized run of text without added tokens.
  virtual status encode_run(const std::string &run,
                            std::vector<int32_t> *ids) const = 0;

  /// Sets the model's pieces (id -> piece, "" for ids it skips).
  void set_model_pieces(std::vector<std::string> pieces);
  /// Adds an added token (after set_model_pieces; may extend the ids).
  void add_token(const added_token &t);
  /// After the tokens: bos/eos/pad from |config| (else Gemma's names when
  /// present), the config's names made special tokens as transformers
  /// does, and add_bos_token / add_eos_token over |post|. Fails when
  /// |post| names an id outside the vocabulary.
  status finish_setup(const tokenizer_config &config, post_processor post);

  normalizer normalizer_;
  decoder decoder_;

private:
  int32_t id_of(const std::string &name) const;

  std::vector<std::string> pieces_;
  std::vector<bool> present_;
  std::unordered_map<std::string, int32_t> ids_;
  added_vocabulary added_;
  post_processor post_;
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_PIPELINE_H
