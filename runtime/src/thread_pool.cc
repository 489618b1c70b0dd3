/*
 * thread_pool.cc - spin-then-sleep workers; chunks handed out by an atomic
 * counter, so a late worker's chunk is taken by whoever is free.
 */
#include "runtime/src/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SGC_CPU_RELAX() _mm_pause()
#else
#define SGC_CPU_RELAX() std::this_thread::yield()
#endif

namespace sgc {
namespace runtime {

namespace {
/// Set while a thread runs ranges, so nested parallel_for runs inline.
thread_local bool in_parallel_region = false;

/// Spins before a worker sleeps on the condition variable (~tens of us).
constexpr int spin_iterations = 4000;
} // namespace

thread_pool::thread_pool(int num_threads) {
  if (num_threads < 1)
    num_threads = 1;
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int i = 1; i < num_threads; ++i)
    workers_.emplace_back([this] { worker_main(0); });
}

thread_pool::~thread_pool() {
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void thread_pool::run_chunks() {
  // Guided: each grab takes 1/(2 x threads) of what is left, so the last
  // grabs are small and the threads finish together. Eight equal chunks
  // (the earlier split) left one thread idle for up to a chunk: ~6 % of a
  // 2-thread B1 decode step spun in the pool, most of it behind the LM
  // head's 42 MB chunks.
  const int64_t share = 2 * size();
  int64_t begin = next_begin_.load(std::memory_order_relaxed);
  for (;;) {
    if (begin >= n_)
      return;
    const int64_t left = n_ - begin;
    int64_t take = left / share > min_chunk_ ? left / share : min_chunk_;
    take = (take + chunk_align_ - 1) / chunk_align_ * chunk_align_;
    const int64_t end = take < left ? begin + take : n_;
    if (next_begin_.compare_exchange_weak(begin, end,
                                          std::memory_order_relaxed)) {
      fn_(ctx_, begin, end);
      begin = next_begin_.load(std::memory_order_relaxed);
    }
  }
}

void thread_pool::worker_main(uint64_t seen) {
  // |seen| is the generation at construction (0), not whatever it is when
  // this thread gets to run: a job posted before then must not be missed.
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int i = 0; g == seen && i < spin_iterations; ++i) {
      SGC_CPU_RELAX();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(wake_mutex_);
      wake_.wait(lock, [&] {
        return generation_.load(std::memory_order_acquire) != seen;
      });
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_relaxed))
      return;
    in_parallel_region = true;
    run_chunks();
    in_parallel_region = false;
    busy_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void thread_pool::parallel_for(int64_t n, sgc_abi_range_fn_t fn, void *ctx) {
  if (n <= 0 || !fn)
    return;
  if (workers_.empty() || in_parallel_region || n == 1) {
    const bool was = in_parallel_region;
    in_parallel_region = true;
    fn(ctx, 0, n);
    in_parallel_region = was;
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  const int64_t threads = size();
  fn_ = fn;
  ctx_ = ctx;
  n_ = n;
  // Grabs of at least 1/64 of a thread's share; of whole 16-row blocks
  // (the projection kernels' tile height) where there are many rows.
  min_chunk_ = n / (threads * 64) > 1 ? n / (threads * 64) : 1;
  chunk_align_ = n >= 256 ? 16 : 1;
  next_begin_.store(0, std::memory_order_relaxed);
  busy_workers_.store(static_cast<int>(workers_.size()),
                      std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(wake_mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();

  in_parallel_region = true;
  run_chunks();
  in_parallel_region = false;
  // Every worker must have left this job before its fields change again.
  int spins = 0;
  while (busy_workers_.load(std::memory_order_acquire) != 0) {
    if (++spins < spin_iterations)
      SGC_CPU_RELAX();
    else
      std::this_thread::yield();
  }
}

namespace {
struct function_job {
  const std::function<void(int64_t, int64_t)> *f;
};
void call_function(void *ctx, int64_t begin, int64_t end) {
  (*static_cast<function_job *>(ctx)->f)(begin, end);
}
} // namespace

void thread_pool::run(int64_t n,
                      const std::function<void(int64_t, int64_t)> &f) {
  function_job job{&f};
  parallel_for(n, call_function, &job);
}

void thread_pool::abi_parallel_for(void *state, int64_t n,
                                   sgc_abi_range_fn_t fn, void *ctx) {
  static_cast<thread_pool *>(state)->parallel_for(n, fn, ctx);
}

} // namespace runtime
} // namespace sgc
