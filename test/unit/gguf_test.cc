/*
 * gguf_test.cc - the GGUF reader (lib/gguf) on the committed fixtures in
 * test/Inputs/gguf, which generate.py there writes with llama.cpp's own
 * writer (gguf-py's GGUFWriter): each valid file reads as the writer's
 * record of it (<name>.expect.json) says; each bad file (bad_cases.tsv says
 * its one defect) is rejected with a message naming the file and the key
 * or tensor; no prefix of a file that cuts tensor data is accepted.
 */
#include "lib/gguf/gguf.h"

#include "test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

using namespace sgc;
using sgc_test::read_file;

namespace {

std::string fixture(const std::string &name) {
  return std::string(SGC_SOURCE_DIR) + "/test/Inputs/gguf/" + name;
}

uint64_t hex_bits(const nlohmann::json &j) {
  return std::stoull(j.get<std::string>(), nullptr, 16);
}

/// Compares what the reader made of |name| with the writer's record.
void expect_matches_record(const std::string &name) {
  SCOPED_TRACE(name);
  const nlohmann::json want = nlohmann::json::parse(
      read_file(fixture(name + ".expect.json")));
  std::unique_ptr<gguf::file> f;
  const status st = gguf::file::open(fixture(name + ".gguf"), &f);
  ASSERT_TRUE(st.ok()) << st.message();
  const gguf::header &h = f->hdr();
  EXPECT_EQ(h.version, want["version"].get<uint32_t>());
  EXPECT_EQ(h.alignment, want["alignment"].get<uint64_t>());
  EXPECT_EQ(h.data_offset, want["data_offset"].get<uint64_t>());
  EXPECT_EQ(h.data_bytes, want["data_bytes"].get<uint64_t>());

  const nlohmann::json &kvs = want["metadata"];
  ASSERT_EQ(h.metadata.size(), kvs.size());
  for (size_t i = 0; i < kvs.size(); ++i) {
    const nlohmann::json &kv = kvs[i];
    const gguf::metadata_entry &got = h.metadata[i];
    SCOPED_TRACE(kv["key"].get<std::string>());
    EXPECT_EQ(got.key, kv["key"].get<std::string>());
    EXPECT_EQ(static_cast<uint32_t>(got.val.type), kv["type_id"].get<uint32_t>());
    EXPECT_STREQ(gguf::value_type_name(got.val.type),
                 kv["type"].get<std::string>().c_str());
    if (got.val.type == gguf::value_type::string) {
      EXPECT_EQ(got.val.text, kv["value"].get<std::string>());
    } else if (got.val.type == gguf::value_type::array) {
      EXPECT_EQ(static_cast<uint32_t>(got.val.element_type),
                kv["element_type_id"].get<uint32_t>());
      ASSERT_EQ(got.val.size(), kv["count"].get<size_t>());
      for (size_t e = 0; e < got.val.size(); ++e) {
        if (got.val.element_type == gguf::value_type::string)
          EXPECT_EQ(got.val.strings[e], kv["values"][e].get<std::string>());
        else
          EXPECT_EQ(got.val.numbers[e], hex_bits(kv["bits"][e])) << e;
        // The element accessors convert by the element type.
        if (kv["values"][e].is_number_integer())
          EXPECT_EQ(got.val.element_int(e), kv["values"][e].get<int64_t>());
        else if (kv["values"][e].is_number_float())
          EXPECT_EQ(got.val.element_double(e), kv["values"][e].get<double>());
      }
    } else {
      EXPECT_EQ(got.val.bits, hex_bits(kv["bits"]));
      // The accessors convert by the stored type, as the writer's value.
      if (got.val.is_integer() && kv["value"].is_number_integer())
        EXPECT_EQ(got.val.as_int(), kv["value"].get<int64_t>());
      if (kv["value"].is_number_float())
        EXPECT_EQ(got.val.as_double(), kv["value"].get<double>());
    }
  }

  const nlohmann::json &ts = want["tensors"];
  ASSERT_EQ(h.tensors.size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const nlohmann::json &t = ts[i];
    const gguf::tensor_info &got = h.tensors[i];
    SCOPED_TRACE(t["name"].get<std::string>());
    EXPECT_EQ(got.name, t["name"].get<std::string>());
    EXPECT_EQ(got.type, t["type_id"].get<uint32_t>());
    ASSERT_NE(gguf::find_type(got.type), nullptr);
    EXPECT_STREQ(gguf::find_type(got.type)->name,
                 t["type"].get<std::string>().c_str());
    EXPECT_EQ(got.dims, t["dims"].get<std::vector<uint64_t>>());
    EXPECT_EQ(got.elements(), t["n_elements"].get<uint64_t>());
    EXPECT_EQ(got.offset, t["offset"].get<uint64_t>());
    EXPECT_EQ(got.bytes, t["bytes"].get<uint64_t>());
    EXPECT_EQ(h.find_tensor(got.name), &got);
  }
}

TEST(Gguf, ValidFilesReadAsTheirWriterRecorded) {
  expect_matches_record("valid_small");
  expect_matches_record("valid_aligned64");
  expect_matches_record("valid_empty");
}

TEST(Gguf, TensorDataIsMappedInPlace) {
  std::unique_ptr<gguf::file> f;
  ASSERT_TRUE(gguf::file::open(fixture("valid_small.gguf"), &f).ok());
  const nlohmann::json want = nlohmann::json::parse(
      read_file(fixture("valid_small.expect.json")));
  for (const nlohmann::json &t : want["tensors"]) {
    if (t["type"] != "F32")
      continue;
    const gguf::tensor_info *info = f->hdr().find_tensor(t["name"].get<std::string>());
    ASSERT_NE(info, nullptr);
    const float *values = reinterpret_cast<const float *>(f->data(*info));
    for (size_t i = 0; i < t["first_values"].size(); ++i)
      EXPECT_EQ(values[i], t["first_values"][i].get<double>()) << i;
  }
}

/// Each bad fixture, and what its message must say (besides the path).
const std::map<std::string, std::string> &bad_messages() {
  static const std::map<std::string, std::string> m = {
      {"bad_empty.gguf", "the file is empty, not a GGUF file"},
      {"bad_magic.gguf", "not a GGUF file (it does not start with 'GGUF')"},
      {"bad_version_2.gguf", "GGUF version 2; sgc reads version 3"},
      {"bad_version_4.gguf", "GGUF version 4; sgc reads version 3"},
      {"bad_truncated_header.gguf",
       "the file ends inside the value of 'tokenizer.ggml.tokens'"},
      {"bad_truncated_data.gguf",
       "tensor 'blk.0.attn_q.weight' has data [32, 32 + 68) past the end of "
       "the data section"},
      {"bad_kv_count_huge.gguf", "1152921504606846976 metadata entries "
                                 "cannot fit"},
      {"bad_tensor_count_huge.gguf", "1152921504606846976 tensors cannot fit"},
      {"bad_string_length_past_eof.gguf", "the file ends inside a metadata "
                                          "key"},
      {"bad_string_length_huge.gguf",
       "the file ends inside the value of 'general.architecture'"},
      {"bad_value_type.gguf",
       "the metadata key 'gemma3.block_count' has unknown value type 13"},
      {"bad_array_of_arrays.gguf",
       "the value of 'test.nested' is an array of arrays"},
      {"bad_array_count_past_eof.gguf",
       "the value of 'tokenizer.ggml.tokens' has 4294967299 elements"},
      {"bad_duplicate_key.gguf",
       "the metadata key 'gemma3.block_count' appears twice"},
      {"bad_duplicate_tensor.gguf",
       "tensor 'output_norm.weight' appears twice"},
      {"bad_n_dims_0.gguf",
       "tensor 'output_norm.weight' has 0 dimensions (1 to 4)"},
      {"bad_n_dims_5.gguf",
       "tensor 'output_norm.weight' has 5 dimensions (1 to 4)"},
      {"bad_dim_0.gguf", "tensor 'blk.0.attn_q.weight' has a zero dimension"},
      {"bad_dims_overflow.gguf",
       "tensor 'output_norm.weight' has more elements than 2^64"},
      {"bad_unknown_type.gguf",
       "tensor 'output_norm.weight' has ggml type 99, which sgc does not "
       "know"},
      {"bad_block_divisibility.gguf",
       "tensor 'blk.0.attn_q.weight' is Q8_0, whose blocks hold 32 elements, "
       "but its first dimension is 48"},
      {"bad_offset_unaligned.gguf",
       "tensor 'blk.0.attn_q.weight' starts at data offset 40, not a "
       "multiple of the alignment 32"},
      {"bad_offset_past_eof.gguf",
       "tensor 'blk.0.attn_q.weight' has data [64, 64 + 68) past the end of "
       "the data section (128 bytes)"},
      {"bad_overlap.gguf", "tensors 'output_norm.weight' and "
                           "'blk.0.attn_q.weight' share data bytes"},
      {"bad_alignment_not_pow2.gguf",
       "the metadata key 'general.alignment' is 48, not a power of two"},
      {"bad_alignment_type.gguf",
       "the metadata key 'general.alignment' is a STRING, not a UINT32"},
      {"bad_key_not_utf8.gguf", "is not valid UTF-8"},
      {"bad_bool_value.gguf", "the value of 'tokenizer.ggml.add_bos_token' is "
                              "a BOOL of 2 (0 or 1)"},
  };
  return m;
}

TEST(Gguf, BadFilesAreRejectedNamingTheKeyOrTensor) {
  // Every file bad_cases.tsv lists has a row here, and the reverse.
  std::istringstream cases(read_file(fixture("bad_cases.tsv")));
  std::string line;
  size_t listed = 0;
  while (std::getline(cases, line)) {
    const std::string name = line.substr(0, line.find('\t'));
    SCOPED_TRACE(line);
    auto it = bad_messages().find(name);
    ASSERT_NE(it, bad_messages().end()) << "no expected message for " << name;
    ++listed;
    std::unique_ptr<gguf::file> f;
    const std::string path = fixture(name);
    const status st = gguf::file::open(path, &f);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), status_code::bad_input);
    EXPECT_EQ(st.message().rfind(path + ": ", 0), 0u) << st.message();
    EXPECT_NE(st.message().find(it->second), std::string::npos)
        << st.message();
  }
  EXPECT_EQ(listed, bad_messages().size());
}

TEST(Gguf, NoPrefixThatCutsTensorDataIsAccepted) {
  const std::string bytes = read_file(fixture("valid_small.gguf"));
  gguf::header full;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t *>(bytes.data()),
                          bytes.size(), "valid_small.gguf", &full)
                  .ok());
  uint64_t end = 0;
  for (const gguf::tensor_info &t : full.tensors)
    end = std::max(end, full.data_offset + t.offset + t.bytes);
  for (uint64_t n = 0; n < end; ++n) {
    gguf::header h;
    const status st = gguf::parse(
        reinterpret_cast<const uint8_t *>(bytes.data()), n, "prefix", &h);
    ASSERT_FALSE(st.ok()) << n << " bytes accepted";
    ASSERT_EQ(st.code(), status_code::bad_input);
  }
}

TEST(Gguf, ScalarsConvertByTheirType) {
  gguf::value v;
  v.type = gguf::value_type::i8;
  v.bits = 0x80;
  EXPECT_EQ(v.as_int(), -128);
  EXPECT_EQ(v.as_double(), -128.0);
  v.type = gguf::value_type::u8;
  EXPECT_EQ(v.as_int(), 128);
  v.type = gguf::value_type::i32;
  v.bits = 0xffffffffu;
  EXPECT_EQ(v.as_int(), -1);
  v.type = gguf::value_type::f32;
  v.bits = 0x3fc00000u; // 1.5f
  EXPECT_EQ(v.as_double(), 1.5);
  EXPECT_FALSE(v.is_integer());
  v.type = gguf::value_type::f64;
  v.bits = 0xc004000000000000ull; // -2.5
  EXPECT_EQ(v.as_double(), -2.5);
}

} // namespace
