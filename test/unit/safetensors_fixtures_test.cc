/*
 * safetensors_fixtures_test.cc - the committed fixtures in
 * test/Inputs/safetensors (written by generate.py there): each bad file is
 * rejected with a message naming the file and, where there is one, the
 * tensor; each valid file opens.
 */
#include "lib/safetensors/safetensors.h"

#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sgc;

namespace {

struct fixture_case {
  const char *path;                  ///< relative to test/Inputs/safetensors
  std::vector<std::string> expected; ///< substrings of message + notes
};

const fixture_case bad_fixtures[] = {
    {"bad_empty.safetensors", {"file is empty"}},
    {"bad_seven_bytes.safetensors", {"7 bytes", "too short"}},
    {"bad_header_past_eof.safetensors", {"header length 4096 runs past"}},
    {"bad_header_2pow63.safetensors",
     {"header length 9223372036854775808 exceeds the limit"}},
    {"bad_header_not_json.safetensors", {"header is not valid JSON"}},
    {"bad_header_not_object.safetensors", {"array, not a JSON object"}},
    {"bad_header_leading_space.safetensors", {"must start with '{'"}},
    {"bad_name_not_utf8.safetensors", {"not valid UTF-8", "bad\\xFF\\xFEname"}},
    {"bad_duplicate_name.safetensors", {"tensor 'w' appears more than once"}},
    {"bad_overlap.safetensors", {"'a' [0, 8) and 'b' [4, 12) overlap"}},
    {"bad_reversed_offsets.safetensors", {"tensor 'a'", "reversed"}},
    {"bad_offsets_out_of_range.safetensors",
     {"tensor 'a'", "run past the data region"}},
    {"bad_hole.safetensors", {"hole of 4 bytes", "'a'", "'b'"}},
    {"bad_trailing_bytes.safetensors", {"follow the last tensor 'a'"}},
    {"bad_byte_length.safetensors", {"tensor 'a'", "F32 x [3] needs 12"}},
    {"bad_shape_overflow.safetensors",
     {"tensor 'a'", "more elements than fit in 64 bits"}},
    {"bad_negative_dim.safetensors", {"tensor 'a'", "negative dimension -1"}},
    {"bad_unknown_dtype.safetensors", {"tensor 'a'", "unknown dtype 'Q4_K'"}},
    {"bad_truncated_data.safetensors",
     {"tensor 'b'", "run past the data region (20 bytes)"}},
    {"sharded_missing_shard",
     {"model-00002-of-00002.safetensors", "cannot open", "tensor", "'b'"}},
    {"sharded_missing_tensor",
     {"model-00001-of-00001.safetensors", "tensor 'b'",
      "missing from this shard"}},
};

} // namespace

TEST(SafetensorsFixtures, BadFilesAreRejected) {
  for (const fixture_case &c : bad_fixtures) {
    SCOPED_TRACE(c.path);
    const std::string path = sgc_test::fixtures_dir() + "/" + c.path;
    std::unique_ptr<safetensors::checkpoint> ck;
    const status st = safetensors::checkpoint::open(path, &ck);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), status_code::bad_input);
    const std::string all = st.to_string();
    // The file is named: the fixture itself or, for a directory, the shard.
    const std::string file_part =
        std::string(c.path).find('/') == std::string::npos &&
                std::string(c.path).find(".safetensors") != std::string::npos
            ? path
            : sgc_test::fixtures_dir() + "/" + c.path + "/";
    EXPECT_NE(all.find(file_part), std::string::npos) << all;
    for (const std::string &e : c.expected)
      EXPECT_NE(all.find(e), std::string::npos)
          << "expected '" << e << "' in:\n"
          << all;
  }
}

TEST(SafetensorsFixtures, ValidFilesOpen) {
  struct valid_case {
    const char *path;
    size_t tensors;
    uint64_t bytes;
  };
  const valid_case cases[] = {{"valid_small.safetensors", 3, 30},
                              {"valid_empty.safetensors", 0, 0},
                              {"valid_scalar_and_empty.safetensors", 3, 10},
                              {"sharded", 3, 20}};
  for (const valid_case &c : cases) {
    SCOPED_TRACE(c.path);
    std::unique_ptr<safetensors::checkpoint> ck;
    const status st = safetensors::checkpoint::open(
        sgc_test::fixtures_dir() + "/" + c.path, &ck);
    ASSERT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(ck->tensors().size(), c.tensors);
    EXPECT_EQ(ck->tensor_bytes(), c.bytes);
  }
  std::unique_ptr<safetensors::checkpoint> ck;
  ASSERT_TRUE(safetensors::checkpoint::open(
                  sgc_test::fixtures_dir() + "/valid_small.safetensors", &ck)
                  .ok());
  const auto *ids = ck->find("c.ids");
  ASSERT_NE(ids, nullptr);
  // Offset 22: misaligned for I64 (legal in the format), so copy it out.
  int64_t value = 0;
  std::memcpy(&value, ids->shard->data(*ids->info), sizeof value);
  EXPECT_EQ(value, -7);
}
