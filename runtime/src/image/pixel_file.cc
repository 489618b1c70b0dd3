/*
 * pixel_file.cc - sgc_image_load_tensors: a preprocessed image read back
 * from safetensors (a golden's pixel tensors, sgc-image's output), checked
 * against the shapes the family's options give, so that the tower gets the
 * same kind of image as from sgc_image_load.
 */
#include <sgc/runtime.h>

#include "lib/safetensors/safetensors.h"
#include "runtime/src/api_status.h"
#include "runtime/src/image/image.h"
#include "runtime/src/image/image_handle.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using sgc::runtime::status_from_exception;
using sgc::runtime::status_to_c;
namespace img = sgc::runtime::image;
namespace st = sgc::safetensors;

namespace {

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The tensor |name| of |f| with |type| and |shape|, copied into |out|.
template <typename T>
sgc::status read_tensor(const st::file &f, const char *name, sgc::dtype type,
                        const std::vector<int64_t> &shape,
                        std::vector<T> *out) {
  const st::tensor_info *t = f.find(name);
  const std::string where = f.path() + ": tensor '" + name + "'";
  if (!t)
    return sgc::bad_input_error(f.path() + ": no tensor '" + name + "'");
  if (t->type != type || t->shape != shape)
    return sgc::bad_input_error(
        where + " is " + sgc::dtype_name(t->type) + " " + shape_text(t->shape) +
        ", expected " + sgc::dtype_name(type) + " " + shape_text(shape));
  out->resize(t->bytes() / sizeof(T));
  if (t->bytes())
    std::memcpy(out->data(), f.data(*t), t->bytes());
  return {};
}

sgc::status finite(const std::string &where, const std::vector<float> &v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      return sgc::bad_input_error(where + ": value " + std::to_string(i) +
                                  " is not finite");
  return {};
}

/// Gemma 4: positions are (x, y) in the grid for the valid patches, then
/// (-1, -1); returns the valid count.
sgc::status check_positions(const std::string &where,
                            const std::vector<int64_t> &pos, int64_t *valid) {
  const int64_t n = int64_t(pos.size() / 2);
  int64_t v = 0;
  while (v < n && pos[size_t(2 * v)] >= 0 && pos[size_t(2 * v + 1)] >= 0)
    ++v;
  for (int64_t i = v; i < n; ++i)
    if (pos[size_t(2 * i)] != -1 || pos[size_t(2 * i + 1)] != -1)
      return sgc::bad_input_error(
          where + ": patch " + std::to_string(i) + " is (" +
          std::to_string(pos[size_t(2 * i)]) + ", " +
          std::to_string(pos[size_t(2 * i + 1)]) +
          ") after the padding began at patch " + std::to_string(v) +
          " (valid patches first, then (-1, -1))");
  *valid = v;
  return {};
}

sgc::status load(const std::string &path, const sgc_image_options_t &o,
                 sgc_image_t *out) {
  std::unique_ptr<st::file> f;
  if (sgc::status s = st::file::open(path, &f); !s.ok())
    return s;
  out->family = o.family;
  if (o.family == SGC_IMAGE_FAMILY_GEMMA3) {
    const int64_t s = o.image_size;
    if (sgc::status r = read_tensor(*f, "pixel_values", sgc::dtype::f32,
                                    {1, 3, s, s}, &out->pixels);
        !r.ok())
      return r;
    out->tensors.push_back(
        {"pixel_values", SGC_DTYPE_F32, {1, 3, s, s}, out->pixels.data()});
    return finite(path + ": tensor 'pixel_values'", out->pixels);
  }
  const int64_t k = o.pooling_kernel_size;
  const int64_t patches = int64_t(o.max_soft_tokens) * k * k;
  const int64_t values = int64_t(o.patch_size) * o.patch_size * 3;
  if (sgc::status r = read_tensor(*f, "pixel_values", sgc::dtype::f32,
                                  {1, patches, values}, &out->pixels);
      !r.ok())
    return r;
  if (sgc::status r = finite(path + ": tensor 'pixel_values'", out->pixels);
      !r.ok())
    return r;
  if (sgc::status r = read_tensor(*f, "image_position_ids", sgc::dtype::i64,
                                  {1, patches, 2}, &out->positions);
      !r.ok())
    return r;
  int64_t valid = 0;
  const std::string where = path + ": tensor 'image_position_ids'";
  if (sgc::status r = check_positions(where, out->positions, &valid); !r.ok())
    return r;
  if (valid == 0 || valid % (k * k) != 0)
    return sgc::bad_input_error(
        where + ": " + std::to_string(valid) +
        " valid patches, not a positive multiple of the pooling kernel's " +
        std::to_string(k * k));
  out->soft_tokens = valid / (k * k);
  for (const char *name : {"num_soft_tokens", "num_soft_tokens_per_image"}) {
    if (!f->find(name))
      continue;
    std::vector<int64_t> count;
    if (sgc::status r = read_tensor(*f, name, sgc::dtype::i64, {1}, &count);
        !r.ok())
      return r;
    if (count[0] != out->soft_tokens)
      return sgc::bad_input_error(
          path + ": tensor '" + name + "' says " + std::to_string(count[0]) +
          " soft tokens, but image_position_ids has " + std::to_string(valid) +
          " valid patches (" + std::to_string(out->soft_tokens) + " soft tokens)");
  }
  out->soft_tokens_tensor[0] = out->soft_tokens;
  out->tensors.push_back(
      {"pixel_values", SGC_DTYPE_F32, {1, patches, values}, out->pixels.data()});
  out->tensors.push_back({"image_position_ids",
                          SGC_DTYPE_I64,
                          {1, patches, 2},
                          out->positions.data()});
  out->tensors.push_back({"num_soft_tokens_per_image",
                          SGC_DTYPE_I64,
                          {1},
                          out->soft_tokens_tensor});
  return {};
}

} // namespace

extern "C" sgc_status_t *
sgc_image_load_tensors(const char *path, const sgc_image_options_t *options,
                       sgc_image_t **out_image) {
  try {
    if (!path || !options || !out_image)
      return status_to_c(
          sgc::usage_error("path, options and out_image must not be NULL"));
    if (options->family == SGC_IMAGE_FAMILY_GEMMA3) {
      if (options->image_size < 1 || options->image_size > 8192)
        return status_to_c(
            sgc::usage_error("image size must be in 1..8192, got " +
                             std::to_string(options->image_size)));
    } else if (options->family == SGC_IMAGE_FAMILY_GEMMA4) {
      img::gemma4_params p{options->patch_size, options->pooling_kernel_size,
                           options->max_soft_tokens};
      if (sgc::status s = img::check_gemma4_params(p); !s.ok())
        return status_to_c(std::move(s));
    } else {
      return status_to_c(sgc::usage_error(
          "unknown image family " + std::to_string(int(options->family))));
    }
    auto image = std::make_unique<sgc_image_t>();
    if (sgc::status s = load(path, *options, image.get()); !s.ok())
      return status_to_c(std::move(s));
    *out_image = image.release();
    return nullptr;
  } catch (...) {
    return status_from_exception();
  }
}
