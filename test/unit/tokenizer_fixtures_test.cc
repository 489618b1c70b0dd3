/*
 * tokenizer_fixtures_test.cc - the runtime's tokenizers against Hugging
 * Face's answers (test/Inputs/tokenizers/cases.json, written by
 * tools/gen-golden/gen_tokenizers.py from transformers and tokenizers):
 * ids with and without BOS, decoded text with special tokens kept and
 * skipped, streaming decode byte-identical to whole decode. Through the C
 * API, as a user of sgc/runtime.h sees it.
 */
#include <sgc/runtime.h>

#include "lib/support/json_strict.h"
#include "lib/support/utf8.h"
#include "test/unit/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;

const json &cases() {
  static const json doc = [] {
    json d;
    sgc::json_parse_error err;
    const std::string text = sgc_test::read_file(
        std::string(SGC_SOURCE_DIR) + "/test/Inputs/tokenizers/cases.json");
    EXPECT_TRUE(sgc::parse_json_strict(text, &d, &err)) << err.message;
    return d;
  }();
  return doc;
}

struct tokenizer_deleter {
  void operator()(sgc_tokenizer_t *t) const { sgc_tokenizer_release(t); }
};
using tokenizer_ptr = std::unique_ptr<sgc_tokenizer_t, tokenizer_deleter>;

/// The fixture's tokenizer, or the file at |other| (relative to the
/// source tree) that holds the same vocabulary.
tokenizer_ptr open(const json &entry, const std::string &other = "") {
  sgc_tokenizer_t *t = nullptr;
  const std::string path =
      std::string(SGC_SOURCE_DIR) + "/" +
      (other.empty() ? entry["path"].get<std::string>() : other);
  sgc_status_t *st = sgc_tokenizer_open(path.c_str(), &t);
  EXPECT_EQ(st, nullptr) << path << ": " << sgc_status_message(st);
  sgc_status_free(st);
  return tokenizer_ptr(t);
}

std::vector<int32_t> encode(const sgc_tokenizer_t *t, const std::string &text,
                            bool bos) {
  int32_t *ids = nullptr;
  size_t n = 0;
  sgc_status_t *st =
      sgc_tokenizer_encode(t, text.data(), text.size(), bos, &ids, &n);
  EXPECT_EQ(st, nullptr) << sgc_status_message(st);
  sgc_status_free(st);
  std::vector<int32_t> out(ids, ids + n);
  std::free(ids);
  return out;
}

std::string decode(const sgc_tokenizer_t *t, const std::vector<int32_t> &ids,
                   bool skip) {
  char *text = nullptr;
  size_t len = 0;
  sgc_status_t *st =
      sgc_tokenizer_decode(t, ids.data(), ids.size(), skip, &text, &len);
  EXPECT_EQ(st, nullptr) << sgc_status_message(st);
  sgc_status_free(st);
  std::string out(text ? text : "", len);
  std::free(text);
  return out;
}

/// Streams |ids| through a detokenizer; every piece must be valid UTF-8.
std::string stream(const sgc_tokenizer_t *t, const std::vector<int32_t> &ids,
                   bool skip) {
  sgc_detokenizer_t *d = nullptr;
  sgc_status_t *st = sgc_detokenizer_create(t, skip, &d);
  EXPECT_EQ(st, nullptr);
  sgc_status_free(st);
  std::string all;
  const char *piece = nullptr;
  size_t len = 0;
  for (int32_t id : ids) {
    st = sgc_detokenizer_push(d, id, &piece, &len);
    EXPECT_EQ(st, nullptr) << sgc_status_message(st);
    sgc_status_free(st);
    const std::string p(piece, len);
    EXPECT_TRUE(sgc::utf8_valid(p)) << "a piece splits a UTF-8 character";
    all += p;
  }
  st = sgc_detokenizer_finish(d, &piece, &len);
  EXPECT_EQ(st, nullptr);
  sgc_status_free(st);
  all.append(piece, len);
  sgc_detokenizer_release(d);
  return all;
}

std::string show(const std::vector<int32_t> &ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i)
    s += (i ? " " : "") + std::to_string(ids[i]);
  return s + "]";
}

/// A parameter is a fixture's name, or "NAME=PATH": the file PATH holds
/// the same vocabulary in another form (a GGUF converted by llama.cpp from
/// the fixture's folder), so HF's answers for NAME hold for it.
class TokenizerFixture : public ::testing::TestWithParam<std::string> {
protected:
  std::string name() const { return GetParam().substr(0, GetParam().find('=')); }
  std::string other_path() const {
    const size_t eq = GetParam().find('=');
    return eq == std::string::npos ? "" : GetParam().substr(eq + 1);
  }
  const json &entry() const {
    for (const json &e : cases()["tokenizers"])
      if (e["name"] == name())
        return e;
    ADD_FAILURE() << "no fixture " << name();
    static const json none;
    return none;
  }
  tokenizer_ptr open_tokenizer() const { return open(entry(), other_path()); }
};

TEST_P(TokenizerFixture, VocabularyAndSpecialTokensAsHF) {
  const json &e = entry();
  tokenizer_ptr t = open_tokenizer();
  ASSERT_TRUE(t);
  EXPECT_EQ(sgc_tokenizer_kind(t.get()), e["kind"].get<std::string>());
  EXPECT_EQ(sgc_tokenizer_vocab_size(t.get()), e["vocab_size"].get<int>());
  EXPECT_EQ(sgc_tokenizer_bos_id(t.get()), e["bos_id"].get<int>());
  EXPECT_EQ(sgc_tokenizer_eos_id(t.get()), e["eos_id"].get<int>());
  EXPECT_EQ(sgc_tokenizer_pad_id(t.get()), e["pad_id"].get<int>());
  const std::set<int> special = e["special_ids"].get<std::set<int>>();
  for (int id = 0; id < sgc_tokenizer_vocab_size(t.get()); ++id) {
    EXPECT_EQ(sgc_tokenizer_is_special(t.get(), id) != 0, special.count(id) != 0)
        << "id " << id;
    const char *p = sgc_tokenizer_piece(t.get(), id);
    ASSERT_NE(p, nullptr) << "id " << id;
    EXPECT_EQ(sgc_tokenizer_token_id(t.get(), p), id) << p;
  }
  EXPECT_EQ(sgc_tokenizer_piece(t.get(), sgc_tokenizer_vocab_size(t.get())),
            nullptr);
  EXPECT_EQ(sgc_tokenizer_piece(t.get(), -1), nullptr);
  EXPECT_EQ(sgc_tokenizer_token_id(t.get(), "no such piece \x01"), -1);
}

TEST_P(TokenizerFixture, EncodeAsHF) {
  const json &e = entry();
  tokenizer_ptr t = open_tokenizer();
  ASSERT_TRUE(t);
  size_t checked = 0;
  for (const json &c : e["encode"]) {
    const std::string text = c[0].get<std::string>();
    const auto plain = c[1].get<std::vector<int32_t>>();
    const auto with_bos = c[2].get<std::vector<int32_t>>();
    EXPECT_EQ(show(encode(t.get(), text, false)), show(plain))
        << "text " << sgc::escape_for_message(text);
    EXPECT_EQ(show(encode(t.get(), text, true)), show(with_bos))
        << "text " << sgc::escape_for_message(text) << " (with BOS)";
    ++checked;
  }
  EXPECT_GE(checked, 150u);
}

TEST_P(TokenizerFixture, DecodeAsHF) {
  const json &e = entry();
  tokenizer_ptr t = open_tokenizer();
  ASSERT_TRUE(t);
  for (const json &c : e["decode"]) {
    const auto ids = c[0].get<std::vector<int32_t>>();
    EXPECT_EQ(decode(t.get(), ids, false), c[1].get<std::string>())
        << "ids " << show(ids);
    EXPECT_EQ(decode(t.get(), ids, true), c[2].get<std::string>())
        << "ids " << show(ids) << " (skip special)";
  }
}

TEST_P(TokenizerFixture, StreamingEqualsWholeDecode) {
  const json &e = entry();
  tokenizer_ptr t = open_tokenizer();
  ASSERT_TRUE(t);
  for (const json &c : e["decode"]) {
    const auto ids = c[0].get<std::vector<int32_t>>();
    EXPECT_EQ(stream(t.get(), ids, false), c[1].get<std::string>())
        << "ids " << show(ids);
    EXPECT_EQ(stream(t.get(), ids, true), c[2].get<std::string>())
        << "ids " << show(ids) << " (skip special)";
  }
}

TEST_P(TokenizerFixture, StreamingALongSequenceEqualsWholeDecode) {
  // Every id list of the fixture in one sequence (thousands of tokens,
  // byte runs and specials among them): the property, not HF's text.
  const json &e = entry();
  tokenizer_ptr t = open_tokenizer();
  ASSERT_TRUE(t);
  std::vector<int32_t> all;
  for (const json &c : e["decode"])
    for (int32_t id : c[0].get<std::vector<int32_t>>())
      all.push_back(id);
  ASSERT_GT(all.size(), 2000u);
  // A decoder with a Strip (bpe-prepend) redecodes the whole sequence at
  // each push: a shorter sequence keeps the test quick.
  if (e["name"] == "bpe-prepend")
    all.resize(600);
  for (bool skip : {false, true})
    EXPECT_EQ(stream(t.get(), all, skip), decode(t.get(), all, skip))
        << (skip ? "skip special" : "keep special");
}

std::string test_name(const ::testing::TestParamInfo<std::string> &info) {
  std::string n = info.param;
  if (const size_t eq = n.find('='); eq != std::string::npos) {
    // The other file's folder: "examples/X/model.gguf" -> "X".
    n = n.substr(eq + 1, n.rfind('/') - eq - 1);
    n = n.substr(n.rfind('/') + 1);
  }
  for (char &ch : n)
    if (ch == '-')
      ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(HF, TokenizerFixture,
                         ::testing::Values("sentencepiece",
                                           "sentencepiece-plain", "bpe",
                                           "bpe-prepend", "tiny-gemma3",
                                           "tiny-gemma4"),
                         test_name);

// The GGUF goldens were converted by llama.cpp's convert_hf_to_gguf.py from
// a folder holding tiny-gemma3's tokenizer.model and tokenizer_config.json,
// or tiny-gemma4's tokenizer.json (tools/gen-golden/gen_gguf.py): their
// tokenizer.ggml.* must answer as HF does with those files.
INSTANTIATE_TEST_SUITE_P(
    GgufVocabulary, TokenizerFixture,
    ::testing::Values(
        "tiny-gemma3=examples/tiny-gemma3-gguf-q8_0/model.gguf",
        "tiny-gemma3=examples/tiny-gemma3-gguf-q4_0/model.gguf",
        "tiny-gemma4=examples/tiny-gemma4-gguf-q8_0/model.gguf"),
    test_name);

TEST(TokenizerFixtures, CoverHundredsOfStrings) {
  size_t strings = 0, lists = 0;
  for (const json &e : cases()["tokenizers"]) {
    strings += e["encode"].size();
    lists += e["decode"].size();
  }
  EXPECT_GE(strings, 1000u);
  EXPECT_GE(lists, 1500u);
}

} // namespace
