/*
 * support_test.cc - lib/support: half-float conversions, hashing, UTF-8,
 * strict JSON, dtype table.
 */
#include "lib/support/dtype.h"
#include "lib/support/half.h"
#include "lib/support/hash.h"
#include "lib/support/json_strict.h"
#include "lib/support/status.h"
#include "lib/support/utf8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace sgc;

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xC000);
  // 1 + 2^-8 is halfway between bf16 1.0 and 1.0078125: ties to even (1.0).
  EXPECT_EQ(f32_to_bf16(bits_float(0x3F808000)), 0x3F80);
  // 1.0078125 + half an ulp: ties to even (up: 0x3F82).
  EXPECT_EQ(f32_to_bf16(bits_float(0x3F818000)), 0x3F82);
  EXPECT_EQ(f32_to_bf16(bits_float(0x3F808001)), 0x3F81);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  // The largest finite float rounds to infinity in bf16.
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(f32_to_bf16(f), h);
    }
  }
}

TEST(Half, F16ExhaustiveRoundTripAndRounding) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
  }
  EXPECT_EQ(f16_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00); // halfway: rounds to inf
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000); // tie -> even (0)
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp -> even
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3C00); // tie -> even
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
}

TEST(Hash, KnownValues) {
  // FNV-1a 64 reference values.
  EXPECT_EQ(fnv1a64("", 0), 0xCBF29CE484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xAF63DC4C8601EC8Cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171F73967E8ull);
  // splitmix64 seeded with 0: the first outputs of the reference generator.
  EXPECT_EQ(splitmix64_at(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64_at(0, 1), 0x6E789E6AA1B965F4ull);
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(utf8_valid("plain"));
  EXPECT_TRUE(utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
  size_t bad = 0;
  EXPECT_FALSE(utf8_valid("ab\xff", &bad));
  EXPECT_EQ(bad, 2u);
  EXPECT_FALSE(utf8_valid("\xc0\x80"));         // overlong NUL
  EXPECT_FALSE(utf8_valid("\xe0\x80\xaf"));     // overlong
  EXPECT_FALSE(utf8_valid("\xed\xa0\x80"));     // surrogate
  EXPECT_FALSE(utf8_valid("\xf4\x90\x80\x80")); // > U+10FFFF
  EXPECT_FALSE(utf8_valid("\xe2\x82"));         // truncated
  EXPECT_EQ(escape_for_message("a'b\x01\xff\xc3\xa9"),
            "a\\'b\\x01\\xFF\xc3\xa9");
}

TEST(JsonStrict, DuplicatesAtAnyDepth) {
  nlohmann::json j;
  json_parse_error e;
  EXPECT_TRUE(parse_json_strict("{\"a\":{\"b\":[1,{\"c\":2}]}}", &j, &e));
  EXPECT_EQ(j["a"]["b"][1]["c"], 2);
  EXPECT_FALSE(parse_json_strict("{\"a\":1,\"a\":2}", &j, &e));
  EXPECT_EQ(e.duplicate_key, "a");
  EXPECT_EQ(e.object_path, "/");
  EXPECT_FALSE(parse_json_strict("{\"x\":[{\"k\":1,\"k\":1}]}", &j, &e));
  EXPECT_EQ(e.duplicate_key, "k");
  EXPECT_FALSE(parse_json_strict("{\"a\":", &j, &e));
  EXPECT_TRUE(e.duplicate_key.empty());
  EXPECT_FALSE(e.message.empty());
  EXPECT_FALSE(parse_json_strict(std::string(100, '['), &j, &e, 64));
  EXPECT_NE(e.message.find("nesting"), std::string::npos);
}

// e4m3fn: every finite code round-trips, and any float goes to the nearest
// code (ties to the even code), saturating at 448; against a brute-force
// search over the 127 magnitudes.
TEST(Half, E4M3RoundTripAndNearest) {
  for (uint32_t b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(e4m3_to_f32(static_cast<uint8_t>(b))));
      continue;
    }
    ASSERT_EQ(f32_to_e4m3(e4m3_to_f32(static_cast<uint8_t>(b))), b) << b;
  }
  EXPECT_EQ(e4m3_to_f32(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_f32(0xB8), -1.0f);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::ldexp(static_cast<float>(i % 10000) / 10000.0f, i / 10000 - 11);
    int best = 0;
    double gap = 1e30;
    for (int c = 0; c < 0x7F; ++c) {
      const double d = std::fabs(double(e4m3_to_f32(static_cast<uint8_t>(c))) - x);
      if (d < gap || (d == gap && c % 2 == 0)) {
        gap = d;
        best = c;
      }
    }
    ASSERT_EQ(f32_to_e4m3(x), x >= 448.0f ? 0x7E : best) << x;
    ASSERT_EQ(f32_to_e4m3(-x), (x >= 448.0f ? 0x7E : best) | 0x80) << -x;
  }
  EXPECT_EQ(f32_to_e4m3(1e9f), 0x7E);
  EXPECT_EQ(f32_to_e4m3(std::nanf("")), 0x7F);
}

TEST(Dtype, Table) {
  EXPECT_EQ(dtype_size(dtype::bf16), 2u);
  EXPECT_EQ(dtype_size(dtype::f64), 8u);
  EXPECT_EQ(dtype_size(dtype::boolean), 1u);
  EXPECT_EQ(dtype_from_name("F8_E4M3"), dtype::f8_e4m3);
  EXPECT_EQ(dtype_from_name("f32"), dtype::invalid); // case-sensitive
  EXPECT_EQ(dtype_from_name("INVALID"), dtype::invalid);
  EXPECT_STREQ(dtype_name(static_cast<dtype>(999)), "INVALID");
}

// The block encodings: ggml's block sizes (QUANT.md §3), a tensor's bytes
// from whole blocks of its rows, and no safetensors spelling.
TEST(Dtype, BlockEncodings) {
  EXPECT_STREQ(dtype_name(dtype::q4_0), "Q4_0");
  EXPECT_TRUE(dtype_is_block(dtype::q6_k));
  EXPECT_FALSE(dtype_is_block(dtype::bf16));
  EXPECT_EQ(dtype_size(dtype::q8_0), 0u);
  EXPECT_EQ(dtype_block_elements(dtype::q8_0), 32u);
  EXPECT_EQ(dtype_block_bytes(dtype::q8_0), 34u);
  EXPECT_EQ(dtype_block_bytes(dtype::q4_0), 18u);
  EXPECT_EQ(dtype_block_elements(dtype::q6_k), 256u);
  EXPECT_EQ(dtype_block_bytes(dtype::q6_k), 210u);
  EXPECT_STREQ(dtype_name(dtype::q4_k), "Q4_K");
  EXPECT_EQ(dtype_block_elements(dtype::q4_k), 256u);
  EXPECT_EQ(dtype_block_bytes(dtype::q4_k), 144u);
  EXPECT_EQ(dtype_from_name("Q4_0"), dtype::invalid);
  EXPECT_EQ(dtype_from_name("Q4_K"), dtype::invalid);
  // The runtime's packing of compressed-tensors weights: an f32 scale a block.
  EXPECT_EQ(dtype_block_bytes(dtype::fp8_ch), 36u);
  EXPECT_EQ(dtype_block_bytes(dtype::int4_g32), 20u);
  EXPECT_EQ(dtype_block_elements(dtype::int4_g128), 128u);
  EXPECT_EQ(dtype_block_bytes(dtype::int4_g128), 68u);
  EXPECT_EQ(dtype_from_name("FP8_CH"), dtype::invalid);

  uint64_t bytes = 0;
  const int64_t matrix[] = {3840, 15360};
  ASSERT_TRUE(dtype_tensor_bytes(dtype::q4_0, matrix, 2, &bytes));
  EXPECT_EQ(bytes, uint64_t{3840} * 15360 / 32 * 18);
  ASSERT_TRUE(dtype_tensor_bytes(dtype::bf16, matrix, 2, &bytes));
  EXPECT_EQ(bytes, uint64_t{3840} * 15360 * 2);
  const int64_t partial[] = {4, 96};
  EXPECT_FALSE(dtype_tensor_bytes(dtype::q6_k, partial, 2, &bytes));
  EXPECT_FALSE(dtype_tensor_bytes(dtype::q4_k, partial, 2, &bytes));
  ASSERT_TRUE(dtype_tensor_bytes(dtype::q4_k, matrix, 2, &bytes));
  EXPECT_EQ(bytes, uint64_t{3840} * 15360 / 256 * 144);
  EXPECT_TRUE(dtype_tensor_bytes(dtype::q8_0, partial, 2, &bytes));
  EXPECT_EQ(bytes, 4u * 3 * 34);
  EXPECT_FALSE(dtype_tensor_bytes(dtype::q8_0, nullptr, 0, &bytes));
  const int64_t negative[] = {-1, 32};
  EXPECT_FALSE(dtype_tensor_bytes(dtype::q8_0, negative, 2, &bytes));
  const int64_t huge[] = {INT64_MAX, INT64_MAX};
  EXPECT_FALSE(dtype_tensor_bytes(dtype::f32, huge, 2, &bytes));
}

TEST(Status, Formatting) {
  status s = mismatch_error("bad").note("one").note("two");
  EXPECT_EQ(s.code(), status_code::mismatch);
  EXPECT_EQ(s.to_string(), "error: bad\nnote: one\nnote: two\n");
  EXPECT_TRUE(status().ok());
  EXPECT_EQ(shape_string(std::vector<int64_t>{2, 3}), "[2, 3]");
  EXPECT_EQ(shape_string(std::vector<int64_t>{}), "[]");
}
