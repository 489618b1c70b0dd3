/*
 * prompt_layout_test.cc - where the images go in a prompt (sgc/runtime.h,
 * "Prompts with images"): the goldens' input_ids of both tiny vision models
 * pass through unchanged and give exactly the image rows meta.json's
 * image_block and the golden's token_type_ids / mm_token_type_ids give (HF's
 * inputs); a bare BOI expands to the golden's ids; the refusals; prefill
 * chunk boundaries around an image block; the text expansion of HF's
 * processors; pixel tensors read back from the goldens.
 */
#include <sgc/runtime.h>

#include "lib/safetensors/safetensors.h"
#include "lib/support/json_strict.h"
#include "test/unit/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace st = sgc::safetensors;

struct golden_model {
  std::string dir;
  std::vector<int32_t> ids;
  std::vector<int32_t> token_types; ///< HF's token types per row
  nlohmann::json meta;
};

template <typename T>
std::vector<T> read_vector(const st::file &f, const std::string &name) {
  const st::tensor_info *t = f.find(name);
  if (!t) {
    ADD_FAILURE() << f.path() << ": no tensor " << name;
    return {};
  }
  std::vector<T> v(t->bytes() / sizeof(T));
  std::memcpy(v.data(), f.data(*t), t->bytes());
  return v;
}

golden_model load_golden(const std::string &family) {
  golden_model g;
  g.dir = std::string(SGC_SOURCE_DIR) + "/examples/tiny-" + family + "-vision/";
  std::unique_ptr<st::file> f;
  sgc::status s = st::file::open(g.dir + "golden.safetensors", &f);
  EXPECT_TRUE(s.ok()) << s.to_string();
  if (!s.ok())
    return g;
  g.ids = read_vector<int32_t>(*f, "input_ids");
  g.token_types = read_vector<int32_t>(
      *f, family == "gemma3" ? "token_type_ids" : "mm_token_type_ids");
  sgc::json_parse_error error;
  EXPECT_TRUE(sgc::parse_json_strict(sgc_test::read_file(g.dir + "meta.json"),
                                     &g.meta, &error))
      << error.message;
  return g;
}

/// The model's token ids, from meta.json's graph facts.
sgc_image_tokens_t tokens_of(const golden_model &g) {
  const auto &ids = g.meta["graph"]["perception_image"]["token_ids"];
  return {ids["image"].get<int32_t>(), ids["boi"].get<int32_t>(),
          ids["eoi"].get<int32_t>()};
}

struct layout_ptr {
  sgc_prompt_layout_t *p = nullptr;
  ~layout_ptr() { sgc_prompt_layout_release(p); }
};

/// The message of a failing status (freed), "" on success.
std::string failure(sgc_status_t *s, sgc_status_code_t *code = nullptr) {
  std::string m = sgc_status_message(s);
  if (code)
    *code = sgc_status_code(s);
  sgc_status_free(s);
  return m;
}

void expect_layout_is_golden(const golden_model &g) {
  const sgc_image_tokens_t t = tokens_of(g);
  const auto &block = g.meta["image_block"];
  const int64_t n_soft = block["soft_tokens"].get<int64_t>();
  const int64_t first = block["image_positions"][0].get<int64_t>();
  const int64_t last = block["image_positions"][1].get<int64_t>();
  layout_ptr l;
  ASSERT_EQ(failure(sgc_prompt_layout_create(g.ids.data(), g.ids.size(), &t,
                                             &n_soft, 1, &l.p)),
            "");
  ASSERT_EQ(sgc_prompt_layout_length(l.p), g.ids.size());
  EXPECT_EQ(std::vector<int32_t>(sgc_prompt_layout_ids(l.p),
                                 sgc_prompt_layout_ids(l.p) + g.ids.size()),
            g.ids);
  EXPECT_EQ(sgc_prompt_layout_num_images(l.p), 1u);
  EXPECT_EQ(sgc_prompt_layout_soft_tokens(l.p), n_soft);
  EXPECT_EQ(last - first + 1, n_soft);
  EXPECT_EQ(g.ids[size_t(block["boi_position"].get<int64_t>())], t.boi_token_id);
  EXPECT_EQ(g.ids[size_t(block["eoi_position"].get<int64_t>())], t.eoi_token_id);
  ASSERT_EQ(g.token_types.size(), g.ids.size());
  for (size_t i = 0; i < g.ids.size(); ++i) {
    const bool image = int64_t(i) >= first && int64_t(i) <= last;
    EXPECT_EQ(sgc_prompt_layout_blocks(l.p)[i], image ? 0 : -1) << "row " << i;
    EXPECT_EQ(sgc_prompt_layout_soft_slots(l.p)[i],
              image ? int64_t(i) - first : -1)
        << "row " << i;
    EXPECT_EQ(sgc_prompt_layout_blocks(l.p)[i] >= 0, g.token_types[i] == 1)
        << "row " << i;
  }
}

TEST(PromptLayout, Gemma3GoldenIdsAreTheGoldensBlock) {
  expect_layout_is_golden(load_golden("gemma3"));
}

TEST(PromptLayout, Gemma4GoldenIdsAreTheGoldensBlock) {
  expect_layout_is_golden(load_golden("gemma4"));
}

/// The golden's ids with the block's image tokens and EOI taken out: BOI
/// alone, as a user writes the prompt.
std::vector<int32_t> bare(const golden_model &g) {
  const sgc_image_tokens_t t = tokens_of(g);
  std::vector<int32_t> out;
  bool after_block = false;
  for (int32_t id : g.ids) {
    if (id == t.image_token_id)
      after_block = true;
    else if (id == t.eoi_token_id && after_block)
      after_block = false;
    else
      out.push_back(id);
  }
  return out;
}

TEST(PromptLayout, BareBoiExpandsToTheGoldensIds) {
  for (const char *family : {"gemma3", "gemma4"}) {
    const golden_model g = load_golden(family);
    const sgc_image_tokens_t t = tokens_of(g);
    const int64_t n = g.meta["image_block"]["soft_tokens"].get<int64_t>();
    const std::vector<int32_t> ids = bare(g);
    ASSERT_EQ(ids.size(), g.ids.size() - size_t(n) - 1) << family;
    layout_ptr l;
    ASSERT_EQ(failure(sgc_prompt_layout_create(ids.data(), ids.size(), &t, &n,
                                               1, &l.p)),
              "");
    ASSERT_EQ(sgc_prompt_layout_length(l.p), g.ids.size()) << family;
    EXPECT_EQ(std::vector<int32_t>(sgc_prompt_layout_ids(l.p),
                                   sgc_prompt_layout_ids(l.p) + g.ids.size()),
              g.ids)
        << family;
  }
}

const sgc_image_tokens_t tiny = {502, 500, 501};

/// Laid-out ids and blocks of |ids| for images of |soft| tokens.
struct laid_out {
  std::vector<int32_t> ids, blocks;
  std::vector<int64_t> slots;
};

laid_out lay_out(const std::vector<int32_t> &ids,
                 const std::vector<int64_t> &soft) {
  layout_ptr l;
  laid_out out;
  std::string m = failure(sgc_prompt_layout_create(
      ids.data(), ids.size(), &tiny, soft.data(), soft.size(), &l.p));
  EXPECT_EQ(m, "");
  if (!l.p)
    return out;
  const size_t n = sgc_prompt_layout_length(l.p);
  out.ids.assign(sgc_prompt_layout_ids(l.p), sgc_prompt_layout_ids(l.p) + n);
  out.blocks.assign(sgc_prompt_layout_blocks(l.p),
                    sgc_prompt_layout_blocks(l.p) + n);
  out.slots.assign(sgc_prompt_layout_soft_slots(l.p),
                   sgc_prompt_layout_soft_slots(l.p) + n);
  return out;
}

TEST(PromptLayout, TwoImagesOneKeptOneExpanded) {
  // Image 0 (3 soft tokens) written out in full, image 1 (2) a bare BOI.
  const laid_out l =
      lay_out({2, 7, 500, 502, 502, 502, 501, 8, 500, 9}, {3, 2});
  EXPECT_EQ(l.ids, (std::vector<int32_t>{2, 7, 500, 502, 502, 502, 501, 8, 500,
                                         502, 502, 501, 9}));
  EXPECT_EQ(l.blocks, (std::vector<int32_t>{-1, -1, -1, 0, 0, 0, -1, -1, -1, 1,
                                            1, -1, -1}));
  EXPECT_EQ(l.slots, (std::vector<int64_t>{-1, -1, -1, 0, 1, 2, -1, -1, -1, 3,
                                           4, -1, -1}));
}

TEST(PromptLayout, NoImagesIsText) {
  const laid_out l = lay_out({2, 7, 8}, {});
  EXPECT_EQ(l.ids, (std::vector<int32_t>{2, 7, 8}));
  EXPECT_EQ(l.blocks, (std::vector<int32_t>{-1, -1, -1}));
}

struct refusal {
  const char *what;
  std::vector<int32_t> ids;
  std::vector<int64_t> soft;
  const char *message;
};

TEST(PromptLayout, Refusals) {
  const refusal cases[] = {
      {"run too short", {2, 500, 502, 502, 502, 501}, {4},
       "prompt token 2: the block of image 0 has 3 image tokens but the image "
       "has 4 soft tokens"},
      {"run too long", {2, 500, 502, 502, 502, 501}, {2},
       "prompt token 2: the block of image 0 has 3 image tokens but the image "
       "has 2 soft tokens"},
      {"no EOI", {2, 500, 502, 502, 7}, {2},
       "prompt token 4: the block of image 0 (2 image tokens) is not closed by "
       "EOI (id 501)"},
      {"ends inside", {2, 500, 502, 502}, {2},
       "prompt token 4: the block of image 0 (2 image tokens) is not closed by "
       "EOI (id 501)"},
      {"stray image token", {2, 7, 8, 9, 10, 502, 500}, {1},
       "prompt token 5: image token 502 outside an image block (each block "
       "follows a BOI, id 500)"},
      {"more images", {2, 500, 7}, {4, 4},
       "the prompt has 1 image placeholder (BOI id 500) but 2 images were "
       "given"},
      {"fewer images", {2, 500, 7, 500}, {4},
       "the prompt has 2 image placeholders (BOI id 500) but 1 image was "
       "given"},
      {"image but no BOI", {2, 7}, {4},
       "the prompt has 0 image placeholders (BOI id 500) but 1 image was "
       "given"},
      {"zero soft tokens", {2, 500}, {0},
       "image 0 has 0 soft tokens; at least 1 is needed"},
  };
  for (const refusal &c : cases) {
    layout_ptr l;
    sgc_status_code_t code = SGC_STATUS_OK;
    EXPECT_EQ(failure(sgc_prompt_layout_create(c.ids.data(), c.ids.size(),
                                               &tiny, c.soft.data(),
                                               c.soft.size(), &l.p),
                      &code),
              c.message)
        << c.what;
    EXPECT_EQ(code, SGC_STATUS_USAGE) << c.what;
    EXPECT_EQ(l.p, nullptr) << c.what;
  }
  const sgc_image_tokens_t unknown = {502, -1, 501};
  const int32_t ids[] = {2};
  layout_ptr l;
  EXPECT_EQ(failure(sgc_prompt_layout_create(ids, 1, &unknown, nullptr, 0,
                                             &l.p)),
            "the model's image, BOI and EOI token ids must be known (got 502, "
            "-1, 501)");
}

/// The chunks [start, end) the runtime would run with at most |m| tokens.
std::vector<int64_t> chunk_ends(const sgc_prompt_layout_t *l, int64_t m,
                                std::string *error) {
  std::vector<int64_t> ends;
  const int64_t n = int64_t(sgc_prompt_layout_length(l));
  for (int64_t start = 0; start < n;) {
    int64_t end = -1;
    *error = failure(sgc_prompt_layout_chunk_end(l, start, m, &end));
    if (!error->empty())
      break;
    ends.push_back(end);
    start = end;
  }
  return ends;
}

TEST(PromptLayout, ChunksNeverSplitTheGemma4Block) {
  // The 65-token block at rows 10..74 of 92.
  const golden_model g = load_golden("gemma4");
  const sgc_image_tokens_t t = tokens_of(g);
  const int64_t n = 65;
  layout_ptr l;
  ASSERT_EQ(failure(sgc_prompt_layout_create(g.ids.data(), g.ids.size(), &t,
                                             &n, 1, &l.p)),
            "");
  std::string error;
  // 80 holds the block: [0, 80) ends past its EOI (75), nothing moves.
  EXPECT_EQ(chunk_ends(l.p, 80, &error), (std::vector<int64_t>{80, 92}));
  EXPECT_EQ(error, "");
  // 32: [0, 32) would split it, so the chunk ends at 10; then the block
  // does not fit.
  EXPECT_EQ(chunk_ends(l.p, 32, &error), (std::vector<int64_t>{10}));
  EXPECT_EQ(error, "image block 0 (prompt tokens 10..74, 65 tokens) is longer "
                   "than the prefill chunk of 32 tokens: a chunk may not "
                   "split an image block");
  // 65 exactly: [10, 75) is the block.
  EXPECT_EQ(chunk_ends(l.p, 65, &error), (std::vector<int64_t>{10, 75, 92}));
  EXPECT_EQ(error, "");
  int64_t end = -1;
  EXPECT_EQ(failure(sgc_prompt_layout_chunk_end(l.p, 30, 80, &end)),
            "prefill chunk start 30 is inside image block 0 (prompt tokens "
            "10..74, 65 tokens)");
  EXPECT_EQ(failure(sgc_prompt_layout_chunk_end(l.p, 92, 80, &end)),
            "prefill chunk start 92 is outside the prompt's 92 rows");
}

TEST(PromptLayout, ChunkOf80MovesBackToTheBlock) {
  // 30 text rows, BOI, a block of 65 at rows 31..95, EOI, 4 text rows.
  std::vector<int32_t> ids(30, 7);
  ids.push_back(500);
  ids.insert(ids.end(), {8, 8, 8, 8});
  const int64_t n = 65;
  layout_ptr l;
  ASSERT_EQ(failure(sgc_prompt_layout_create(ids.data(), ids.size(), &tiny, &n,
                                             1, &l.p)),
            "");
  ASSERT_EQ(sgc_prompt_layout_length(l.p), 101u);
  std::string error;
  EXPECT_EQ(chunk_ends(l.p, 80, &error), (std::vector<int64_t>{31, 101}));
  EXPECT_EQ(error, "");
  // A boundary on the row after the block's last (its EOI) or on its first
  // row splits nothing.
  EXPECT_EQ(chunk_ends(l.p, 96, &error), (std::vector<int64_t>{96, 101}));
  EXPECT_EQ(error, "");
  EXPECT_EQ(chunk_ends(l.p, 31, &error), (std::vector<int64_t>{31}));
  EXPECT_EQ(error, "image block 0 (prompt tokens 31..95, 65 tokens) is longer "
                   "than the prefill chunk of 31 tokens: a chunk may not "
                   "split an image block");
}

std::string expand(sgc_image_family_t family, const std::string &text,
                   const char *image, const char *boi, const char *eoi,
                   const std::vector<int64_t> &soft, std::string *error) {
  char *out = nullptr;
  size_t len = 0;
  *error = failure(sgc_prompt_expand_images(family, text.data(), text.size(),
                                            image, boi, eoi, soft.data(),
                                            soft.size(), &out, &len));
  std::string result = out ? std::string(out, len) : "";
  std::free(out);
  return result;
}

TEST(PromptText, Gemma3PutsNewlinesAroundEachBlock) {
  std::string error;
  EXPECT_EQ(expand(SGC_IMAGE_FAMILY_GEMMA3,
                   "Describe <start_of_image> and <start_of_image>.",
                   "<image_soft_token>", "<start_of_image>", "<end_of_image>",
                   {2, 2}, &error),
            "Describe \n\n<start_of_image><image_soft_token><image_soft_token>"
            "<end_of_image>\n\n and \n\n<start_of_image><image_soft_token>"
            "<image_soft_token><end_of_image>\n\n.");
  EXPECT_EQ(error, "");
}

TEST(PromptText, Gemma4ReplacesTheImageToken) {
  std::string error;
  EXPECT_EQ(expand(SGC_IMAGE_FAMILY_GEMMA4, "<|image|>What is it? <|image|>",
                   "<|image|>", "<|image>", "<image|>", {3, 1}, &error),
            "<|image><|image|><|image|><|image|><image|>What is it? "
            "<|image><|image|><image|>");
  EXPECT_EQ(error, "");
}

TEST(PromptText, CountsMustAgree) {
  std::string error;
  expand(SGC_IMAGE_FAMILY_GEMMA3, "no image here", "<image_soft_token>",
         "<start_of_image>", "<end_of_image>", {256}, &error);
  EXPECT_EQ(error, "the prompt text has 0 image placeholders "
                   "('<start_of_image>') but 1 image was given");
  expand(SGC_IMAGE_FAMILY_GEMMA3, "<start_of_image><start_of_image>",
         "<image_soft_token>", "<start_of_image>", "<end_of_image>", {4},
         &error);
  EXPECT_EQ(error, "the prompt text has 2 image placeholders "
                   "('<start_of_image>') but 1 image was given");
  // Gemma 4's placeholder is the image token, not the BOI.
  expand(SGC_IMAGE_FAMILY_GEMMA4, "<|image>", "<|image|>", "<|image>",
         "<image|>", {4}, &error);
  EXPECT_EQ(error, "the prompt text has 0 image placeholders ('<|image|>') but "
                   "1 image was given");
  EXPECT_EQ(expand(SGC_IMAGE_FAMILY_GEMMA4, "text only", "<|image|>",
                   "<|image>", "<image|>", {}, &error),
            "text only");
  EXPECT_EQ(error, "");
}

} // namespace
