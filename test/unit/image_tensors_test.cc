/*
 * image_tensors_test.cc - sgc_image_load_tensors (--pixel-values): the tiny
 * vision goldens' pixel tensors read back as images (the same values, the
 * soft-token count HF's processor gave), equal to sgc_image_load of the
 * committed image.png; files whose tensors do not fit the model refused
 * with the file and the tensor named.
 */
#include <sgc/runtime.h>

#include "lib/safetensors/safetensors.h"
#include "test/unit/test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace st = sgc::safetensors;

std::string example(const std::string &family, const std::string &file) {
  return std::string(SGC_SOURCE_DIR) + "/examples/tiny-" + family +
         "-vision/" + file;
}

/// The tiny models' options (meta.json's processor settings).
sgc_image_options_t tiny_options(sgc_image_family_t family) {
  sgc_image_options_t o;
  sgc_image_options_default(family, &o);
  if (family == SGC_IMAGE_FAMILY_GEMMA3) {
    o.image_size = 56;
  } else {
    o.patch_size = 4;
    o.pooling_kernel_size = 3;
    o.max_soft_tokens = 70;
  }
  return o;
}

struct image_ptr {
  sgc_image_t *p = nullptr;
  ~image_ptr() { sgc_image_release(p); }
};

std::string failure(sgc_status_t *s) {
  std::string m = sgc_status_message(s);
  sgc_status_free(s);
  return m;
}

std::vector<uint8_t> tensor_bytes(const sgc_image_t *img, const char *name) {
  for (size_t i = 0; i < sgc_image_tensor_count(img); ++i) {
    sgc_tensor_view_t v;
    sgc_image_tensor(img, i, &v);
    if (std::strcmp(v.name, name) != 0)
      continue;
    size_t n = sgc_dtype_size(v.dtype);
    for (uint32_t d = 0; d < v.rank; ++d)
      n *= size_t(v.shape[d]);
    const uint8_t *p = static_cast<const uint8_t *>(v.data);
    return std::vector<uint8_t>(p, p + n);
  }
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

std::vector<uint8_t> golden_bytes(const std::string &family,
                                  const char *name) {
  std::unique_ptr<st::file> f;
  sgc::status s = st::file::open(example(family, "golden.safetensors"), &f);
  EXPECT_TRUE(s.ok()) << s.to_string();
  const st::tensor_info *t = f ? f->find(name) : nullptr;
  if (!t)
    return {};
  return std::vector<uint8_t>(f->data(*t), f->data(*t) + t->bytes());
}

TEST(ImageTensors, GoldensReadBackAsTheirImages) {
  for (sgc_image_family_t family :
       {SGC_IMAGE_FAMILY_GEMMA3, SGC_IMAGE_FAMILY_GEMMA4}) {
    const std::string name =
        family == SGC_IMAGE_FAMILY_GEMMA3 ? "gemma3" : "gemma4";
    const sgc_image_options_t o = tiny_options(family);
    image_ptr from_file, from_png;
    ASSERT_EQ(failure(sgc_image_load_tensors(
                  example(name, "golden.safetensors").c_str(), &o,
                  &from_file.p)),
              "")
        << name;
    ASSERT_EQ(failure(sgc_image_load(example(name, "image.png").c_str(), &o,
                                     &from_png.p)),
              "")
        << name;
    EXPECT_EQ(tensor_bytes(from_file.p, "pixel_values"),
              golden_bytes(name, "pixel_values"))
        << name;
    EXPECT_EQ(tensor_bytes(from_file.p, "pixel_values"),
              tensor_bytes(from_png.p, "pixel_values"))
        << name;
    EXPECT_EQ(sgc_image_tensor_count(from_file.p),
              sgc_image_tensor_count(from_png.p))
        << name;
    if (family == SGC_IMAGE_FAMILY_GEMMA4) {
      EXPECT_EQ(sgc_image_soft_token_count(from_file.p), 65); // meta.json
      EXPECT_EQ(tensor_bytes(from_file.p, "image_position_ids"),
                golden_bytes(name, "image_position_ids"));
      EXPECT_EQ(tensor_bytes(from_file.p, "image_position_ids"),
                tensor_bytes(from_png.p, "image_position_ids"));
    } else {
      EXPECT_EQ(sgc_image_soft_token_count(from_file.p), 0);
    }
  }
}

/// A Gemma 4 tensor file for the tiny options with |valid| patches, the
/// positions changed by |edit|, and a soft-token count tensor when
/// |count| >= 0.
std::string gemma4_file(const sgc_test::temp_dir &dir, int64_t valid,
                        int64_t count, void (*edit)(std::vector<int64_t> *)) {
  const int64_t patches = 630, values = 48;
  std::vector<float> pixels(size_t(patches * values), 0.5f);
  std::vector<int64_t> pos(size_t(patches * 2), -1);
  for (int64_t i = 0; i < valid; ++i) {
    pos[size_t(2 * i)] = i % 39;
    pos[size_t(2 * i + 1)] = i / 39;
  }
  if (edit)
    edit(&pos);
  const int64_t pshape[] = {1, patches, values}, qshape[] = {1, patches, 2},
                cshape[] = {1};
  std::vector<sgc_tensor_view_t> views = {
      {"pixel_values", SGC_DTYPE_F32, 3, pshape, pixels.data()},
      {"image_position_ids", SGC_DTYPE_I64, 3, qshape, pos.data()}};
  if (count >= 0)
    views.push_back({"num_soft_tokens", SGC_DTYPE_I64, 1, cshape, &count});
  const std::string path = dir.file("pixels.safetensors");
  EXPECT_EQ(failure(sgc_safetensors_write(path.c_str(), views.data(),
                                          views.size())),
            "");
  return path;
}

TEST(ImageTensors, Refusals) {
  sgc_test::temp_dir dir;
  image_ptr img;
  // Another model's size.
  sgc_image_options_t o3 = tiny_options(SGC_IMAGE_FAMILY_GEMMA3);
  o3.image_size = 64;
  const std::string g3 = example("gemma3", "golden.safetensors");
  EXPECT_EQ(failure(sgc_image_load_tensors(g3.c_str(), &o3, &img.p)),
            g3 + ": tensor 'pixel_values' is F32 [1, 3, 56, 56], expected F32 "
                 "[1, 3, 64, 64]");
  // A Gemma 3 file for a Gemma 4 model.
  const sgc_image_options_t o4 = tiny_options(SGC_IMAGE_FAMILY_GEMMA4);
  EXPECT_EQ(failure(sgc_image_load_tensors(g3.c_str(), &o4, &img.p)),
            g3 + ": tensor 'pixel_values' is F32 [1, 3, 56, 56], expected F32 "
                 "[1, 630, 48]");
  // No pixel_values at all: a checkpoint, not pixels.
  const std::string model = example("gemma3", "model.safetensors");
  EXPECT_EQ(failure(sgc_image_load_tensors(model.c_str(), &o3, &img.p)),
            model + ": no tensor 'pixel_values'");
  // The count disagrees with the positions.
  std::string p = gemma4_file(dir, 585, 64, nullptr);
  EXPECT_EQ(failure(sgc_image_load_tensors(p.c_str(), &o4, &img.p)),
            p + ": tensor 'num_soft_tokens' says 64 soft tokens, but "
                "image_position_ids has 585 valid patches (65 soft tokens)");
  // Valid patches not a multiple of 3 x 3.
  p = gemma4_file(dir, 584, -1, nullptr);
  EXPECT_EQ(failure(sgc_image_load_tensors(p.c_str(), &o4, &img.p)),
            p + ": tensor 'image_position_ids': 584 valid patches, not a "
                "positive multiple of the pooling kernel's 9");
  // A patch after the padding began.
  p = gemma4_file(dir, 585, -1,
                  [](std::vector<int64_t> *pos) { (*pos)[2 * 600] = 3; });
  EXPECT_EQ(failure(sgc_image_load_tensors(p.c_str(), &o4, &img.p)),
            p + ": tensor 'image_position_ids': patch 600 is (3, -1) after the "
                "padding began at patch 585 (valid patches first, then (-1, "
                "-1))");
  // Without the count tensor the positions give it.
  p = gemma4_file(dir, 585, -1, nullptr);
  ASSERT_EQ(failure(sgc_image_load_tensors(p.c_str(), &o4, &img.p)), "");
  EXPECT_EQ(sgc_image_soft_token_count(img.p), 65);
  EXPECT_EQ(img.p != nullptr, true);
  // Not a safetensors file.
  image_ptr none;
  const std::string png = example("gemma3", "image.png");
  EXPECT_NE(failure(sgc_image_load_tensors(png.c_str(), &o3, &none.p))
                .find("image.png"),
            std::string::npos);
  EXPECT_EQ(none.p, nullptr);
}

} // namespace
