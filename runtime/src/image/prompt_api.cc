/*
 * prompt_api.cc - the prompt-layout part of the C API (sgc/runtime.h) over
 * prompt_layout.h. Nothing throws across the boundary.
 */
#include <sgc/runtime.h>

#include "runtime/src/api_status.h"
#include "runtime/src/image/prompt_layout.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

using sgc::runtime::status_from_exception;
using sgc::runtime::status_to_c;
namespace img = sgc::runtime::image;

struct sgc_prompt_layout_t {
  img::prompt_layout layout;
};

extern "C" {

sgc_status_t *sgc_prompt_layout_create(const int32_t *ids, size_t count,
                                       const sgc_image_tokens_t *tokens,
                                       const int64_t *soft_tokens,
                                       size_t num_images,
                                       sgc_prompt_layout_t **out_layout) {
  try {
    if ((!ids && count) || !tokens || (!soft_tokens && num_images) ||
        !out_layout)
      return status_to_c(sgc::usage_error(
          "ids, tokens, soft_tokens and out_layout must not be NULL"));
    auto out = std::make_unique<sgc_prompt_layout_t>();
    img::image_tokens t{tokens->image_token_id, tokens->boi_token_id,
                        tokens->eoi_token_id};
    if (sgc::status st = img::layout_prompt(
            std::vector<int32_t>(ids, ids + count), t,
            std::vector<int64_t>(soft_tokens, soft_tokens + num_images),
            &out->layout);
        !st.ok())
      return status_to_c(std::move(st));
    *out_layout = out.release();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

void sgc_prompt_layout_release(sgc_prompt_layout_t *layout) { delete layout; }

size_t sgc_prompt_layout_length(const sgc_prompt_layout_t *layout) {
  return layout ? layout->layout.ids.size() : 0;
}

const int32_t *sgc_prompt_layout_ids(const sgc_prompt_layout_t *layout) {
  return layout ? layout->layout.ids.data() : nullptr;
}

const int64_t *sgc_prompt_layout_soft_slots(const sgc_prompt_layout_t *layout) {
  return layout ? layout->layout.soft_slot.data() : nullptr;
}

const int32_t *sgc_prompt_layout_blocks(const sgc_prompt_layout_t *layout) {
  return layout ? layout->layout.block.data() : nullptr;
}

size_t sgc_prompt_layout_num_images(const sgc_prompt_layout_t *layout) {
  return layout ? layout->layout.blocks.size() : 0;
}

int64_t sgc_prompt_layout_soft_tokens(const sgc_prompt_layout_t *layout) {
  return layout ? layout->layout.soft_tokens : 0;
}

sgc_status_t *sgc_prompt_layout_chunk_end(const sgc_prompt_layout_t *layout,
                                          int64_t start, int64_t max_chunk,
                                          int64_t *out_end) {
  try {
    if (!layout || !out_end)
      return status_to_c(
          sgc::usage_error("layout and out_end must not be NULL"));
    return status_to_c(
        img::chunk_end(layout->layout, start, max_chunk, out_end));
  } catch (...) {
    return status_from_exception();
  }
}

sgc_status_t *sgc_prompt_expand_images(sgc_image_family_t family,
                                       const char *text, size_t len,
                                       const char *image, const char *boi,
                                       const char *eoi,
                                       const int64_t *soft_tokens,
                                       size_t num_images, char **out_text,
                                       size_t *out_len) {
  try {
    if ((!text && len) || !image || !boi || !eoi ||
        (!soft_tokens && num_images) || !out_text)
      return status_to_c(sgc::usage_error(
          "text, image, boi, eoi, soft_tokens and out_text must not be NULL"));
    if (family != SGC_IMAGE_FAMILY_GEMMA3 && family != SGC_IMAGE_FAMILY_GEMMA4)
      return status_to_c(sgc::usage_error("unknown image family " +
                                          std::to_string(int(family))));
    std::string expanded;
    if (sgc::status st = img::expand_prompt_text(
            std::string(text ? text : "", len),
            family == SGC_IMAGE_FAMILY_GEMMA3 ? img::text_rule::gemma3
                                              : img::text_rule::gemma4,
            {image, boi, eoi},
            std::vector<int64_t>(soft_tokens, soft_tokens + num_images),
            &expanded);
        !st.ok())
      return status_to_c(std::move(st));
    char *buf = static_cast<char *>(std::malloc(expanded.size() + 1));
    if (!buf)
      throw std::bad_alloc();
    std::memcpy(buf, expanded.c_str(), expanded.size() + 1);
    *out_text = buf;
    if (out_len)
      *out_len = expanded.size();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

} // extern "C"
