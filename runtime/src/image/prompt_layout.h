/*
 * prompt_layout.h - where a prompt's images go (issue 12, items 5-6):
 * placeholder expansion, the soft-token slot and image block of every row,
 * and prefill chunk boundaries that never split a block. Pure bookkeeping
 * on token ids and strings; nothing here runs a model. The C API is
 * prompt_api.cc.
 *
 * The rules are Hugging Face transformers 5.24's (gemma-vision.md G3.5,
 * G4.7): an image is BOI + N x image token + EOI in the ids; the image
 * tokens' rows are the rows token_type_ids (Gemma 3) / mm_token_type_ids
 * (Gemma 4) mark 1, and each maximal run of them is one bidirectional block.
 */
#ifndef SGC_RUNTIME_IMAGE_PROMPT_LAYOUT_H
#define SGC_RUNTIME_IMAGE_PROMPT_LAYOUT_H

#include "lib/support/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sgc::runtime::image {

/// A model's image tokens.
struct image_tokens {
  int32_t image = -1; ///< the soft-token placeholder (<image_soft_token>)
  int32_t boi = -1;   ///< begin of image (<start_of_image>)
  int32_t eoi = -1;   ///< end of image (<end_of_image>)
};

/// One image's rows in the laid-out prompt.
struct image_block {
  int64_t start = 0;  ///< the first image-token row (BOI is start - 1)
  int64_t length = 0; ///< its soft tokens
  int64_t first_slot = 0; ///< its first row's soft-token slot
};

struct prompt_layout {
  std::vector<int32_t> ids;
  /// Per row: index into the concatenated soft tokens of all images (in
  /// order), -1 on text rows.
  std::vector<int64_t> soft_slot;
  /// Per row: the image block (0, 1, ...), -1 on text rows.
  std::vector<int32_t> block;
  std::vector<image_block> blocks;
  int64_t soft_tokens = 0; ///< sum over the images
};

/// Lays out |ids| for |soft_tokens|.size() images, image i having
/// soft_tokens[i] soft tokens (each >= 1). Each BOI takes the next image: a
/// BOI followed by exactly N image tokens and an EOI stays as it is (the
/// form of the goldens' input_ids), a BOI followed by no image token
/// becomes BOI + N x image + EOI. Errors (usage) name the token index and
/// both counts: a run of the wrong length, a run not closed by EOI, an image
/// token outside a run after BOI, more or fewer BOIs than images.
status layout_prompt(const std::vector<int32_t> &ids, const image_tokens &t,
                     const std::vector<int64_t> &soft_tokens,
                     prompt_layout *out);

/// The end of the prefill chunk that starts at row |start| and takes at
/// most |max_chunk| rows: min(start + max_chunk, rows), moved back to the
/// start of the image block it would split. An error (usage) when that
/// block starts at or before |start|: it is longer than |max_chunk| (the
/// message names its length and |max_chunk|).
/// The rule under chunk_end, on per-row block ids (-1 on text) of |rows|
/// rows: min(start + max_chunk, rows), moved back to the start of the block
/// it would split; -1 when that block starts at or before |start|.
int64_t chunk_end_before_block(const int32_t *block, int64_t rows,
                               int64_t start, int64_t max_chunk);

status chunk_end(const prompt_layout &layout, int64_t start, int64_t max_chunk,
                 int64_t *out_end);

/// The image strings of a tokenizer (its pieces of the image token ids).
struct image_strings {
  std::string image, boi, eoi;
};

enum class text_rule {
  /// Gemma3Processor: each BOI string becomes
  /// "\n\n" + BOI + N x image + EOI + "\n\n".
  gemma3,
  /// Gemma4Processor: each image string becomes BOI + N x image + EOI.
  gemma4
};

/// The string expansion the family's processor applies to the prompt text
/// before tokenizing, one image per placeholder in order. Errors (usage)
/// when the placeholders and |soft_tokens|.size() differ (naming both).
status expand_prompt_text(const std::string &text, text_rule rule,
                          const image_strings &s,
                          const std::vector<int64_t> &soft_tokens,
                          std::string *out);

} // namespace sgc::runtime::image

#endif // SGC_RUNTIME_IMAGE_PROMPT_LAYOUT_H
