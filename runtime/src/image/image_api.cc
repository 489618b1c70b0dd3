/*
 * image_api.cc - the image part of the C API (sgc/runtime.h) over
 * runtime/src/image. Nothing throws across the boundary.
 */
#include <sgc/runtime.h>

#include "runtime/src/api_status.h"
#include "runtime/src/image/image.h"
#include "runtime/src/image/image_handle.h"

#include <memory>
#include <string>
#include <vector>

using sgc::runtime::status_from_exception;
using sgc::runtime::status_to_c;
namespace img = sgc::runtime::image;

extern "C" {

void sgc_image_options_default(sgc_image_family_t family,
                               sgc_image_options_t *out) {
  if (!out)
    return;
  *out = sgc_image_options_t{};
  out->family = family;
  out->image_size = 896;
  out->patch_size = 16;
  out->pooling_kernel_size = 3;
  out->max_soft_tokens = 280;
}

} // extern "C"

namespace {

/// Bad options: SGC_STATUS_USAGE (checked before anything is read).
sgc::status check_options(const sgc_image_options_t &o) {
  if (o.family != SGC_IMAGE_FAMILY_GEMMA3 && o.family != SGC_IMAGE_FAMILY_GEMMA4)
    return sgc::usage_error("unknown image family " +
                            std::to_string(int(o.family)));
  if (o.family == SGC_IMAGE_FAMILY_GEMMA3 &&
      (o.image_size < 1 || o.image_size > 8192))
    return sgc::usage_error("image size must be in 1..8192, got " +
                            std::to_string(o.image_size));
  if (o.family == SGC_IMAGE_FAMILY_GEMMA4)
    return img::check_gemma4_params(
        {o.patch_size, o.pooling_kernel_size, o.max_soft_tokens});
  return {};
}

/// The family's preprocessing of a decoded image; |label| names it.
sgc::status preprocess(img::rgb_image rgb, const sgc_image_options_t &o,
                       const std::string &label,
                       std::unique_ptr<sgc_image_t> *result) {
  auto out = std::make_unique<sgc_image_t>();
  out->family = o.family;
  out->source_width = rgb.width;
  out->source_height = rgb.height;
  if (o.family == SGC_IMAGE_FAMILY_GEMMA3) {
    const int32_t s = o.image_size;
    img::gemma3_pixels(rgb, s, &out->pixels);
    out->width = out->height = s;
    out->tensors.push_back(
        {"pixel_values", SGC_DTYPE_F32, {1, 3, s, s}, out->pixels.data()});
  } else {
    img::gemma4_output g;
    const img::gemma4_params g4{o.patch_size, o.pooling_kernel_size,
                                o.max_soft_tokens};
    if (sgc::status st = img::gemma4_pixels(rgb, g4, label, &g); !st.ok())
      return st;
    out->width = g.width;
    out->height = g.height;
    out->soft_tokens = g.num_soft_tokens;
    out->soft_tokens_tensor[0] = g.num_soft_tokens;
    out->pixels = std::move(g.pixel_values);
    out->positions = std::move(g.position_ids);
    out->tensors.push_back({"pixel_values",
                            SGC_DTYPE_F32,
                            {1, g.max_patches, g.patch_values},
                            out->pixels.data()});
    out->tensors.push_back({"image_position_ids",
                            SGC_DTYPE_I64,
                            {1, g.max_patches, 2},
                            out->positions.data()});
    out->tensors.push_back({"num_soft_tokens_per_image",
                            SGC_DTYPE_I64,
                            {1},
                            out->soft_tokens_tensor});
  }
  *result = std::move(out);
  return {};
}

} // namespace

extern "C" {

sgc_status_t *sgc_image_load(const char *path,
                             const sgc_image_options_t *options,
                             sgc_image_t **out_image) {
  try {
    if (!path || !options || !out_image)
      return status_to_c(
          sgc::usage_error("path, options and out_image must not be NULL"));
    if (sgc::status st = check_options(*options); !st.ok())
      return status_to_c(std::move(st));
    img::rgb_image rgb;
    if (sgc::status st = img::decode_image_file(path, &rgb); !st.ok())
      return status_to_c(std::move(st));
    std::unique_ptr<sgc_image_t> out;
    if (sgc::status st = preprocess(std::move(rgb), *options, path, &out);
        !st.ok())
      return status_to_c(std::move(st));
    *out_image = out.release();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

sgc_status_t *sgc_image_load_memory(const void *data, size_t size,
                                    const char *label, uint64_t max_pixels,
                                    const sgc_image_options_t *options,
                                    sgc_image_t **out_image) {
  try {
    if ((!data && size) || !label || !options || !out_image)
      return status_to_c(sgc::usage_error(
          "data, label, options and out_image must not be NULL"));
    if (sgc::status st = check_options(*options); !st.ok())
      return status_to_c(std::move(st));
    img::rgb_image rgb;
    if (sgc::status st = img::decode_image(
            static_cast<const uint8_t *>(data), size, label, &rgb,
            max_pixels ? max_pixels : img::max_pixels);
        !st.ok())
      return status_to_c(std::move(st));
    std::unique_ptr<sgc_image_t> out;
    if (sgc::status st = preprocess(std::move(rgb), *options, label, &out);
        !st.ok())
      return status_to_c(std::move(st));
    *out_image = out.release();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}

void sgc_image_release(sgc_image_t *image) { delete image; }

void sgc_image_size(const sgc_image_t *image, int32_t *out_source_width,
                    int32_t *out_source_height, int32_t *out_width,
                    int32_t *out_height) {
  if (!image)
    return;
  if (out_source_width)
    *out_source_width = image->source_width;
  if (out_source_height)
    *out_source_height = image->source_height;
  if (out_width)
    *out_width = image->width;
  if (out_height)
    *out_height = image->height;
}

int64_t sgc_image_soft_token_count(const sgc_image_t *image) {
  return image ? image->soft_tokens : 0;
}

size_t sgc_image_tensor_count(const sgc_image_t *image) {
  return image ? image->tensors.size() : 0;
}

int sgc_image_tensor(const sgc_image_t *image, size_t index,
                     sgc_tensor_view_t *out_view) {
  if (!image || !out_view || index >= image->tensors.size())
    return 0;
  const sgc_image_t::tensor &t = image->tensors[index];
  out_view->name = t.name;
  out_view->dtype = t.dtype;
  out_view->rank = uint32_t(t.shape.size());
  out_view->shape = t.shape.data();
  out_view->data = t.data;
  return 1;
}

} // extern "C"
