/*
 * tokenizer_errors_test.cc - what the tokenizer API refuses, and that each
 * message names the file and the place in it.
 */
#include <sgc/runtime.h>

#include "test/unit/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

struct outcome {
  sgc_status_code_t code = SGC_STATUS_OK;
  std::string message;
};

outcome open_path(const std::string &path) {
  sgc_tokenizer_t *t = nullptr;
  sgc_status_t *st = sgc_tokenizer_open(path.c_str(), &t);
  outcome o{sgc_status_code(st), sgc_status_message(st)};
  sgc_status_free(st);
  sgc_tokenizer_release(t);
  return o;
}

/// A minimal valid tokenizer.json with |part| replaced by |value|.
std::string tokenizer_json(const std::string &part = "",
                           const std::string &value = "") {
  std::string model =
      R"({"type":"BPE","dropout":null,"unk_token":"<unk>","fuse_unk":true,)"
      R"("byte_fallback":true,"vocab":{"<unk>":0,"<bos>":1,"a":2,"b":3,"ab":4},)"
      R"("merges":["a b"]})";
  std::string normalizer =
      R"({"type":"Replace","pattern":{"String":" "},"content":"▁"})";
  std::string pre = "null", decoder = R"({"type":"Fuse"})", post = "null",
              truncation = "null";
  if (part == "model")
    model = value;
  if (part == "normalizer")
    normalizer = value;
  if (part == "pre_tokenizer")
    pre = value;
  if (part == "decoder")
    decoder = value;
  if (part == "post_processor")
    post = value;
  if (part == "truncation")
    truncation = value;
  return R"({"version":"1.0","truncation":)" + truncation +
         R"(,"padding":null,"added_tokens":[{"id":1,"content":"<bos>","special":true}],)"
         R"("normalizer":)" + normalizer + R"(,"pre_tokenizer":)" + pre +
         R"(,"post_processor":)" + post + R"(,"decoder":)" + decoder +
         R"(,"model":)" + model + "}";
}

outcome open_json(const std::string &part, const std::string &value) {
  sgc_test::temp_dir dir;
  sgc_test::write_file(dir.file("tokenizer.json"), tokenizer_json(part, value));
  outcome o = open_path(dir.file("tokenizer.json"));
  // Messages name the file by its path; tests match on the file name.
  const size_t at = o.message.find(dir.path());
  if (at != std::string::npos)
    o.message.erase(at, dir.path().size() + 1);
  return o;
}

TEST(TokenizerErrors, TheMinimalFileOpens) {
  EXPECT_EQ(open_json("", "").code, SGC_STATUS_OK) << open_json("", "").message;
  // "" affixes and dropout 0 mean none, as null does.
  const outcome o = open_json(
      "model", R"({"type":"BPE","dropout":0.0,"continuing_subword_prefix":"",)"
               R"("end_of_word_suffix":"","vocab":{"<bos>":0},"merges":[]})");
  EXPECT_EQ(o.code, SGC_STATUS_OK) << o.message;
}

TEST(TokenizerErrors, MissingFileOrDirectory) {
  outcome o = open_path("/nonexistent/tokenizer.json");
  EXPECT_EQ(o.code, SGC_STATUS_BAD_INPUT);
  EXPECT_NE(o.message.find("/nonexistent/tokenizer.json: cannot open"),
            std::string::npos)
      << o.message;
  sgc_test::temp_dir dir;
  o = open_path(dir.path());
  EXPECT_EQ(o.code, SGC_STATUS_BAD_INPUT);
  EXPECT_NE(o.message.find("no tokenizer.json or tokenizer.model"),
            std::string::npos)
      << o.message;
}

TEST(TokenizerErrors, BadJsonNamesTheFileAndThePlace) {
  sgc_test::temp_dir dir;
  sgc_test::write_file(dir.file("tokenizer.json"), "{\"model\": [1, 2,}");
  outcome o = open_path(dir.file("tokenizer.json"));
  EXPECT_EQ(o.code, SGC_STATUS_BAD_INPUT);
  // The '}' at byte 16 is column 17 of line 1.
  EXPECT_NE(o.message.find(dir.file("tokenizer.json") + ": not valid JSON"),
            std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("line 1, column 17"), std::string::npos)
      << o.message;
  sgc_test::write_file(dir.file("tokenizer.json"), "{\"a\": 1, \"a\": 2}");
  o = open_path(dir.file("tokenizer.json"));
  EXPECT_NE(o.message.find("duplicate key 'a'"), std::string::npos)
      << o.message;
}

TEST(TokenizerErrors, UnsupportedComponentsNameTheJsonPath) {
  struct {
    const char *part, *value, *expect;
  } cases[] = {
      {"model", R"({"type":"Unigram","vocab":[]})",
       "tokenizer.json: $.model.type: 'Unigram' is not supported"},
      {"model", R"({"type":"BPE","vocab":{"a":0},"merges":["a b"]})",
       "tokenizer.json: $.model.merges[0]: 'b' is not in the vocabulary"},
      {"model", R"({"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b"]})",
       "tokenizer.json: $.model.merges[0]: the merged piece 'ab' is not in the "
       "vocabulary"},
      {"model", R"({"type":"BPE","vocab":{"a":0},"merges":["a b c"]})",
       "tokenizer.json: $.model.merges[0]: expected \"a b\""},
      {"model", R"({"type":"BPE","dropout":0.1,"vocab":{},"merges":[]})",
       "tokenizer.json: $.model.dropout: only null or 0 is supported"},
      {"model", R"({"type":"BPE","continuing_subword_prefix":"##","vocab":{},"merges":[]})",
       "tokenizer.json: $.model.continuing_subword_prefix: only null or \"\" is "
       "supported"},
      {"model", R"({"type":"BPE","vocab":{"a":0,"b":0},"merges":[]})",
       "tokenizer.json: $.model.vocab.b: id 0 is also 'a'"},
      {"normalizer", R"({"type":"NFC"})",
       "tokenizer.json: $.normalizer.type: 'NFC' is not supported"},
      {"normalizer",
       R"({"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"x"},{"type":"NFKC"}]})",
       "tokenizer.json: $.normalizer.normalizers[1].type: 'NFKC' is not supported"},
      {"normalizer", R"({"type":"Replace","pattern":{"Regex":"\\s+"},"content":"x"})",
       "tokenizer.json: $.normalizer.pattern.Regex: regex patterns are not "
       "supported"},
      {"pre_tokenizer", R"({"type":"ByteLevel"})",
       "tokenizer.json: $.pre_tokenizer.type: 'ByteLevel' is not supported"},
      {"pre_tokenizer",
       R"({"type":"Split","pattern":{"String":" "},"behavior":"Sideways"})",
       "tokenizer.json: $.pre_tokenizer.behavior: 'Sideways' is not a split "
       "behavior"},
      {"decoder", R"({"type":"Metaspace"})",
       "tokenizer.json: $.decoder.type: 'Metaspace' is not supported"},
      {"post_processor", R"({"type":"ByteLevel"})",
       "tokenizer.json: $.post_processor.type: 'ByteLevel' is not supported"},
      {"post_processor",
       R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{}})",
       "tokenizer.json: $.post_processor.special_tokens.<s>: missing"},
      {"post_processor",
       R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{"<s>":{"id":"<s>","ids":[99],"tokens":["<s>"]}}})",
       "tokenizer.json: $.post_processor: token id 99 is not in the vocabulary"},
      {"truncation", R"({"max_length":8})",
       "tokenizer.json: $.truncation: only null is supported"},
  };
  for (const auto &c : cases) {
    const outcome o = open_json(c.part, c.value);
    EXPECT_EQ(o.code, SGC_STATUS_BAD_INPUT) << c.value;
    EXPECT_NE(o.message.find(c.expect), std::string::npos)
        << "got: " << o.message << "\nwanted: " << c.expect;
  }
}

TEST(TokenizerErrors, BadSentencePieceModelAndBadConfig) {
  sgc_test::temp_dir dir;
  sgc_test::write_file(dir.file("tokenizer.model"), "\x0a\xff\xff garbage");
  outcome o = open_path(dir.path());
  EXPECT_EQ(o.code, SGC_STATUS_BAD_INPUT);
  EXPECT_NE(o.message.find(dir.file("tokenizer.model") +
                           ": not a SentencePiece model"),
            std::string::npos)
      << o.message;
  sgc_test::write_file(dir.file("tokenizer_config.json"),
                       R"({"add_bos_token": "yes"})");
  o = open_path(dir.path());
  EXPECT_NE(o.message.find(dir.file("tokenizer_config.json") +
                           ": $.add_bos_token: expected true or false"),
            std::string::npos)
      << o.message;
}

TEST(TokenizerErrors, DamagedFilesAreRefusedNotCrashedOn) {
  // Every cut of a real tokenizer.json is bad JSON; flipped bytes in a
  // tokenizer.model give an error or a model, never a crash.
  const std::string root = SGC_SOURCE_DIR;
  const std::string json_text =
      sgc_test::read_file(root + "/examples/tiny-gemma4/tokenizer.json");
  const std::string model =
      sgc_test::read_file(root + "/examples/tiny-gemma3/tokenizer.model");
  sgc_test::temp_dir dir;
  for (size_t i = 1; i < 40; ++i) {
    sgc_test::write_file(dir.file("tokenizer.json"),
                         json_text.substr(0, json_text.size() * i / 40));
    EXPECT_EQ(open_path(dir.file("tokenizer.json")).code, SGC_STATUS_BAD_INPUT);
  }
  for (size_t i = 0; i < 200; ++i) {
    std::string bad = model;
    bad[(i * 7919) % bad.size()] ^= static_cast<char>(1 + i % 255);
    sgc_test::write_file(dir.file("tokenizer.model"), bad);
    const outcome o = open_path(dir.file("tokenizer.model"));
    EXPECT_TRUE(o.code == SGC_STATUS_OK || o.code == SGC_STATUS_BAD_INPUT)
        << o.message;
  }
}

class OpenTokenizer : public ::testing::Test {
protected:
  void SetUp() override {
    sgc_test::write_file(dir_.file("tokenizer.json"), tokenizer_json());
    sgc_status_t *st = sgc_tokenizer_open(dir_.path().c_str(), &t_);
    ASSERT_EQ(st, nullptr) << sgc_status_message(st);
  }
  void TearDown() override { sgc_tokenizer_release(t_); }
  sgc_test::temp_dir dir_;
  sgc_tokenizer_t *t_ = nullptr;
};

TEST_F(OpenTokenizer, InvalidUtf8IsRefusedWithItsOffset) {
  int32_t *ids = nullptr;
  size_t n = 0;
  const char text[] = "ab\xC3(";
  sgc_status_t *st = sgc_tokenizer_encode(t_, text, 4, 0, &ids, &n);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  EXPECT_STREQ(sgc_status_message(st),
               "the text to encode is not valid UTF-8 (byte 2)");
  sgc_status_free(st);
  st = sgc_tokenizer_encode(t_, "ab", 2, 0, &ids, &n);
  ASSERT_EQ(st, nullptr);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(ids[0], 4);
  std::free(ids);
}

TEST_F(OpenTokenizer, IdsOutOfRangeAreRefused) {
  char *text = nullptr;
  const int32_t ids[] = {2, 5};
  sgc_status_t *st = sgc_tokenizer_decode(t_, ids, 2, 0, &text, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  EXPECT_STREQ(sgc_status_message(st),
               "token id 5 (at 1) is out of range (vocabulary of 5)");
  sgc_status_free(st);
  sgc_detokenizer_t *d = nullptr;
  ASSERT_EQ(sgc_detokenizer_create(t_, 0, &d), nullptr);
  const char *piece = nullptr;
  size_t len = 0;
  st = sgc_detokenizer_push(d, -1, &piece, &len);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  sgc_status_free(st);
  sgc_detokenizer_release(d);
}

TEST_F(OpenTokenizer, NullArgumentsAreUsageErrors) {
  sgc_status_t *st = sgc_tokenizer_encode(t_, nullptr, 3, 0, nullptr, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  sgc_status_free(st);
  st = sgc_tokenizer_open(nullptr, nullptr);
  EXPECT_EQ(sgc_status_code(st), SGC_STATUS_USAGE);
  sgc_status_free(st);
}

} // namespace
