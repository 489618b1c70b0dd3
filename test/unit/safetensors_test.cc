/*
 * safetensors_test.cc - lib/safetensors: round trips, every validation rule
 * on hand-built images, sharded checkpoints.
 */
#include "lib/safetensors/safetensors.h"

#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sgc;
using sgc_test::safetensors_image;
using sgc_test::temp_dir;
using sgc_test::write_file;

namespace {

/// Parses |image| under the label "mem.safetensors".
status parse_image(const std::string &image, safetensors::header *h) {
  return safetensors::parse(reinterpret_cast<const uint8_t *>(image.data()),
                            image.size(), "mem.safetensors", h);
}

/// Expects |image| to be rejected with code bad_input and a message that
/// names the file and contains each of |parts|.
void expect_rejected(const std::string &image,
                     const std::vector<std::string> &parts) {
  safetensors::header h;
  const status st = parse_image(image, &h);
  ASSERT_FALSE(st.ok()) << "accepted an invalid image";
  EXPECT_EQ(st.code(), status_code::bad_input);
  EXPECT_NE(st.message().find("'mem.safetensors'"), std::string::npos)
      << st.message();
  for (const std::string &p : parts)
    EXPECT_NE(st.message().find(p), std::string::npos)
        << "missing '" << p << "' in: " << st.message();
}

std::string entry(const std::string &name, const std::string &dtype,
                  const std::string &shape, uint64_t begin, uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(begin) + "," +
         std::to_string(end) + "]}";
}

} // namespace

//===----------------------------------------------------------------------===//
// Accepted images
//===----------------------------------------------------------------------===//

TEST(SafetensorsParse, MinimalAndMetadata) {
  safetensors::header h;
  ASSERT_TRUE(parse_image(safetensors_image("{}"), &h).ok());
  EXPECT_TRUE(h.tensors.empty());
  EXPECT_EQ(h.data_bytes, 0u);

  const std::string img =
      safetensors_image("{\"__metadata__\":{\"format\":\"pt\"}," +
                            entry("b", "F32", "[2]", 0, 8) + "," +
                            entry("a", "BF16", "[1,2]", 8, 12) + "}   ",
                        std::string(12, '\x01'));
  const status st = parse_image(img, &h);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors[0].name, "a"); // sorted by name
  EXPECT_EQ(h.tensors[0].type, dtype::bf16);
  EXPECT_EQ(h.tensors[0].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(h.tensors[1].bytes(), 8u);
  EXPECT_EQ(h.metadata.at("format"), "pt");
  EXPECT_EQ(h.find("b"), &h.tensors[1]);
  EXPECT_EQ(h.find("c"), nullptr);
}

TEST(SafetensorsParse, EveryDtype) {
  const char *names[] = {"F64", "F32",     "F16",     "BF16",   "I64", "I32",
                         "I16", "I8",      "U8",      "BOOL",   "U16", "U32",
                         "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0"};
  for (const char *n : names) {
    const dtype t = dtype_from_name(n);
    ASSERT_NE(t, dtype::invalid) << n;
    const uint64_t size = dtype_size(t) * 3;
    safetensors::header h;
    const status st =
        parse_image(safetensors_image("{" + entry("x", n, "[3]", 0, size) + "}",
                                      std::string(size, '\0')),
                    &h);
    EXPECT_TRUE(st.ok()) << n << ": " << st.to_string();
    EXPECT_STREQ(dtype_name(t), n);
  }
}

TEST(SafetensorsParse, ScalarsAndEmptyTensorsTile) {
  safetensors::header h;
  const status st =
      parse_image(safetensors_image("{" + entry("s", "F32", "[]", 0, 4) + "," +
                                        entry("e1", "F32", "[0]", 4, 4) + "," +
                                        entry("e0", "F32", "[3,0]", 0, 0) + "}",
                                    std::string(4, '\0')),
                  &h);
  EXPECT_TRUE(st.ok()) << st.to_string();
}

//===----------------------------------------------------------------------===//
// Rejected images: one test per rule
//===----------------------------------------------------------------------===//

TEST(SafetensorsReject, EmptyAndShortFiles) {
  expect_rejected("", {"empty"});
  expect_rejected(std::string(7, '\0'), {"7 bytes", "too short"});
}

TEST(SafetensorsReject, GgufFileIsNamedAsSuch) {
  // "GGUF", version 3, then counts: read as a header length it would be
  // ~1.4e10, "exceeds the limit"; the file is named for what it is.
  expect_rejected(std::string("GGUF\3\0\0\0", 8) + std::string(16, '\0'),
                  {"a GGUF file (llama.cpp's format), not safetensors"});
}

TEST(SafetensorsReject, HeaderLength) {
  expect_rejected(safetensors_image("{}", "", 100), {"runs past the end"});
  expect_rejected(safetensors_image("{}", "", uint64_t{1} << 63),
                  {"9223372036854775808", "exceeds the limit"});
  expect_rejected(safetensors_image("{}", "", ~uint64_t{0} - 1),
                  {"exceeds the limit"});
  expect_rejected(safetensors_image("{}", "", 100000001),
                  {"exceeds the limit of 100000000"});
}

TEST(SafetensorsReject, HeaderNotJsonOrNotObject) {
  expect_rejected(safetensors_image("{\"a\":"), {"not valid JSON"});
  expect_rejected(safetensors_image(""), {"not valid JSON"});
  expect_rejected(safetensors_image("{} x"), {"not valid JSON"});
  expect_rejected(safetensors_image("[]"), {"an array, not a JSON object"});
  expect_rejected(safetensors_image("\"s\""), {"a string, not a JSON object"});
  expect_rejected(safetensors_image("12"), {"not a JSON object"});
  expect_rejected(safetensors_image("  {}"), {"must start with '{'"});
  std::string deep(40, '[');
  expect_rejected(
      safetensors_image("{\"a\":" + deep + std::string(40, ']') + "}"),
      {"nesting deeper"});
}

TEST(SafetensorsReject, NamesNotUtf8) {
  expect_rejected(
      safetensors_image("{" + entry("ab\xff", "U8", "[1]", 0, 1) + "}", "x"),
      {"not valid UTF-8", "ab\\xFF"});
  // Overlong encoding of '/' and a UTF-16 surrogate encoded in UTF-8.
  expect_rejected(
      safetensors_image("{" + entry("\xc0\xaf", "U8", "[1]", 0, 1) + "}", "x"),
      {"not valid UTF-8"});
  expect_rejected(
      safetensors_image("{" + entry("\xed\xa0\x80", "U8", "[1]", 0, 1) + "}",
                        "x"),
      {"not valid UTF-8"});
  // A lone surrogate written as a JSON escape.
  expect_rejected(
      safetensors_image("{" + entry("\\ud800", "U8", "[1]", 0, 1) + "}", "x"),
      {"not valid JSON"});
  expect_rejected(
      safetensors_image("{" + entry("a\\u0000b", "U8", "[1]", 0, 1) + "}", "x"),
      {"NUL"});
}

TEST(SafetensorsReject, DuplicateKeys) {
  expect_rejected(safetensors_image("{" + entry("w", "U8", "[1]", 0, 1) + "," +
                                        entry("w", "U8", "[1]", 1, 2) + "}",
                                    "ab"),
                  {"tensor 'w' appears more than once"});
  expect_rejected(safetensors_image("{\"w\":{\"dtype\":\"U8\",\"dtype\":\"U8\","
                                    "\"shape\":[1],\"data_offsets\":[0,1]}}",
                                    "a"),
                  {"duplicate key 'dtype'", "'/w'"});
  expect_rejected(safetensors_image("{\"__metadata__\":{\"a\":\"1\",\"a\":"
                                    "\"2\"}}"),
                  {"duplicate key 'a'", "__metadata__"});
}

TEST(SafetensorsReject, EntryShape) {
  expect_rejected(safetensors_image("{\"w\":3}"),
                  {"tensor 'w'", "not an object"});
  expect_rejected(safetensors_image("{\"w\":{\"dtype\":\"U8\",\"shape\":[1]}}"),
                  {"tensor 'w'", "missing field 'data_offsets'"});
  expect_rejected(safetensors_image("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],"
                                    "\"data_offsets\":[0,1],\"extra\":1}}",
                                    "a"),
                  {"tensor 'w'", "unknown field 'extra'"});
  expect_rejected(
      safetensors_image("{" + entry("w", "Q4", "[1]", 0, 1) + "}", "a"),
      {"tensor 'w'", "unknown dtype 'Q4'"});
  expect_rejected(safetensors_image("{\"w\":{\"dtype\":7,\"shape\":[1],"
                                    "\"data_offsets\":[0,1]}}",
                                    "a"),
                  {"tensor 'w'", "dtype is an integer"});
  expect_rejected(safetensors_image("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],"
                                    "\"data_offsets\":[0]}}",
                                    "a"),
                  {"tensor 'w'", "two integers"});
  expect_rejected(safetensors_image("{\"__metadata__\":{\"a\":1}}"),
                  {"'__metadata__' entry 'a'", "not a string"});
  expect_rejected(safetensors_image("{\"__metadata__\":[]}"),
                  {"'__metadata__'", "not an object"});
}

TEST(SafetensorsReject, Dimensions) {
  expect_rejected(
      safetensors_image("{" + entry("w", "F32", "[-1,4]", 0, 0) + "}"),
      {"tensor 'w'", "negative dimension -1"});
  expect_rejected(
      safetensors_image("{" + entry("w", "F32", "[1.5]", 0, 0) + "}"),
      {"tensor 'w'", "not an integer"});
  expect_rejected(
      safetensors_image("{" + entry("w", "F32", "[\"2\"]", 0, 0) + "}"),
      {"tensor 'w'", "not an integer"});
  expect_rejected(
      safetensors_image(
          "{" + entry("w", "F32", "[18446744073709551615]", 0, 0) + "}"),
      {"tensor 'w'", "does not fit in int64"});
  expect_rejected(
      safetensors_image(
          "{" + entry("w", "F32", "[99999999999999999999]", 0, 0) + "}"),
      {"tensor 'w'", "not an integer"});
  // Element count overflows 64 bits.
  expect_rejected(
      safetensors_image(
          "{" + entry("w", "U8", "[4294967296,4294967296,2]", 0, 0) + "}"),
      {"tensor 'w'", "more elements than fit in 64 bits"});
  // Count fits, count x element size does not.
  expect_rejected(
      safetensors_image("{" + entry("w", "F64", "[4611686018427387904]", 0, 0) +
                        "}"),
      {"tensor 'w'", "more bytes than fit in 64 bits"});
  // A zero dimension makes a huge shape legal (zero elements).
  safetensors::header h;
  EXPECT_TRUE(parse_image(safetensors_image("{" +
                                            entry("w", "F64",
                                                  "[9223372036854775807,0,"
                                                  "9223372036854775807]",
                                                  0, 0) +
                                            "}"),
                          &h)
                  .ok());
}

TEST(SafetensorsReject, Offsets) {
  expect_rejected(safetensors_image("{" + entry("w", "F32", "[1]", 8, 4) + "}",
                                    std::string(8, '\0')),
                  {"tensor 'w'", "[8, 4] are reversed"});
  expect_rejected(safetensors_image("{" + entry("w", "F32", "[4]", 0, 16) + "}",
                                    std::string(8, '\0')),
                  {"tensor 'w'", "run past the data region (8 bytes)"});
  expect_rejected(safetensors_image("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],"
                                    "\"data_offsets\":[-1,0]}}",
                                    "a"),
                  {"tensor 'w'", "negative"});
  expect_rejected(safetensors_image("{" + entry("w", "F32", "[3]", 0, 8) + "}",
                                    std::string(8, '\0')),
                  {"tensor 'w'", "hold 8 bytes", "F32 x [3] needs 12"});
  // Truncated data: the last tensor ends past the end of the file.
  expect_rejected(safetensors_image("{" + entry("a", "F32", "[4]", 0, 16) +
                                        "," + entry("b", "F32", "[4]", 16, 32) +
                                        "}",
                                    std::string(20, '\0')),
                  {"tensor 'b'", "run past the data region"});
}

TEST(SafetensorsReject, Tiling) {
  const std::string d12(12, '\0');
  expect_rejected(safetensors_image("{" + entry("a", "F32", "[2]", 0, 8) + "," +
                                        entry("b", "F32", "[2]", 4, 12) + "}",
                                    d12),
                  {"tensors 'a' [0, 8) and 'b' [4, 12) overlap"});
  expect_rejected(safetensors_image("{" + entry("a", "F32", "[2]", 0, 8) + "," +
                                        entry("b", "F32", "[2]", 0, 8) + "}",
                                    std::string(8, '\0')),
                  {"overlap"});
  // A zero-size tensor inside another one is not allowed either.
  expect_rejected(safetensors_image("{" + entry("a", "F32", "[2]", 0, 8) + "," +
                                        entry("b", "F32", "[0]", 4, 4) + "}",
                                    std::string(8, '\0')),
                  {"overlap"});
  expect_rejected(
      safetensors_image("{" + entry("a", "F32", "[1]", 0, 4) + "," +
                            entry("b", "F32", "[1]", 8, 12) + "}",
                        d12),
      {"hole of 4 bytes between tensors 'a' [0, 4) and 'b' [8, 12)"});
  expect_rejected(safetensors_image("{" + entry("b", "F32", "[1]", 4, 8) + "}",
                                    std::string(8, '\0')),
                  {"hole of 4 bytes before the first tensor 'b'"});
  expect_rejected(safetensors_image("{" + entry("a", "F32", "[1]", 0, 4) + "}",
                                    std::string(8, '\0')),
                  {"4 bytes of the data region follow the last tensor 'a'"});
  expect_rejected(safetensors_image("{}", "xyz"),
                  {"3 bytes but the header lists no tensors"});
}

//===----------------------------------------------------------------------===//
// Writer round trips
//===----------------------------------------------------------------------===//

TEST(SafetensorsWrite, RoundTripAllDtypesAligned) {
  temp_dir dir;
  std::vector<safetensors::tensor_source> src;
  std::vector<std::string> payloads;
  const char *names[] = {"U8", "BF16", "F64", "I32", "BOOL", "F16", "I64"};
  payloads.reserve(std::size(names));
  for (size_t i = 0; i < std::size(names); ++i) {
    safetensors::tensor_source s;
    s.name = std::string("t.") + names[i];
    s.type = dtype_from_name(names[i]);
    s.shape = {static_cast<int64_t>(i + 1), 3};
    std::string bytes((i + 1) * 3 * dtype_size(s.type), '\0');
    for (size_t k = 0; k < bytes.size(); ++k)
      bytes[k] = static_cast<char>(k * 7 + i);
    payloads.push_back(bytes);
    s.data = payloads.back().data();
    src.push_back(s);
  }
  safetensors::tensor_source scalar;
  scalar.name = "scalar";
  scalar.type = dtype::f32;
  scalar.shape = {};
  const float one = 1.0f;
  scalar.data = &one;
  src.push_back(scalar);
  safetensors::tensor_source gen;
  gen.name = "generated";
  gen.type = dtype::u16;
  gen.shape = {5000000}; // more than one 8 MB chunk
  gen.generate = [](uint64_t off, void *dst, size_t n) {
    auto *p = static_cast<uint16_t *>(dst);
    for (size_t i = 0; i < n / 2; ++i)
      p[i] = static_cast<uint16_t>(off / 2 + i);
    return status();
  };
  src.push_back(gen);

  const std::string path = dir.file("rt.safetensors");
  uint64_t last_done = 0, last_total = 0;
  status st = safetensors::write(path, src, {{"format", "pt"}},
                                 [&](uint64_t d, uint64_t t) {
                                   EXPECT_GE(d, last_done);
                                   last_done = d;
                                   last_total = t;
                                 });
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(last_done, last_total);

  std::unique_ptr<safetensors::file> f;
  st = safetensors::file::open(path, &f);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(f->hdr().metadata.at("format"), "pt");
  EXPECT_EQ(f->hdr().data_offset % 8, 0u);
  ASSERT_EQ(f->tensors().size(), src.size());
  for (size_t i = 0; i < std::size(names); ++i) {
    const safetensors::tensor_info *t = f->find(src[i].name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->type, src[i].type);
    EXPECT_EQ(t->shape, src[i].shape);
    EXPECT_EQ(f->file_offset(*t) % dtype_size(t->type), 0u) << t->name;
    EXPECT_EQ(std::memcmp(f->data(*t), payloads[i].data(), t->bytes()), 0);
  }
  const safetensors::tensor_info *g = f->find("generated");
  ASSERT_NE(g, nullptr);
  const auto *gp = reinterpret_cast<const uint16_t *>(f->data(*g));
  EXPECT_EQ(gp[0], 0);
  EXPECT_EQ(gp[4999999], static_cast<uint16_t>(4999999));
  EXPECT_EQ(*reinterpret_cast<const float *>(f->data(*f->find("scalar"))),
            1.0f);
}

TEST(SafetensorsWrite, RejectsBadInput) {
  temp_dir dir;
  safetensors::tensor_source a;
  a.name = "a";
  a.type = dtype::f32;
  a.shape = {1};
  const float v = 0;
  a.data = &v;
  EXPECT_EQ(safetensors::write(dir.file("x"), {a, a}).code(),
            status_code::usage);
  a.name = "__metadata__";
  EXPECT_EQ(safetensors::write(dir.file("x"), {a}).code(), status_code::usage);
  a.name = "b";
  a.data = nullptr;
  EXPECT_EQ(safetensors::write(dir.file("x"), {a}).code(), status_code::usage);
  a.data = &v;
  EXPECT_EQ(safetensors::write(dir.file("no/such/dir/x"), {a}).code(),
            status_code::bad_input);
}

//===----------------------------------------------------------------------===//
// Checkpoints: single files, directories, indexes
//===----------------------------------------------------------------------===//

namespace {

/// Writes a one-tensor F32 file with |values|.
void write_f32(const std::string &path, const std::string &name,
               std::vector<float> values) {
  safetensors::tensor_source s;
  s.name = name;
  s.type = dtype::f32;
  s.shape = {static_cast<int64_t>(values.size())};
  s.data = values.data();
  ASSERT_TRUE(safetensors::write(path, {s}).ok());
}

std::string index_json(const std::string &weight_map) {
  return "{\"metadata\":{\"total_size\":0},\"weight_map\":{" + weight_map +
         "}}";
}

status open_checkpoint(const std::string &path,
                       std::unique_ptr<safetensors::checkpoint> *out) {
  return safetensors::checkpoint::open(path, out);
}

} // namespace

TEST(SafetensorsCheckpoint, SingleFileAndDirectory) {
  temp_dir dir;
  write_f32(dir.file("model.safetensors"), "w", {1, 2});
  std::unique_ptr<safetensors::checkpoint> c;
  ASSERT_TRUE(open_checkpoint(dir.file("model.safetensors"), &c).ok());
  ASSERT_NE(c->find("w"), nullptr);
  EXPECT_EQ(c->tensor_bytes(), 8u);
  ASSERT_TRUE(open_checkpoint(dir.path(), &c).ok());
  EXPECT_EQ(c->shards().size(), 1u);
  EXPECT_TRUE(c->index_path().empty());
}

TEST(SafetensorsCheckpoint, Sharded) {
  temp_dir dir;
  write_f32(dir.file("s1.safetensors"), "a", {1});
  write_f32(dir.file("s2.safetensors"), "b", {2, 3});
  write_file(dir.file("model.safetensors.index.json"),
             index_json("\"a\":\"s1.safetensors\",\"b\":\"s2.safetensors\""));
  std::unique_ptr<safetensors::checkpoint> c;
  status st = open_checkpoint(dir.path(), &c);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(c->shards().size(), 2u);
  ASSERT_EQ(c->tensors().size(), 2u);
  EXPECT_EQ(c->find("b")->shard->path(), dir.file("s2.safetensors"));
  EXPECT_EQ(*reinterpret_cast<const float *>(
                c->find("b")->shard->data(*c->find("b")->info)),
            2.0f);
  // The index file itself works too.
  EXPECT_TRUE(
      open_checkpoint(dir.file("model.safetensors.index.json"), &c).ok());
}

TEST(SafetensorsCheckpoint, IndexErrors) {
  temp_dir dir;
  write_f32(dir.file("s1.safetensors"), "a", {1});
  const std::string index = dir.file("model.safetensors.index.json");
  std::unique_ptr<safetensors::checkpoint> c;
  auto expect_error = [&](const std::string &json,
                          const std::vector<std::string> &parts) {
    write_file(index, json);
    const status st = open_checkpoint(dir.path(), &c);
    ASSERT_FALSE(st.ok()) << json;
    EXPECT_EQ(st.code(), status_code::bad_input);
    const std::string all = st.to_string();
    for (const std::string &p : parts)
      EXPECT_NE(all.find(p), std::string::npos)
          << "no '" << p << "' in " << all;
  };
  // A shard the index names does not exist.
  expect_error(index_json("\"a\":\"s1.safetensors\",\"b\":\"s9.safetensors\""),
               {"s9.safetensors", "cannot open", "'b'"});
  // The shard lacks a tensor the index names.
  expect_error(index_json("\"a\":\"s1.safetensors\",\"z\":\"s1.safetensors\""),
               {"s1.safetensors", "tensor 'z'", "missing from this shard"});
  // The shard holds a tensor the index does not list.
  {
    safetensors::tensor_source x, y;
    const float v[2] = {0, 0};
    x.name = "a";
    y.name = "d";
    x.type = y.type = dtype::f32;
    x.shape = y.shape = {1};
    x.data = &v[0];
    y.data = &v[1];
    ASSERT_TRUE(safetensors::write(dir.file("s3.safetensors"), {x, y}).ok());
  }
  expect_error(index_json("\"a\":\"s3.safetensors\""),
               {"s3.safetensors", "tensor 'd' is not listed in index"});
  expect_error(index_json("\"a\":\"s1.safetensors\",\"c\":\"s1.safetensors\""),
               {"tensor 'c'"});
  // Malformed indexes.
  expect_error("{\"weight_map\":", {"not valid JSON"});
  expect_error("[]", {"not a JSON object"});
  expect_error("{\"metadata\":{}}", {"weight_map"});
  expect_error("{\"weight_map\":{\"a\":\"s1.safetensors\",\"a\":"
               "\"s1.safetensors\"}}",
               {"duplicate key 'a'"});
  expect_error(index_json("\"a\":3"), {"tensor 'a'", "not a string"});
  expect_error(index_json("\"a\":\"../s1.safetensors\""),
               {"tensor 'a'", "relative path"});
  expect_error(index_json("\"a\":\"/etc/passwd\""), {"relative path"});
}

TEST(SafetensorsCheckpoint, TensorInShardUnderAnotherShardName) {
  temp_dir dir;
  write_f32(dir.file("s1.safetensors"), "a", {1});
  safetensors::tensor_source x, y;
  const float v[2] = {0, 0};
  x.name = "b";
  y.name = "a";
  x.type = y.type = dtype::f32;
  x.shape = y.shape = {1};
  x.data = &v[0];
  y.data = &v[1];
  ASSERT_TRUE(safetensors::write(dir.file("s2.safetensors"), {x, y}).ok());
  write_file(dir.file("model.safetensors.index.json"),
             index_json("\"a\":\"s1.safetensors\",\"b\":\"s2.safetensors\""));
  std::unique_ptr<safetensors::checkpoint> c;
  const status st = open_checkpoint(dir.path(), &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("under shard 's1.safetensors'"),
            std::string::npos)
      << st.message();
}

TEST(SafetensorsCheckpoint, PathErrors) {
  temp_dir dir;
  std::unique_ptr<safetensors::checkpoint> c;
  status st = open_checkpoint(dir.file("nope"), &c);
  EXPECT_EQ(st.code(), status_code::bad_input);
  EXPECT_NE(st.message().find("no such file"), std::string::npos);
  st = open_checkpoint(dir.path(), &c);
  EXPECT_EQ(st.code(), status_code::bad_input);
  EXPECT_NE(st.message().find("neither model.safetensors"), std::string::npos);
}
