/*
 * abi_test.cc - <sgc/abi.h>: C and C++ agree on the layout, and the header
 * starts every table as documented.
 */
#include <sgc/abi.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

extern "C" void sgc_abi_c_layout(size_t *out);

TEST(Abi, CAndCxxLayoutsAgree) {
  size_t c[27];
  sgc_abi_c_layout(c);
  const size_t cxx[27] = {
      sizeof(sgc_abi_header_t),
      sizeof(sgc_abi_tensor_t),
      sizeof(sgc_abi_kv_layer_t),
      sizeof(sgc_abi_variant_t),
      sizeof(sgc_abi_cpu_exec_t),
      sizeof(sgc_model_v2_t),
      offsetof(sgc_model_v2_t, header),
      offsetof(sgc_model_v2_t, vocab_size),
      offsetof(sgc_model_v2_t, tensors),
      offsetof(sgc_model_v2_t, kv_layers),
      offsetof(sgc_model_v2_t, variants),
      offsetof(sgc_abi_tensor_t, shape),
      offsetof(sgc_abi_tensor_t, fill),
      offsetof(sgc_abi_cpu_exec_t, parallel_for),
      offsetof(sgc_abi_kv_layer_t, bytes_per_token),
      offsetof(sgc_abi_variant_t, functions),
      sizeof(sgc_abi_operand_t),
      sizeof(sgc_abi_step_t),
      sizeof(sgc_abi_phase_t),
      offsetof(sgc_abi_phase_t, logits),
      offsetof(sgc_model_v2_t, operands),
      sizeof(sgc_abi_memref_t),
      sizeof(sgc_abi_step_state_t),
      sizeof(sgc_abi_emu_ops_t),
      offsetof(sgc_abi_emu_ops_t, check_access),
      sizeof(sgc_abi_cuda_emu_t),
      offsetof(sgc_model_v2_t, cuda_emu),
  };
  for (int i = 0; i < 27; ++i)
    EXPECT_EQ(c[i], cxx[i]) << "entry " << i;
}

TEST(Abi, HeaderComesFirst) {
  EXPECT_EQ(offsetof(sgc_model_v2_t, header), 0u);
  EXPECT_EQ(sizeof(sgc_abi_header_t), 16u);
  EXPECT_EQ(offsetof(sgc_abi_header_t, magic), 0u);
  EXPECT_EQ(offsetof(sgc_abi_header_t, version_major), 4u);
  EXPECT_EQ(offsetof(sgc_abi_header_t, version_minor), 8u);
  // The magic reads "SGC\x01" in memory on little-endian machines.
  const uint32_t magic = SGC_ABI_MAGIC;
  char bytes[4];
  std::memcpy(bytes, &magic, 4);
  EXPECT_EQ(std::memcmp(bytes, "SGC\x01", 4), 0);
  EXPECT_STREQ(SGC_ABI_QUERY_SYMBOL, "sgc_model_query");
}

TEST(Abi, FeatureBitsAreDistinct) {
  const uint64_t bits[] = {
      SGC_ABI_CPU_SSE42,      SGC_ABI_CPU_AVX,        SGC_ABI_CPU_AVX2,
      SGC_ABI_CPU_FMA,        SGC_ABI_CPU_F16C,       SGC_ABI_CPU_BMI2,
      SGC_ABI_CPU_AVX_VNNI,   SGC_ABI_CPU_AVX512F,    SGC_ABI_CPU_AVX512BW,
      SGC_ABI_CPU_AVX512VL,   SGC_ABI_CPU_AVX512DQ,   SGC_ABI_CPU_AVX512CD,
      SGC_ABI_CPU_AVX512BF16, SGC_ABI_CPU_AVX512VNNI, SGC_ABI_CPU_AVX512FP16,
      SGC_ABI_CPU_AMX_TILE,   SGC_ABI_CPU_AMX_BF16,   SGC_ABI_CPU_AMX_INT8,
      SGC_ABI_CPU_NEON,       SGC_ABI_CPU_SVE,        SGC_ABI_CPU_ARM_BF16,
      SGC_ABI_CPU_ARM_I8MM};
  uint64_t seen = 0;
  for (uint64_t b : bits) {
    EXPECT_EQ(b & (b - 1), 0u); // one bit
    EXPECT_EQ(seen & b, 0u);    // not reused
    seen |= b;
  }
}
