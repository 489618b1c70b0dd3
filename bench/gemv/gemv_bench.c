/*
 * gemv_bench.c - cold-weight bf16 GEMV harness (CPU.md §2.1) for the row
 * kernels sgc emits, next to a hand-written C kernel of the same structure.
 *
 *   gemv_bench LIB.so VARIANT THREADS SPEC...
 *     LIB.so   kernels lowered by `sgc compile --compile-to=codegen`
 *     VARIANT  sgc (the kernels in LIB.so) | c-fma (this file's C kernel:
 *              one row at a time, 4 x 16-float accumulators, bf16 W widened
 *              exactly to f32, FMA against f32 x, bf16 y: the structure of
 *              sgc's kernel) | c-fma-pf (the same plus a software prefetch
 *              of the weight row stream 1 KiB ahead)
 *     THREADS  1 or 2 (2: the caller on cpu0 and one worker pinned to cpu1
 *              that spin-waits on an atomic generation counter; each call
 *              splits the rows in two contiguous halves)
 *     SPEC     NxK:SYMBOL:XT:YT[:q4_0] - SYMBOL is the kernel's C interface
 *              SYMBOL(x_desc*, w_desc*, y_desc*, row_begin, row_end) with
 *              x a memref<?xKxXT>, w memref<NxKxbf16>, y memref<?xNxYT>
 *              (XT, YT: f32 or bf16; run.sh reads them from the lowered
 *              IR); XT "dot": SYMBOL(xs_desc*, xb_desc*, w_desc*, y_desc*,
 *              row_begin, row_end), the f32 rows and their bf16 copy (the
 *              kernels with bf16 dot paths; x holds bf16 values); XT
 *              "dot8": the same plus the int8 rows' activation records
 *              after xb (compiler/Conversion/SGToCPU/Int8Dot.h), which
 *              this file quantizes as that header says (the kernels of
 *              Q4_0 weights where they have int8 rows: Q4_0's group
 *              records where K is a multiple of 256). The C
 *              variants need only NxK. ":q4_0": w is ggml's Q4_0 blocks,
 *              memref<Nx(K/32*18)xi8> (sgc only; the pool's bytes as the
 *              nibbles, each block's f16 scale set to a finite value).
 *
 * Cold protocol: one 1 GiB pool of random bf16 weights is carved into as
 * many copies of W as fit (at least 2), called round-robin so every weight
 * byte comes from DRAM. Per shape: 1 GiB of warm-up calls, then 5 reps of
 * >= 1 GiB each; GB/s = the weight's bytes per call (N*K*2, or N*K/32*18
 * for Q4_0) / time. Correctness: max over
 * the checked rows of |y - y_ref| / sum_k |w*x| with y_ref in double (x is
 * rounded to XT first).
 *
 * GEMV_NO_HUGEPAGE=1 in the environment leaves the pool on 4 KiB pages (the
 * runtime maps checkpoints from the page cache, which THP does not back).
 *
 * Prints one line per shape:  NxK VARIANT THREADS min med max err other
 * (other = CPUs other processes kept busy during the reps, ../other_load.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <immintrin.h>
#include <math.h>
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

typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} desc2d;

typedef void (*kernel_fn)(desc2d *x, desc2d *w, desc2d *y, int64_t r0,
                          int64_t r1);

typedef void (*dot_kernel_fn)(desc2d *xs, desc2d *xb, desc2d *w, desc2d *y,
                              int64_t r0, int64_t r1);

/* The dot kernel of the shape being timed and its bf16 rows, called through
 * a kernel_fn so both threads' calls stay alike. */
static dot_kernel_fn g_dot_fn;
static desc2d g_dot_xb;

static void call_dot(desc2d *x, desc2d *w, desc2d *y, int64_t r0, int64_t r1) {
  g_dot_fn(x, &g_dot_xb, w, y, r0, r1);
}

/* The same for a kernel with int8 rows: the f32 and bf16 rows, then the
 * int8 activations' records. */
typedef void (*int8_kernel_fn)(desc2d *xs, desc2d *xb, desc2d *records,
                               desc2d *w, desc2d *y, int64_t r0, int64_t r1);
static int8_kernel_fn g_int8_fn;
static desc2d g_int8_records;

static void call_int8(desc2d *x, desc2d *w, desc2d *y, int64_t r0, int64_t r1) {
  g_int8_fn(x, &g_dot_xb, &g_int8_records, w, y, r0, r1);
}

/* max |x| over a block of 32. */
static float block_amax(const float *x) {
  float amax = 0;
  for (int j = 0; j < 32; ++j)
    amax = fmaxf(amax, fabsf(x[j]));
  return amax;
}

/* x's int8 activations for weights whose zero point is `zero` (Q4_0: 8),
 * as compiler/Conversion/SGToCPU/Int8Dot.h lays them out: per block of
 * 32, t = x * 127 / max|x|, high = rint(t), low = min(rint(256 (t - high)),
 * 127); one 256-byte record a pair of blocks: high digits, low digits, the
 * starts (-zero * sum(256 high + low) in each block's first of 8 i32
 * lanes) and the scales (max / 127 / 256 over each block's 8 f32 lanes). */
static void quantize_int8(const float *x, long K, int zero, uint8_t *records) {
  memset(records, 0, (size_t)K * 4);
  for (long b = 0; b < K / 32; ++b) {
    uint8_t *rec = records + b / 2 * 256 + b % 2 * 32;
    float amax = block_amax(x + 32 * b);
    float inverse = amax != 0 ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int j = 0; j < 32; ++j) {
      float t = x[32 * b + j] * inverse, h = rintf(t);
      int l = (int)rintf((t - h) * 256.0f);
      l = l > 127 ? 127 : l;
      rec[j] = (uint8_t)(int8_t)h;
      rec[64 + j] = (uint8_t)(int8_t)l;
      sum += 256 * (int)h + l;
    }
    int32_t start = -zero * sum;
    float scale = amax / 127.0f / 256.0f;
    memcpy(rec + 128, &start, 4);
    for (int j = 0; j < 8; ++j)
      memcpy(rec + 192 + 4 * j, &scale, 4);
  }
}

/* Q4_0's group records where K is a multiple of 256
 * (compiler/Conversion/SGToCPU/Int8Dot.h, kQ4GroupRecordBytes): per
 * block, q = rint(x * 32767 / max|x|); per group of 8 blocks 576 bytes:
 * each pair's x_lo (i16 q of elements 0-15 of both blocks) and x_hi
 * (16-31), then the blocks' sa = max / 32767 and -8 * sa * sum(q). */
static void quantize_q4_groups(const float *x, long K, uint8_t *records) {
  memset(records, 0, (size_t)K * 4);
  for (long b = 0; b < K / 32; ++b) {
    long jb = b % 8;
    uint8_t *group = records + b / 8 * 576;
    uint8_t *lo = group + jb / 2 * 128 + jb % 2 * 32;
    float amax = block_amax(x + 32 * b);
    float inverse = amax != 0 ? 32767.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int j = 0; j < 32; ++j) {
      int q = (int)rintf(x[32 * b + j] * inverse);
      q = q > 32767 ? 32767 : q < -32767 ? -32767 : q;
      int16_t v = (int16_t)q;
      memcpy(lo + (j < 16 ? 0 : 64) + 2 * (j % 16), &v, 2);
      sum += q;
    }
    float sa = amax / 32767.0f, start = (float)sum * sa * -8.0f;
    memcpy(group + 512 + 4 * jb, &sa, 4);
    memcpy(group + 544 + 4 * jb, &start, 4);
  }
}

static const size_t kPoolBytes = (size_t)1 << 30;
static const size_t kRepBytes = (size_t)1 << 30;
enum { kReps = 5 };

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

/* Q4_0 (ggml): f16 d, then 16 bytes; element j < 16 the low nibble of byte
 * j, j + 16 the high one; w = d * (nibble - 8). */
enum { kQ4Block = 32, kQ4Bytes = 18 };

static float f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }

static float q4_0_weight(const uint8_t *row, long k) {
  const uint8_t *b = row + (k / kQ4Block) * kQ4Bytes;
  uint16_t d;
  memcpy(&d, b, 2);
  int e = (int)(k % kQ4Block);
  int nib = e < 16 ? b[2 + e] & 0xF : b[2 + e - 16] >> 4;
  return f16_to_f32(d) * (float)(nib - 8);
}

static float bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t f32_to_bf16(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}
static float urand(void) { /* uniform in [-1, 1) */
  return (float)((rng() >> 40) * (1.0 / (1 << 23)) - 1.0);
}

/* --- the hand-written C kernel (AVX2 + FMA; also runs on AVX-512 hosts) --- */

static inline __m256 widen8(const uint16_t *p) {
  __m128i h = _mm_loadu_si128((const __m128i *)p);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* |pf| > 0: also prefetch the weight stream |pf| bytes ahead (2 lines a
 * 64-element step), which this file's c-fma-pf variant does. */
static inline __attribute__((always_inline)) void
c_fma_impl(desc2d *xd, desc2d *wd, desc2d *yd, int64_t r0, int64_t r1, const int pf) {
  const float *x = xd->aligned;
  const uint16_t *w = wd->aligned;
  uint16_t *y = yd->aligned;
  int64_t K = wd->sizes[1];
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t *row = w + r * K;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int64_t k = 0;
    for (; k + 64 <= K; k += 64) {
      if (pf > 0) {
        _mm_prefetch((const char *)(row + k) + pf, _MM_HINT_T0);
        _mm_prefetch((const char *)(row + k) + pf + 64, _MM_HINT_T0);
      }
      a0 = _mm256_fmadd_ps(widen8(row + k), _mm256_loadu_ps(x + k), a0);
      b0 = _mm256_fmadd_ps(widen8(row + k + 8), _mm256_loadu_ps(x + k + 8), b0);
      a1 = _mm256_fmadd_ps(widen8(row + k + 16), _mm256_loadu_ps(x + k + 16), a1);
      b1 = _mm256_fmadd_ps(widen8(row + k + 24), _mm256_loadu_ps(x + k + 24), b1);
      a2 = _mm256_fmadd_ps(widen8(row + k + 32), _mm256_loadu_ps(x + k + 32), a2);
      b2 = _mm256_fmadd_ps(widen8(row + k + 40), _mm256_loadu_ps(x + k + 40), b2);
      a3 = _mm256_fmadd_ps(widen8(row + k + 48), _mm256_loadu_ps(x + k + 48), a3);
      b3 = _mm256_fmadd_ps(widen8(row + k + 56), _mm256_loadu_ps(x + k + 56), b3);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1)),
                             _mm256_add_ps(_mm256_add_ps(a2, b2), _mm256_add_ps(a3, b3)));
    float v[8];
    _mm256_storeu_ps(v, s);
    float acc = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    for (; k < K; ++k)
      acc += bf16_to_f32(row[k]) * x[k];
    y[r] = f32_to_bf16(acc);
  }
}

static void c_fma(desc2d *x, desc2d *w, desc2d *y, int64_t r0, int64_t r1) {
  c_fma_impl(x, w, y, r0, r1, 0);
}

static void c_fma_pf(desc2d *x, desc2d *w, desc2d *y, int64_t r0, int64_t r1) {
  c_fma_impl(x, w, y, r0, r1, 1024);
}

/* --- two-thread split: a pinned spin-waiting worker --- */

struct job {
  kernel_fn fn;
  desc2d *x, *w, *y;
  int64_t r0, r1;
};

static struct {
  struct job job;
  _Atomic long go, done;
  _Atomic int quit;
} pool;

static void *worker(void *arg) {
  (void)arg;
  pin(1);
  long seen = 0;
  for (;;) {
    long g;
    while ((g = atomic_load_explicit(&pool.go, memory_order_acquire)) == seen &&
           !atomic_load_explicit(&pool.quit, memory_order_relaxed))
      _mm_pause();
    if (atomic_load(&pool.quit))
      return NULL;
    seen = g;
    struct job j = pool.job;
    j.fn(j.x, j.w, j.y, j.r0, j.r1);
    atomic_store_explicit(&pool.done, g, memory_order_release);
  }
}

static int g_threads = 1;

static void call(kernel_fn fn, desc2d *x, desc2d *w, desc2d *y) {
  int64_t n = w->sizes[0];
  if (g_threads == 1) {
    fn(x, w, y, 0, n);
    return;
  }
  int64_t half = n / 2;
  pool.job = (struct job){fn, x, w, y, half, n};
  long g = atomic_fetch_add_explicit(&pool.go, 1, memory_order_release) + 1;
  fn(x, w, y, 0, half);
  while (atomic_load_explicit(&pool.done, memory_order_acquire) != g)
    _mm_pause();
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: gemv_bench LIB.so sgc|c-fma|c-fma-pf THREADS NxK:SYMBOL:XT:YT...\n");
    return 2;
  }
  const char *variant = argv[2];
  g_threads = atoi(argv[3]);
  if (g_threads != 1 && g_threads != 2) {
    fprintf(stderr, "gemv_bench: THREADS must be 1 or 2\n");
    return 2;
  }
  int use_c = !strcmp(variant, "c-fma") || !strcmp(variant, "c-fma-pf");
  kernel_fn c_kernel = !strcmp(variant, "c-fma-pf") ? c_fma_pf : c_fma;
  if (!use_c && strcmp(variant, "sgc")) {
    fprintf(stderr, "gemv_bench: unknown variant '%s'\n", variant);
    return 2;
  }
  void *lib = NULL;
  if (!use_c && !(lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "gemv_bench: %s\n", dlerror());
    return 1;
  }

  /* The weight pool: random bf16 in [-1, 1), filled once. */
  uint16_t *pool_w = mmap(NULL, kPoolBytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pool_w == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  if (!getenv("GEMV_NO_HUGEPAGE")) /* set it to measure on 4 KiB pages */
    madvise(pool_w, kPoolBytes, MADV_HUGEPAGE);
  for (size_t i = 0; i < kPoolBytes / 2; i += 4) {
    uint64_t r = rng();
    for (int j = 0; j < 4; ++j) { /* random sign and mantissa, |w| in [1/4, 1) */
      uint16_t b = (uint16_t)(r >> (16 * j));
      pool_w[i + j] = (uint16_t)((b & 0x807f) | ((b & 0x80) ? 0x3f00 : 0x3e80));
    }
  }

  pin(0);
  pthread_t th;
  if (g_threads == 2 && pthread_create(&th, NULL, worker, NULL) != 0) {
    perror("pthread_create");
    return 1;
  }

  int status = 0;
  for (int a = 4; a < argc; ++a) {
    long N, K;
    char sym[256] = "", xt[8] = "f32", yt[8] = "bf16", wt[8] = "bf16";
    int fields = sscanf(argv[a], "%ldx%ld:%255[A-Za-z0-9_]:%7[a-z0-9]:%7[a-z0-9]:%7[a-z0-9_]",
                        &N, &K, sym, xt, yt, wt);
    int x_int8 = !strcmp(xt, "dot8");
    int x_dot = x_int8 || !strcmp(xt, "dot");
    int x_bf16 = x_dot || !strcmp(xt, "bf16"), y_bf16 = !strcmp(yt, "bf16");
    int q4 = !strcmp(wt, "q4_0");
    if (fields < 2 || N < 2 || K < 1 || (!use_c && fields < 5) ||
        (!x_bf16 && strcmp(xt, "f32")) || (!y_bf16 && strcmp(yt, "f32")) ||
        (!q4 && strcmp(wt, "bf16")) || (q4 && (use_c || K % kQ4Block))) {
      fprintf(stderr, "gemv_bench: bad spec '%s' (NxK:SYMBOL:XT:YT[:q4_0]; q4_0: sgc, K a "
              "multiple of 32)\n", argv[a]);
      return 2;
    }
    kernel_fn fn = c_kernel;
    if (use_c) {
      x_bf16 = 0;
      y_bf16 = 1;
    } else if (!(fn = (kernel_fn)dlsym(lib, sym))) {
      fprintf(stderr, "gemv_bench: %s not in %s\n", sym, argv[1]);
      return 1;
    } else if (x_int8) {
      g_int8_fn = (int8_kernel_fn)(void (*)(void))fn;
      fn = call_int8;
    } else if (x_dot) {
      g_dot_fn = (dot_kernel_fn)(void (*)(void))fn;
      fn = call_dot;
    }
    long row_bytes = q4 ? K / kQ4Block * kQ4Bytes : K * 2;
    size_t wbytes = (size_t)N * row_bytes;
    size_t copies = kPoolBytes / wbytes;
    if (copies < 2) {
      fprintf(stderr, "gemv_bench: %s does not fit twice in the pool\n", argv[a]);
      return 2;
    }
    /* x as the kernel takes it, and its values as f32 for the reference. */
    float *x = aligned_alloc(64, ((size_t)K * 4 + 63) / 64 * 64);
    uint16_t *xb = aligned_alloc(64, ((size_t)K * 2 + 63) / 64 * 64);
    void *y = aligned_alloc(64, ((size_t)N * 4 + 63) / 64 * 64);
    for (long k = 0; k < K; ++k) {
      xb[k] = f32_to_bf16(urand());
      x[k] = x_bf16 ? bf16_to_f32(xb[k]) : urand();
    }
    void *xk = x_bf16 && !x_dot ? (void *)xb : (void *)x;
    desc2d xd = {xk, xk, 0, {1, K}, {K, 1}};
    g_dot_xb = (desc2d){xb, xb, 0, {1, K}, {K, 1}};
    uint8_t *x_records = aligned_alloc(64, (size_t)K * 4);
    if (x_int8) {
      if (K % 256 == 0)
        quantize_q4_groups(x, K, x_records);
      else
        quantize_int8(x, K, 8, x_records);
      g_int8_records = (desc2d){x_records, x_records, 0, {1, K * 4}, {K * 4, 1}};
    }
    desc2d yd = {y, y, 0, {1, N}, {N, 1}};
    desc2d *wd = malloc(copies * sizeof *wd);
    for (size_t c = 0; c < copies; ++c) {
      uint8_t *w = (uint8_t *)pool_w + c * wbytes;
      wd[c] = (desc2d){w, w, 0, {N, q4 ? row_bytes : K}, {q4 ? row_bytes : K, 1}};
      /* Q4_0: a finite scale in every block (d in [2^-7, 2^-6)). */
      for (size_t b = 0; q4 && b < wbytes; b += kQ4Bytes) {
        uint16_t d = (uint16_t)(0x2000 | (rng() & 0x3ff));
        memcpy(w + b, &d, 2);
      }
    }

    size_t calls = (kRepBytes + wbytes - 1) / wbytes;
    size_t next = 0;
    for (size_t i = 0; i < calls; ++i, next = (next + 1) % copies) /* warm-up */
      call(fn, &xd, &wd[next], &yd);
    double gbs[kReps];
    struct load_sample l0 = load_sample_now();
    for (int r = 0; r < kReps; ++r) {
      double t0 = now();
      for (size_t i = 0; i < calls; ++i, next = (next + 1) % copies)
        call(fn, &xd, &wd[next], &yd);
      gbs[r] = (double)calls * wbytes / (now() - t0) / 1e9;
    }
    struct load_sample l1 = load_sample_now();
    qsort(gbs, kReps, sizeof gbs[0], cmp_double);

    /* Correctness on copy 0 (every row, or every 61st of big matrices). */
    call(fn, &xd, &wd[0], &yd);
    const uint16_t *w0 = wd[0].aligned;
    const uint8_t *q0 = wd[0].aligned;
    long step = N > 65536 ? 61 : 1;
    double err = 0;
    for (long n = 0; n < N; n += step) {
      double ref = 0, mag = 0;
      for (long k = 0; k < K; ++k) {
        double wv = q4 ? q4_0_weight(q0 + n * row_bytes, k) : bf16_to_f32(w0[n * K + k]);
        double p = wv * x[k];
        ref += p;
        mag += fabs(p);
      }
      double yn = y_bf16 ? bf16_to_f32(((uint16_t *)y)[n]) : ((float *)y)[n];
      double e = fabs(yn - ref) / (mag > 0 ? mag : 1);
      if (!(e <= err)) /* NaN propagates */
        err = e;
    }
    if (!(err < 1e-2))
      status = 3;
    printf("%ldx%ld%s %s %d %.2f %.2f %.2f %.1e %.2f\n", N, K, q4 ? "-q4_0" : "", variant, g_threads,
           gbs[0], gbs[kReps / 2], gbs[kReps - 1], err, other_load(&l0, &l1));
    fflush(stdout);
    free(wd);
    free(x);
    free(xb);
    free(x_records);
    free(y);
  }
  if (g_threads == 2) {
    atomic_store(&pool.quit, 1);
    pthread_join(th, NULL);
  }
  return status;
}
