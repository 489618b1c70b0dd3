/*
 * fiber.h - the emulator's GPU threads: functions run on their own stacks and
 * switched to and from one scheduler (Boost.Context's fcontext primitives).
 *
 * Why fcontext and not boost::context::fiber: an error ends a launch by
 * abandoning its fibers mid-kernel. boost::context::fiber's destructor would
 * unwind each abandoned stack with an exception, which compiled kernels need
 * not support (no unwind tables, no landing pads); with fcontext an abandoned
 * fiber is simply never resumed and its stack is reused.
 *
 * AddressSanitizer is told about every switch (__sanitizer_start/finish_
 * switch_fiber), so sanitized builds follow the stacks. Boost's own
 * annotations exist only in its ucontext backend (BOOST_USE_UCONTEXT with
 * BOOST_USE_ASAN), not in the fcontext assembly Debian ships, hence these.
 */
#ifndef SGC_RUNTIME_SRC_CUDA_EMU_FIBER_H
#define SGC_RUNTIME_SRC_CUDA_EMU_FIBER_H

#include <cstddef>
#include <cstdint>

namespace sgc {
namespace runtime {
namespace emu {

/// Stacks for up to capacity() fibers, mmap'd in one piece with an
/// inaccessible guard page below each: untouched pages cost nothing and an
/// overflow faults instead of corrupting the neighbour.
class stack_pool {
public:
  /// Bytes per stack (compiled kernels keep local arrays on it).
  static constexpr size_t stack_bytes = 256 * 1024;

  stack_pool() = default;
  stack_pool(const stack_pool &) = delete;
  stack_pool &operator=(const stack_pool &) = delete;
  ~stack_pool();

  /// Makes room for |n| stacks; false when the memory cannot be mapped.
  bool reserve(uint32_t n);
  uint32_t capacity() const { return capacity_; }
  /// Lowest address of stack |i| (the stack grows down towards it).
  void *bottom(uint32_t i) const;

private:
  void *base_ = nullptr;
  size_t mapped_ = 0;
  uint32_t capacity_ = 0;
};

/// One fiber. start() prepares it; the scheduler calls resume(), the code
/// on the fiber calls yield() to return to the scheduler.
class fiber {
public:
  using entry_fn = void (*)(void *arg);

  /// Prepares |fn|(|arg|) on [stack, stack + bytes); a fiber abandoned
  /// earlier may be started again on the same stack.
  void start(void *stack, size_t bytes, entry_fn fn, void *arg);
  /// From the scheduler: runs the fiber until it yields or |fn| returns.
  void resume();
  /// From the fiber: back to the scheduler; resume() continues after it.
  void yield() { switch_out(false); }
  /// True once |fn| has returned (the fiber must not be resumed again).
  bool finished() const { return finished_; }

private:
  void switch_out(bool finishing);

  void *context_ = nullptr; // where resume() continues the fiber
  void *caller_ = nullptr;  // where switch_out() returns to the scheduler
  entry_fn fn_ = nullptr;
  void *arg_ = nullptr;
  void *stack_ = nullptr;
  size_t stack_bytes_ = 0;
  bool finished_ = false;
  // AddressSanitizer's bookkeeping of the two stacks (unused without it).
  void *fake_stack_ = nullptr;
  const void *caller_stack_ = nullptr;
  size_t caller_stack_bytes_ = 0;

  friend struct fiber_access;
};

} // namespace emu
} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_EMU_FIBER_H
