/*
 * sgc_decode.c - times one sgc model through the runtime's C API
 * (runtime/include/sgc/runtime.h): decode steps of a greedy generation (B1)
 * and a long-prompt prefill (B2), in one process.
 *
 *   sgc_decode MODEL.so WEIGHTS THREADS PROMPT DECODE [PREFILL PREFILL_REPS]
 *
 * 1. Binds WEIGHTS with populate on (every page read before timing) and
 *    creates a session with THREADS threads.
 * 2. Warm-up: a greedy generation of the PROMPT-token prompt plus 8 tokens.
 * 3. Decode: a fresh greedy generation of the same prompt plus DECODE+1
 *    tokens (eos ignored). The time between consecutive tokens reported by
 *    on_token is one decode step (forward + argmax); the first token, which
 *    the prefill produced, is not counted.
 * 4. Prefill (when PREFILL > 0): PREFILL_REPS calls of sgc_session_prefill
 *    on a PREFILL-token prompt at position 0 (last-position logits only),
 *    each timed (one call if PREFILL <= the model's max prefill chunk).
 *
 * The prompt is token 2 (bos) then 100 + (i * 7919) % 100000 (a smaller
 * modulus for vocabularies under 100100): hf_peer.py uses the same ids. Prints key=value lines:
 *   decode_ms_median, decode_ms_mean, decode_steps, prefill_s_median,
 *   prefill_tokens, threads, variant, weight_bytes, weights_copied_bytes
 *   (the runtime's copy of the checkpoint: its huge-page placement),
 *   kv_bytes_per_token,
 *   generated (the first 16 ids after the prompt), other_load (CPUs other
 *   processes kept busy during the timed generation, ../other_load.h).
 */
#include "sgc/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../other_load.h"

/* Weak: a runtime from before it (compare.sh's older build) links too. */
#pragma weak sgc_session_tuning

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(sgc_status_t *st, const char *what) {
  if (!st)
    return;
  fprintf(stderr, "sgc_decode: %s: %s\n", what, sgc_status_message(st));
  for (size_t i = 0; i < sgc_status_note_count(st); ++i)
    fprintf(stderr, "note: %s\n", sgc_status_note(st, i));
  exit((int)sgc_status_code(st));
}

struct record {
  double *t;
  int32_t *ids;
  long n, cap;
};

static int on_token(void *user, int32_t token) {
  struct record *r = user;
  if (r->n < r->cap) {
    r->t[r->n] = now();
    r->ids[r->n] = token;
  }
  ++r->n;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, long n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Ids below 100 + min(100000, vocab - 100): the B1 model (vocab 262144)
 * gets the same ids as always; small models (bench/b1/compare.sh on
 * examples/tiny-*) stay inside their vocabulary. */
static int32_t *make_prompt(long n, int64_t vocab) {
  int64_t span = vocab - 100 < 100000 ? vocab - 100 : 100000;
  int32_t *p = malloc(n * sizeof *p);
  for (long i = 0; i < n; ++i)
    p[i] = i == 0 ? 2 : (int32_t)(100 + (i * 7919) % span);
  return p;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: sgc_decode MODEL.so WEIGHTS THREADS PROMPT DECODE "
                    "[PREFILL PREFILL_REPS]\n");
    return 2;
  }
  const char *so = argv[1], *weights_path = argv[2];
  int threads = atoi(argv[3]);
  long prompt_len = atol(argv[4]), decode = atol(argv[5]);
  long prefill_len = argc > 6 ? atol(argv[6]) : 0;
  long prefill_reps = argc > 7 ? atol(argv[7]) : 1;
  if (threads < 1 || prompt_len < 1 || decode < 1 || prefill_reps < 1) {
    fprintf(stderr, "sgc_decode: bad arguments\n");
    return 2;
  }

  sgc_model_t *model;
  check(sgc_model_open(so, &model), "model");
  sgc_model_info_t info;
  sgc_model_get_info(model, &info);
  sgc_weights_options_t wopt;
  sgc_weights_options_default(&wopt);
  wopt.populate = 1;
#ifdef SGC_RUNTIME_WEIGHTS_PLACEMENT_API
  /* SGC_DECODE_WEIGHTS=map|copy: the placement (default: the runtime's). */
  const char *placement = getenv("SGC_DECODE_WEIGHTS");
  if (placement && !strcmp(placement, "map"))
    wopt.placement = SGC_WEIGHTS_MAP;
  else if (placement && !strcmp(placement, "copy"))
    wopt.placement = SGC_WEIGHTS_COPY;
#endif
  sgc_weights_t *weights;
  check(sgc_weights_bind(model, weights_path, &wopt, &weights), "weights");
  sgc_session_options_t sopt;
  sgc_session_options_default(&sopt);
  sopt.num_threads = threads;
  sgc_session_t *session;
  check(sgc_session_create(model, weights, &sopt, &session), "session");

  uint64_t kv_per_token = 0;
  sgc_kv_layer_info_t kv;
  for (size_t i = 0; sgc_model_kv_layer(model, i, &kv); ++i)
    kv_per_token += kv.bytes_per_token;

  int32_t *prompt = make_prompt(prompt_len, info.vocab_size);
  struct record rec;
  rec.cap = decode + 1;
  rec.t = calloc(rec.cap, sizeof *rec.t);
  rec.ids = calloc(rec.cap, sizeof *rec.ids);

  sgc_generate_options_t gopt;
  sgc_generate_options_default(&gopt);
  gopt.ignore_eos = 1;
  gopt.on_token = on_token;
  gopt.user = &rec;

  /* Warm-up. */
  gopt.max_new_tokens = 8;
  rec.n = 0;
  check(sgc_session_generate(session, prompt, prompt_len, &gopt, NULL), "warm-up");

  /* Timed decode. */
  gopt.max_new_tokens = decode + 1;
  rec.n = 0;
  int64_t generated = 0;
  struct load_sample l0 = load_sample_now();
  check(sgc_session_generate(session, prompt, prompt_len, &gopt, &generated),
        "generate");
  struct load_sample l1 = load_sample_now();
  if (generated != decode + 1 || rec.n != decode + 1) {
    fprintf(stderr, "sgc_decode: generated %lld tokens, expected %ld\n",
            (long long)generated, decode + 1);
    return 5;
  }
  double *step = malloc(decode * sizeof *step);
  for (long i = 0; i < decode; ++i)
    step[i] = rec.t[i + 1] - rec.t[i];
  double mean = (rec.t[decode] - rec.t[0]) / decode;

  printf("threads=%d\n", sgc_session_num_threads(session));
  /* The runtime's choices for this host (absent before b130e8d). */
  if (sgc_session_tuning)
    printf("tuning=%s\n", sgc_session_tuning(session));
  /* The runtime's name for it changed with ABI 2 (device-neutral); the
     harness builds against either, so two builds can be timed side by side. */
#ifdef SGC_RUNTIME_CPU_VARIANT_API
  printf("variant=%s\n", sgc_session_cpu_variant(session));
#else
  printf("variant=%s\n", sgc_session_variant(session));
#endif
  printf("weight_bytes=%llu\n", (unsigned long long)info.weight_bytes);
  printf("weights_copied_bytes=%llu\n",
         (unsigned long long)sgc_weights_copied_bytes(weights));
  printf("kv_bytes_per_token=%llu\n", (unsigned long long)kv_per_token);
  printf("decode_steps=%ld\n", decode);
  printf("decode_ms_mean=%.3f\n", mean * 1e3);
  printf("decode_ms_median=%.3f\n", median(step, decode) * 1e3);
  printf("other_load=%.2f\n", other_load(&l0, &l1));
  printf("generated=");
  for (long i = 0; i < rec.n && i < 16; ++i)
    printf("%s%d", i ? "," : "", rec.ids[i]);
  printf("\n");

  if (prefill_len > 0) {
    int32_t *long_prompt = make_prompt(prefill_len, info.vocab_size);
    long chunk = info.max_prefill_chunk > 0 ? info.max_prefill_chunk : prefill_len;
    float *logits = malloc(info.vocab_size * sizeof *logits);
    double *t = malloc(prefill_reps * sizeof *t);
    for (long r = 0; r < prefill_reps; ++r) {
      double t0 = now();
      for (long p = 0; p < prefill_len; p += chunk) {
        long n = prefill_len - p < chunk ? prefill_len - p : chunk;
        check(sgc_session_prefill(session, long_prompt + p, n, p, logits, 0),
              "prefill");
      }
      t[r] = now() - t0;
    }
    printf("prefill_tokens=%ld\n", prefill_len);
    printf("prefill_s_median=%.4f\n", median(t, prefill_reps));
    long best = 0;
    for (long v = 1; v < info.vocab_size; ++v)
      if (logits[v] > logits[best])
        best = v;
    printf("prefill_argmax=%ld\n", best);
  }
  sgc_session_release(session);
  sgc_weights_release(weights);
  sgc_model_release(model);
  return 0;
}
