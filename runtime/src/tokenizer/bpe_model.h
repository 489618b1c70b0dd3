/*
 * bpe_model.h - tokenizer.json's "model" of type BPE: the vocabulary, the
 * merges with their priority (the earlier a merge, the sooner it applies),
 * byte fallback to <0xNN> pieces, the unknown token (fused or not), and
 * ignore_merges. Merges come as "a b" strings or as [a, b] pairs; both are
 * read. dropout, continuing_subword_prefix and end_of_word_suffix must be
 * none (null, 0 or ""; Gemma's are).
 */
#ifndef SGC_RUNTIME_TOKENIZER_BPE_MODEL_H
#define SGC_RUNTIME_TOKENIZER_BPE_MODEL_H

#include "runtime/src/tokenizer/json_cursor.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sgc::runtime {

class bpe_model {
public:
  /// Reads $.model; every merge's parts and result must be in the
  /// vocabulary (as HF requires).
  static status parse(const json_cursor &c, bpe_model *out);

  /// Appends the ids of one pre-tokenized, normalized piece.
  void encode(std::string_view word, std::vector<int32_t> *ids) const;

  /// id -> piece; ids the vocabulary skips hold "".
  const std::vector<std::string> &pieces() const { return pieces_; }
  const std::unordered_map<std::string, int32_t> &vocab() const {
    return vocab_;
  }

private:
  struct merge {
    uint32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
           static_cast<uint32_t>(b);
  }
  void merge_all(std::vector<int32_t> *symbols) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> pieces_;
  std::unordered_map<uint64_t, merge> merges_;
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  int32_t byte_ids_[256];
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_BPE_MODEL_H
