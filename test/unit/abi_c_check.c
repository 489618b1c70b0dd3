/*
 * abi_c_check.c - <sgc/abi.h> compiled as strict C (-std=c99 -pedantic
 * -Werror in CMake): reports its layout so abi_test.cc can check that C and
 * C++ agree on every offset the compiler's generated C file will rely on.
 */
#include <sgc/abi.h>

#include <stddef.h>

#define SGC_ABI_CHECK_COUNT 16

void sgc_abi_c_layout(size_t *out) {
  size_t i = 0;
  out[i++] = sizeof(sgc_abi_header_t);
  out[i++] = sizeof(sgc_abi_tensor_t);
  out[i++] = sizeof(sgc_abi_kv_layer_t);
  out[i++] = sizeof(sgc_abi_cpu_variant_t);
  out[i++] = sizeof(sgc_abi_call_context_t);
  out[i++] = sizeof(sgc_model_v1_t);
  out[i++] = offsetof(sgc_model_v1_t, header);
  out[i++] = offsetof(sgc_model_v1_t, vocab_size);
  out[i++] = offsetof(sgc_model_v1_t, tensors);
  out[i++] = offsetof(sgc_model_v1_t, kv_layers);
  out[i++] = offsetof(sgc_model_v1_t, cpu_variants);
  out[i++] = offsetof(sgc_abi_tensor_t, shape);
  out[i++] = offsetof(sgc_abi_tensor_t, fill);
  out[i++] = offsetof(sgc_abi_call_context_t, parallel_for);
  out[i++] = offsetof(sgc_abi_kv_layer_t, bytes_per_token);
  out[i++] = offsetof(sgc_abi_cpu_variant_t, decode);
}
