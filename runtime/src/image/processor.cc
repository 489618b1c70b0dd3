/*
 * processor.cc - Gemma 3's and Gemma 4's image processors as transformers
 * 5.24's default (torchvision-backed) classes compute them: the resize is
 * resize_rgb on uint8, then one float32 operation per value.
 *
 * Gemma3ImageProcessor: bilinear to size x size (aspect ignored), then the
 * fused rescale + normalize (x - 127.5) / 127.5 in float32, NCHW.
 *
 * Gemma4ImageProcessor: bicubic to the largest multiple of
 * pooling_kernel_size * patch_size per side within max_soft_tokens *
 * pooling_kernel_size^2 patches (aspect kept), x * float(1/255), then
 * patches in row-major order, each (py, px, channel) with channel fastest;
 * position_ids (x = column, y = row); padding to max_patches with zero
 * patches at position (-1, -1).
 */
#include "runtime/src/image/image.h"

#include <cmath>

namespace sgc::runtime::image {

void gemma3_pixels(const rgb_image &img, int32_t size,
                   std::vector<float> *out) {
  const rgb_image r = (img.width == size && img.height == size)
                          ? img
                          : resize_rgb(img, size, size, filter::bilinear);
  const size_t plane = size_t(size) * size;
  out->assign(plane * 3, 0.0f);
  for (size_t i = 0; i < plane; ++i)
    for (int c = 0; c < 3; ++c)
      (*out)[c * plane + i] = (float(r.pixels[i * 3 + c]) - 127.5f) / 127.5f;
}

status check_gemma4_params(const gemma4_params &p) {
  const int32_t t = p.max_soft_tokens;
  if (t != 70 && t != 140 && t != 280 && t != 560 && t != 1120)
    return usage_error("max soft tokens must be one of 70, 140, 280, 560, "
                       "1120 (Gemma 4's budgets), got " +
                       std::to_string(t));
  if (p.patch_size < 1 || p.patch_size > 64)
    return usage_error("patch size must be in 1..64, got " +
                       std::to_string(p.patch_size));
  if (p.pooling_kernel_size < 1 || p.pooling_kernel_size > 64)
    return usage_error("pooling kernel size must be in 1..64, got " +
                       std::to_string(p.pooling_kernel_size));
  return {};
}

status gemma4_target_size(int64_t height, int64_t width, const gemma4_params &p,
                          const std::string &label, int32_t *out_height,
                          int32_t *out_width) {
  const int64_t k = p.pooling_kernel_size;
  const int64_t max_patches = int64_t(p.max_soft_tokens) * k * k;
  const int64_t target_px = max_patches * p.patch_size * p.patch_size;
  // Python floats, as get_aspect_ratio_preserving_size computes them.
  const double factor = std::sqrt(double(target_px) / double(height * width));
  const int64_t side = k * p.patch_size;
  int64_t th =
      int64_t(std::floor(factor * double(height) / double(side))) * side;
  int64_t tw =
      int64_t(std::floor(factor * double(width) / double(side))) * side;
  if (th == 0 && tw == 0)
    return bad_input_error(label + ": a " + std::to_string(width) + "x" +
                           std::to_string(height) +
                           " image resizes to 0x0 under Gemma 4's rules");
  const int64_t max_side_length = (max_patches / (k * k)) * side;
  if (th == 0) {
    th = side;
    tw = std::min(int64_t(std::floor(double(width) / double(height))) * side,
                  max_side_length);
  } else if (tw == 0) {
    tw = side;
    th = std::min(int64_t(std::floor(double(height) / double(width))) * side,
                  max_side_length);
  }
  if (th * tw > target_px)
    return bad_input_error(
        label + ": a " + std::to_string(width) + "x" + std::to_string(height) +
        " image resizes to " + std::to_string(tw) + "x" + std::to_string(th) +
        ", more than " + std::to_string(max_patches) + " patches");
  *out_height = int32_t(th);
  *out_width = int32_t(tw);
  return {};
}

status gemma4_pixels(const rgb_image &img, const gemma4_params &p,
                     const std::string &label, gemma4_output *out) {
  int32_t th = 0, tw = 0;
  if (status st = gemma4_target_size(img.height, img.width, p, label, &th, &tw);
      !st.ok())
    return st;
  const rgb_image r = (th == img.height && tw == img.width)
                          ? img
                          : resize_rgb(img, tw, th, filter::bicubic);
  const int64_t ps = p.patch_size, k = p.pooling_kernel_size;
  const int64_t hp = th / ps, wp = tw / ps;
  out->width = tw;
  out->height = th;
  out->max_patches = int64_t(p.max_soft_tokens) * k * k;
  out->patch_values = ps * ps * 3;
  out->num_soft_tokens = hp * wp / (k * k);
  out->pixel_values.assign(size_t(out->max_patches * out->patch_values), 0.0f);
  out->position_ids.assign(size_t(out->max_patches * 2), -1);
  const float rescale = float(1.0 / 255.0);
  for (int64_t py = 0; py < hp; ++py)
    for (int64_t px = 0; px < wp; ++px) {
      const int64_t patch = py * wp + px;
      float *dst = &out->pixel_values[size_t(patch * out->patch_values)];
      for (int64_t y = 0; y < ps; ++y)
        for (int64_t x = 0; x < ps; ++x)
          for (int c = 0; c < 3; ++c)
            *dst++ = float(r.pixels[size_t(
                         ((py * ps + y) * tw + px * ps + x) * 3 + c)]) *
                     rescale;
      out->position_ids[size_t(patch * 2)] = px;
      out->position_ids[size_t(patch * 2 + 1)] = py;
    }
  return {};
}

} // namespace sgc::runtime::image
