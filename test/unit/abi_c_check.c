/*
 * abi_c_check.c - <sgc/abi.h> compiled as strict C (-std=c99 -pedantic
 * -Werror in CMake): reports its layout so abi_test.cc can check that C and
 * C++ agree on every offset the compiler's generated C file will rely on.
 */
#include <sgc/abi.h>

#include <stddef.h>

#define SGC_ABI_CHECK_COUNT 27

void sgc_abi_c_layout(size_t *out) {
  size_t i = 0;
  out[i++] = sizeof(sgc_abi_header_t);
  out[i++] = sizeof(sgc_abi_tensor_t);
  out[i++] = sizeof(sgc_abi_kv_layer_t);
  out[i++] = sizeof(sgc_abi_variant_t);
  out[i++] = sizeof(sgc_abi_cpu_exec_t);
  out[i++] = sizeof(sgc_model_v2_t);
  out[i++] = offsetof(sgc_model_v2_t, header);
  out[i++] = offsetof(sgc_model_v2_t, vocab_size);
  out[i++] = offsetof(sgc_model_v2_t, tensors);
  out[i++] = offsetof(sgc_model_v2_t, kv_layers);
  out[i++] = offsetof(sgc_model_v2_t, variants);
  out[i++] = offsetof(sgc_abi_tensor_t, shape);
  out[i++] = offsetof(sgc_abi_tensor_t, fill);
  out[i++] = offsetof(sgc_abi_cpu_exec_t, parallel_for);
  out[i++] = offsetof(sgc_abi_kv_layer_t, bytes_per_token);
  out[i++] = offsetof(sgc_abi_variant_t, functions);
  out[i++] = sizeof(sgc_abi_operand_t);
  out[i++] = sizeof(sgc_abi_step_t);
  out[i++] = sizeof(sgc_abi_phase_t);
  out[i++] = offsetof(sgc_abi_phase_t, logits);
  out[i++] = offsetof(sgc_model_v2_t, operands);
  out[i++] = sizeof(sgc_abi_memref_t);
  out[i++] = sizeof(sgc_abi_step_state_t);
  out[i++] = sizeof(sgc_abi_emu_ops_t);
  out[i++] = offsetof(sgc_abi_emu_ops_t, check_access);
  out[i++] = sizeof(sgc_abi_cuda_emu_t);
  out[i++] = offsetof(sgc_model_v2_t, cuda_emu);
}
