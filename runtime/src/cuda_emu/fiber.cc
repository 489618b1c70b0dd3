/*
 * fiber.cc - stacks and switches for the emulator's fibers (fiber.h).
 */
#include "runtime/src/cuda_emu/fiber.h"

#include <boost/context/detail/fcontext.hpp>

#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SGC_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SGC_EMU_ASAN 1
#endif
#endif

#ifdef SGC_EMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace sgc {
namespace runtime {
namespace emu {

namespace ctx = boost::context::detail;

static size_t page_bytes() {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<size_t>(page) : 4096;
}

stack_pool::~stack_pool() {
  if (base_)
    munmap(base_, mapped_);
}

bool stack_pool::reserve(uint32_t n) {
  if (n <= capacity_)
    return true;
  if (base_)
    munmap(base_, mapped_);
  base_ = nullptr;
  mapped_ = 0;
  capacity_ = 0;
  const size_t slot = stack_bytes + page_bytes();
  void *p = mmap(nullptr, slot * n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    if (mprotect(static_cast<char *>(p) + i * slot, page_bytes(), PROT_NONE)) {
      munmap(p, slot * n);
      return false;
    }
  }
  base_ = p;
  mapped_ = slot * n;
  capacity_ = n;
  return true;
}

void *stack_pool::bottom(uint32_t i) const {
  const size_t slot = stack_bytes + page_bytes();
  return static_cast<char *>(base_) + i * slot + page_bytes();
}

// The switches, with AddressSanitizer's annotations where it is built in:
// start_switch before each jump names the stack being entered; finish_switch
// after it restores the bookkeeping of the stack that was left.
struct fiber_access {
  static void entry(ctx::transfer_t t) {
    fiber *f = static_cast<fiber *>(t.data);
    f->caller_ = t.fctx;
#ifdef SGC_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &f->caller_stack_,
                                    &f->caller_stack_bytes_);
#endif
    f->fn_(f->arg_);
    f->switch_out(true);
    // A finished fiber is never resumed.
    std::fputs("sgc: emulator resumed a finished fiber\n", stderr);
    std::abort();
  }
};

void fiber::start(void *stack, size_t bytes, entry_fn fn, void *arg) {
#ifdef SGC_EMU_ASAN
  // An abandoned fiber leaves its frames' redzones poisoned.
  __asan_unpoison_memory_region(stack, bytes);
#endif
  stack_ = stack;
  stack_bytes_ = bytes;
  fn_ = fn;
  arg_ = arg;
  finished_ = false;
  fake_stack_ = nullptr;
  context_ = ctx::make_fcontext(static_cast<char *>(stack) + bytes, bytes,
                                &fiber_access::entry);
}

void fiber::resume() {
#ifdef SGC_EMU_ASAN
  void *scheduler_fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&scheduler_fake_stack, stack_, stack_bytes_);
#endif
  ctx::transfer_t t = ctx::jump_fcontext(context_, this);
#ifdef SGC_EMU_ASAN
  __sanitizer_finish_switch_fiber(scheduler_fake_stack, nullptr, nullptr);
#endif
  context_ = t.fctx;
}

void fiber::switch_out(bool finishing) {
  finished_ = finishing;
#ifdef SGC_EMU_ASAN
  // A finishing fiber's fake stack is released (nullptr).
  __sanitizer_start_switch_fiber(finishing ? nullptr : &fake_stack_,
                                 caller_stack_, caller_stack_bytes_);
#endif
  ctx::transfer_t t = ctx::jump_fcontext(caller_, nullptr);
  caller_ = t.fctx;
#ifdef SGC_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_, &caller_stack_,
                                  &caller_stack_bytes_);
#endif
}

} // namespace emu
} // namespace runtime
} // namespace sgc
