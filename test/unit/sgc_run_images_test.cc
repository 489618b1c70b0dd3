/*
 * sgc_run_images_test.cc - sgc-run's images (tools/sgc-run/images.c):
 * loaded with a vision model's facts (the tiny vision models' meta.json),
 * broken files refused with one error line naming the file and exit 1, the
 * count checked against the prompt's BOIs, blocks longer than the prefill
 * chunk refused, the text placeholders; and the sgc-run binary refusing
 * images for a model without a vision component.
 */
extern "C" {
#include "tools/sgc-run/images.h"
}

#include "test/unit/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const std::string examples = std::string(SGC_SOURCE_DIR) + "/examples/";

/// tiny-gemma3-vision / tiny-gemma4-vision (their meta.json: processor
/// settings, graph.perception_image.token_ids, image_block.soft_tokens).
vision_facts tiny_facts(sgc_image_family_t family) {
  vision_facts f;
  sgc_image_options_default(family, &f.options);
  f.tokens = {502, 500, 501};
  if (family == SGC_IMAGE_FAMILY_GEMMA3) {
    f.options.image_size = 56;
    f.soft_tokens_per_image = 4;
  } else {
    f.options.patch_size = 4;
    f.options.pooling_kernel_size = 3;
    f.options.max_soft_tokens = 70;
    f.soft_tokens_per_image = 0;
  }
  return f;
}

struct run_images {
  options o;
  std::vector<const char *> files;
  image_inputs in;
  run_images() {
    std::memset(&o, 0, sizeof o); // images.c reads only the image lists
    in = image_inputs{};
  }
  ~run_images() { images_free(&in); }
  /// images_load_with for |paths| as --image (or --pixel-values); the exit
  /// code and what it printed.
  int load(const std::vector<std::string> &paths, const vision_facts *f,
           std::string *err, bool pixel_values = false) {
    files.clear();
    for (const std::string &p : paths)
      files.push_back(p.c_str());
    string_list &list = pixel_values ? o.pixel_values : o.images;
    list.items = files.data();
    list.count = files.size();
    testing::internal::CaptureStderr();
    int rc = images_load_with(&o, "model.so", f, &in);
    *err = testing::internal::GetCapturedStderr();
    list.items = nullptr;
    list.count = 0;
    return rc;
  }
};

TEST(SgcRunImages, GoldenPromptsLayOut) {
  const int32_t boi = 500, text = 7;
  for (sgc_image_family_t family :
       {SGC_IMAGE_FAMILY_GEMMA3, SGC_IMAGE_FAMILY_GEMMA4}) {
    const std::string dir = examples + (family == SGC_IMAGE_FAMILY_GEMMA3
                                            ? "tiny-gemma3-vision/"
                                            : "tiny-gemma4-vision/");
    const vision_facts f = tiny_facts(family);
    for (bool pixel_values : {false, true}) {
      run_images r;
      std::string err;
      ASSERT_EQ(r.load({dir + (pixel_values ? "golden.safetensors"
                                            : "image.png")},
                       &f, &err, pixel_values),
                0)
          << err;
      ASSERT_EQ(r.in.count, 1u);
      const int64_t n = family == SGC_IMAGE_FAMILY_GEMMA3 ? 4 : 65;
      EXPECT_EQ(r.in.soft_tokens[0], n);
      const int32_t prompt[] = {2, text, boi, text};
      testing::internal::CaptureStderr();
      const int rc = images_layout(&r.in, prompt, 4, 80);
      err = testing::internal::GetCapturedStderr();
      ASSERT_EQ(rc, 0) << err;
      EXPECT_EQ(sgc_prompt_layout_length(r.in.layout), size_t(4 + n + 1));
      EXPECT_EQ(sgc_prompt_layout_ids(r.in.layout)[3 + n], 501);
    }
  }
}

/// One error line, naming |part|.
void expect_one_error(const std::string &err, const std::string &part) {
  const std::vector<std::string> lines = sgc_test::lines(err);
  ASSERT_EQ(lines.size(), 1u) << err;
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << err;
  EXPECT_NE(err.find(part), std::string::npos) << err;
}

/// |png| with the IHDR's width and height replaced and its CRC fixed, so
/// that the size is what gets refused.
std::string with_size(std::string png, uint32_t w, uint32_t h) {
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = char(w >> (24 - 8 * i));
    png[20 + i] = char(h >> (24 - 8 * i));
  }
  uint32_t c = 0xffffffffu;
  for (size_t i = 12; i < 29; ++i) { // "IHDR" and its 13 bytes
    c ^= uint8_t(png[i]);
    for (int k = 0; k < 8; ++k)
      c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  c = ~c;
  for (int i = 0; i < 4; ++i)
    png[29 + i] = char(c >> (24 - 8 * i));
  return png;
}

TEST(SgcRunImages, BrokenFilesAreOneErrorAndExitOne) {
  sgc_test::temp_dir dir;
  const std::string png =
      sgc_test::read_file(examples + "tiny-gemma3-vision/image.png");
  const std::string jpg = sgc_test::read_file(
      std::string(SGC_SOURCE_DIR) + "/test/Inputs/images/rgb_61x43.jpg");
  struct broken {
    const char *name;
    std::string bytes;
    const char *message;
  };
  const broken cases[] = {
      {"empty.png", "", "empty.png: file is empty"},
      {"cut.png", png.substr(0, png.size() / 2), "cut.png: PNG: file is truncated"},
      {"cut-header.png", png.substr(0, 20), "cut-header.png: PNG: file is truncated"},
      {"cut.jpg", jpg.substr(0, 1000), "cut.jpg: JPEG: file is truncated"},
      {"header.png", "\x89PNX" + png.substr(4), "header.png: not a PNG or JPEG file"},
      {"zero.png", with_size(png, 0, 0), "zero.png: PNG: Invalid IHDR data"},
      {"huge.png", with_size(png, 100000, 100000),
       "huge.png: image is 100000x100000 pixels, more than the limit"},
      {"a.gif", "GIF89a\x01\x00\x01\x00\x80\x00\x00",
       "a.gif: a GIF image; only PNG and JPEG are supported"},
      {"text.jpg", "plain text\n", "text.jpg: not a PNG or JPEG file"},
  };
  const vision_facts f = tiny_facts(SGC_IMAGE_FAMILY_GEMMA4);
  for (const broken &c : cases) {
    const std::string path = dir.file(c.name);
    sgc_test::write_file(path, c.bytes);
    run_images r;
    std::string err;
    EXPECT_EQ(r.load({examples + "tiny-gemma4-vision/image.png", path}, &f,
                     &err),
              1)
        << c.name;
    expect_one_error(err, c.message);
  }
  // A safetensors file that is not pixels, through --pixel-values.
  run_images r;
  std::string err;
  EXPECT_EQ(r.load({examples + "tiny-gemma4-vision/model.safetensors"}, &f,
                   &err, true),
            1);
  expect_one_error(err, "model.safetensors: no tensor 'pixel_values'");
}

TEST(SgcRunImages, NoVisionComponent) {
  run_images r;
  std::string err;
  EXPECT_EQ(r.load({examples + "tiny-gemma3-vision/image.png"}, nullptr, &err),
            1);
  expect_one_error(err, "error: model.so: this model has no vision component "
                        "(no encode_image entry point), so it takes no "
                        "--image");
}

TEST(SgcRunImages, CountsAndChunks) {
  const vision_facts f = tiny_facts(SGC_IMAGE_FAMILY_GEMMA4);
  run_images r;
  std::string err;
  const std::string png = examples + "tiny-gemma4-vision/image.png";
  ASSERT_EQ(r.load({png, png}, &f, &err), 0) << err;
  const int32_t one_boi[] = {2, 500, 7};
  testing::internal::CaptureStderr();
  EXPECT_EQ(images_layout(&r.in, one_boi, 3, 512), 2);
  expect_one_error(testing::internal::GetCapturedStderr(),
                   "the prompt has 1 image placeholder (BOI id 500) but 2 "
                   "images were given");
  sgc_prompt_layout_release(r.in.layout);
  r.in.layout = nullptr;
  const int32_t two_bois[] = {2, 500, 7, 500};
  testing::internal::CaptureStderr();
  EXPECT_EQ(images_layout(&r.in, two_bois, 4, 32), 2);
  expect_one_error(testing::internal::GetCapturedStderr(),
                   "image block 0 (prompt tokens 2..66, 65 tokens) is longer "
                   "than the prefill chunk of 32 tokens");
  sgc_prompt_layout_release(r.in.layout);
  r.in.layout = nullptr;
  testing::internal::CaptureStderr();
  EXPECT_EQ(images_layout(&r.in, two_bois, 4, 80), 0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(sgc_prompt_layout_length(r.in.layout), 4u + 2 * 66);
}

/// Two images of 2 and 1 soft tokens and the BPE fixture's tokenizer,
/// whose pieces stand in for a Gemma 4 tokenizer's: its <|image|> (19) as
/// the image token, <start_of_turn> (5) and <end_of_turn> (6) as BOI and
/// EOI.
struct bpe_images {
  sgc_tokenizer_t *tok = nullptr;
  int64_t soft[2] = {2, 1};
  image_inputs in{};

  bpe_images() {
    sgc_status_t *st = sgc_tokenizer_open(
        (std::string(SGC_SOURCE_DIR) + "/test/Inputs/tokenizers/bpe").c_str(),
        &tok);
    EXPECT_EQ(st, nullptr) << sgc_status_message(st);
    in.facts = tiny_facts(SGC_IMAGE_FAMILY_GEMMA4);
    in.facts.tokens = {19, 5, 6};
    in.soft_tokens = soft;
    in.count = 2;
  }
  ~bpe_images() { sgc_tokenizer_release(tok); }
};

TEST(SgcRunImages, TextPlaceholdersFromTheTokenizer) {
  bpe_images f;
  ASSERT_NE(f.tok, nullptr);
  image_inputs &in = f.in;
  sgc_tokenizer_t *tok = f.tok;
  char *out = nullptr;
  ASSERT_EQ(images_expand_text(&in, tok, "Compare <|image|> and <|image|>.",
                               &out),
            0);
  EXPECT_STREQ(out, "Compare <start_of_turn><|image|><|image|><end_of_turn> "
                    "and <start_of_turn><|image|><end_of_turn>.");
  std::free(out);
  // No placeholder: the images go first.
  ASSERT_EQ(images_expand_text(&in, tok, "Compare.", &out), 0);
  EXPECT_STREQ(out, "<start_of_turn><|image|><|image|><end_of_turn>"
                    "<start_of_turn><|image|><end_of_turn>Compare.");
  std::free(out);
  // One placeholder for two images.
  testing::internal::CaptureStderr();
  EXPECT_EQ(images_expand_text(&in, tok, "<|image|>?", &out), 2);
  expect_one_error(testing::internal::GetCapturedStderr(),
                   "the prompt text has 1 image placeholder ('<|image|>') but "
                   "2 images were given");
}

TEST(SgcRunImages, ChatTurnPlaceholders) {
  bpe_images f;
  ASSERT_NE(f.tok, nullptr);
  image_inputs &in = f.in;
  sgc_tokenizer_t *tok = f.tok;
  // The template writes the markers before a text without one.
  EXPECT_EQ(images_before_text(&in, tok, "Compare."), 2u);
  EXPECT_EQ(images_before_text(&in, tok, "Compare <|image|>."), 0u);
  char *out = nullptr;
  ASSERT_EQ(images_expand_rendered(&in, tok, "<|turn>user\n<|image|><|image|>x",
                                   &out),
            0);
  EXPECT_STREQ(out, "<|turn>user\n<start_of_turn><|image|><|image|>"
                    "<end_of_turn><start_of_turn><|image|><end_of_turn>x");
  std::free(out);
  // A rendered turn without its markers is refused, not given them in
  // front (before the BOS).
  testing::internal::CaptureStderr();
  EXPECT_EQ(images_expand_rendered(&in, tok, "<bos>x", &out), 2);
  expect_one_error(testing::internal::GetCapturedStderr(),
                   "the prompt text has 0 image placeholders");
}

TEST(SgcRunImages, ImagesAddedOneByOne) {
  // /image FILE: a bad file leaves the images as they were.
  run_images r;
  r.in.facts = tiny_facts(SGC_IMAGE_FAMILY_GEMMA4);
  const std::string png = examples + "tiny-gemma4-vision/image.png";
  ASSERT_EQ(images_add(&r.in, png.c_str(), 0), 0);
  testing::internal::CaptureStderr();
  EXPECT_EQ(images_add(&r.in, (examples + "tiny-gemma4-vision/meta.json").c_str(),
                       0),
            1);
  expect_one_error(testing::internal::GetCapturedStderr(),
                   "meta.json: not a PNG or JPEG file");
  ASSERT_EQ(images_add(&r.in, png.c_str(), 0), 0);
  ASSERT_EQ(r.in.count, 2u);
  EXPECT_EQ(r.in.soft_tokens[0], 65);
  EXPECT_EQ(r.in.soft_tokens[1], 65);
  // Cleared for the next turn, the facts kept.
  images_clear(&r.in);
  EXPECT_EQ(r.in.count, 0u);
  EXPECT_EQ(r.in.facts.options.max_soft_tokens, 70);
}

TEST(SgcRunImages, TheBinaryRefusesImagesForATextModel) {
  // fake_model has no encode_image phase; the image itself is fine.
  for (const char *flag : {"--image", "--pixel-values"}) {
    const std::string file =
        examples + "tiny-gemma3-vision/" +
        (std::string(flag) == "--image" ? "image.png" : "golden.safetensors");
    const sgc_test::process_result r = sgc_test::run_process(
        {SGC_RUN_PATH, SGC_TEST_FAKE_MODEL, "--load-format=dummy",
         "--prompt-ids", "2,500,7", flag, file});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    expect_one_error(r.err, std::string(SGC_TEST_FAKE_MODEL) +
                                ": this model has no vision component (no "
                                "encode_image entry point), so it takes no " +
                                flag);
    EXPECT_EQ(r.out, "");
  }
}

} // namespace
