/*
 * tokenizer_components_test.cc - each tokenizer.json component on its own,
 * with expectations derived by hand from HF tokenizers' documented rules
 * (the Split behaviors are the example of HF's own documentation).
 */
#include "runtime/src/tokenizer/added_vocabulary.h"
#include "runtime/src/tokenizer/bpe_model.h"
#include "runtime/src/tokenizer/decoder.h"
#include "runtime/src/tokenizer/normalizer.h"
#include "runtime/src/tokenizer/post_processor.h"
#include "runtime/src/tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace sgc::runtime;
using json = nlohmann::json;

const std::string kFile = "t.json";
const std::string kSpace = "\xE2\x96\x81"; // U+2581
const std::string kReplacement = "\xEF\xBF\xBD";

normalizer parse_normalizer(const char *text) {
  const json j = json::parse(text);
  normalizer n;
  sgc::status st = normalizer::parse(json_cursor(&kFile, &j), &n);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return n;
}

TEST(TokenizerNormalizer, ReplaceEverySpace) {
  const normalizer n = parse_normalizer(
      R"({"type":"Replace","pattern":{"String":" "},"content":"▁"})");
  EXPECT_EQ(n.apply("a b  c "), "a" + kSpace + "b" + kSpace + kSpace + "c" + kSpace);
  EXPECT_EQ(n.apply(""), "");
}

TEST(TokenizerNormalizer, PrependOnlyToNonEmptyTextThenReplace) {
  const normalizer n = parse_normalizer(
      R"({"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},
          {"type":"Replace","pattern":{"String":" "},"content":"▁"}]})");
  EXPECT_EQ(n.apply(" a"), kSpace + kSpace + "a");
  EXPECT_EQ(n.apply(""), "");
}

TEST(TokenizerNormalizer, NullIsNone) {
  EXPECT_TRUE(parse_normalizer("null").empty());
}

std::vector<std::string> split(const char *behavior) {
  const json j = json::parse(std::string(R"({"type":"Split","pattern":{"String":"-"},"behavior":")") +
                             behavior + R"(","invert":false})");
  pre_tokenizer p;
  sgc::status st = pre_tokenizer::parse(json_cursor(&kFile, &j), &p);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return p.apply("The-final--countdown");
}

TEST(TokenizerPreTokenizer, SplitBehaviors) {
  using v = std::vector<std::string>;
  EXPECT_EQ(split("Removed"), (v{"The", "final", "countdown"}));
  EXPECT_EQ(split("Isolated"), (v{"The", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithPrevious"), (v{"The-", "final-", "-", "countdown"}));
  EXPECT_EQ(split("MergedWithNext"), (v{"The", "-final", "-", "-countdown"}));
  EXPECT_EQ(split("Contiguous"), (v{"The", "-", "final", "--", "countdown"}));
}

bpe_model parse_bpe(const std::string &merges, const std::string &flags = "") {
  const json j = json::parse(
      R"({"type":"BPE","dropout":null,"unk_token":"<unk>",)" + flags +
      R"("vocab":{"a":0,"b":1,"c":2,"ab":3,"bc":4,"abc":5,"<unk>":6,"<0xC3>":7,"<0xA9>":8},
         "merges":)" + merges + "}");
  bpe_model m;
  sgc::status st = bpe_model::parse(json_cursor(&kFile, &j), &m);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return m;
}

std::vector<int32_t> bpe(const bpe_model &m, const std::string &word) {
  std::vector<int32_t> ids;
  m.encode(word, &ids);
  return ids;
}

TEST(TokenizerBpe, EarlierMergesApplyFirst) {
  using v = std::vector<int32_t>;
  // "b c" before "a b": abc -> a + bc; the other order: ab + c.
  EXPECT_EQ(bpe(parse_bpe(R"(["b c","a b"])"), "abc"), (v{0, 4}));
  EXPECT_EQ(bpe(parse_bpe(R"(["a b","b c"])"), "abc"), (v{3, 2}));
  // Merges as pairs mean the same.
  EXPECT_EQ(bpe(parse_bpe(R"([["b","c"],["a","b"]])"), "abc"), (v{0, 4}));
  // A merge made possible by an earlier one.
  EXPECT_EQ(bpe(parse_bpe(R"(["b c","a bc"])"), "abcabc"), (v{5, 5}));
  EXPECT_EQ(bpe(parse_bpe(R"(["a b"])"), "aab"), (v{0, 3}));
}

TEST(TokenizerBpe, ByteFallbackAndUnknown) {
  using v = std::vector<int32_t>;
  const bpe_model with_bytes = parse_bpe("[]", R"("byte_fallback":true,"fuse_unk":false,)");
  EXPECT_EQ(bpe(with_bytes, "a\xC3\xA9"), (v{0, 7, 8}));   // é has both byte pieces
  EXPECT_EQ(bpe(with_bytes, "x\xC3\xA8"), (v{6, 6}));      // è lacks <0xA8>: unknown
  const bpe_model fused = parse_bpe("[]", R"("fuse_unk":true,)");
  EXPECT_EQ(bpe(fused, "xyz"), (v{6}));
  EXPECT_EQ(bpe(fused, "xaz"), (v{6, 0, 6}));
  const bpe_model unfused = parse_bpe("[]");
  EXPECT_EQ(bpe(unfused, "xy"), (v{6, 6}));
}

TEST(TokenizerBpe, IgnoreMergesTakesAWholeWordFromTheVocabulary) {
  using v = std::vector<int32_t>;
  EXPECT_EQ(bpe(parse_bpe(R"(["a b"])", R"("ignore_merges":true,)"), "bc"), (v{4}));
  EXPECT_EQ(bpe(parse_bpe(R"(["a b"])"), "bc"), (v{1, 2}));
}

std::vector<std::string> split_added(const added_vocabulary &av,
                                     const std::string &text,
                                     const normalizer &n = normalizer()) {
  std::vector<std::string> out;
  for (const segment &s : av.split(text, n))
    out.push_back((s.id >= 0 ? "#" : "") + s.text);
  return out;
}

added_token token(int32_t id, const char *content) {
  added_token t;
  t.id = id;
  t.content = content;
  return t;
}

TEST(TokenizerAddedTokens, LeftmostLongestMatch) {
  added_vocabulary av;
  av.add(token(1, "<a>"), normalizer());
  av.add(token(2, "<a><b>"), normalizer());
  using v = std::vector<std::string>;
  EXPECT_EQ(split_added(av, "x<a><b>y<a>"), (v{"x", "#<a><b>", "y", "#<a>"}));
}

TEST(TokenizerAddedTokens, LstripRstripSwallowWhitespace) {
  added_vocabulary av;
  added_token l = token(1, "<l>"), r = token(2, "<r>");
  l.lstrip = true;
  r.rstrip = true;
  av.add(l, normalizer());
  av.add(r, normalizer());
  using v = std::vector<std::string>;
  EXPECT_EQ(split_added(av, "x \t<l> y"), (v{"x", "# \t<l>", " y"}));
  EXPECT_EQ(split_added(av, "x <r>\n z"), (v{"x ", "#<r>\n ", "z"}));
}

TEST(TokenizerAddedTokens, SingleWordNeedsNonWordNeighbours) {
  added_vocabulary av;
  added_token t = token(1, "ZZ");
  t.single_word = true;
  av.add(t, normalizer());
  using v = std::vector<std::string>;
  EXPECT_EQ(split_added(av, "ZZ top"), (v{"#ZZ", " top"}));
  EXPECT_EQ(split_added(av, "(ZZ)"), (v{"(", "#ZZ", ")"}));
  EXPECT_EQ(split_added(av, "aZZ"), (v{"aZZ"}));
  EXPECT_EQ(split_added(av, "ZZb"), (v{"ZZb"}));
}

TEST(TokenizerAddedTokens, NormalizedTokensMatchTheNormalizedText) {
  const normalizer n = normalizer::replace(" ", kSpace);
  added_vocabulary av;
  added_token t = token(1, "new york");
  t.normalized = true;
  av.add(t, n);
  using v = std::vector<std::string>;
  EXPECT_EQ(split_added(av, "in new york", n),
            (v{"in" + kSpace, "#new" + kSpace + "york"}));
  ASSERT_NE(av.decode_form(1), nullptr);
  EXPECT_EQ(*av.decode_form(1), "new" + kSpace + "york");
}

std::string run_decoder(const char *spec, std::vector<std::string> tokens) {
  const json j = json::parse(spec);
  decoder d;
  sgc::status st = decoder::parse(json_cursor(&kFile, &j), &d);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return d.apply(std::move(tokens));
}

TEST(TokenizerDecoder, ByteFallbackJoinsRunsOrReplacesEachByte) {
  const char *gemma = R"({"type":"Sequence","decoders":[
      {"type":"Replace","pattern":{"String":"▁"},"content":" "},
      {"type":"ByteFallback"},{"type":"Fuse"}]})";
  EXPECT_EQ(run_decoder(gemma, {"<0xE4>", "<0xBD>", "<0xA0>"}), "\xE4\xBD\xA0");
  EXPECT_EQ(run_decoder(gemma, {"<0xE4>", "<0xBD>"}), kReplacement + kReplacement);
  // The whole run is replaced, its valid first byte too.
  EXPECT_EQ(run_decoder(gemma, {"a", "<0x41>", "<0xE4>", kSpace + "b"}),
            "a" + kReplacement + kReplacement + " b");
  EXPECT_EQ(run_decoder(gemma, {"<0x41>", "x", "<0x42>"}), "AxB");
}

TEST(TokenizerDecoder, StripAndNull) {
  EXPECT_EQ(run_decoder(R"({"type":"Strip","content":" ","start":1,"stop":0})",
                        {"  a ", "b"}),
            " a b");
  EXPECT_EQ(run_decoder("null", {"a", "b"}), "a b");
}

TEST(TokenizerPostProcessor, TemplateAroundTheSequence) {
  const json j = json::parse(R"({"type":"TemplateProcessing",
      "single":[{"SpecialToken":{"id":"<bos>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},
                {"SpecialToken":{"id":"<eos>","type_id":0}}],
      "special_tokens":{"<bos>":{"id":"<bos>","ids":[2],"tokens":["<bos>"]},
                        "<eos>":{"id":"<eos>","ids":[1],"tokens":["<eos>"]}}})");
  post_processor p;
  sgc::status st = post_processor::parse(json_cursor(&kFile, &j), &p);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(p.prefix, std::vector<int32_t>{2});
  EXPECT_EQ(p.suffix, std::vector<int32_t>{1});
}

} // namespace
