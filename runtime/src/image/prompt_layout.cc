/*
 * prompt_layout.cc - placeholder expansion, soft-token slots, image blocks
 * and block-preserving prefill chunks (prompt_layout.h).
 */
#include "runtime/src/image/prompt_layout.h"

#include <algorithm>

namespace sgc::runtime::image {
namespace {

std::string plural(int64_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

status check_tokens(const image_tokens &t) {
  if (t.image < 0 || t.boi < 0 || t.eoi < 0)
    return usage_error("the model's image, BOI and EOI token ids must be "
                       "known (got " +
                       std::to_string(t.image) + ", " + std::to_string(t.boi) +
                       ", " + std::to_string(t.eoi) + ")");
  if (t.image == t.boi || t.image == t.eoi || t.boi == t.eoi)
    return usage_error("the image, BOI and EOI token ids must differ (got " +
                       std::to_string(t.image) + ", " + std::to_string(t.boi) +
                       ", " + std::to_string(t.eoi) + ")");
  return {};
}

void push_row(prompt_layout *out, int32_t id, int64_t slot, int32_t block) {
  out->ids.push_back(id);
  out->soft_slot.push_back(slot);
  out->block.push_back(block);
}

} // namespace

status layout_prompt(const std::vector<int32_t> &ids, const image_tokens &t,
                     const std::vector<int64_t> &soft_tokens,
                     prompt_layout *out) {
  if (status st = check_tokens(t); !st.ok())
    return st;
  for (size_t i = 0; i < soft_tokens.size(); ++i)
    if (soft_tokens[i] < 1)
      return usage_error("image " + std::to_string(i) + " has " +
                         std::to_string(soft_tokens[i]) +
                         " soft tokens; at least 1 is needed");
  const int64_t bois = std::count(ids.begin(), ids.end(), t.boi);
  if (bois != int64_t(soft_tokens.size()))
    return usage_error(
        "the prompt has " + plural(bois, "image placeholder", "image placeholders") +
        " (BOI id " + std::to_string(t.boi) + ") but " +
        plural(int64_t(soft_tokens.size()), "image was", "images were") +
        " given");

  prompt_layout l;
  const size_t n = ids.size();
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] == t.image)
      return usage_error("prompt token " + std::to_string(i) +
                         ": image token " + std::to_string(t.image) +
                         " outside an image block (each block follows a BOI, "
                         "id " +
                         std::to_string(t.boi) + ")");
    if (ids[i] != t.boi) {
      push_row(&l, ids[i], -1, -1);
      continue;
    }
    const size_t image = l.blocks.size();
    const int64_t want = soft_tokens[image];
    size_t run = 0;
    while (i + 1 + run < n && ids[i + 1 + run] == t.image)
      ++run;
    if (run != 0 && int64_t(run) != want)
      return usage_error(
          "prompt token " + std::to_string(i + 1) + ": the block of image " +
          std::to_string(image) + " has " +
          plural(int64_t(run), "image token", "image tokens") +
          " but the image has " +
          plural(want, "soft token", "soft tokens"));
    if (run != 0 && (i + 1 + run >= n || ids[i + 1 + run] != t.eoi))
      return usage_error("prompt token " + std::to_string(i + 1 + run) +
                         ": the block of image " + std::to_string(image) +
                         " (" + plural(want, "image token", "image tokens") +
                         ") is not closed by EOI (id " + std::to_string(t.eoi) +
                         ")");
    push_row(&l, t.boi, -1, -1);
    l.blocks.push_back({int64_t(l.ids.size()), want, l.soft_tokens});
    for (int64_t k = 0; k < want; ++k)
      push_row(&l, t.image, l.soft_tokens + k, int32_t(image));
    l.soft_tokens += want;
    push_row(&l, t.eoi, -1, -1);
    if (run != 0)
      i += run + 1; // the block and its EOI were in the prompt already
  }
  *out = std::move(l);
  return {};
}

int64_t chunk_end_before_block(const int32_t *block, int64_t rows,
                               int64_t start, int64_t max_chunk) {
  int64_t end = std::min(rows, start + std::min(max_chunk, rows));
  if (end >= rows || block[end] < 0 || block[end - 1] != block[end])
    return end;
  const int32_t split = block[end];
  while (end > start && block[end - 1] == split)
    --end;
  return end > start ? end : -1;
}

status chunk_end(const prompt_layout &layout, int64_t start, int64_t max_chunk,
                 int64_t *out_end) {
  const int64_t rows = int64_t(layout.ids.size());
  if (start < 0 || start >= rows)
    return usage_error("prefill chunk start " + std::to_string(start) +
                       " is outside the prompt's " + std::to_string(rows) +
                       " rows");
  if (max_chunk < 1)
    return usage_error("the prefill chunk must be at least 1 token, got " +
                       std::to_string(max_chunk));
  auto describe = [&](int32_t b) {
    const image_block &blk = layout.blocks[size_t(b)];
    return "image block " + std::to_string(b) + " (prompt tokens " +
           std::to_string(blk.start) + ".." +
           std::to_string(blk.start + blk.length - 1) + ", " +
           plural(blk.length, "token", "tokens") + ")";
  };
  if (int32_t b = layout.block[size_t(start)];
      b >= 0 && layout.blocks[size_t(b)].start < start)
    return usage_error("prefill chunk start " + std::to_string(start) +
                       " is inside " + describe(b));
  const int64_t end =
      chunk_end_before_block(layout.block.data(), rows, start, max_chunk);
  if (end < 0)
    return usage_error(
        describe(layout.block[size_t(start + std::min(max_chunk, rows))]) +
        " is longer than the prefill chunk of " +
        plural(max_chunk, "token", "tokens") +
        ": a chunk may not split an image block");
  *out_end = end;
  return {};
}

status expand_prompt_text(const std::string &text, text_rule rule,
                          const image_strings &s,
                          const std::vector<int64_t> &soft_tokens,
                          std::string *out) {
  // transformers 5.24: processing_gemma3.py:49 (full_image_sequence, put in
  // place of each boi_token: the processor's image_token is the BOI),
  // processing_gemma4.py:201 (replace_image_token, put in place of each
  // image_token); processing_utils.py:891-994 (get_text_with_replacements:
  // left-to-right, non-overlapping, one image per placeholder in order).
  const std::string &placeholder = rule == text_rule::gemma3 ? s.boi : s.image;
  if (placeholder.empty() || s.boi.empty() || s.image.empty() || s.eoi.empty())
    return usage_error("the tokenizer has no text for the image, BOI or EOI "
                       "token");
  std::vector<size_t> at;
  for (size_t p = text.find(placeholder); p != std::string::npos;
       p = text.find(placeholder, p + placeholder.size()))
    at.push_back(p);
  if (at.size() != soft_tokens.size())
    return usage_error("the prompt text has " +
                       plural(int64_t(at.size()), "image placeholder",
                              "image placeholders") +
                       " ('" + placeholder + "') but " +
                       plural(int64_t(soft_tokens.size()), "image was",
                              "images were") +
                       " given");
  const char *pad = rule == text_rule::gemma3 ? "\n\n" : "";
  std::string result;
  size_t last = 0;
  for (size_t i = 0; i < at.size(); ++i) {
    if (soft_tokens[i] < 1)
      return usage_error("image " + std::to_string(i) + " has " +
                         std::to_string(soft_tokens[i]) +
                         " soft tokens; at least 1 is needed");
    result.append(text, last, at[i] - last);
    result += pad;
    result += s.boi;
    for (int64_t k = 0; k < soft_tokens[i]; ++k)
      result += s.image;
    result += s.eoi;
    result += pad;
    last = at[i] + placeholder.size();
  }
  result.append(text, last, std::string::npos);
  *out = std::move(result);
  return {};
}

} // namespace sgc::runtime::image
