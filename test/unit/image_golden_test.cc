/*
 * image_golden_test.cc - the runtime's image preprocessing against Hugging
 * Face's answers (test/Inputs/images/golden.safetensors, written by
 * tools/gen-golden/gen_images.py from transformers 5.24's default Gemma 3 /
 * Gemma 4 image processors on the committed test images):
 *   - decoding: the RGB pixels the processors resize (load_image, then
 *     their convert_to_rgb), byte for byte;
 *   - pixel_values within 1/255 of HF's per value, through the C API; the
 *     largest difference per family is printed (measured: 0);
 *   - Gemma 4's image_position_ids and num_soft_tokens_per_image exactly.
 * The goldens store each value as the uint8 it is made from (the generator
 * checks the encoding is exact): Gemma 3 (u - 127.5) / 127.5, Gemma 4
 * u * f32(1/255).
 */
#include <sgc/runtime.h>

#include "lib/safetensors/safetensors.h"
#include "runtime/src/image/image.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string images_dir =
    std::string(SGC_SOURCE_DIR) + "/test/Inputs/images/";

const sgc::safetensors::file &golden() {
  static std::unique_ptr<sgc::safetensors::file> f = [] {
    std::unique_ptr<sgc::safetensors::file> g;
    sgc::status st =
        sgc::safetensors::file::open(images_dir + "golden.safetensors", &g);
    if (!st.ok())
      ADD_FAILURE() << st.to_string();
    return g;
  }();
  return *f;
}

struct golden_case {
  std::string id, file, family;
  int32_t a = 0, b = 0; ///< gemma3: size; gemma4: patch, budget
  int64_t stride = 1;
};

std::vector<golden_case> cases() {
  std::vector<golden_case> out;
  auto it = golden().hdr().metadata.find("cases");
  if (it == golden().hdr().metadata.end())
    return out;
  std::istringstream lines(it->second);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream w(line);
    golden_case c;
    w >> c.id >> c.file >> c.family;
    if (c.family == "gemma3")
      w >> c.a >> c.stride;
    else
      w >> c.a >> c.b >> c.stride;
    out.push_back(c);
  }
  return out;
}

const sgc::safetensors::tensor_info &tensor(const std::string &name) {
  const sgc::safetensors::tensor_info *t = golden().find(name);
  static const sgc::safetensors::tensor_info none;
  if (!t)
    ADD_FAILURE() << "golden tensor '" << name << "' missing";
  return t ? *t : none;
}

struct image_deleter {
  void operator()(sgc_image_t *i) const { sgc_image_release(i); }
};

/// Every view of |image| by name.
std::map<std::string, sgc_tensor_view_t> views(const sgc_image_t *image) {
  std::map<std::string, sgc_tensor_view_t> m;
  for (size_t i = 0; i < sgc_image_tensor_count(image); ++i) {
    sgc_tensor_view_t v;
    EXPECT_TRUE(sgc_image_tensor(image, i, &v));
    m[v.name] = v;
  }
  return m;
}

std::vector<int64_t> shape_of(const sgc_tensor_view_t &v) {
  return std::vector<int64_t>(v.shape, v.shape + v.rank);
}

TEST(ImageGolden, VersionsRecorded) {
  const auto &meta = golden().hdr().metadata;
  ASSERT_TRUE(meta.count("transformers"));
  EXPECT_EQ(meta.at("transformers"), "5.24.0");
  EXPECT_NE(meta.at("gemma3_processor").find("torchvision"), std::string::npos);
  EXPECT_NE(meta.at("gemma4_processor").find("torchvision"), std::string::npos);
  EXPECT_GE(cases().size(), 30u);
}

TEST(ImageGolden, DecodedPixelsAreHfs) {
  int checked = 0;
  for (const auto &t : golden().tensors()) {
    if (t.name.rfind("decoded.", 0) != 0)
      continue;
    const std::string file = t.name.substr(8);
    sgc::runtime::image::rgb_image img;
    sgc::status st =
        sgc::runtime::image::decode_image_file(images_dir + file, &img);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(t.shape, (std::vector<int64_t>{img.height, img.width, 3}))
        << file;
    const uint8_t *ref = golden().data(t);
    size_t off = 0;
    for (size_t i = 0; i < img.pixels.size(); ++i)
      off += img.pixels[i] != ref[i];
    EXPECT_EQ(off, 0u) << file << ": " << off << " of " << img.pixels.size()
                       << " bytes differ from load_image + convert_to_rgb";
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(ImageGolden, PixelValuesWithinOneStepOfHfs) {
  std::map<std::string, double> worst;
  for (const golden_case &c : cases()) {
    SCOPED_TRACE(c.id);
    sgc_image_options_t opt;
    const bool g3 = c.family == "gemma3";
    sgc_image_options_default(
        g3 ? SGC_IMAGE_FAMILY_GEMMA3 : SGC_IMAGE_FAMILY_GEMMA4, &opt);
    if (g3) {
      opt.image_size = c.a;
    } else {
      opt.patch_size = c.a;
      opt.max_soft_tokens = c.b;
    }
    sgc_image_t *raw = nullptr;
    sgc_status_t *st =
        sgc_image_load((images_dir + c.file).c_str(), &opt, &raw);
    ASSERT_EQ(st, nullptr) << sgc_status_message(st);
    std::unique_ptr<sgc_image_t, image_deleter> image(raw);
    auto v = views(image.get());
    ASSERT_TRUE(v.count("pixel_values"));
    const sgc_tensor_view_t &pv = v["pixel_values"];
    ASSERT_EQ(pv.dtype, SGC_DTYPE_F32);
    const float *got = static_cast<const float *>(pv.data);
    const auto &ref_t = tensor(c.id + ".pixel_values_u8");
    const uint8_t *ref = golden().data(ref_t);
    std::vector<int64_t> full = shape_of(pv);
    double max_diff = 0;
    if (g3) {
      // HF: [1, 3, S, S]; the golden keeps rows 0, stride, 2 stride, ...
      ASSERT_EQ(full, (std::vector<int64_t>{1, 3, c.a, c.a}));
      const int64_t rows = (c.a + c.stride - 1) / c.stride;
      ASSERT_EQ(ref_t.shape, (std::vector<int64_t>{1, 3, rows, c.a}));
      for (int64_t ch = 0; ch < 3; ++ch)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t x = 0; x < c.a; ++x) {
            const float want =
                (float(ref[(ch * rows + r) * c.a + x]) - 127.5f) / 127.5f;
            const float have = got[(ch * c.a + r * c.stride) * c.a + x];
            max_diff = std::max(max_diff, double(std::fabs(have - want)));
          }
    } else {
      const int64_t max_patches = int64_t(c.b) * 9, values = c.a * c.a * 3;
      ASSERT_EQ(full, (std::vector<int64_t>{1, max_patches, values}));
      const int64_t kept = (max_patches + c.stride - 1) / c.stride;
      ASSERT_EQ(ref_t.shape, (std::vector<int64_t>{1, kept, values}));
      const float scale = float(1.0 / 255.0);
      for (int64_t p = 0; p < kept; ++p)
        for (int64_t k = 0; k < values; ++k) {
          const float want = float(ref[p * values + k]) * scale;
          const float have = got[p * c.stride * values + k];
          max_diff = std::max(max_diff, double(std::fabs(have - want)));
        }
      // Positions and the soft-token count: exactly HF's.
      ASSERT_TRUE(v.count("image_position_ids"));
      const auto &pos_t = tensor(c.id + ".image_position_ids");
      const sgc_tensor_view_t &pos = v["image_position_ids"];
      ASSERT_EQ(pos.dtype, SGC_DTYPE_I64);
      ASSERT_EQ(shape_of(pos), pos_t.shape);
      EXPECT_EQ(std::memcmp(pos.data, golden().data(pos_t), pos_t.bytes()), 0)
          << "image_position_ids differ from HF's";
      const auto &n_t = tensor(c.id + ".num_soft_tokens_per_image");
      int64_t want_n;
      std::memcpy(&want_n, golden().data(n_t), 8);
      ASSERT_TRUE(v.count("num_soft_tokens_per_image"));
      EXPECT_EQ(
          *static_cast<const int64_t *>(v["num_soft_tokens_per_image"].data),
          want_n);
      EXPECT_EQ(sgc_image_soft_token_count(image.get()), want_n);
    }
    EXPECT_LE(max_diff, 1.0 / 255.0) << c.file << " (" << c.family << ")";
    worst[c.family] = std::max(worst[c.family], max_diff);
  }
  for (const auto &[family, d] : worst)
    std::printf("image golden: %s max |sgc - HF| = %.9g over the cases\n",
                family.c_str(), d);
  EXPECT_EQ(worst.size(), 2u);
}

} // namespace
