/*
 * fake_cuda_model.c - a hand-written CUDA model .so (ABI 2.2) computing the
 * toy model of fake_model.c (same tensors, same caches, same logits; see
 * test/unit/fake_model_reference.h) as four kernels per phase:
 *
 *   fake_embed   (tokens, state, embed, norm, h)       h[i] = E[t_i] * (1 + w)
 *   fake_attn    (state, h, K0, V1, u)                 u[i] from the caches of
 *                positions < pos0 and the chunk's own h rows (64 KiB of
 *                dynamic shared memory in prefill: the smem opt-in case)
 *   fake_append  (state, h, K0, V0, K1, V1)            the chunk's K/V into the
 *                caches (the ring only for the chunk's last 4 positions)
 *   fake_logits  (state, embed, u, logits)             logits[i][v], row-wise
 *
 * One block per token (grid = the phase's max tokens; blocks past the step
 * state's num_tokens return), one thread per hidden element (logits: per
 * vocabulary entry). The kernels exist twice:
 *  - as a fake fatbin: text that test/unit/fake_cuda.c (the recorder
 *    standing in for libcuda) reads: each kernel's name and parameter count,
 *    and for fake_logits a pattern the fake "runs" by writing it into the
 *    logits (row r, column c of a call at position p: f32 c + 100 (p + r),
 *    bf16 0.5 c + 16 r), so tests see which rows come back;
 *  - as C functions per GPU thread (the cuda_emu table) over the emulator's
 *    ops, which compute the toy model exactly (-ffp-contract=off).
 *
 * Macros make the broken variants the tests need:
 *   FAKE_CUDA_BF16_LOGITS   the logits buffers are BF16
 *   FAKE_CUDA_PARAM_COUNT   the fatbin's fake_append takes 7 parameters
 *   FAKE_CUDA_NO_KERNEL     the fatbin lacks fake_attn
 *   FAKE_CUDA_EMU_RACE      fake_append writes the ring for every position
 *                           of the chunk (blocks race for a slot)
 *   FAKE_CUDA_EMU_OOB       fake_embed reads the token of every block, also
 *                           past num_tokens
 *   FAKE_CUDA_EMU_DIVERGENT half of fake_attn's threads wait at another
 *                           barrier than the other half
 *   FAKE_CUDA_NO_EMU        no cuda_emu table
 *   FAKE_CUDA_STEP_PARAMS   kernels[] says fake_append takes 5 parameters
 *                           (its steps pass 6)
 *   FAKE_CUDA_BIG_BLOCK     the decode logits step has 2048 threads a block
 *   FAKE_CUDA_DYNAMIC_SHARED the cuda_emu table says fake_append uses 256
 *                           bytes of dynamic shared memory (its steps ask
 *                           for none)
 *   FAKE_CUDA_STATIC_SHARED the fatbin's fake_append has 44 KiB of static
 *                           shared memory and its steps ask for 8 KiB of
 *                           dynamic: over 48 KiB together, so launches
 *                           fail unless the runtime opts in (it opts in
 *                           for any dynamic bytes)
 *   FAKE_CUDA_WAITS         every kernel is flagged SGC_ABI_CUDA_KERNEL_WAITS
 *                           (launched with programmatic serialization)
 *   FAKE_CUDA_REAL_FATBIN   the fatbin is the file this names (of
 *                           FAKE_CUDA_REAL_FATBIN_BYTES bytes): the kernels
 *                           compiled by nvcc, for a real GPU
 */
#include <sgc/abi.h>

#include <stdint.h>
#include <string.h>

#define VOCAB 16
#define HIDDEN 8
#define CONTEXT 64
#define WINDOW 4
#define CHUNK 8

#ifdef FAKE_CUDA_BF16_LOGITS
#define LOGITS_DTYPE SGC_ABI_DTYPE_BF16
#define LOGITS_FAKE "bf16"
#else
#define LOGITS_DTYPE SGC_ABI_DTYPE_F32
#define LOGITS_FAKE "f32"
#endif

/* Workspace: h [T, 8] f32 at 0, u [T, 8] f32 at 256, logits [T, 16] at 512. */
#define WS_H 0
#define WS_U 256
#define WS_LOGITS 512
#define WORKSPACE 1024

/*===--- the emulator's kernels ---------------------------------------===*/

static float bf16_to_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest even (no NaNs here) */
  return (uint16_t)(u >> 16);
}

/* Parameter i's value: an address. */
static void *param(void *const *params, int i) {
  uint64_t v;
  memcpy(&v, params[i], sizeof v);
  return (void *)(uintptr_t)v;
}

enum {
  SITE_STATE,
  SITE_TOKEN,
  SITE_EMBED,
  SITE_NORM,
  SITE_H,
  SITE_K0,
  SITE_V0,
  SITE_K1,
  SITE_V1,
  SITE_U,
  SITE_LOGITS,
  SITE_BARRIER,
  SITE_BARRIER_2,
  SITE_SHARED,
  NUM_SITES
};
static const char *const sites[NUM_SITES] = {
    "fake kernels: load of the step state",
    "fake_embed: load of the token",
    "fake kernels: load of the embedding",
    "fake_embed: load of the norm weight",
    "fake kernels: access to h",
    "fake kernels: access to K0",
    "fake_append: store to V0",
    "fake_append: store to K1",
    "fake kernels: access to V1",
    "fake kernels: access to u",
    "fake_logits: store of the logits",
    "fake_attn: barrier",
    "fake_attn: the other barrier (FAKE_CUDA_EMU_DIVERGENT)",
    "fake_attn: shared memory",
};

#define CHECKED(ops, ptr, write, site)                                         \
  ((ops)->check_access((ptr), sizeof *(ptr), (write), (site)), (ptr))

static const sgc_abi_step_state_t *state_of(const sgc_abi_emu_ops_t *ops,
                                            void *const *params, int i) {
  const sgc_abi_step_state_t *s =
      (const sgc_abi_step_state_t *)param(params, i);
  ops->check_access(s, sizeof *s, 0, SITE_STATE);
  return s;
}

static void emu_embed(const sgc_abi_emu_ops_t *ops, void *const *params) {
  const int32_t *tokens = (const int32_t *)param(params, 0);
  const sgc_abi_step_state_t *st = state_of(ops, params, 1);
  const uint16_t *embed = (const uint16_t *)param(params, 2);
  const float *norm = (const float *)param(params, 3);
  float *h = (float *)param(params, 4);
  const uint32_t i = ops->block_id(0), d = ops->thread_id(0);
  int32_t t;
#ifdef FAKE_CUDA_EMU_OOB
  t = *CHECKED(ops, &tokens[i], 0, SITE_TOKEN);
  if ((int64_t)i >= st->num_tokens)
    return;
#else
  if ((int64_t)i >= st->num_tokens)
    return;
  t = *CHECKED(ops, &tokens[i], 0, SITE_TOKEN);
#endif
  *CHECKED(ops, &h[i * HIDDEN + d], 1, SITE_H) =
      bf16_to_float(*CHECKED(ops, &embed[t * HIDDEN + d], 0, SITE_EMBED)) *
      (1.0f + *CHECKED(ops, &norm[d], 0, SITE_NORM));
}

static void emu_attn(const sgc_abi_emu_ops_t *ops, void *const *params) {
  const sgc_abi_step_state_t *st = state_of(ops, params, 0);
  const float *h = (const float *)param(params, 1);
  const float *k0 = (const float *)param(params, 2);
  const float *v1 = (const float *)param(params, 3);
  float *u = (float *)param(params, 4);
  float *own = (float *)ops->shared_memory(); /* this token's h row */
  const uint32_t i = ops->block_id(0), d = ops->thread_id(0);
  const int64_t pos0 = st->position, p = pos0 + (int64_t)i;
  float s = 0.0f, r = 0.0f;
  int64_t j;
  if ((int64_t)i >= st->num_tokens)
    return; /* the whole block */
  *CHECKED(ops, &own[d], 1, SITE_SHARED) =
      *CHECKED(ops, &h[i * HIDDEN + d], 0, SITE_H);
#ifdef FAKE_CUDA_EMU_DIVERGENT
  if (d < HIDDEN / 2)
    ops->barrier(SITE_BARRIER);
  else
    ops->barrier(SITE_BARRIER_2);
#else
  ops->barrier(SITE_BARRIER);
#endif
  for (j = 0; j <= p; ++j)
    s += j == p    ? *CHECKED(ops, &own[d], 0, SITE_SHARED)
         : j < pos0 ? *CHECKED(ops, &k0[j * HIDDEN + d], 0, SITE_K0)
                    : *CHECKED(ops, &h[(j - pos0) * HIDDEN + d], 0, SITE_H);
  for (j = p - WINDOW + 1 < 0 ? 0 : p - WINDOW + 1; j <= p; ++j)
    r += j < pos0 ? *CHECKED(ops, &v1[(j % WINDOW) * HIDDEN + d], 0, SITE_V1)
                  : *CHECKED(ops, &h[(j - pos0) * HIDDEN + d], 0, SITE_H);
  *CHECKED(ops, &u[i * HIDDEN + d], 1, SITE_U) =
      s + 0.25f * r + 0.001f * (float)p;
}

static void emu_append(const sgc_abi_emu_ops_t *ops, void *const *params) {
  const sgc_abi_step_state_t *st = state_of(ops, params, 0);
  const float *h = (const float *)param(params, 1);
  float *k0 = (float *)param(params, 2);
  float *v0 = (float *)param(params, 3);
  float *k1 = (float *)param(params, 4);
  float *v1 = (float *)param(params, 5);
  const uint32_t i = ops->block_id(0), d = ops->thread_id(0);
  const int64_t n = st->num_tokens, p = st->position + (int64_t)i;
  float x;
  if ((int64_t)i >= n)
    return;
  x = *CHECKED(ops, &h[i * HIDDEN + d], 0, SITE_H);
  *CHECKED(ops, &k0[p * HIDDEN + d], 1, SITE_K0) = x;
  *CHECKED(ops, &v0[p * HIDDEN + d], 1, SITE_V0) = -x;
#ifndef FAKE_CUDA_EMU_RACE
  if ((int64_t)i + WINDOW < n)
    return; /* a later position of the chunk takes this ring slot */
#endif
  *CHECKED(ops, &k1[(p % WINDOW) * HIDDEN + d], 1, SITE_K1) = 2.0f * x;
  *CHECKED(ops, &v1[(p % WINDOW) * HIDDEN + d], 1, SITE_V1) = x;
}

static void emu_logits(const sgc_abi_emu_ops_t *ops, void *const *params) {
  const sgc_abi_step_state_t *st = state_of(ops, params, 0);
  const uint16_t *embed = (const uint16_t *)param(params, 1);
  const float *u = (const float *)param(params, 2);
  const uint32_t i = ops->block_id(0), v = ops->thread_id(0);
  float acc = 0.0f;
  int d;
  if ((int64_t)i >= st->num_tokens)
    return;
  for (d = 0; d < HIDDEN; ++d)
    acc += bf16_to_float(*CHECKED(ops, &embed[v * HIDDEN + d], 0, SITE_EMBED)) *
           *CHECKED(ops, &u[i * HIDDEN + d], 0, SITE_U);
#ifdef FAKE_CUDA_BF16_LOGITS
  {
    uint16_t *out = (uint16_t *)param(params, 3);
    *CHECKED(ops, &out[i * VOCAB + v], 1, SITE_LOGITS) = float_to_bf16(acc);
  }
#else
  {
    float *out = (float *)param(params, 3);
    (void)float_to_bf16;
    *CHECKED(ops, &out[i * VOCAB + v], 1, SITE_LOGITS) = acc;
  }
#endif
}

static const sgc_abi_emu_kernel_fn_t emu_kernels[4] = {emu_embed, emu_attn,
                                                       emu_append, emu_logits};
static const uint32_t emu_static_shared[4] = {0, 0, 0, 0};
#ifdef FAKE_CUDA_DYNAMIC_SHARED
/* fake_append says it uses 256 bytes of dynamic shared memory, which no step
   launching it asks for. */
static const uint32_t emu_dynamic_shared[4] = {0, 0, 256, 0};
#else
static const uint32_t emu_dynamic_shared[4] = {0, 0, 0, 0};
#endif

static const sgc_abi_cuda_emu_t emu_table = {
    sizeof(sgc_abi_cuda_emu_t), 4, "sm_90a", emu_kernels, emu_static_shared,
    NUM_SITES, 0, sites, emu_dynamic_shared};

/*===--- the fatbin, the kernels and the plan --------------------------===*/

static const char fatbin[] = "sgc-fake-fatbin\n"
                             "kernel fake_embed 5\n"
#ifndef FAKE_CUDA_NO_KERNEL
                             "kernel fake_attn 5\n"
#endif
#ifdef FAKE_CUDA_PARAM_COUNT
                             "kernel fake_append 7\n"
#elif defined(FAKE_CUDA_STATIC_SHARED)
                             "kernel fake_append 6 static 45056\n"
#else
                             "kernel fake_append 6\n"
#endif
                             "kernel fake_logits 4 write 3 " LOGITS_FAKE
                             " 16 0\n";

#ifdef FAKE_CUDA_REAL_FATBIN
/* The real fatbin nvcc made from test/Inputs/cuda/fake_cuda_kernels.cu (the
   same kernels in CUDA C), for a GPU host (scripts/device-check). */
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl fake_real_fatbin\n"
        ".hidden fake_real_fatbin\n"
        "fake_real_fatbin:\n"
        ".incbin \"" FAKE_CUDA_REAL_FATBIN "\"\n"
        ".previous\n");
extern const unsigned char fake_real_fatbin[]
    __attribute__((visibility("hidden")));
#define FATBIN fake_real_fatbin
#define FATBIN_BYTES FAKE_CUDA_REAL_FATBIN_BYTES
#else
#define FATBIN fatbin
#define FATBIN_BYTES sizeof fatbin
#endif

#ifdef FAKE_CUDA_STEP_PARAMS
#define APPEND_PARAMS 5
#else
#define APPEND_PARAMS 6
#endif
#ifdef FAKE_CUDA_BIG_BLOCK
#define LOGITS_BLOCK 2048
#else
#define LOGITS_BLOCK VOCAB
#endif

#ifdef FAKE_CUDA_WAITS
#define KERNEL_FLAGS SGC_ABI_CUDA_KERNEL_WAITS
#else
#define KERNEL_FLAGS 0
#endif
static const sgc_abi_cuda_kernel_t kernels[4] = {
    {"fake_embed", 5, KERNEL_FLAGS},
    {"fake_attn", 5, KERNEL_FLAGS},
    {"fake_append", APPEND_PARAMS, KERNEL_FLAGS},
    {"fake_logits", 4, KERNEL_FLAGS},
};

#define OP(kind, index) {kind, index, 0, 0, 0, {0}}
#define WS(offset, cols, dtype)                                                \
  {SGC_ABI_OPERAND_WORKSPACE, 0, offset, dtype, 2, {SGC_ABI_DIM_TOKENS, cols}}

static const sgc_abi_operand_t operands[20] = {
    /* fake_embed: 0..4 */
    OP(SGC_ABI_OPERAND_TOKENS, 0),
    OP(SGC_ABI_OPERAND_POSITION, 0),
    OP(SGC_ABI_OPERAND_WEIGHT, 0),
    OP(SGC_ABI_OPERAND_WEIGHT, 1),
    WS(WS_H, HIDDEN, SGC_ABI_DTYPE_F32),
    /* fake_attn: 5..9 */
    OP(SGC_ABI_OPERAND_POSITION, 0),
    WS(WS_H, HIDDEN, SGC_ABI_DTYPE_F32),
    OP(SGC_ABI_OPERAND_K_CACHE, 0),
    OP(SGC_ABI_OPERAND_V_CACHE, 1),
    WS(WS_U, HIDDEN, SGC_ABI_DTYPE_F32),
    /* fake_append: 10..15 */
    OP(SGC_ABI_OPERAND_POSITION, 0),
    WS(WS_H, HIDDEN, SGC_ABI_DTYPE_F32),
    OP(SGC_ABI_OPERAND_K_CACHE, 0),
    OP(SGC_ABI_OPERAND_V_CACHE, 0),
    OP(SGC_ABI_OPERAND_K_CACHE, 1),
    OP(SGC_ABI_OPERAND_V_CACHE, 1),
    /* fake_logits: 16..19 */
    OP(SGC_ABI_OPERAND_POSITION, 0),
    OP(SGC_ABI_OPERAND_WEIGHT, 0),
    WS(WS_U, HIDDEN, SGC_ABI_DTYPE_F32),
    WS(WS_LOGITS, VOCAB, LOGITS_DTYPE),
};

/* Prefill (steps 0..3, one block per token of the chunk: a runtime may
   launch only the call's tokens, except in FAKE_CUDA_EMU_OOB, whose bug is
   in the blocks past them) and decode (4..7, one block). */
#ifdef FAKE_CUDA_EMU_OOB
#define TOKENS_X 0
#else
#define TOKENS_X SGC_ABI_STEP_GRID_TOKENS_X
#endif
#ifdef FAKE_CUDA_STATIC_SHARED
#define APPEND_DYNAMIC_SHARED (8 * 1024)
#else
#define APPEND_DYNAMIC_SHARED 0
#endif
static const sgc_abi_step_t steps[8] = {
    {0, 0, 5, -1, {CHUNK, 1, 1}, {HIDDEN, 1, 1}, 0, TOKENS_X},
    {1, 5, 5, 0, {CHUNK, 1, 1}, {HIDDEN, 1, 1}, 64 * 1024, TOKENS_X},
    {2, 10, 6, 0, {CHUNK, 1, 1}, {HIDDEN, 1, 1}, APPEND_DYNAMIC_SHARED,
     TOKENS_X},
    {3, 16, 4, -1, {CHUNK, 1, 1}, {VOCAB, 1, 1}, 0,
     SGC_ABI_STEP_ROWWISE | TOKENS_X},
    {0, 0, 5, -1, {1, 1, 1}, {HIDDEN, 1, 1}, 0, 0},
    {1, 5, 5, 0, {1, 1, 1}, {HIDDEN, 1, 1}, 1024, 0},
    {2, 10, 6, 0, {1, 1, 1}, {HIDDEN, 1, 1}, APPEND_DYNAMIC_SHARED, 0},
    {3, 16, 4, -1, {1, 1, 1}, {LOGITS_BLOCK, 1, 1}, 0, SGC_ABI_STEP_ROWWISE},
};

static const sgc_abi_phase_t phases[2] = {
    {SGC_ABI_PHASE_PREFILL, 0, 4, 0, CHUNK, WS(WS_LOGITS, VOCAB, LOGITS_DTYPE)},
    {SGC_ABI_PHASE_DECODE, 4, 4, 0, 1, WS(WS_LOGITS, VOCAB, LOGITS_DTYPE)},
};

static const char *const embed_alt_names[1] = {
    "model.language_model.embed_tokens.weight"};
static const char *const norm_alt_names[1] = {
    "model.language_model.norm.weight"};

static const sgc_abi_tensor_t tensors[2] = {
    {"language_model.model.embed_tokens.weight",
     embed_alt_names,
     1,
     SGC_ABI_DTYPE_BF16,
     2,
     {VOCAB, HIDDEN},
     VOCAB * HIDDEN * 2,
     "target.embedding",
     SGC_ABI_FILL_RANDOM,
     0},
    {"language_model.model.norm.weight",
     norm_alt_names,
     1,
     SGC_ABI_DTYPE_F32,
     1,
     {HIDDEN},
     HIDDEN * 4,
     "target.final_norm",
     SGC_ABI_FILL_ZEROS,
     0},
};

static const sgc_abi_kv_layer_t layers[2] = {
    {SGC_ABI_KV_FULL, SGC_ABI_DTYPE_F32, CONTEXT, 1, HIDDEN, 0, 1,
     HIDDEN * 4 * 2, 0},
    {SGC_ABI_KV_RING, SGC_ABI_DTYPE_F32, WINDOW, 1, HIDDEN, 0, 1,
     HIDDEN * 4 * 2, 0},
};

static const sgc_abi_variant_t variants[1] = {
    {"sm_90a", SGC_ABI_DEVICE_CUDA, 4, 0, 0, kernels, FATBIN, FATBIN_BYTES},
};

static const int32_t stop_tokens[1] = {15};

static const sgc_model_v2_t model = {
    {SGC_ABI_MAGIC, SGC_ABI_VERSION_MAJOR, SGC_ABI_VERSION_MINOR,
     sizeof(sgc_model_v2_t)},
    "fake-gemma3-toy-cuda",
    "cuda:sm_90a",
    "gemma3",
    "test/unit/fake_cuda_model.c",
    SGC_ABI_DEVICE_CUDA,
    0,
    VOCAB,
    CONTEXT,
    CHUNK,
    2, /* bos */
    1, /* eos */
    0, /* pad */
    1,
    stop_tokens,
    2,
    0,
    tensors,
    2,
    0,
    layers,
    WORKSPACE,
    2, /* phases */
    8, /* steps */
    20, /* operands */
    0,
    phases,
    steps,
    operands,
    1,
    0,
    variants,
#ifdef FAKE_CUDA_NO_EMU
    NULL,
#else
    &emu_table,
#endif
};

SGC_ABI_EXPORT const sgc_abi_header_t *sgc_model_query(uint32_t major,
                                                       uint32_t minor) {
  (void)major;
  (void)minor;
  return &model.header;
}
