/*
 * attn_bench.c - one decode step of a full-attention layer, as sgc's CPU
 * kernels run it, with K and V cached ("keep") and with V only, the keys
 * rebuilt from it ("vonly", issue 37).
 *
 *   attn_bench LIB.so KEEP_SYMBOL VONLY_SYMBOL SLOTS HQ HKV D THREADS REPS [ROWS]
 *
 * The symbols are the kernels' C interfaces (_mlir_ciface_sgc_attn_...):
 * (q, k, v, k_cache, v_cache, pos[1], [k_norm weight,] out, head_begin,
 * head_end), each memref a descriptor pointer. The chunk's ROWS queries
 * (default 1: decode) end at position SLOTS - 1: they read the SLOTS - ROWS
 * cached keys and the chunk's own, causally. THREADS threads
 * split the query heads as the model glue does. Prints per variant: median,
 * min and max milliseconds over REPS calls (after one warm-up call), the
 * cache bytes one call reads (K and V, or V), and the other load
 * (bench/other_load.h). Caches hold random bf16 in [-1, 1).
 */
#include "../other_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { void *alloc, *aligned; int64_t offset, sizes[1], strides[1]; } desc1;
typedef struct { void *alloc, *aligned; int64_t offset, sizes[3], strides[3]; } desc3;

typedef void (*keep_fn)(desc3 *, desc3 *, desc3 *, desc3 *, desc3 *, desc1 *,
                        desc3 *, int64_t, int64_t);
typedef void (*vonly_fn)(desc3 *, desc3 *, desc3 *, desc3 *, desc3 *, desc1 *,
                         desc1 *, desc3 *, int64_t, int64_t);

static desc3 d3(void *p, int64_t a, int64_t b, int64_t c) {
  desc3 d = {p, p, 0, {a, b, c}, {b * c, c, 1}};
  return d;
}
static desc1 d1(void *p, int64_t n) {
  desc1 d = {p, p, 0, {n}, {1}};
  return d;
}

static uint16_t *random_bf16(size_t n, uint32_t seed) {
  uint16_t *p = aligned_alloc(64, (n * 2 + 63) / 64 * 64);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    float f = (float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    p[i] = (uint16_t)(bits >> 16);
  }
  return p;
}

struct call {
  int vonly;
  void *fn;
  desc3 q, k, v, kc, vc, out;
  desc1 pos, w;
  int64_t begin, end;
};

static void run_call(struct call *c) {
  if (c->vonly)
    ((vonly_fn)c->fn)(&c->q, &c->k, &c->v, &c->kc, &c->vc, &c->pos, &c->w,
                      &c->out, c->begin, c->end);
  else
    ((keep_fn)c->fn)(&c->q, &c->k, &c->v, &c->kc, &c->vc, &c->pos, &c->out,
                     c->begin, c->end);
}

static void *thread_main(void *arg) {
  run_call(arg);
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 10 && argc != 11) {
    fprintf(stderr, "usage: attn_bench LIB KEEP VONLY SLOTS HQ HKV D THREADS REPS [ROWS]\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "error: %s\n", dlerror());
    return 1;
  }
  void *fns[2] = {dlsym(lib, argv[2]), dlsym(lib, argv[3])};
  if (!fns[0] || !fns[1]) {
    fprintf(stderr, "error: no kernel %s or %s in %s\n", argv[2], argv[3], argv[1]);
    return 1;
  }
  int64_t slots = atoll(argv[4]), hq = atoll(argv[5]), hkv = atoll(argv[6]);
  int64_t d = atoll(argv[7]);
  int threads = atoi(argv[8]), reps = atoi(argv[9]);
  int64_t rows = argc == 11 ? atoll(argv[10]) : 1;
  size_t cache = (size_t)slots * hkv * d;
  uint16_t *q = random_bf16(rows * hq * d, 1), *k = random_bf16(rows * hkv * d, 2);
  uint16_t *v = random_bf16(rows * hkv * d, 3), *kc = random_bf16(cache, 4);
  uint16_t *vc = random_bf16(cache, 5), *w = random_bf16(d, 6);
  uint16_t *out = aligned_alloc(64, (rows * hq * d * 2 + 63) / 64 * 64);
  int64_t pos = slots - rows;
  const char *names[2] = {"keep", "vonly"};
  for (int variant = 0; variant < 2; ++variant) {
    struct call calls[64];
    for (int t = 0; t < threads; ++t) {
      struct call c = {variant, fns[variant], d3(q, rows, hq, d), d3(k, rows, hkv, d),
                       d3(v, rows, hkv, d), d3(kc, slots, hkv, d), d3(vc, slots, hkv, d),
                       d3(out, rows, hq, d), d1(&pos, 1), d1(w, d),
                       hq * t / threads, hq * (t + 1) / threads};
      if (variant == 1) {
        c.k = c.v;   /* k is v */
        c.vc = c.kc; /* one cache, holding V */
      }
      calls[t] = c;
    }
    double *ms = malloc(sizeof(double) * reps);
    struct load_sample a = {0};
    for (int r = -1; r < reps; ++r) {
      if (r == 0)
        a = load_sample_now();
      double t0 = now();
      pthread_t ids[64];
      for (int t = 1; t < threads; ++t)
        pthread_create(&ids[t], NULL, thread_main, &calls[t]);
      run_call(&calls[0]);
      for (int t = 1; t < threads; ++t)
        pthread_join(ids[t], NULL);
      if (r >= 0)
        ms[r] = (now() - t0) * 1e3;
    }
    struct load_sample b = load_sample_now();
    qsort(ms, reps, sizeof(double), cmp);
    double bytes = (double)cache * 2 * (variant == 0 ? 2 : 1);
    printf("%s %d %.3f %.3f %.3f %.0f %.2f\n", names[variant], threads,
           ms[reps / 2], ms[0], ms[reps - 1], bytes, other_load(&a, &b));
    free(ms);
  }
  return 0;
}
