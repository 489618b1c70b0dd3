// fake_cuda_kernels.cu - the kernels of test/unit/fake_cuda_model.c in CUDA
// C, so the CUDA executor can be tried on a real GPU without the compiler
// (scripts/device-check, step "executor"). Same float operations in the
// same order as the emulator's kernels there (no FMA contraction), so a GPU
// run gives the very logits of --device cuda-emu and of
// test/unit/fake_model_reference.h.
//
// Each parameter is an 8-byte device address, one per step operand (abi.h).
// Regenerate the committed fatbin (CUDA 12.x or 13.x nvcc; no GPU needed):
//   test/Inputs/cuda/make-fatbin
#include <stdint.h>

#define VOCAB 16
#define HIDDEN 8
#define WINDOW 4

struct step_state { // sgc_abi_step_state_t
  int64_t position, num_tokens, full_slots, reserved;
};

__device__ float bf16_to_float(uint16_t h) {
  return __uint_as_float(static_cast<uint32_t>(h) << 16);
}

extern "C" __global__ void fake_embed(const int32_t *tokens,
                                      const step_state *st,
                                      const uint16_t *embed, const float *norm,
                                      float *h) {
  const unsigned i = blockIdx.x, d = threadIdx.x;
  if ((int64_t)i >= st->num_tokens)
    return;
  const int32_t t = tokens[i];
  h[i * HIDDEN + d] =
      __fmul_rn(bf16_to_float(embed[t * HIDDEN + d]), __fadd_rn(1.0f, norm[d]));
}

extern "C" __global__ void fake_attn(const step_state *st, const float *h,
                                     const float *k0, const float *v1,
                                     float *u) {
  extern __shared__ float own[];
  const unsigned i = blockIdx.x, d = threadIdx.x;
  const int64_t pos0 = st->position, p = pos0 + (int64_t)i;
  if ((int64_t)i >= st->num_tokens)
    return; // the whole block
  own[d] = h[i * HIDDEN + d];
  __syncthreads();
  float s = 0.0f, r = 0.0f;
  for (int64_t j = 0; j <= p; ++j)
    s = __fadd_rn(s, j == p     ? own[d]
                     : j < pos0 ? k0[j * HIDDEN + d]
                                : h[(j - pos0) * HIDDEN + d]);
  for (int64_t j = p - WINDOW + 1 < 0 ? 0 : p - WINDOW + 1; j <= p; ++j)
    r = __fadd_rn(r, j < pos0 ? v1[(j % WINDOW) * HIDDEN + d]
                              : h[(j - pos0) * HIDDEN + d]);
  u[i * HIDDEN + d] = __fadd_rn(__fadd_rn(s, __fmul_rn(0.25f, r)),
                                __fmul_rn(0.001f, (float)p));
}

extern "C" __global__ void fake_append(const step_state *st, const float *h,
                                       float *k0, float *v0, float *k1,
                                       float *v1) {
  const unsigned i = blockIdx.x, d = threadIdx.x;
  const int64_t n = st->num_tokens, p = st->position + (int64_t)i;
  if ((int64_t)i >= n)
    return;
  const float x = h[i * HIDDEN + d];
  k0[p * HIDDEN + d] = x;
  v0[p * HIDDEN + d] = -x;
  if ((int64_t)i + WINDOW < n)
    return; // a later position of the chunk takes this ring slot
  k1[(p % WINDOW) * HIDDEN + d] = __fmul_rn(2.0f, x);
  v1[(p % WINDOW) * HIDDEN + d] = x;
}

extern "C" __global__ void fake_logits(const step_state *st,
                                       const uint16_t *embed, const float *u,
                                       float *out) {
  const unsigned i = blockIdx.x, v = threadIdx.x;
  if ((int64_t)i >= st->num_tokens)
    return;
  float acc = 0.0f;
  for (int d = 0; d < HIDDEN; ++d)
    acc = __fadd_rn(acc, __fmul_rn(bf16_to_float(embed[v * HIDDEN + d]),
                                   u[i * HIDDEN + d]));
  out[i * VOCAB + v] = acc;
}
