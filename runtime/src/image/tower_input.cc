/*
 * tower_input.cc - see tower_input.h.
 */
#include "runtime/src/image/tower_input.h"

#include <string>

namespace sgc::runtime::image {

namespace {

std::string shape_text(int64_t patches, int64_t values) {
  return std::to_string(patches) + " patches of " + std::to_string(values) +
         " values";
}

/// SigLIP's patches of a channels-first square image.
status gemma3_input(const sgc_image_t &img, const sgc_abi_image_t &facts,
                    int64_t patches, int64_t values, tower_input *out) {
  const int64_t side = facts.image_size, p = facts.patch_size;
  const int64_t grid = p > 0 ? side / p : 0;
  if (side < 1 || grid * p != side || grid * grid != patches ||
      3 * p * p != values)
    return internal_error("the model's image record (" +
                          std::to_string(side) + " px, patch " +
                          std::to_string(p) + ") does not give its tower's " +
                          shape_text(patches, values));
  if (img.pixels.size() != static_cast<size_t>(3 * side * side))
    return usage_error("the image has " + std::to_string(img.pixels.size()) +
                       " pixel values; this model's tower takes 3 x " +
                       std::to_string(side) + " x " + std::to_string(side));
  out->patches.resize(static_cast<size_t>(patches * values));
  out->positions.resize(static_cast<size_t>(patches * 2));
  for (int64_t r = 0; r < grid; ++r)
    for (int64_t c = 0; c < grid; ++c) {
      const int64_t patch = r * grid + c;
      float *dst = out->patches.data() + patch * values;
      for (int64_t ch = 0; ch < 3; ++ch)
        for (int64_t ky = 0; ky < p; ++ky)
          for (int64_t kx = 0; kx < p; ++kx)
            *dst++ = img.pixels[static_cast<size_t>(
                (ch * side + r * p + ky) * side + c * p + kx)];
      out->positions[static_cast<size_t>(2 * patch)] = static_cast<int32_t>(c);
      out->positions[static_cast<size_t>(2 * patch + 1)] =
          static_cast<int32_t>(r);
    }
  out->soft_tokens = facts.soft_tokens;
  return status();
}

/// Gemma 4's processor output is already the tower's layout.
status gemma4_input(const sgc_image_t &img, const sgc_abi_image_t &facts,
                    int64_t patches, int64_t values, tower_input *out) {
  const size_t have = img.pixels.size();
  const int64_t p = facts.patch_size;
  if (have != static_cast<size_t>(patches * values) ||
      img.positions.size() != static_cast<size_t>(patches * 2))
    return usage_error(
        "the image has " +
        shape_text(static_cast<int64_t>(img.positions.size() / 2),
                   img.positions.empty()
                       ? 0
                       : static_cast<int64_t>(have / (img.positions.size() / 2))) +
        "; this model's tower takes " + shape_text(patches, values) +
        " (patch " + std::to_string(p) + ", " +
        std::to_string(facts.soft_tokens) +
        " soft tokens: preprocess with that budget)");
  if (img.soft_tokens < 1 || img.soft_tokens > facts.soft_tokens)
    return usage_error("the image has " + std::to_string(img.soft_tokens) +
                       " soft tokens; this model's tower makes at most " +
                       std::to_string(facts.soft_tokens));
  out->patches = img.pixels;
  out->positions.resize(img.positions.size());
  for (size_t i = 0; i < img.positions.size(); ++i) {
    const int64_t v = img.positions[i];
    if (v < -1 || v > INT32_MAX)
      return usage_error("patch position " + std::to_string(v) + " (value " +
                         std::to_string(i) + ") is out of range");
    out->positions[i] = static_cast<int32_t>(v);
  }
  out->soft_tokens = img.soft_tokens;
  return status();
}

} // namespace

status make_tower_input(const sgc_image_t &img, const char *family,
                        const sgc_abi_image_t &facts, int64_t patches,
                        int64_t values, tower_input *out) {
  const std::string fam = family ? family : "";
  const bool gemma4 = img.family == SGC_IMAGE_FAMILY_GEMMA4;
  if (fam != (gemma4 ? "gemma4" : "gemma3"))
    return usage_error(std::string("the image was preprocessed for ") +
                       (gemma4 ? "gemma4" : "gemma3") + ", the model is " +
                       (fam.empty() ? "of no known family" : fam));
  return gemma4 ? gemma4_input(img, facts, patches, values, out)
                : gemma3_input(img, facts, patches, values, out);
}

} // namespace sgc::runtime::image
