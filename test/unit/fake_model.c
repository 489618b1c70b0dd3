/*
 * fake_model.c - a hand-written model .so implementing ABI 2.0: a plan of one
 * step per phase, whose function computes the toy model below, so the
 * runtime's tests do not depend on the compiler. Built several times with
 * different macros:
 *   (none)             the good model
 *   FAKE_MAGIC=...     a table with the wrong magic ("not an sgc model")
 *   FAKE_MAJOR=3       a table from a future ABI major
 *   FAKE_MAJOR=1       a table from the previous ABI major
 *   FAKE_BAD_TABLE     a table whose tensor bytes disagree with its shape
 *   FAKE_BAD_PLAN      a step whose workspace buffer ends past the workspace
 *   FAKE_NO_TABLE      the query returns NULL
 *
 * The toy model (vocab 16, hidden 8, two layers: one full cache, one ring of
 * 4 slots) binds two tensors:
 *   language_model.model.embed_tokens.weight  BF16 [16, 8]  (fill random)
 *   language_model.model.norm.weight          F32  [8]      (fill zeros)
 * For a token t at position p:
 *   h[d]   = E[t][d] * (1 + w[d])
 *   layer 0 (full): K0[p] = h, V0[p] = -h; layer 1 (ring): K1[p%4] = 2h,
 *   V1[p%4] = h
 *   s[d]   = sum over j = 0..p of K0[j][d]            (ascending j)
 *   r[d]   = sum over j = max(0, p-3)..p of V1[j%4][d] (ascending j)
 *   u[d]   = s[d] + 0.25 * r[d] + 0.001 * p            (float32)
 *   logits[v] = sum over d of E[v][d] * u[d]          (ascending d)
 * Every position's logits go to row i of the [n, 16] logits buffer.
 * test/unit/fake_model_reference.h computes the same thing independently.
 * Built with -ffp-contract=off so the float operations are exactly these.
 */
#include <sgc/abi.h>

#include <string.h>

#define FAKE_VOCAB 16
#define FAKE_HIDDEN 8
#define FAKE_CONTEXT 64
#define FAKE_WINDOW 4
#define FAKE_CHUNK 8

#ifndef FAKE_MAGIC
#define FAKE_MAGIC SGC_ABI_MAGIC
#endif
#ifndef FAKE_MAJOR
#define FAKE_MAJOR SGC_ABI_VERSION_MAJOR
#endif
#ifdef FAKE_BAD_TABLE
#define FAKE_EMBED_BYTES (FAKE_VOCAB * FAKE_HIDDEN * 2 + 2)
#else
#define FAKE_EMBED_BYTES (FAKE_VOCAB * FAKE_HIDDEN * 2)
#endif

static float bf16_to_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

typedef struct logits_job {
  const uint16_t *embed;
  const float *u;
  float *out;
} logits_job;

static void logits_range(void *ctx, int64_t begin, int64_t end) {
  const logits_job *job = (const logits_job *)ctx;
  int64_t v;
  int d;
  for (v = begin; v < end; ++v) {
    float acc = 0.0f;
    for (d = 0; d < FAKE_HIDDEN; ++d)
      acc += bf16_to_float(job->embed[v * FAKE_HIDDEN + d]) * job->u[d];
    job->out[v] = acc;
  }
}

/* What a step passes (see fake_operands): the tokens, the position, the two
   weights, K0, V0, K1, V1, the scratch vector u and the logits. */
static const sgc_abi_memref_t *operand(void *const *operands, int i) {
  return (const sgc_abi_memref_t *)operands[i];
}

/* Runs one token; writes its logits to |out|. */
static void step(const sgc_abi_cpu_exec_t *exec, void *const *operands,
                 int32_t token, int64_t pos, float *out) {
  const uint16_t *embed = (const uint16_t *)operand(operands, 2)->aligned;
  const float *norm = (const float *)operand(operands, 3)->aligned;
  float *k0 = (float *)operand(operands, 4)->aligned;
  float *v0 = (float *)operand(operands, 5)->aligned;
  float *k1 = (float *)operand(operands, 6)->aligned;
  float *v1 = (float *)operand(operands, 7)->aligned;
  float *u = (float *)operand(operands, 8)->aligned;
  int64_t ring = pos % FAKE_WINDOW;
  int64_t first = pos - FAKE_WINDOW + 1 < 0 ? 0 : pos - FAKE_WINDOW + 1;
  int64_t j;
  int d;
  logits_job job;
  for (d = 0; d < FAKE_HIDDEN; ++d) {
    float h = bf16_to_float(embed[token * FAKE_HIDDEN + d]) * (1.0f + norm[d]);
    k0[pos * FAKE_HIDDEN + d] = h;
    v0[pos * FAKE_HIDDEN + d] = -h;
    k1[ring * FAKE_HIDDEN + d] = 2.0f * h;
    v1[ring * FAKE_HIDDEN + d] = h;
  }
  for (d = 0; d < FAKE_HIDDEN; ++d) {
    float s = 0.0f, r = 0.0f;
    for (j = 0; j <= pos; ++j)
      s += k0[j * FAKE_HIDDEN + d];
    for (j = first; j <= pos; ++j)
      r += v1[(j % FAKE_WINDOW) * FAKE_HIDDEN + d];
    u[d] = s + 0.25f * r + 0.001f * (float)pos;
  }
  job.embed = embed;
  job.u = u;
  job.out = out;
  exec->parallel_for(exec->runtime_state, FAKE_VOCAB, logits_range, &job);
}

/* The one function of the plan: every token of the call, in order. */
static void fake_run(const sgc_abi_cpu_exec_t *exec, void *const *operands) {
  const sgc_abi_memref_t *tokens = operand(operands, 0);
  const int64_t pos0 = *(const int64_t *)operands[1];
  float *logits = (float *)operand(operands, 9)->aligned;
  int64_t i;
  for (i = 0; i < tokens->sizes_strides[0]; ++i)
    step(exec, operands, ((const int32_t *)tokens->aligned)[i], pos0 + i,
         logits + i * FAKE_VOCAB);
}

#ifdef FAKE_BAD_PLAN
#define FAKE_LOGITS_OFFSET 4096
#else
#define FAKE_LOGITS_OFFSET 64
#endif
#define FAKE_WORKSPACE (64 + FAKE_CHUNK * FAKE_VOCAB * 4)

static const sgc_abi_operand_t fake_operands[10] = {
    {SGC_ABI_OPERAND_TOKENS, 0, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_POSITION, 0, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_WEIGHT, 0, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_WEIGHT, 1, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_K_CACHE, 0, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_V_CACHE, 0, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_K_CACHE, 1, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_V_CACHE, 1, 0, 0, 0, {0}},
    {SGC_ABI_OPERAND_WORKSPACE, 0, 0, SGC_ABI_DTYPE_F32, 1, {FAKE_HIDDEN}},
    {SGC_ABI_OPERAND_WORKSPACE, 0, FAKE_LOGITS_OFFSET, SGC_ABI_DTYPE_F32, 2,
     {SGC_ABI_DIM_TOKENS, FAKE_VOCAB}},
};

/* Both phases run the same step. */
static const sgc_abi_step_t fake_steps[1] = {
    {0, 0, 10, -1, {0, 0, 0}, {0, 0, 0}, 0, 0}};

static const sgc_abi_phase_t fake_phases[2] = {
    {SGC_ABI_PHASE_DECODE, 0, 1, 0, 1,
     {SGC_ABI_OPERAND_WORKSPACE, 0, FAKE_LOGITS_OFFSET, SGC_ABI_DTYPE_F32, 2,
      {SGC_ABI_DIM_TOKENS, FAKE_VOCAB}}},
    {SGC_ABI_PHASE_PREFILL, 0, 1, 0, FAKE_CHUNK,
     {SGC_ABI_OPERAND_WORKSPACE, 0, FAKE_LOGITS_OFFSET, SGC_ABI_DTYPE_F32, 2,
      {SGC_ABI_DIM_TOKENS, FAKE_VOCAB}}},
};

#ifdef FAKE_BAD_ARGMAX
/* A decode argmax operand the runtime must refuse: F32 (1) or I32 past the
   workspace (2). */
static const sgc_abi_operand_t fake_phase_argmax[2] = {
    {SGC_ABI_OPERAND_WORKSPACE, 0,
     FAKE_BAD_ARGMAX == 1 ? 0 : FAKE_WORKSPACE,
     FAKE_BAD_ARGMAX == 1 ? SGC_ABI_DTYPE_F32 : SGC_ABI_DTYPE_I32, 1, {1}},
    {0}};
#endif

static const sgc_abi_cpu_fn_t fake_functions[1] = {fake_run};

/* The other spelling of the Gemma 3 prefix, as the compiler lists it. */
static const char *const fake_embed_alt_names[1] = {
    "model.language_model.embed_tokens.weight"};
static const char *const fake_norm_alt_names[1] = {
    "model.language_model.norm.weight"};

static const sgc_abi_tensor_t fake_tensors[2] = {
    {"language_model.model.embed_tokens.weight",
     fake_embed_alt_names,
     1,
     SGC_ABI_DTYPE_BF16,
     2,
     {FAKE_VOCAB, FAKE_HIDDEN},
     FAKE_EMBED_BYTES,
     "target.embedding",
     SGC_ABI_FILL_RANDOM,
     0},
    {"language_model.model.norm.weight",
     fake_norm_alt_names,
     1,
     SGC_ABI_DTYPE_F32,
     1,
     {FAKE_HIDDEN},
     FAKE_HIDDEN * 4,
     "target.final_norm",
     SGC_ABI_FILL_ZEROS,
     0},
};

static const sgc_abi_kv_layer_t fake_layers[2] = {
    {SGC_ABI_KV_FULL, SGC_ABI_DTYPE_F32, FAKE_CONTEXT, 1, FAKE_HIDDEN, 0, 1,
     FAKE_HIDDEN * 4 * 2, 0},
    {SGC_ABI_KV_RING, SGC_ABI_DTYPE_F32, FAKE_WINDOW, 1, FAKE_HIDDEN, 0, 1,
     FAKE_HIDDEN * 4 * 2, 0},
};

static const sgc_abi_variant_t fake_variants[2] = {
    {"fake-avx512", SGC_ABI_DEVICE_CPU, 1,
     SGC_ABI_CPU_AVX512F | SGC_ABI_CPU_AVX512BW | SGC_ABI_CPU_AVX512VL,
     fake_functions, 0, 0, 0},
    {"fake-generic", SGC_ABI_DEVICE_CPU, 1, 0, fake_functions, 0, 0, 0},
};

static const int32_t fake_stop_tokens[1] = {15};

#ifdef FAKE_IMAGE_NO_PHASE
/* An image record without the encode_image phase it describes. */
static const sgc_abi_image_t fake_image = {10, 11, 12, 14, 56, 2, 4, 0};
#endif
#ifdef FAKE_V22
/* A table as ABI 2.2 wrote it: it ends before the 2.3 image field. */
#define FAKE_STRUCT_SIZE SGC_ABI_MODEL_V2_2_SIZE
#else
#define FAKE_STRUCT_SIZE sizeof(sgc_model_v2_t)
#endif

static const sgc_model_v2_t fake_model = {
    {FAKE_MAGIC, FAKE_MAJOR, SGC_ABI_VERSION_MINOR, FAKE_STRUCT_SIZE},
    "fake-gemma3-toy",
    "cpu",
    "gemma3",
    "test/unit/fake_model.c",
    SGC_ABI_DEVICE_CPU,
    0,
    FAKE_VOCAB,
    FAKE_CONTEXT,
    FAKE_CHUNK,
    2, /* bos */
    1, /* eos */
    0, /* pad */
    1,
    fake_stop_tokens,
    2,
    0,
    fake_tensors,
    2,
    0,
    fake_layers,
    FAKE_WORKSPACE,
    2, /* phases */
    1, /* steps */
    10, /* operands */
    0,
    fake_phases,
    fake_steps,
    fake_operands,
    2,
    0,
    fake_variants,
#ifdef FAKE_IMAGE_NO_PHASE
    0, /* cuda_emu */
    &fake_image,
#endif
#ifdef FAKE_BAD_ARGMAX
    0, /* cuda_emu */
    0, /* image */
    fake_phase_argmax,
#endif
};

SGC_ABI_EXPORT const sgc_abi_header_t *sgc_model_query(uint32_t major,
                                                       uint32_t minor) {
  (void)major;
  (void)minor;
#ifdef FAKE_NO_TABLE
  return NULL;
#else
  return &fake_model.header;
#endif
}
