/*
 * bw.c - STREAM-style memory bandwidth reference for sgc's CPU benchmarks
 * (CPU.md §1). One process measures one kernel on T threads:
 *
 *   bw KERNEL THREADS [MIB] [REPS]
 *     KERNEL   read-sum | copy | copy-nt
 *     THREADS  1 or 2 (thread i pinned to cpu i; the caller is thread 0)
 *     MIB      bytes read per rep, in MiB (default 1024)
 *     REPS     timed reps after one warm-up rep (default 5)
 *
 * read-sum: every thread sums its contiguous share of one array with 4
 *   independent vector accumulators (AVX-512 or AVX2 by -march=native).
 * copy:     B[i] = A[i] with vector loads and stores; 2 bytes counted per
 *   byte copied (the STREAM convention: write-allocate traffic not counted).
 * copy-nt:  the same with streaming (non-temporal) stores.
 *
 * Arrays are anonymous memory with MADV_HUGEPAGE; BW_NO_HUGEPAGE=1 in the
 * environment leaves them on 4 KiB pages.
 *
 * Prints one line:  KERNEL THREADS min med max other   (GB/s = 1e9 bytes/s,
 * over the REPS timed reps; other = CPUs other processes kept busy during
 * them, see ../other_load.h). The median is the reference the other
 * benchmarks use.
 * Threads meet at a spin barrier (an atomic generation counter) before and
 * after each rep, so a rep's time is the slowest thread's.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../other_load.h"

enum kernel { READ_SUM, COPY, COPY_NT };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *alloc_huge(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  if (!getenv("BW_NO_HUGEPAGE")) /* set it to measure on 4 KiB pages */
    madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
}

/* Sums n bytes (n a multiple of 256) from p. */
static float read_sum(const char *p, size_t n) {
#if defined(__AVX512F__)
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 256) {
    a0 = _mm512_add_ps(a0, _mm512_load_ps((const float *)(p + i)));
    a1 = _mm512_add_ps(a1, _mm512_load_ps((const float *)(p + i + 64)));
    a2 = _mm512_add_ps(a2, _mm512_load_ps((const float *)(p + i + 128)));
    a3 = _mm512_add_ps(a3, _mm512_load_ps((const float *)(p + i + 192)));
  }
  return _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
#elif defined(__AVX2__)
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 128) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps((const float *)(p + i)));
    a1 = _mm256_add_ps(a1, _mm256_load_ps((const float *)(p + i + 32)));
    a2 = _mm256_add_ps(a2, _mm256_load_ps((const float *)(p + i + 64)));
    a3 = _mm256_add_ps(a3, _mm256_load_ps((const float *)(p + i + 96)));
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  float v[8];
  _mm256_storeu_ps(v, s);
  return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
#else
#error "bw.c needs AVX2 or AVX-512 (-march=native on an x86-64-v3+ host)"
#endif
}

static void copy(char *dst, const char *src, size_t n, int nt) {
#if defined(__AVX512F__)
  for (size_t i = 0; i < n; i += 64) {
    __m512 v = _mm512_load_ps((const float *)(src + i));
    if (nt)
      _mm512_stream_ps((float *)(dst + i), v);
    else
      _mm512_store_ps((float *)(dst + i), v);
  }
#else
  for (size_t i = 0; i < n; i += 32) {
    __m256 v = _mm256_load_ps((const float *)(src + i));
    if (nt)
      _mm256_stream_ps((float *)(dst + i), v);
    else
      _mm256_store_ps((float *)(dst + i), v);
  }
#endif
  if (nt)
    _mm_sfence();
}

struct shared {
  enum kernel kernel;
  char *a, *b;
  size_t bytes; /* per array */
  int threads;
  _Atomic long go;   /* generation: incremented by thread 0 to start a rep */
  _Atomic long done; /* threads that finished the current rep */
  _Atomic int quit;
  float sink[2];
};

static void run_share(struct shared *s, int t) {
  size_t share = s->bytes / s->threads;
  size_t off = share * t;
  if (s->kernel == READ_SUM)
    s->sink[t] += read_sum(s->a + off, share);
  else
    copy(s->b + off, s->a + off, share, s->kernel == COPY_NT);
}

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
    run_share(s, 1);
    atomic_fetch_add_explicit(&s->done, 1, memory_order_release);
  }
}

static double one_rep(struct shared *s) {
  atomic_store(&s->done, 0);
  double t0 = now();
  atomic_fetch_add_explicit(&s->go, 1, memory_order_release);
  run_share(s, 0);
  while (atomic_load_explicit(&s->done, memory_order_acquire) != s->threads - 1)
    _mm_pause();
  return now() - t0;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bw read-sum|copy|copy-nt THREADS [MIB] [REPS]\n");
    return 2;
  }
  struct shared s;
  memset(&s, 0, sizeof s);
  if (!strcmp(argv[1], "read-sum"))
    s.kernel = READ_SUM;
  else if (!strcmp(argv[1], "copy"))
    s.kernel = COPY;
  else if (!strcmp(argv[1], "copy-nt"))
    s.kernel = COPY_NT;
  else {
    fprintf(stderr, "bw: unknown kernel '%s'\n", argv[1]);
    return 2;
  }
  s.threads = atoi(argv[2]);
  size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 1024;
  int reps = argc > 4 ? atoi(argv[4]) : 5;
  if (s.threads < 1 || s.threads > 2 || mib < 1 || reps < 1 || reps > 100) {
    fprintf(stderr, "bw: THREADS must be 1 or 2, MIB >= 1, REPS 1..100\n");
    return 2;
  }
  /* A copy moves 2 bytes per byte copied: two arrays of MIB/2 each, so
   * every kernel moves MIB per rep. */
  s.bytes = (s.kernel == READ_SUM ? mib : mib / 2) << 20;
  s.a = alloc_huge(s.bytes);
  for (size_t i = 0; i < s.bytes / sizeof(float); ++i)
    ((float *)s.a)[i] = 1.0f;
  if (s.kernel != READ_SUM) {
    s.b = alloc_huge(s.bytes);
    memset(s.b, 0, s.bytes);
  }
  pin(0);
  pthread_t th;
  if (s.threads == 2 && pthread_create(&th, NULL, worker, &s) != 0) {
    perror("pthread_create");
    return 1;
  }
  double moved = (double)s.bytes * (s.kernel == READ_SUM ? 1 : 2);
  double gbs[100];
  one_rep(&s); /* warm-up */
  struct load_sample l0 = load_sample_now();
  for (int r = 0; r < reps; ++r)
    gbs[r] = moved / one_rep(&s) / 1e9;
  struct load_sample l1 = load_sample_now();
  if (s.threads == 2) {
    atomic_store(&s.quit, 1);
    pthread_join(th, NULL);
  }
  qsort(gbs, reps, sizeof gbs[0], cmp_double);
  printf("%s %d %.2f %.2f %.2f %.2f\n", argv[1], s.threads, gbs[0], gbs[reps / 2],
         gbs[reps - 1], other_load(&l0, &l1));
  if (s.sink[0] + s.sink[1] == -1.0f) /* keep the sums alive */
    puts("");
  return 0;
}
