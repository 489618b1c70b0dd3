/*
 * emulator.cc - runs a launch's GPU threads as fibers under several
 * schedules (emulator.h): the scheduler, the rendezvous of barriers and warp
 * collectives, the checks, and the ops table the kernels call.
 */
#include "runtime/src/cuda_emu/emulator.h"

#include "runtime/src/cuda_emu/fiber.h"
#include "runtime/src/cuda_emu/schedule.h"
#include "runtime/src/cuda_emu/warp_math.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <utility>

namespace sgc {
namespace runtime {
namespace emu {
namespace {

/// The most threads and shared memory an sm_90 CTA can have.
constexpr uint32_t max_block_threads = 1024;
constexpr uint64_t max_shared_bytes = SGC_ABI_CUDA_MAX_SHARED_BYTES;

enum class run_state : uint8_t { runnable, waiting, done, failed };
enum class wait_kind : uint8_t { none, barrier, shuffle, mma, ldmatrix };

const char *kind_name(wait_kind k) {
  switch (k) {
  case wait_kind::barrier:
    return "barrier";
  case wait_kind::shuffle:
    return "shuffle";
  case wait_kind::mma:
    return "mma.sync";
  case wait_kind::ldmatrix:
    return "ldmatrix";
  default:
    return "nothing";
  }
}

/// One GPU thread: its fiber, ids, and the collective it waits at.
struct thread_state {
  fiber f;
  uint32_t tid[3] = {0, 0, 0};
  uint32_t warp = 0, lane = 0;
  run_state state = run_state::runnable;
  wait_kind kind = wait_kind::none;
  uint32_t site = 0;
  // The collective's operands.
  uint32_t value = 0, offset = 0, width = 0, mode = 0;
  uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  float c[4] = {0, 0, 0, 0};
  const void *row_address = nullptr;
  uint32_t num = 0, trans = 0;
  // Its results.
  uint32_t out[4] = {0, 0, 0, 0};
  float d[4] = {0, 0, 0, 0};
  bool valid = false;
};

/// The block being run and everything its threads' ops look at.
struct block_run {
  const launch *l = nullptr;
  const char *schedule = "";
  uint32_t id[3] = {0, 0, 0};
  uint32_t threads = 0, warps = 0;
  thread_state *thread = nullptr; // [threads]
  uint8_t *shared = nullptr;
  uint64_t shared_bytes = 0;
  void *const *params = nullptr;
  size_t last_buffer = 0; // check_access's guess
  status error;
};

thread_local block_run *t_block = nullptr;
thread_local thread_state *t_thread = nullptr;

/// For errors found outside any site.
constexpr uint32_t no_site = ~0u;

std::string site_text(const launch &l, uint32_t site) {
  if (l.sites && site < l.num_sites && l.sites[site])
    return quote(l.sites[site]);
  return "site " + std::to_string(site);
}

std::string triple(const uint32_t v[3]) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " +
         std::to_string(v[2]) + ")";
}

std::string launch_name(const launch &l) {
  std::string s = "emulated kernel " + quote(l.kernel);
  if (!l.where.empty())
    s += " (" + l.where + ")";
  return s;
}

/// Records the first error of the block: kernel, where, block, thread,
/// site, detail.
void report(block_run &b, const thread_state *th, uint32_t site,
            const std::string &detail) {
  if (!b.error.ok())
    return;
  std::string msg = launch_name(*b.l) + ": block " + triple(b.id);
  if (th)
    msg += " thread " + triple(th->tid);
  if (site != no_site)
    msg += " at " + site_text(*b.l, site);
  msg += ": " + detail;
  b.error = internal_error(std::move(msg));
  b.error.note(std::string("schedule: ") + b.schedule);
}

/// Ends the calling thread's part in the launch: the scheduler sees the
/// error and never resumes it. Called after report(), with no objects that
/// own memory left in the caller's frame.
[[noreturn]] void abandon() {
  t_thread->state = run_state::failed;
  t_thread->f.yield();
  std::fputs("sgc: emulator resumed an abandoned thread\n", stderr);
  std::abort();
}

// Reports and abandons the calling thread. A macro, not a function: the
// message's temporaries must be destroyed (at the end of report's statement)
// before abandon() leaves the frame for good, or their memory would leak.
#define SGC_EMU_FAIL(site, detail)                                             \
  do {                                                                         \
    report(*t_block, t_thread, (site), (detail));                              \
    abandon();                                                                 \
  } while (0)

thread_state &current() {
  if (!t_thread) {
    std::fputs("sgc: an emulator op was called outside a kernel\n", stderr);
    std::abort();
  }
  return *t_thread;
}

/// Parks the calling thread at a collective until the scheduler releases it.
void wait_at(thread_state &th, wait_kind kind, uint32_t site) {
  th.kind = kind;
  th.site = site;
  th.state = run_state::waiting;
  th.f.yield();
}

uint32_t lanes_in_warp(const block_run &b, uint32_t warp) {
  const uint32_t first = warp * warp_lanes;
  return b.threads - first < warp_lanes ? b.threads - first : warp_lanes;
}

//===--------------------------------------------------------------------===//
// Bounds
//===--------------------------------------------------------------------===//

bool inside(uintptr_t a, uint64_t bytes, uintptr_t base, uint64_t size) {
  return a >= base && a - base <= size && bytes <= size - (a - base);
}

/// "N bytes at 0xA, past the end of 'x' (B bytes) at offset O": the buffer
/// (or shared memory) the range starts in or nearest below it.
std::string describe_miss(const block_run &b, uintptr_t a, uint64_t bytes) {
  char head[96];
  std::snprintf(head, sizeof head, "%" PRIu64 " bytes at 0x%" PRIxPTR, bytes,
                a);
  std::string name;
  uintptr_t base = 0;
  uint64_t size = 0;
  bool found = false;
  for (const buffer &buf : b.l->buffers) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(buf.data);
    if (p <= a && (!found || p > base)) {
      name = quote(buf.what);
      base = p;
      size = buf.bytes;
      found = true;
    }
  }
  const uintptr_t shared = reinterpret_cast<uintptr_t>(b.shared);
  if (shared <= a && (!found || shared > base)) {
    name = "the block's shared memory";
    base = shared;
    size = b.shared_bytes;
    found = true;
  }
  if (!found)
    return std::string(head) +
           ", outside every buffer of the launch and the block's shared memory";
  return std::string(head) +
         (inside(a, bytes, base, size) ? ", inside " : ", past the end of ") +
         name + " (" + std::to_string(size) + " bytes) at offset " +
         std::to_string(a - base);
}

void op_check_access(const void *address, uint64_t bytes, uint32_t is_write,
                     uint32_t site) {
  block_run &b = *t_block;
  if (bytes == 0)
    return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  if (inside(a, bytes, reinterpret_cast<uintptr_t>(b.shared), b.shared_bytes))
    return;
  const std::vector<buffer> &bufs = b.l->buffers;
  for (size_t n = 0; n < bufs.size(); ++n) {
    const size_t i = (b.last_buffer + n) % bufs.size();
    const buffer &buf = bufs[i];
    if (!inside(a, bytes, reinterpret_cast<uintptr_t>(buf.data), buf.bytes))
      continue;
    b.last_buffer = i;
    if (is_write && !buf.writable) {
      report(b, t_thread, site,
             "write of " + std::to_string(bytes) + " bytes into " +
                 quote(buf.what) + ", which the launch does not write");
      abandon();
    }
    return;
  }
  report(b, t_thread, site,
         std::string("access out of bounds: a ") +
             (is_write ? "write" : "read") + " of " +
             describe_miss(b, a, bytes));
  abandon();
}

void op_out_of_bounds(uint32_t site, int64_t index, int64_t size) {
  report(*t_block, t_thread, site,
         "index " + std::to_string(index) +
             " out of bounds of a dimension of size " + std::to_string(size));
  abandon();
}

//===--------------------------------------------------------------------===//
// Ids, shared memory, atomics
//===--------------------------------------------------------------------===//

uint32_t dim_of(const uint32_t v[3], uint32_t dim) {
  if (dim > 2) {
    report(*t_block, t_thread, no_site,
           "dimension " + std::to_string(dim) + " does not exist (0..2)");
    abandon();
  }
  return v[dim];
}

uint32_t op_thread_id(uint32_t dim) { return dim_of(current().tid, dim); }
uint32_t op_block_id(uint32_t dim) { return dim_of(t_block->id, dim); }
uint32_t op_block_dim(uint32_t dim) { return dim_of(t_block->l->block, dim); }
uint32_t op_grid_dim(uint32_t dim) { return dim_of(t_block->l->grid, dim); }
void *op_shared_memory() { return t_block->shared; }

float op_atomic_add_f32(float *address, float value, uint32_t site) {
  op_check_access(address, sizeof(float), 1, site);
  // Fibers are cooperative: nothing runs between the load and the store.
  const float old = *address;
  *address = old + value;
  return old;
}

uint32_t op_atomic_cas_u32(uint32_t *address, uint32_t compare, uint32_t value,
                           uint32_t site) {
  op_check_access(address, sizeof(uint32_t), 1, site);
  const uint32_t old = *address;
  if (old == compare)
    *address = value;
  return old;
}

//===--------------------------------------------------------------------===//
// Collectives: the calling side
//===--------------------------------------------------------------------===//

void op_barrier(uint32_t site) { wait_at(current(), wait_kind::barrier, site); }

uint32_t op_shuffle(uint32_t value, uint32_t offset, uint32_t width,
                    uint32_t mode, uint32_t site, uint8_t *valid) {
  thread_state &th = current();
  if (width == 0 || width > 32 || (width & (width - 1)))
    SGC_EMU_FAIL(site, "shuffle width " + std::to_string(width) +
                           " is not a power of two of at most 32");
  if (mode > SGC_ABI_SHUFFLE_IDX)
    SGC_EMU_FAIL(site,
                 "shuffle mode " + std::to_string(mode) + " does not exist");
  if (!(shuffle_member_mask(width) >> th.lane & 1))
    SGC_EMU_FAIL(site, "lane " + std::to_string(th.lane) +
                           " calls a shuffle of width " +
                           std::to_string(width) +
                           ", whose member mask holds only lanes 0.." +
                           std::to_string(width - 1) + " (undefined in PTX)");
  th.value = value;
  th.offset = offset;
  th.width = width;
  th.mode = mode;
  wait_at(th, wait_kind::shuffle, site);
  if (valid)
    *valid = th.valid ? 1 : 0;
  return th.out[0];
}

void need_full_warp(const thread_state &th, uint32_t site, const char *what) {
  const uint32_t lanes = lanes_in_warp(*t_block, th.warp);
  if (lanes < warp_lanes)
    SGC_EMU_FAIL(site, std::string(what) + " needs all 32 lanes, but warp " +
                           std::to_string(th.warp) +
                           " of this block has only " + std::to_string(lanes));
}

void op_mma(const uint32_t *a, const uint32_t *b, const float *c, float *d,
            uint32_t site) {
  thread_state &th = current();
  need_full_warp(th, site, "mma.sync");
  std::memcpy(th.a, a, sizeof th.a);
  std::memcpy(th.b, b, sizeof th.b);
  std::memcpy(th.c, c, sizeof th.c);
  wait_at(th, wait_kind::mma, site);
  std::memcpy(d, th.d, sizeof th.d);
}

void op_ldmatrix(const void *row_address, uint32_t num, uint32_t trans,
                 uint32_t *out, uint32_t site) {
  thread_state &th = current();
  if (num != 1 && num != 2 && num != 4)
    SGC_EMU_FAIL(site, "ldmatrix of " + std::to_string(num) +
                           " matrices (x1, x2 or x4)");
  if (trans > 1)
    SGC_EMU_FAIL(site, "ldmatrix trans flag " + std::to_string(trans));
  need_full_warp(th, site, "ldmatrix");
  th.row_address = row_address;
  th.num = num;
  th.trans = trans;
  wait_at(th, wait_kind::ldmatrix, site);
  std::memcpy(out, th.out, num * sizeof(uint32_t));
}

const sgc_abi_emu_ops_t k_ops = {
    sizeof(sgc_abi_emu_ops_t),
    0,
    op_thread_id,
    op_block_id,
    op_block_dim,
    op_grid_dim,
    op_barrier,
    op_shuffle,
    op_shared_memory,
    op_out_of_bounds,
    op_mma,
    op_ldmatrix,
    op_atomic_add_f32,
    op_atomic_cas_u32,
    op_check_access,
};

void thread_main(void *arg) {
  thread_state *th = static_cast<thread_state *>(arg);
  t_block->l->fn(&k_ops, t_block->params);
  th->state = run_state::done;
}

//===--------------------------------------------------------------------===//
// Collectives: the scheduler's side
//===--------------------------------------------------------------------===//

std::string lane_whereabouts(const block_run &b, const thread_state &t) {
  std::string s =
      "lane " + std::to_string(t.lane) + " (thread " + triple(t.tid) + ")";
  if (t.state == run_state::done)
    return s + " returned without reaching it";
  return s + " waits at " + std::string(kind_name(t.kind)) + " " +
         site_text(*b.l, t.site);
}

/// Completes a warp collective whose lanes have all arrived; reports an error
/// when they cannot. Returns true when lanes were released.
bool release_warp(block_run &b, uint32_t warp) {
  thread_state *lanes = b.thread + warp * warp_lanes;
  const uint32_t count = lanes_in_warp(b, warp);
  const thread_state *first = nullptr;
  for (uint32_t i = 0; i < count && !first; ++i)
    if (lanes[i].state == run_state::waiting &&
        lanes[i].kind != wait_kind::barrier)
      first = &lanes[i];
  if (!first)
    return false;
  const wait_kind kind = first->kind;
  const uint32_t site = first->site;
  const uint32_t members =
      kind == wait_kind::shuffle ? shuffle_member_mask(first->width) : ~0u;
  uint32_t arrived = 0, expected = 0;
  const thread_state *missing = nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(members >> i & 1))
      continue;
    ++expected;
    const thread_state &t = lanes[i];
    if (t.state == run_state::waiting && t.kind == kind && t.site == site)
      ++arrived;
    else if (!missing)
      missing = &t;
  }
  const std::string name = std::string(kind_name(kind));
  if (missing) {
    report(b, first, site,
           name + " with a lane missing: " + std::to_string(arrived) + " of " +
               std::to_string(expected) + " lanes of warp " +
               std::to_string(warp) + " arrived; " +
               lane_whereabouts(b, *missing));
    return false;
  }
  // Same instruction, same qualifiers on every lane.
  for (uint32_t i = 0; i < count; ++i) {
    const thread_state &t = lanes[i];
    if (!(members >> i & 1))
      continue;
    const bool same =
        kind == wait_kind::shuffle
            ? t.width == first->width && t.mode == first->mode
            : kind != wait_kind::ldmatrix ||
                  (t.num == first->num && t.trans == first->trans);
    if (!same) {
      report(b, &t, site,
             name +
                 " called with other operands (width, mode, or matrix "
                 "count) than lane " +
                 std::to_string(first->lane));
      return false;
    }
  }
  if (kind == wait_kind::shuffle) {
    for (uint32_t i = 0; i < count; ++i) {
      thread_state &t = lanes[i];
      if (!(members >> i & 1))
        continue;
      shuffle_source src = shuffle_source_lane(i, t.offset, t.width, t.mode);
      if (src.valid && static_cast<uint32_t>(src.lane) >= count) {
        report(b, &t, site,
               "shuffle reads lane " + std::to_string(src.lane) +
                   ", which does not exist (warp " + std::to_string(warp) +
                   " of this block has " + std::to_string(count) + " lanes)");
        return false;
      }
      if (src.valid && !(members >> src.lane & 1)) {
        report(b, &t, site,
               "shuffle reads lane " + std::to_string(src.lane) +
                   ", outside its member mask");
        return false;
      }
      t.out[0] = lanes[src.lane].value;
      t.valid = src.valid;
    }
  } else if (kind == wait_kind::mma) {
    uint32_t a[warp_lanes][4], bb[warp_lanes][2];
    float c[warp_lanes][4], d[warp_lanes][4];
    for (uint32_t i = 0; i < warp_lanes; ++i) {
      std::memcpy(a[i], lanes[i].a, sizeof a[i]);
      std::memcpy(bb[i], lanes[i].b, sizeof bb[i]);
      std::memcpy(c[i], lanes[i].c, sizeof c[i]);
    }
    mma_m16n8k16_bf16(a, bb, c, d);
    for (uint32_t i = 0; i < warp_lanes; ++i)
      std::memcpy(lanes[i].d, d[i], sizeof d[i]);
  } else {
    const uint16_t *rows[warp_lanes] = {};
    const uint32_t used = 8 * first->num;
    const uintptr_t shared = reinterpret_cast<uintptr_t>(b.shared);
    for (uint32_t i = 0; i < used; ++i) {
      const uintptr_t a = reinterpret_cast<uintptr_t>(lanes[i].row_address);
      if (!inside(a, 16, shared, b.shared_bytes)) {
        report(b, &lanes[i], site,
               "ldmatrix row address of lane " + std::to_string(i) +
                   " is not a 16-byte row inside the block's shared memory: " +
                   describe_miss(b, a, 16));
        return false;
      }
      if ((a - shared) % 16) {
        report(b, &lanes[i], site,
               "ldmatrix row address of lane " + std::to_string(i) +
                   " is not 16-byte aligned (shared memory offset " +
                   std::to_string(a - shared) + ")");
        return false;
      }
      rows[i] = reinterpret_cast<const uint16_t *>(lanes[i].row_address);
    }
    uint32_t out[warp_lanes][4] = {};
    ldmatrix_m8n8_b16(rows, first->num, first->trans != 0, out);
    for (uint32_t i = 0; i < warp_lanes; ++i)
      std::memcpy(lanes[i].out, out[i], sizeof out[i]);
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (members >> i & 1) {
      lanes[i].state = run_state::runnable;
      lanes[i].kind = wait_kind::none;
    }
  }
  return true;
}

/// Releases a barrier every live thread waits at; reports a divergent one.
bool release_barrier(block_run &b) {
  const thread_state *first = nullptr, *other = nullptr;
  uint32_t arrived = 0, at_other = 0, returned = 0;
  for (uint32_t i = 0; i < b.threads; ++i) {
    const thread_state &t = b.thread[i];
    if (t.state == run_state::done) {
      ++returned;
    } else if (t.kind == wait_kind::barrier) {
      if (!first)
        first = &t;
      if (t.site == first->site) {
        ++arrived;
      } else {
        ++at_other;
        if (!other)
          other = &t;
      }
    }
  }
  if (!first)
    return false;
  if (arrived == b.threads) {
    for (uint32_t i = 0; i < b.threads; ++i) {
      b.thread[i].state = run_state::runnable;
      b.thread[i].kind = wait_kind::none;
    }
    return true;
  }
  std::string detail = "divergent barrier: " + std::to_string(arrived) +
                       " of " + std::to_string(b.threads) + " threads arrived";
  if (other)
    detail += ", " + std::to_string(at_other) + " wait at another barrier, " +
              site_text(*b.l, other->site) + " (thread " + triple(other->tid) +
              ")";
  if (returned)
    detail += ", " + std::to_string(returned) + " returned without reaching it";
  report(b, first, first->site, detail);
  return false;
}

/// Resumes the runnable threads among |order| (all, or warp |only|'s) until
/// each waits or returns; false after an error.
bool run_threads(block_run &b, const std::vector<uint32_t> &order,
                 uint32_t only = ~0u) {
  for (uint32_t i : order) {
    thread_state &t = b.thread[i];
    if (t.state != run_state::runnable || (only != ~0u && t.warp != only))
      continue;
    t_thread = &t;
    t.f.resume();
    t_thread = nullptr;
    if (!b.error.ok())
      return false;
  }
  return true;
}

/// Runs one block to the end under the thread order |order|. In lockstep
/// every warp passes a warp collective before any goes on; otherwise
/// (|eager_warps|) the first warp of the order with a collective to pass
/// runs on alone through its warp collectives until it waits at a barrier
/// or returns, then the next: a warp runs ahead of the others as far as a
/// GPU lets it, so shared memory that only a barrier protects is seen
/// overwritten (the results then differ from the lockstep schedule's).
status run_block(block_run &b, const std::vector<uint32_t> &order,
                 bool eager_warps) {
  std::vector<uint32_t> warp_order;
  for (uint32_t i : order)
    if (std::find(warp_order.begin(), warp_order.end(), b.thread[i].warp) ==
        warp_order.end())
      warp_order.push_back(b.thread[i].warp);
  for (;;) {
    if (!run_threads(b, order))
      return std::move(b.error);
    bool all_done = true, released = false;
    for (uint32_t i = 0; i < b.threads; ++i)
      all_done = all_done && b.thread[i].state == run_state::done;
    if (all_done)
      return status();
    // Warp collectives first: a warp may finish one while others wait at
    // a barrier.
    for (uint32_t w : warp_order) {
      while (release_warp(b, w)) {
        released = true;
        if (!eager_warps)
          break;
        if (!run_threads(b, order, w))
          return std::move(b.error);
      }
      if (!b.error.ok())
        return std::move(b.error);
    }
    if (released)
      continue;
    if (release_barrier(b))
      continue;
    if (b.error.ok())
      report(b, nullptr, no_site, "deadlock: no thread can run");
    return std::move(b.error);
  }
}

struct free_deleter {
  void operator()(uint8_t *p) const { std::free(p); }
};

status check_launch(const launch &l) {
  const std::string name = launch_name(l);
  if (!l.fn)
    return internal_error(name + ": no host function to emulate");
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (l.grid[i] == 0 || l.block[i] == 0)
      return internal_error(name + ": grid " + triple(l.grid) + ", block " +
                            triple(l.block) + " has an empty dimension");
    threads *= l.block[i];
  }
  if (threads > max_block_threads)
    return internal_error(name + ": block " + triple(l.block) + " has " +
                          std::to_string(threads) +
                          " threads, more than a CTA can (1024)");
  const uint64_t blocks = uint64_t(l.grid[0]) * l.grid[1] * l.grid[2];
  if (blocks > UINT32_MAX)
    return internal_error(name + ": grid " + triple(l.grid) + " has " +
                          std::to_string(blocks) +
                          " blocks, more than the emulator counts");
  const uint64_t smem =
      uint64_t(l.static_shared_bytes) + l.dynamic_shared_bytes;
  if (smem > max_shared_bytes)
    return internal_error(name + ": " + std::to_string(smem) +
                          " bytes of shared memory, more than an sm_90 CTA "
                          "can have (" + std::to_string(max_shared_bytes) +
                          ")");
  return status();
}

} // namespace

status run(const launch &l, const options &o) {
  status s = check_launch(l);
  if (!s.ok())
    return s;
  const uint32_t threads = l.block[0] * l.block[1] * l.block[2];
  const uint32_t blocks = l.grid[0] * l.grid[1] * l.grid[2];
  const int schedules = o.schedules < 1 ? 1 : o.schedules;
  for (uint32_t id : o.only_blocks)
    if (id >= blocks)
      return internal_error(launch_name(l) + ": sampled block " +
                            std::to_string(id) + " is not in the grid " +
                            triple(l.grid) + " (" + std::to_string(blocks) +
                            " blocks)");

  thread_local stack_pool pool;
  if (!pool.reserve(threads))
    return internal_error(launch_name(l) + ": cannot map " +
                          std::to_string(threads) + " fiber stacks");
  std::vector<thread_state> state(threads);
  // The kernel's parameter array: pointers to the 8-byte values.
  std::vector<uint64_t> values = l.params;
  std::vector<void *> params(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    params[i] = &values[i];

  const uint64_t smem =
      uint64_t(l.static_shared_bytes) + l.dynamic_shared_bytes;
  const uint64_t smem_alloc = (smem + 15) / 16 * 16 + 16;
  std::unique_ptr<uint8_t, free_deleter> shared(
      static_cast<uint8_t *>(std::aligned_alloc(16, smem_alloc)));
  if (!shared)
    return internal_error(launch_name(l) + ": out of memory");

  // Writable buffers: as they were before the launch, and as schedule 0
  // left them.
  std::vector<std::vector<uint8_t>> before, first;
  if (schedules > 1) {
    for (const buffer &buf : l.buffers) {
      const uint8_t *p = static_cast<const uint8_t *>(buf.data);
      before.emplace_back(buf.writable ? std::vector<uint8_t>(p, p + buf.bytes)
                                       : std::vector<uint8_t>());
    }
  }

  for (int sched = 0; sched < schedules; ++sched) {
    const std::string name = schedule_name(sched, o.seed);
    std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + uint64_t(sched));
    if (sched > 0) {
      for (size_t i = 0; i < l.buffers.size(); ++i)
        if (l.buffers[i].writable && l.buffers[i].bytes)
          std::memcpy(l.buffers[i].data, before[i].data(), before[i].size());
    }
    std::vector<uint32_t> block_order = order_of(blocks, sched, rng, false);
    if (!o.only_blocks.empty()) {
      std::vector<bool> wanted(blocks, false);
      for (uint32_t id : o.only_blocks)
        wanted[id] = true;
      std::vector<uint32_t> sampled;
      for (uint32_t id : block_order)
        if (wanted[id])
          sampled.push_back(id);
      block_order.swap(sampled);
    }
    for (uint32_t linear_block : block_order) {
      block_run b;
      b.l = &l;
      b.schedule = name.c_str();
      b.id[0] = linear_block % l.grid[0];
      b.id[1] = linear_block / l.grid[0] % l.grid[1];
      b.id[2] = linear_block / l.grid[0] / l.grid[1];
      b.threads = threads;
      b.warps = (threads + warp_lanes - 1) / warp_lanes;
      b.thread = state.data();
      b.shared = shared.get();
      b.shared_bytes = smem;
      b.params = params.data();
      std::memset(b.shared, shared_fill(sched), smem_alloc);
      for (uint32_t i = 0; i < threads; ++i) {
        thread_state &t = state[i];
        t.tid[0] = i % l.block[0];
        t.tid[1] = i / l.block[0] % l.block[1];
        t.tid[2] = i / l.block[0] / l.block[1];
        t.warp = i / warp_lanes;
        t.lane = i % warp_lanes;
        t.state = run_state::runnable;
        t.kind = wait_kind::none;
        t.f.start(pool.bottom(i), stack_pool::stack_bytes, thread_main, &t);
      }
      const std::vector<uint32_t> thread_order =
          order_of(threads, sched, rng, true);
      block_run *outer_block = t_block;
      t_block = &b;
      status r = run_block(b, thread_order, /*eager_warps=*/sched > 0);
      t_block = outer_block;
      if (!r.ok())
        return r;
    }
    if (schedules == 1)
      break;
    if (sched == 0) {
      for (const buffer &buf : l.buffers) {
        const uint8_t *p = static_cast<const uint8_t *>(buf.data);
        first.emplace_back(buf.writable ? std::vector<uint8_t>(p, p + buf.bytes)
                                        : std::vector<uint8_t>());
      }
      continue;
    }
    for (size_t i = 0; i < l.buffers.size(); ++i) {
      const buffer &buf = l.buffers[i];
      if (!buf.writable || buf.bytes == 0)
        continue;
      const uint8_t *now = static_cast<const uint8_t *>(buf.data);
      const uint8_t *then = first[i].data();
      if (std::memcmp(now, then, buf.bytes) == 0)
        continue;
      uint64_t at = 0;
      while (now[at] == then[at])
        ++at;
      char bytes[64];
      std::snprintf(bytes, sizeof bytes, " (0x%02x, then 0x%02x)", then[at],
                    now[at]);
      return internal_error(launch_name(l) + ": race: " + quote(buf.what) +
                            " differs at byte " + std::to_string(at) +
                            " between schedule " + schedule_name(0, o.seed) +
                            " and schedule " + name + bytes)
          .note("threads or blocks write the same bytes, or read bytes "
                "another one writes, with no barrier between them; or the "
                "kernel reads shared memory before writing it");
    }
  }
  return status();
}

} // namespace emu
} // namespace runtime
} // namespace sgc
