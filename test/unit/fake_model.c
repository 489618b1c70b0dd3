/*
 * fake_model.c - a hand-written model .so implementing ABI 1.0, used until
 * the compiler emits real ones. Built several times with different macros:
 *   (none)             the good model
 *   FAKE_MAGIC=...     a table with the wrong magic ("not an sgc model")
 *   FAKE_MAJOR=2       a table from a future ABI major
 *   FAKE_BAD_TABLE     a table whose tensor bytes disagree with its shape
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

static int32_t check_context(const sgc_abi_call_context_t *ctx) {
  if (!ctx || ctx->struct_size < sizeof(sgc_abi_call_context_t) ||
      ctx->num_weights != 2 || ctx->num_layers != 2 || !ctx->weights[0] ||
      !ctx->weights[1] || !ctx->k_cache[0] || !ctx->k_cache[1] ||
      !ctx->v_cache[0] || !ctx->v_cache[1] || !ctx->workspace ||
      ctx->workspace_bytes < FAKE_HIDDEN * sizeof(float) ||
      !ctx->parallel_for || ctx->num_threads < 1)
    return SGC_ABI_ERROR_BAD_CONTEXT;
  return SGC_ABI_OK;
}

/* Runs one token; writes logits for it when |out| is not NULL. */
static int32_t step(const sgc_abi_call_context_t *ctx, int32_t token,
                    int64_t pos, float *out) {
  const uint16_t *embed = (const uint16_t *)ctx->weights[0];
  const float *norm = (const float *)ctx->weights[1];
  float *k0 = (float *)ctx->k_cache[0];
  float *v0 = (float *)ctx->v_cache[0];
  float *k1 = (float *)ctx->k_cache[1];
  float *v1 = (float *)ctx->v_cache[1];
  float *u = (float *)ctx->workspace;
  int64_t ring = pos % FAKE_WINDOW;
  int64_t first = pos - FAKE_WINDOW + 1 < 0 ? 0 : pos - FAKE_WINDOW + 1;
  int64_t j;
  int d;
  logits_job job;
  if (token < 0 || token >= FAKE_VOCAB || pos < 0 || pos >= FAKE_CONTEXT)
    return SGC_ABI_ERROR_INVALID_ARGUMENT;
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
  if (out) {
    job.embed = embed;
    job.u = u;
    job.out = out;
    ctx->parallel_for(ctx->runtime_state, FAKE_VOCAB, logits_range, &job);
  }
  return SGC_ABI_OK;
}

static int32_t fake_prefill(const sgc_abi_call_context_t *ctx,
                            const int32_t *tokens, int64_t n_tokens,
                            int64_t pos0, float *logits_out,
                            int32_t all_positions) {
  int64_t i;
  int32_t rc = check_context(ctx);
  if (rc != SGC_ABI_OK)
    return rc;
  if (n_tokens < 1 || n_tokens > FAKE_CHUNK)
    return SGC_ABI_ERROR_INVALID_ARGUMENT;
  for (i = 0; i < n_tokens; ++i) {
    float *out = all_positions       ? logits_out + i * FAKE_VOCAB
                 : i + 1 == n_tokens ? logits_out
                                     : NULL;
    rc = step(ctx, tokens[i], pos0 + i, out);
    if (rc != SGC_ABI_OK)
      return rc;
  }
  return SGC_ABI_OK;
}

static int32_t fake_decode(const sgc_abi_call_context_t *ctx, int32_t token,
                           int64_t pos, float *logits_out) {
  int32_t rc = check_context(ctx);
  if (rc != SGC_ABI_OK)
    return rc;
  return step(ctx, token, pos, logits_out);
}

/* A variant whose entry points always fail (tests the runtime's mapping). */
static int32_t broken_prefill(const sgc_abi_call_context_t *ctx,
                              const int32_t *tokens, int64_t n_tokens,
                              int64_t pos0, float *logits_out,
                              int32_t all_positions) {
  (void)ctx, (void)tokens, (void)n_tokens, (void)pos0, (void)logits_out,
      (void)all_positions;
  return SGC_ABI_ERROR_INTERNAL;
}

static int32_t broken_decode(const sgc_abi_call_context_t *ctx, int32_t token,
                             int64_t pos, float *logits_out) {
  (void)ctx, (void)token, (void)pos, (void)logits_out;
  return SGC_ABI_ERROR_INTERNAL;
}

static const sgc_abi_tensor_t fake_tensors[2] = {
    {"language_model.model.embed_tokens.weight",
     SGC_ABI_DTYPE_BF16,
     2,
     {FAKE_VOCAB, FAKE_HIDDEN},
     FAKE_EMBED_BYTES,
     "target.embedding",
     SGC_ABI_FILL_RANDOM,
     0,
     0},
    {"language_model.model.norm.weight",
     SGC_ABI_DTYPE_F32,
     1,
     {FAKE_HIDDEN},
     FAKE_HIDDEN * 4,
     "target.final_norm",
     SGC_ABI_FILL_ZEROS,
     0,
     0},
};

static const sgc_abi_kv_layer_t fake_layers[2] = {
    {SGC_ABI_KV_FULL, SGC_ABI_DTYPE_F32, FAKE_CONTEXT, 1, FAKE_HIDDEN, 0, 1,
     FAKE_HIDDEN * 4 * 2, 0},
    {SGC_ABI_KV_RING, SGC_ABI_DTYPE_F32, FAKE_WINDOW, 1, FAKE_HIDDEN, 0, 1,
     FAKE_HIDDEN * 4 * 2, 0},
};

static const sgc_abi_cpu_variant_t fake_variants[3] = {
    {"fake-avx512",
     SGC_ABI_CPU_AVX512F | SGC_ABI_CPU_AVX512BW | SGC_ABI_CPU_AVX512VL,
     fake_prefill,
     fake_decode,
     {0, 0, 0, 0}},
    {"fake-generic", 0, fake_prefill, fake_decode, {0, 0, 0, 0}},
    {"fake-broken", 0, broken_prefill, broken_decode, {0, 0, 0, 0}},
};

static const int32_t fake_stop_tokens[1] = {15};

static const sgc_model_v1_t fake_model = {
    {FAKE_MAGIC, FAKE_MAJOR, SGC_ABI_VERSION_MINOR, sizeof(sgc_model_v1_t)},
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
    FAKE_HIDDEN * sizeof(float),
    3,
    0,
    fake_variants,
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
