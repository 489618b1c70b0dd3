/*
 * thread_pool.h - the runtime's worker threads behind the ABI's
 * parallel_for (the compiled .so has no thread library of its own).
 *
 * Thread-safety: parallel_for may be called from any thread; calls from
 * different threads are serialized. A call made from inside a running range
 * function runs inline on the calling thread.
 */
#ifndef SGC_RUNTIME_SRC_THREAD_POOL_H
#define SGC_RUNTIME_SRC_THREAD_POOL_H

#include <sgc/abi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sgc {
namespace runtime {

class thread_pool {
public:
  /// Starts |num_threads| - 1 workers; the caller of parallel_for is the
  /// last thread. |num_threads| < 1 is treated as 1.
  explicit thread_pool(int num_threads);
  ~thread_pool();
  thread_pool(const thread_pool &) = delete;
  thread_pool &operator=(const thread_pool &) = delete;

  /// Threads that run ranges, the caller included.
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs fn(ctx, begin, end) over disjoint ranges covering [0, n) and
  /// returns when all are done (see sgc_abi_parallel_for_fn_t).
  void parallel_for(int64_t n, sgc_abi_range_fn_t fn, void *ctx);

  /// C++ convenience: f(begin, end).
  void run(int64_t n, const std::function<void(int64_t, int64_t)> &f);

  /// The function placed in sgc_abi_call_context_t::parallel_for; |state|
  /// is a thread_pool*.
  static void abi_parallel_for(void *state, int64_t n, sgc_abi_range_fn_t fn,
                               void *ctx);

private:
  void worker_main(uint64_t seen);
  void run_chunks();

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;

  // The current job; written by the caller before generation_ is bumped.
  sgc_abi_range_fn_t fn_ = nullptr;
  void *ctx_ = nullptr;
  int64_t n_ = 0;
  /// The smallest grab, and what grabs round up to (see run_chunks).
  int64_t min_chunk_ = 1;
  int64_t chunk_align_ = 1;
  /// The first index no thread has taken yet.
  std::atomic<int64_t> next_begin_{0};
  std::atomic<int> busy_workers_{0};
  std::atomic<uint64_t> generation_{0};

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_THREAD_POOL_H
