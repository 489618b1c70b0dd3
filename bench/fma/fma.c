/*
 * fma.c - f32 FMA-throughput reference for sgc's CPU prefill benchmarks:
 * the compute ceiling next to bench/bandwidth's memory one
 * (PERFORMANCE.md, B2).
 *
 *   fma THREADS [MITERS] [REPS] [dot]
 *     THREADS  1 or 2 (thread i pinned to cpu i; the caller is thread 0)
 *     MITERS   loop iterations per thread and rep, in millions (default 20)
 *     REPS     timed reps after one warm-up rep (default 5)
 *     dot      time vdpbf16ps (AVX512-BF16: 16 lanes x 2 bf16 products a
 *              lane) instead of the f32 FMA, FLOP = 4 per lane; the ceiling
 *              of sgc's bf16 tiles. Exits 3 where the build has no
 *              AVX512-BF16.
 *
 * Every thread runs CHAINS independent accumulator chains of vector FMAs
 * (acc = acc * a + b) on registers only: no loads, no stores. Chains are
 * independent so the FMA latency (4-5 cycles) is hidden behind the 2 FMA
 * pipes a core has (Zen 3/4, Intel since Haswell): 2 pipes x 5 cycles needs
 * at least 10 in flight; 12 leaves a margin and still fits the 16 vector
 * registers. The vector width is the widest -march=native allows (AVX-512:
 * 16 lanes, AVX2: 8 lanes). FLOP = 2 per FMA lane.
 *
 * Prints one line:  fma THREADS min med max other   (GFLOP/s = 1e9 FLOP/s;
 * "dot" instead of "fma" in the dot mode
 * over all threads, over the REPS timed reps; other = CPUs other processes
 * kept busy during them, see ../other_load.h). Threads meet at a spin
 * barrier before and after each rep, so a rep's time is the slowest
 * thread's. The median is the reference the other benchmarks use.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../other_load.h"

#define CHAINS 12
/* One step of every chain, written out so each accumulator stays in its own
 * register (both probes use it). */
#define CHAIN_STEPS(S)                                                         \
  do {                                                                         \
    S(0); S(1); S(2); S(3); S(4); S(5); S(6); S(7); S(8); S(9); S(10); S(11);  \
  } while (0)

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define VSET1 _mm512_set1_ps
#define VFMA _mm512_fmadd_ps
#define VADD _mm512_add_ps
#define VSUM _mm512_reduce_add_ps
#elif defined(__AVX2__) && defined(__FMA__)
typedef __m256 vec;
#define LANES 8
#define VSET1 _mm256_set1_ps
#define VFMA _mm256_fmadd_ps
#define VADD _mm256_add_ps
static float VSUM(__m256 v) {
  float f[8];
  _mm256_storeu_ps(f, v);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
#error "fma.c needs AVX2 + FMA or AVX-512 (-march=native on an x86-64-v3+ host)"
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
}

/* iters x CHAINS dependent-per-chain FMAs. a < 1 keeps every chain bounded
 * (it converges to b / (1 - a)), so no infinities or denormals slow it. */
static float fma_chains(long iters, float seed) {
  vec a = VSET1(0.999f), b = VSET1(1e-3f);
  vec acc[CHAINS];
  for (int c = 0; c < CHAINS; ++c)
    acc[c] = VSET1(seed + (float)c);
  for (long i = 0; i < iters; ++i) {
#define STEP(c) acc[c] = VFMA(acc[c], a, b)
    CHAIN_STEPS(STEP);
#undef STEP
  }
  vec s = acc[0];
  for (int c = 1; c < CHAINS; ++c)
    s = VADD(s, acc[c]);
  return VSUM(s);
}

/* iters x CHAINS dependent-per-chain vdpbf16ps: each lane adds two bf16
 * products a step. Small factors keep every chain far from overflow. */
#if defined(__AVX512BF16__)
static float dot_chains(long iters, float seed) {
  __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  __m512 acc[CHAINS];
  for (int c = 0; c < CHAINS; ++c)
    acc[c] = _mm512_set1_ps(seed + (float)c);
  for (long i = 0; i < iters; ++i) {
#define STEP(c) acc[c] = _mm512_dpbf16_ps(acc[c], a, a)
    CHAIN_STEPS(STEP);
#undef STEP
  }
  __m512 s = acc[0];
  for (int c = 1; c < CHAINS; ++c)
    s = _mm512_add_ps(s, acc[c]);
  return _mm512_reduce_add_ps(s);
}
#endif

static int dot_mode;

static float chains(long iters, float seed) {
#if defined(__AVX512BF16__)
  if (dot_mode)
    return dot_chains(iters, seed);
#endif
  return fma_chains(iters, seed);
}

struct shared {
  long iters;
  int threads;
  _Atomic long go;   /* generation: incremented by thread 0 to start a rep */
  _Atomic long done; /* threads that finished the current rep */
  _Atomic int quit;
  float sink[2];
};

static void *worker(void *arg) {
  struct shared *s = arg;
  pin(1);
  long seen = 0;
  for (;;) {
    long g;
    while ((g = atomic_load_explicit(&s->go, memory_order_acquire)) == seen &&
           !atomic_load_explicit(&s->quit, memory_order_acquire))
      _mm_pause();
    if (atomic_load(&s->quit))
      return NULL;
    seen = g;
    s->sink[1] += chains(s->iters, (float)g);
    atomic_fetch_add_explicit(&s->done, 1, memory_order_release);
  }
}

static double one_rep(struct shared *s) {
  atomic_store(&s->done, 0);
  double t0 = now();
  long g = atomic_fetch_add_explicit(&s->go, 1, memory_order_release) + 1;
  s->sink[0] += chains(s->iters, (float)g);
  while (atomic_load_explicit(&s->done, memory_order_acquire) != s->threads - 1)
    _mm_pause();
  return now() - t0;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fma THREADS [MITERS] [REPS] [dot]\n");
    return 2;
  }
  struct shared s;
  memset(&s, 0, sizeof s);
  s.threads = atoi(argv[1]);
  long miters = argc > 2 ? atol(argv[2]) : 20;
  int reps = argc > 3 ? atoi(argv[3]) : 5;
  if (s.threads < 1 || s.threads > 2 || miters < 1 || reps < 1 || reps > 100) {
    fprintf(stderr, "fma: THREADS must be 1 or 2, MITERS >= 1, REPS 1..100\n");
    return 2;
  }
  dot_mode = argc > 4 && strcmp(argv[4], "dot") == 0;
#if !defined(__AVX512BF16__)
  if (dot_mode) {
    fprintf(stderr, "fma: this build has no AVX512-BF16 (dot)\n");
    return 3;
  }
#endif
  s.iters = miters * 1000000L;
  pin(0);
  pthread_t th;
  if (s.threads == 2 && pthread_create(&th, NULL, worker, &s) != 0) {
    perror("pthread_create");
    return 1;
  }
  double flop = (dot_mode ? 4.0 : 2.0) * LANES * CHAINS * (double)s.iters * s.threads;
  double gfs[100];
  one_rep(&s); /* warm-up: clocks up, the worker scheduled */
  struct load_sample l0 = load_sample_now();
  for (int r = 0; r < reps; ++r)
    gfs[r] = flop / one_rep(&s) / 1e9;
  struct load_sample l1 = load_sample_now();
  if (s.threads == 2) {
    atomic_store(&s.quit, 1);
    pthread_join(th, NULL);
  }
  qsort(gfs, reps, sizeof gfs[0], cmp_double);
  printf("%s %d %.2f %.2f %.2f %.2f\n", dot_mode ? "dot" : "fma", s.threads,
         gfs[0], gfs[reps / 2],
         gfs[reps - 1], other_load(&l0, &l1));
  if (s.sink[0] + s.sink[1] == -1.0f) /* keep the chains alive */
    puts("");
  return 0;
}
