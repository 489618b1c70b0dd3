/*
 * chat_test.cc - sgc-run's chat renderer (tools/sgc-run/chat.c) against what
 * Hugging Face's apply_chat_template made of the real templates
 * (test/Inputs/chat/chat-templates.json, written by
 * tools/gen-golden/gen_chat.py): every case, both families, images in a
 * turn included.
 */
#include <sgc/runtime/chat.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

nlohmann::json load_fixture() {
  std::ifstream in(SGC_TEST_CHAT_FIXTURE);
  EXPECT_TRUE(in.good()) << SGC_TEST_CHAT_FIXTURE;
  return nlohmann::json::parse(in);
}

void check_family(const std::string &family, sgc_chat_format_t format) {
  const nlohmann::json fixture = load_fixture();
  const std::string bos = fixture.at("bos_token");
  const nlohmann::json &cases = fixture.at("families").at(family).at("cases");
  ASSERT_GE(cases.size(), 10u);
  for (const nlohmann::json &c : cases) {
    SCOPED_TRACE(family + ": " + c.at("name").get<std::string>());
    std::vector<std::string> roles, contents;
    std::vector<size_t> images;
    for (const nlohmann::json &m : c.at("messages")) {
      roles.push_back(m.at("role"));
      const nlohmann::json &content = m.at("content");
      if (content.is_string()) {
        contents.push_back(content);
        images.push_back(0);
        continue;
      }
      // A content list: image items, then one text item.
      ASSERT_GE(content.size(), 2u);
      ASSERT_EQ(content.back().at("type"), "text");
      for (size_t k = 0; k + 1 < content.size(); ++k)
        ASSERT_EQ(content[k].at("type"), "image");
      contents.push_back(content.back().at("text"));
      images.push_back(content.size() - 1);
    }
    std::vector<sgc_chat_message_t> messages;
    for (size_t i = 0; i < roles.size(); ++i)
      messages.push_back({roles[i].c_str(), contents[i].c_str(), images[i]});
    char *out = nullptr;
    const char *error = nullptr;
    const int rc = sgc_chat_render(format, bos.c_str(), messages.data(),
                               messages.size(),
                               c.at("add_generation_prompt").get<bool>(), &out,
                               &error);
    if (c.contains("error")) {
      EXPECT_EQ(rc, 1);
      if (rc == 1)
        EXPECT_EQ(std::string(error), c.at("error").get<std::string>());
      else
        std::free(out);
      continue;
    }
    ASSERT_EQ(rc, 0) << error;
    EXPECT_EQ(std::string(out), c.at("text").get<std::string>());
    std::free(out);
  }
}

TEST(Chat, Gemma3EqualsHuggingFace) { check_family("gemma3", SGC_CHAT_GEMMA3); }

TEST(Chat, Gemma4EqualsHuggingFace) { check_family("gemma4", SGC_CHAT_GEMMA4); }

TEST(Chat, FormatSelection) {
  EXPECT_EQ(sgc_chat_format_for_family("gemma3"), SGC_CHAT_GEMMA3);
  EXPECT_EQ(sgc_chat_format_for_family("gemma4"), SGC_CHAT_GEMMA4);
  EXPECT_EQ(sgc_chat_format_for_family("llama"), SGC_CHAT_NONE);
  EXPECT_EQ(sgc_chat_format_of_template("x {{'<start_of_turn>model\\n'}}"),
            SGC_CHAT_GEMMA3);
  EXPECT_EQ(sgc_chat_format_of_template("{{- '<|turn>model\\n' -}}"), SGC_CHAT_GEMMA4);
  EXPECT_EQ(sgc_chat_format_of_template("<|im_start|>assistant"), SGC_CHAT_NONE);
  EXPECT_STREQ(sgc_chat_end_of_turn(SGC_CHAT_GEMMA3), "<end_of_turn>");
  EXPECT_STREQ(sgc_chat_end_of_turn(SGC_CHAT_GEMMA4), "<turn|>");
}

} // namespace
