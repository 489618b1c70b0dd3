// The CUDA kernel emulator (runtime/src/cuda_emu): hand-written C++ kernels
// with the signature the compiler's host-compiled kernels have stand in for
// compiled code. Correct kernels must give the hand-derived or CPU-computed
// results under every schedule; kernels with planted bugs must be caught
// with the right message.
//
// The sanitizer build keeps these tests: the fibers switch stacks with
// Boost.Context's fcontext, and runtime/src/cuda_emu/fiber.cc announces every
// switch to AddressSanitizer (__sanitizer_start/finish_switch_fiber).

#include "runtime/src/cuda_emu/emulator.h"
#include "runtime/src/cuda_emu/warp_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {
namespace emu {
namespace {

using ops_t = sgc_abi_emu_ops_t;

// Sites as the compiler would name them.
const char *const k_sites[] = {
    "k: gpu.shuffle at t.mlir:1",   // 0
    "k: gpu.barrier at t.mlir:2",   // 1
    "k: gpu.barrier at t.mlir:3",   // 2
    "k: memref.load at t.mlir:4",   // 3
    "k: memref.store at t.mlir:5",  // 4
    "k: nvvm.mma.sync at t.mlir:6", // 5
    "k: nvvm.ldmatrix at t.mlir:7", // 6
    "k: gpu.shuffle at t.mlir:8",   // 7
};
enum : uint32_t {
  S_SHUFFLE = 0,
  S_BARRIER = 1,
  S_BARRIER2 = 2,
  S_LOAD = 3,
  S_STORE = 4,
  S_MMA = 5,
  S_LDMATRIX = 6,
  S_SHUFFLE2 = 7
};

template <typename T>
T *param_ptr(void *const *params, int i) {
  return reinterpret_cast<T *>(*static_cast<const uint64_t *>(params[i]));
}
uint64_t param_u64(void *const *params, int i) {
  return *static_cast<const uint64_t *>(params[i]);
}
uint64_t addr(const void *p) { return reinterpret_cast<uint64_t>(p); }

// Checked loads and stores, as compiled code does them.
template <typename T>
T ld(const ops_t *ops, const T *p) {
  ops->check_access(p, sizeof(T), 0, S_LOAD);
  return *p;
}
template <typename T>
void st(const ops_t *ops, T *p, T v) {
  ops->check_access(p, sizeof(T), 1, S_STORE);
  *p = v;
}

uint32_t linear_tid(const ops_t *ops) {
  return ops->thread_id(0) +
         ops->block_dim(0) *
             (ops->thread_id(1) + ops->block_dim(1) * ops->thread_id(2));
}

uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

launch make_launch(const char *name, sgc_abi_emu_kernel_fn_t fn,
                   std::vector<uint32_t> grid, std::vector<uint32_t> block) {
  launch l;
  l.kernel = name;
  l.where = "test launch 0";
  l.fn = fn;
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = grid[i];
    l.block[i] = block[i];
  }
  l.sites = k_sites;
  l.num_sites = sizeof k_sites / sizeof k_sites[0];
  return l;
}

template <typename T>
void add_buffer(launch &l, std::vector<T> &v, bool writable, const char *what) {
  buffer b;
  b.data = v.data();
  b.bytes = v.size() * sizeof(T);
  b.writable = writable;
  b.what = what;
  l.buffers.push_back(b);
  l.params.push_back(addr(v.data()));
}

options schedules(int n) {
  options o;
  o.schedules = n;
  o.seed = 7;
  return o;
}

::testing::AssertionResult fails_with(const status &s,
                                      std::vector<std::string> parts) {
  if (s.ok())
    return ::testing::AssertionFailure() << "the launch succeeded";
  if (s.code() != status_code::internal)
    return ::testing::AssertionFailure() << "code " << int(s.code());
  for (const std::string &p : parts)
    if (s.message().find(p) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message lacks \"" << p << "\": " << s.to_string();
  return ::testing::AssertionSuccess();
}

//===--------------------------------------------------------------------===//
// Warp shuffles
//===--------------------------------------------------------------------===//

// Reductions of (linear id + 1) over each warp: xor (every lane gets the
// sum) and down (lane 0 gets it), width 32.
void k_warp_sums(const ops_t *ops, void *const *params) {
  float *xor_out = param_ptr<float>(params, 0);
  float *down_out = param_ptr<float>(params, 1);
  const uint32_t t = linear_tid(ops);
  float x = float(t + 1), y = x;
  for (uint32_t off = 16; off; off /= 2) {
    uint8_t valid = 0;
    x += u2f(
        ops->shuffle(f2u(x), off, 32, SGC_ABI_SHUFFLE_XOR, S_SHUFFLE, &valid));
    float other = u2f(ops->shuffle(f2u(y), off, 32, SGC_ABI_SHUFFLE_DOWN,
                                   S_SHUFFLE2, &valid));
    if (valid)
      y += other;
  }
  st(ops, xor_out + t, x);
  st(ops, down_out + t, y);
}

TEST(CudaEmu, WarpShuffleReductions) {
  const uint32_t n = 96;
  std::vector<float> xs(n, -1), downs(n, -1);
  launch l = make_launch("warp_sums", k_warp_sums, {1, 1, 1}, {n, 1, 1});
  add_buffer(l, xs, true, "xor sums");
  add_buffer(l, downs, true, "down sums");
  status s = run(l, schedules(4));
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t t = 0; t < n; ++t) {
    const uint32_t w = t / 32;
    // Sum of 32w+1 .. 32w+32.
    const float sum = float(32 * (32 * w) + 32 * 33 / 2);
    EXPECT_EQ(xs[t], sum) << t;
    if (t % 32 == 0) {
      EXPECT_EQ(downs[t], sum) << t;
    }
  }
  // Lane 31 never receives anything (every source is out of range).
  EXPECT_EQ(downs[31], 32.0f);
}

// One shuffle per thread of the lanes below |callers|, recording the value
// and the valid flag. Lane l of warp w offers 100 w + l.
void k_shuffle_probe(const ops_t *ops, void *const *params) {
  uint32_t *value = param_ptr<uint32_t>(params, 0);
  uint32_t *valid_out = param_ptr<uint32_t>(params, 1);
  const uint32_t mode = uint32_t(param_u64(params, 2));
  const uint32_t offset = uint32_t(param_u64(params, 3));
  const uint32_t width = uint32_t(param_u64(params, 4));
  const uint32_t callers = uint32_t(param_u64(params, 5));
  const uint32_t t = linear_tid(ops);
  if (t % 32 >= callers)
    return;
  uint8_t valid = 7;
  uint32_t r = ops->shuffle(100 * (t / 32) + t % 32, offset, width, mode,
                            S_SHUFFLE, &valid);
  st(ops, value + t, r);
  st(ops, valid_out + t, uint32_t(valid));
}

struct probe_result {
  status s;
  std::vector<uint32_t> value, valid;
};

probe_result probe(uint32_t threads, uint32_t mode, uint32_t offset,
                   uint32_t width, uint32_t callers) {
  probe_result r;
  r.value.assign(threads, 9999);
  r.valid.assign(threads, 9999);
  launch l =
      make_launch("shuffle_probe", k_shuffle_probe, {1, 1, 1}, {threads, 1, 1});
  add_buffer(l, r.value, true, "values");
  add_buffer(l, r.valid, true, "valid flags");
  l.params.push_back(mode);
  l.params.push_back(offset);
  l.params.push_back(width);
  l.params.push_back(callers);
  r.s = run(l, schedules(3));
  return r;
}

// Expected per lane (PTX shfl.sync with MLIR 22's operands), derived by hand
// for each case: src < 0 means invalid (the lane keeps its own value).
void expect_probe(const probe_result &r, uint32_t callers,
                  int (*src)(int lane)) {
  ASSERT_TRUE(r.s.ok()) << r.s.to_string();
  for (uint32_t t = 0; t < r.value.size(); ++t) {
    const int lane = int(t % 32), base = int(100 * (t / 32));
    if (uint32_t(lane) >= callers) {
      EXPECT_EQ(r.value[t], 9999u) << t;
      continue;
    }
    const int j = src(lane);
    EXPECT_EQ(r.valid[t], j >= 0 ? 1u : 0u) << "lane " << lane;
    EXPECT_EQ(r.value[t], uint32_t(base + (j >= 0 ? j : lane)))
        << "lane " << lane;
  }
}

TEST(CudaEmu, ShuffleWidth32Edges) {
  // xor 5: always in range.
  expect_probe(probe(64, SGC_ABI_SHUFFLE_XOR, 5, 32, 32), 32,
               [](int l) { return l ^ 5; });
  // down 3: lanes 29..31 have no source.
  expect_probe(probe(64, SGC_ABI_SHUFFLE_DOWN, 3, 32, 32), 32,
               [](int l) { return l + 3 <= 31 ? l + 3 : -1; });
  // up 1: lane 0 has no source.
  expect_probe(probe(64, SGC_ABI_SHUFFLE_UP, 1, 32, 32), 32,
               [](int l) { return l >= 1 ? l - 1 : -1; });
  // idx 40: only b's low 5 bits count, so lane 8 for everyone (valid).
  expect_probe(probe(64, SGC_ABI_SHUFFLE_IDX, 40, 32, 32), 32,
               [](int) { return 8; });
}

TEST(CudaEmu, ShuffleWidth8Edges) {
  // Width 8: the member mask is lanes 0..7 and they alone call it; the clamp
  // is lane 7.
  expect_probe(probe(32, SGC_ABI_SHUFFLE_XOR, 4, 8, 8), 8,
               [](int l) { return l ^ 4; });
  expect_probe(probe(32, SGC_ABI_SHUFFLE_XOR, 8, 8, 8), 8,
               [](int) { return -1; });
  expect_probe(probe(32, SGC_ABI_SHUFFLE_DOWN, 1, 8, 8), 8,
               [](int l) { return l < 7 ? l + 1 : -1; });
  expect_probe(probe(32, SGC_ABI_SHUFFLE_IDX, 6, 8, 8), 8,
               [](int) { return 6; });
  expect_probe(probe(32, SGC_ABI_SHUFFLE_IDX, 9, 8, 8), 8,
               [](int) { return -1; });
  // up with width 8 lowers to clamp 32 - 8 = 24: no member lane is >= 24,
  // so nothing is in range (what the GPU does with MLIR 22's lowering).
  expect_probe(probe(32, SGC_ABI_SHUFFLE_UP, 1, 8, 8), 8,
               [](int) { return -1; });
}

TEST(CudaEmu, ShuffleWidth8ReductionFromAllLanesIsRefused) {
  // Lanes 8..31 are not in a width-8 shuffle's member mask.
  probe_result r = probe(32, SGC_ABI_SHUFFLE_XOR, 1, 8, 32);
  EXPECT_TRUE(fails_with(r.s, {"'shuffle_probe'", "thread (8, 0, 0)",
                               "'k: gpu.shuffle at t.mlir:1'",
                               "lane 8 calls a shuffle of width 8",
                               "member mask holds only lanes 0..7"}));
}

TEST(CudaEmu, ShuffleWithALaneMissing) {
  // Lanes 0..4 shuffle, lanes 5..31 return.
  probe_result r = probe(32, SGC_ABI_SHUFFLE_XOR, 1, 32, 5);
  EXPECT_TRUE(fails_with(r.s, {"shuffle with a lane missing",
                               "5 of 32 lanes of warp 0 arrived",
                               "lane 5 (thread (5, 0, 0)) returned without "
                               "reaching it",
                               "'k: gpu.shuffle at t.mlir:1'",
                               "block (0, 0, 0) thread (0, 0, 0)"}));
}

// Lane 3 waits at a barrier while the rest of its warp shuffles.
void k_shuffle_vs_barrier(const ops_t *ops, void *const *) {
  const uint32_t t = linear_tid(ops);
  if (t == 3) {
    ops->barrier(S_BARRIER);
    return;
  }
  uint8_t valid;
  ops->shuffle(t, 1, 32, SGC_ABI_SHUFFLE_XOR, S_SHUFFLE, &valid);
  ops->barrier(S_BARRIER);
}

TEST(CudaEmu, ShuffleWhileALaneWaitsAtABarrier) {
  launch l = make_launch("shuffle_vs_barrier", k_shuffle_vs_barrier, {1, 1, 1},
                         {32, 1, 1});
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"shuffle with a lane missing",
                          "31 of 32 lanes of warp 0 arrived",
                          "lane 3 (thread (3, 0, 0)) waits at barrier "
                          "'k: gpu.barrier at t.mlir:2'"}));
}

//===--------------------------------------------------------------------===//
// Shared memory and barriers
//===--------------------------------------------------------------------===//

// Block-wide tree reduction of in[] into out[block] through shared memory.
void k_tree_sum(const ops_t *ops, void *const *params) {
  const float *in = param_ptr<float>(params, 0);
  float *out = param_ptr<float>(params, 1);
  float *smem = static_cast<float *>(ops->shared_memory());
  const uint32_t t = linear_tid(ops), n = ops->block_dim(0);
  const uint32_t b = ops->block_id(0);
  st(ops, smem + t, ld(ops, in + b * n + t));
  ops->barrier(S_BARRIER);
  for (uint32_t s = n / 2; s; s /= 2) {
    if (t < s)
      st(ops, smem + t, ld(ops, smem + t) + ld(ops, smem + t + s));
    ops->barrier(S_BARRIER2);
  }
  if (t == 0)
    st(ops, out + b, ld(ops, smem));
}

TEST(CudaEmu, SharedMemoryTreeReduction) {
  for (uint32_t n : {256u, 1024u}) {
    const uint32_t blocks = 3;
    std::vector<float> in(blocks * n), out(blocks, 0);
    for (uint32_t i = 0; i < in.size(); ++i)
      in[i] = float(i % 97);
    launch l = make_launch("tree_sum", k_tree_sum, {blocks, 1, 1}, {n, 1, 1});
    add_buffer(l, in, false, "in");
    add_buffer(l, out, true, "out");
    l.dynamic_shared_bytes = n * 4;
    status s = run(l, schedules(4));
    ASSERT_TRUE(s.ok()) << s.to_string();
    for (uint32_t b = 0; b < blocks; ++b) {
      double want = 0;
      for (uint32_t i = 0; i < n; ++i)
        want += in[b * n + i];
      EXPECT_EQ(out[b], float(want)) << "block " << b << " of " << n;
    }
  }
}

// Each thread keeps a 64 KiB local array on its fiber's stack.
void k_big_stack(const ops_t *ops, void *const *params) {
  uint32_t *out = param_ptr<uint32_t>(params, 0);
  volatile uint32_t local[16384];
  const uint32_t t = linear_tid(ops);
  for (uint32_t i = 0; i < 16384; ++i)
    local[i] = i ^ t;
  uint32_t sum = 0;
  for (uint32_t i = 0; i < 16384; ++i)
    sum += local[i];
  st(ops, out + t, sum);
}

TEST(CudaEmu, FiberStacksHoldLocalArrays) {
  std::vector<uint32_t> out(64, 0);
  launch l = make_launch("big_stack", k_big_stack, {1, 1, 1}, {64, 1, 1});
  add_buffer(l, out, true, "out");
  ASSERT_TRUE(run(l, schedules(1)).ok());
  for (uint32_t t = 0; t < 64; ++t) {
    uint32_t want = 0;
    for (uint32_t i = 0; i < 16384; ++i)
      want += i ^ t;
    EXPECT_EQ(out[t], want);
  }
}

TEST(CudaEmu, SampledBlocksOnly) {
  const uint32_t n = 64, blocks = 40;
  std::vector<float> in(blocks * n, 1.0f), out(blocks, -1.0f);
  launch l = make_launch("tree_sum", k_tree_sum, {blocks, 1, 1}, {n, 1, 1});
  add_buffer(l, in, false, "in");
  add_buffer(l, out, true, "out");
  l.dynamic_shared_bytes = n * 4;
  options o = schedules(3);
  o.only_blocks = {39, 0, 17};
  status s = run(l, o);
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t b = 0; b < blocks; ++b)
    EXPECT_EQ(out[b], b == 0 || b == 17 || b == 39 ? 64.0f : -1.0f) << b;
  o.only_blocks = {40};
  EXPECT_TRUE(fails_with(run(l, o), {"sampled block 40 is not in the grid "
                                     "(40, 1, 1) (40 blocks)"}));
}

//===--------------------------------------------------------------------===//
// Ids
//===--------------------------------------------------------------------===//

void k_ids(const ops_t *ops, void *const *params) {
  uint32_t *out = param_ptr<uint32_t>(params, 0);
  uint32_t block = ops->block_id(0) +
                   ops->grid_dim(0) *
                       (ops->block_id(1) + ops->grid_dim(1) * ops->block_id(2));
  uint32_t threads = ops->block_dim(0) * ops->block_dim(1) * ops->block_dim(2);
  uint32_t *rec = out + 9 * (block * threads + linear_tid(ops));
  const uint32_t v[9] = {
      ops->thread_id(0), ops->thread_id(1), ops->thread_id(2),
      ops->block_id(0),  ops->block_id(1),  ops->block_id(2),
      ops->block_dim(2), ops->grid_dim(1),  ops->grid_dim(2)};
  for (int i = 0; i < 9; ++i)
    st(ops, rec + i, v[i]);
}

TEST(CudaEmu, GridAndBlockIds) {
  const uint32_t g[3] = {3, 2, 2}, b[3] = {4, 3, 2};
  const uint32_t blocks = 12, threads = 24;
  std::vector<uint32_t> out(9 * blocks * threads, 9999);
  launch l = make_launch("ids", k_ids, {g[0], g[1], g[2]}, {b[0], b[1], b[2]});
  add_buffer(l, out, true, "ids");
  status s = run(l, schedules(3));
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t bz = 0; bz < g[2]; ++bz)
    for (uint32_t by = 0; by < g[1]; ++by)
      for (uint32_t bx = 0; bx < g[0]; ++bx)
        for (uint32_t z = 0; z < b[2]; ++z)
          for (uint32_t y = 0; y < b[1]; ++y)
            for (uint32_t x = 0; x < b[0]; ++x) {
              const uint32_t blk = bx + 3 * (by + 2 * bz);
              const uint32_t thr = x + 4 * (y + 3 * z);
              const uint32_t *rec = &out[9 * (blk * threads + thr)];
              const uint32_t want[9] = {x, y, z, bx, by, bz, 2, 2, 2};
              for (int i = 0; i < 9; ++i)
                EXPECT_EQ(rec[i], want[i]) << blk << "/" << thr << "/" << i;
            }
}

//===--------------------------------------------------------------------===//
// Partial warps
//===--------------------------------------------------------------------===//

// Lanes 0..7 of each warp sum their ids with a width-8 xor reduction.
void k_partial_warp(const ops_t *ops, void *const *params) {
  uint32_t *out = param_ptr<uint32_t>(params, 0);
  const uint32_t width = uint32_t(param_u64(params, 1));
  const uint32_t t = linear_tid(ops);
  if (t % 32 >= width)
    return;
  uint32_t v = t;
  for (uint32_t off = width / 2; off; off /= 2) {
    uint8_t valid;
    v += ops->shuffle(v, off, width, SGC_ABI_SHUFFLE_XOR, S_SHUFFLE, &valid);
  }
  st(ops, out + t, v);
}

TEST(CudaEmu, PartialWarp) {
  // 40 threads: warp 1 has lanes 0..7 only.
  std::vector<uint32_t> out(40, 0);
  launch l = make_launch("partial_warp", k_partial_warp, {1, 1, 1}, {40, 1, 1});
  add_buffer(l, out, true, "out");
  l.params.push_back(8);
  status s = run(l, schedules(3));
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t t = 0; t < 8; ++t)
    EXPECT_EQ(out[t], 0u + 1 + 2 + 3 + 4 + 5 + 6 + 7);
  for (uint32_t t = 32; t < 40; ++t)
    EXPECT_EQ(out[t], 32u * 8 + 28);
  // Width 32 there reads lanes that do not exist.
  l.params[1] = 32;
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"thread (32, 0, 0)", "shuffle reads lane 16",
                          "which does not exist (warp 1 of this block has 8 "
                          "lanes)"}));
}

void k_mma_zero(const ops_t *ops, void *const *) {
  uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  float c[4] = {0, 0, 0, 0}, d[4];
  ops->mma_m16n8k16_bf16(a, b, c, d, S_MMA);
}

TEST(CudaEmu, MmaInAPartialWarpIsRefused) {
  launch l = make_launch("mma_partial", k_mma_zero, {1, 1, 1}, {48, 1, 1});
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"thread (32, 0, 0)", "'k: nvvm.mma.sync at t.mlir:6'",
                          "mma.sync needs all 32 lanes, but warp 1 of this "
                          "block has only 16"}));
}

//===--------------------------------------------------------------------===//
// mma.sync and ldmatrix
//===--------------------------------------------------------------------===//

uint16_t to_bf16(float f) { // round to nearest even
  uint32_t u = f2u(f);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}
float from_bf16(uint16_t h) { return u2f(uint32_t(h) << 16); }

struct tiles {
  uint32_t count;
  std::vector<uint16_t> a;  // [count][16][16] row-major
  std::vector<uint16_t> bt; // [count][8][16]: B's columns (B col-major)
  std::vector<uint16_t> b;  // [count][16][8]: B row-major
  std::vector<float> c;     // [count][16][8]
  std::vector<double> want; // A B + C
};

tiles random_tiles(uint32_t count, uint32_t seed) {
  tiles t;
  t.count = count;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  t.a.resize(count * 256);
  t.bt.resize(count * 128);
  t.b.resize(count * 128);
  t.c.resize(count * 128);
  t.want.resize(count * 128);
  for (auto &v : t.a)
    v = to_bf16(u(rng));
  for (uint32_t i = 0; i < count; ++i)
    for (uint32_t k = 0; k < 16; ++k)
      for (uint32_t n = 0; n < 8; ++n) {
        uint16_t v = to_bf16(u(rng));
        t.b[i * 128 + k * 8 + n] = v;
        t.bt[i * 128 + n * 16 + k] = v;
      }
  for (auto &v : t.c)
    v = u(rng);
  for (uint32_t i = 0; i < count; ++i)
    for (uint32_t m = 0; m < 16; ++m)
      for (uint32_t n = 0; n < 8; ++n) {
        double s = t.c[i * 128 + m * 8 + n];
        for (uint32_t k = 0; k < 16; ++k)
          s += double(from_bf16(t.a[i * 256 + m * 16 + k])) *
               from_bf16(t.b[i * 128 + k * 8 + n]);
        t.want[i * 128 + m * 8 + n] = s;
      }
  return t;
}

uint32_t pair(const uint16_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 16;
}

// One warp per tile; fragments gathered from global memory by the PTX
// mapping (groupID g = lane / 4, t = lane % 4).
void k_mma_direct(const ops_t *ops, void *const *params) {
  const uint16_t *A = param_ptr<uint16_t>(params, 0);
  const uint16_t *Bt = param_ptr<uint16_t>(params, 1);
  const float *C = param_ptr<float>(params, 2);
  float *D = param_ptr<float>(params, 3);
  const uint32_t tile = ops->block_id(0), lane = linear_tid(ops);
  const uint32_t g = lane / 4, t = lane % 4;
  A += tile * 256;
  Bt += tile * 128;
  C += tile * 128;
  D += tile * 128;
  ops->check_access(A, 512, 0, S_LOAD);
  ops->check_access(Bt, 256, 0, S_LOAD);
  const uint32_t a[4] = {
      pair(A + g * 16 + 2 * t), pair(A + (g + 8) * 16 + 2 * t),
      pair(A + g * 16 + 2 * t + 8), pair(A + (g + 8) * 16 + 2 * t + 8)};
  const uint32_t b[2] = {pair(Bt + g * 16 + 2 * t),
                         pair(Bt + g * 16 + 2 * t + 8)};
  const float c[4] = {
      ld(ops, C + g * 8 + 2 * t), ld(ops, C + g * 8 + 2 * t + 1),
      ld(ops, C + (g + 8) * 8 + 2 * t), ld(ops, C + (g + 8) * 8 + 2 * t + 1)};
  float d[4];
  ops->mma_m16n8k16_bf16(a, b, c, d, S_MMA);
  st(ops, D + g * 8 + 2 * t, d[0]);
  st(ops, D + g * 8 + 2 * t + 1, d[1]);
  st(ops, D + (g + 8) * 8 + 2 * t, d[2]);
  st(ops, D + (g + 8) * 8 + 2 * t + 1, d[3]);
}

// The same through shared memory and ldmatrix, as the tensor-core kernels
// do it: A with x4 (lane l supplies row l % 16, column 8 (l / 16)); B
// either as its columns with x2 (lane l < 16: column l % 8, k 8 (l / 8)) or
// row-major with x2.trans (lane l < 16: row k = l).
void k_mma_ldmatrix(const ops_t *ops, void *const *params) {
  const uint16_t *A = param_ptr<uint16_t>(params, 0);
  const uint16_t *B = param_ptr<uint16_t>(params, 1); // Bt or B
  const float *C = param_ptr<float>(params, 2);
  float *D = param_ptr<float>(params, 3);
  const uint32_t trans = uint32_t(param_u64(params, 4));
  const uint32_t tile = ops->block_id(0), lane = linear_tid(ops);
  const uint32_t g = lane / 4, t = lane % 4;
  A += tile * 256;
  B += tile * 128;
  C += tile * 128;
  D += tile * 128;
  uint16_t *sa = static_cast<uint16_t *>(ops->shared_memory());
  uint16_t *sb = sa + 256;
  for (uint32_t i = lane; i < 256; i += 32)
    st(ops, sa + i, ld(ops, A + i));
  for (uint32_t i = lane; i < 128; i += 32)
    st(ops, sb + i, ld(ops, B + i));
  ops->barrier(S_BARRIER);
  uint32_t a[4], b[4];
  ops->ldmatrix(sa + (lane % 16) * 16 + 8 * (lane / 16), 4, 0, a, S_LDMATRIX);
  const uint16_t *row = trans ? sb + (lane % 16) * 8
                              : sb + (lane % 8) * 16 + 8 * ((lane / 8) % 2);
  ops->ldmatrix(row, 2, trans, b, S_LDMATRIX);
  const float c[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1],
                      C[(g + 8) * 8 + 2 * t], C[(g + 8) * 8 + 2 * t + 1]};
  float d[4];
  ops->mma_m16n8k16_bf16(a, b, c, d, S_MMA);
  st(ops, D + g * 8 + 2 * t, d[0]);
  st(ops, D + g * 8 + 2 * t + 1, d[1]);
  st(ops, D + (g + 8) * 8 + 2 * t, d[2]);
  st(ops, D + (g + 8) * 8 + 2 * t + 1, d[3]);
}

void expect_matmul(const tiles &t, const std::vector<float> &d) {
  for (size_t i = 0; i < d.size(); ++i)
    EXPECT_NEAR(d[i], t.want[i], 1e-5 * (1 + std::fabs(t.want[i])))
        << "tile " << i / 128 << " row " << i % 128 / 8 << " col " << i % 8;
}

TEST(CudaEmu, MmaMatchesCpuMatmul) {
  tiles t = random_tiles(5, 1);
  std::vector<float> d(t.count * 128, 0);
  launch l =
      make_launch("mma_direct", k_mma_direct, {t.count, 1, 1}, {32, 1, 1});
  add_buffer(l, t.a, false, "A");
  add_buffer(l, t.bt, false, "B columns");
  add_buffer(l, t.c, false, "C");
  add_buffer(l, d, true, "D");
  status s = run(l, schedules(3));
  ASSERT_TRUE(s.ok()) << s.to_string();
  expect_matmul(t, d);
}

TEST(CudaEmu, LdmatrixAndMmaMatchCpuMatmul) {
  tiles t = random_tiles(4, 2);
  for (uint32_t trans : {0u, 1u}) {
    std::vector<float> d(t.count * 128, 0);
    launch l = make_launch("mma_ldmatrix", k_mma_ldmatrix, {t.count, 1, 1},
                           {32, 1, 1});
    add_buffer(l, t.a, false, "A");
    add_buffer(l, trans ? t.b : t.bt, false, "B");
    add_buffer(l, t.c, false, "C");
    add_buffer(l, d, true, "D");
    l.params.push_back(trans);
    l.static_shared_bytes = 768;
    status s = run(l, schedules(3));
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_matmul(t, d);
  }
}

// ldmatrix of |num| matrices from shared memory holding 0, 1, 2, ... as b16;
// lane i supplies row (5 i + 3) % 32 of that 32-row table, so rows are not
// consecutive.
void k_ldmatrix_probe(const ops_t *ops, void *const *params) {
  uint32_t *out = param_ptr<uint32_t>(params, 0);
  const uint32_t num = uint32_t(param_u64(params, 1));
  const uint32_t trans = uint32_t(param_u64(params, 2));
  const uint32_t lane = linear_tid(ops);
  uint16_t *s = static_cast<uint16_t *>(ops->shared_memory());
  for (uint32_t i = lane; i < 256; i += 32)
    st(ops, s + i, uint16_t(i));
  ops->barrier(S_BARRIER);
  uint32_t r[4] = {0, 0, 0, 0};
  ops->ldmatrix(s + 8 * ((5 * lane + 3) % 32), num, trans, r, S_LDMATRIX);
  for (uint32_t m = 0; m < num; ++m)
    st(ops, out + lane * 4 + m, r[m]);
}

TEST(CudaEmu, LdmatrixFollowsThePtxMapping) {
  for (uint32_t num : {1u, 2u, 4u})
    for (uint32_t trans : {0u, 1u}) {
      std::vector<uint32_t> out(128, 0);
      launch l = make_launch("ldmatrix_probe", k_ldmatrix_probe, {1, 1, 1},
                             {32, 1, 1});
      add_buffer(l, out, true, "out");
      l.params.push_back(num);
      l.params.push_back(trans);
      l.static_shared_bytes = 512;
      status s = run(l, schedules(2));
      ASSERT_TRUE(s.ok()) << s.to_string();
      // PTX: rows of matrix m come from lanes 8m..8m+7; lane l holds row
      // l/4, columns 2(l%4) and 2(l%4)+1 (transposed: that column pair
      // becomes rows, l/4 the column), lower half first.
      auto elem = [](uint32_t m, uint32_t row, uint32_t col) {
        return ((5 * (8 * m + row) + 3) % 32) * 8 + col;
      };
      for (uint32_t l = 0; l < 32; ++l)
        for (uint32_t m = 0; m < 4; ++m) {
          uint32_t want = 0;
          if (m < num) {
            const uint32_t r = l / 4, c = 2 * (l % 4);
            const uint32_t e0 = trans ? elem(m, c, r) : elem(m, r, c);
            const uint32_t e1 = trans ? elem(m, c + 1, r) : elem(m, r, c + 1);
            want = e0 | e1 << 16;
          }
          EXPECT_EQ(out[l * 4 + m], want) << "x" << num << " trans " << trans
                                          << " lane " << l << " m " << m;
        }
    }
}

void k_ldmatrix_global(const ops_t *ops, void *const *params) {
  uint16_t *g = param_ptr<uint16_t>(params, 0);
  uint32_t r[1];
  ops->ldmatrix(g + 8 * (linear_tid(ops) % 8), 1, 0, r, S_LDMATRIX);
}

TEST(CudaEmu, LdmatrixOutsideSharedMemoryIsRefused) {
  std::vector<uint16_t> g(64, 0);
  launch l =
      make_launch("ldmatrix_global", k_ldmatrix_global, {1, 1, 1}, {32, 1, 1});
  add_buffer(l, g, false, "global tile");
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"ldmatrix row address of lane 0 is not a 16-byte row "
                          "inside the block's shared memory: 16 bytes at 0x",
                          ", inside 'global tile' (128 bytes) at offset 0"}));
}

//===--------------------------------------------------------------------===//
// Atomics
//===--------------------------------------------------------------------===//

void k_atomics(const ops_t *ops, void *const *params) {
  float *sum = param_ptr<float>(params, 0);
  uint32_t *claimed = param_ptr<uint32_t>(params, 1);
  ops->atomic_add_f32(sum, 1.0f, S_STORE);
  // Only the first thread to try claims the slot.
  uint32_t old = ops->atomic_cas_u32(claimed, 0, 1, S_STORE);
  if (old == 0)
    ops->atomic_add_f32(sum + 1, 1.0f, S_STORE);
}

TEST(CudaEmu, Atomics) {
  std::vector<float> sum(2, 0);
  std::vector<uint32_t> claimed(1, 0);
  launch l = make_launch("atomics", k_atomics, {2, 1, 1}, {64, 1, 1});
  add_buffer(l, sum, true, "sums");
  add_buffer(l, claimed, true, "claimed");
  status s = run(l, schedules(3));
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(sum[0], 128.0f);
  EXPECT_EQ(sum[1], 1.0f);
  EXPECT_EQ(claimed[0], 1u);
}

//===--------------------------------------------------------------------===//
// Planted bugs
//===--------------------------------------------------------------------===//

// Every thread writes its id to out[0], with no barrier.
void k_race_same_address(const ops_t *ops, void *const *params) {
  st(ops, param_ptr<uint32_t>(params, 0), linear_tid(ops));
}

TEST(CudaEmuBugs, TwoThreadsWriteOneAddress) {
  std::vector<uint32_t> out(4, 0);
  launch l =
      make_launch("race_waw", k_race_same_address, {1, 1, 1}, {64, 1, 1});
  add_buffer(l, out, true, "result row");
  status s = run(l, schedules(2));
  EXPECT_TRUE(fails_with(s, {"emulated kernel 'race_waw' (test launch 0)",
                             "race: 'result row' differs at byte 0",
                             "between schedule 0 (forward) and schedule 1 "
                             "(reverse)"}));
  // One schedule cannot see it.
  EXPECT_TRUE(run(l, schedules(1)).ok());
}

// Thread t writes x[t + 1] and reads x[t], with no barrier between.
void k_race_read_after_write(const ops_t *ops, void *const *params) {
  uint32_t *x = param_ptr<uint32_t>(params, 0);
  uint32_t *out = param_ptr<uint32_t>(params, 1);
  const uint32_t t = linear_tid(ops);
  st(ops, x + t + 1, t + 100);
  if (param_u64(params, 2))
    ops->barrier(S_BARRIER);
  st(ops, out + t, ld(ops, x + t));
}

TEST(CudaEmuBugs, ReadAfterWriteAcrossThreadsWithoutABarrier) {
  std::vector<uint32_t> x(65, 0), out(64, 0);
  launch l =
      make_launch("race_raw", k_race_read_after_write, {1, 1, 1}, {64, 1, 1});
  add_buffer(l, x, true, "x");
  add_buffer(l, out, true, "out");
  l.params.push_back(0);
  EXPECT_TRUE(fails_with(run(l, schedules(2)), {"race: 'out' differs at byte 4",
                                                "schedule 1 (reverse)"}));
  // With the barrier the kernel is deterministic.
  l.params[2] = 1;
  status s = run(l, schedules(4));
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t t = 0; t < 64; ++t)
    EXPECT_EQ(out[t], t == 0 ? 0u : t + 99);
}

// Lane 0 of each of two warps writes the warp's slot of shared memory, the
// warp passes a shuffle, then reads the other warp's slot. A warp
// collective orders nothing between warps: only the (optional) barriers do.
void k_warps_exchange(const ops_t *ops, void *const *params) {
  uint32_t *out = param_ptr<uint32_t>(params, 0);
  const bool with_barriers = param_u64(params, 1) != 0;
  uint32_t *slot = static_cast<uint32_t *>(ops->shared_memory());
  const uint32_t t = linear_tid(ops), warp = t / 32;
  uint8_t valid = 0;
  for (uint32_t i = 0; i < 2; ++i) {
    if (t % 32 == 0)
      st(ops, slot + warp, 10 * i + warp);
    ops->shuffle(0, 1, 32, SGC_ABI_SHUFFLE_XOR, S_SHUFFLE, &valid);
    if (with_barriers)
      ops->barrier(S_BARRIER);
    const uint32_t v = ld(ops, slot + (1 - warp));
    ops->shuffle(0, 1, 32, SGC_ABI_SHUFFLE_XOR, S_SHUFFLE2, &valid);
    if (with_barriers)
      ops->barrier(S_BARRIER2);
    st(ops, out + i * 64 + t, v);
  }
}

TEST(CudaEmuBugs, WarpCollectivesDoNotOrderWarps) {
  std::vector<uint32_t> out(128, 0);
  launch l =
      make_launch("warps_exchange", k_warps_exchange, {1, 1, 1}, {64, 1, 1});
  add_buffer(l, out, true, "out");
  l.params.push_back(0);
  l.dynamic_shared_bytes = 8;
  // In lockstep the exchange happens to work; a warp that runs ahead
  // through its shuffles reads the other warp's slot too early.
  ASSERT_TRUE(run(l, schedules(1)).ok());
  EXPECT_TRUE(fails_with(run(l, schedules(2)),
                         {"race: 'out' differs", "schedule 1 (reverse)"}));
  l.params[1] = 1;
  status s = run(l, schedules(4));
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (uint32_t i = 0; i < 2; ++i)
    for (uint32_t t = 0; t < 64; ++t)
      EXPECT_EQ(out[i * 64 + t], 10 * i + (1 - t / 32)) << i << " " << t;
}

// Reads shared memory nobody wrote.
void k_uninitialized_shared(const ops_t *ops, void *const *params) {
  const uint32_t *s = static_cast<const uint32_t *>(ops->shared_memory());
  const uint32_t t = linear_tid(ops);
  st(ops, param_ptr<uint32_t>(params, 0) + t, ld(ops, s + t));
}

TEST(CudaEmuBugs, UninitializedSharedMemoryDiffersBetweenSchedules) {
  std::vector<uint32_t> out(32, 0);
  launch l =
      make_launch("uninit_smem", k_uninitialized_shared, {1, 1, 1}, {32, 1, 1});
  add_buffer(l, out, true, "out");
  l.dynamic_shared_bytes = 128;
  EXPECT_TRUE(fails_with(run(l, schedules(2)), {"race: 'out' differs"}));
  // Schedule 0 fills with 0xFF bytes: NaN as f32.
  ASSERT_TRUE(run(l, schedules(1)).ok());
  EXPECT_TRUE(std::isnan(u2f(out[5])));
}

// Threads below |arrive| reach the barrier, the others return (or, with
// two_sites, wait at another barrier).
void k_divergent_barrier(const ops_t *ops, void *const *params) {
  const uint32_t arrive = uint32_t(param_u64(params, 0));
  const bool two_sites = param_u64(params, 1) != 0;
  const uint32_t t = linear_tid(ops);
  if (t < arrive)
    ops->barrier(S_BARRIER);
  else if (two_sites)
    ops->barrier(S_BARRIER2);
}

TEST(CudaEmuBugs, HalfTheThreadsSkipTheBarrier) {
  launch l =
      make_launch("divergent", k_divergent_barrier, {2, 1, 1}, {64, 1, 1});
  l.params = {32, 0};
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"emulated kernel 'divergent' (test launch 0): block "
                          "(0, 0, 0) thread (0, 0, 0) at 'k: gpu.barrier at "
                          "t.mlir:2': divergent barrier: 32 of 64 threads "
                          "arrived, 32 returned without reaching it"}));
  l.params = {64, 0};
  EXPECT_TRUE(run(l, schedules(2)).ok());
}

TEST(CudaEmuBugs, ThreadsAtTwoBarrierSites) {
  launch l =
      make_launch("two_barriers", k_divergent_barrier, {1, 1, 1}, {64, 1, 1});
  l.params = {16, 1};
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"at 'k: gpu.barrier at t.mlir:2': divergent "
                          "barrier: 16 of 64 threads arrived, 48 wait at "
                          "another barrier, 'k: gpu.barrier at t.mlir:3' "
                          "(thread (16, 0, 0))"}));
}

// Thread |who| reads element |index| of a 16-float buffer, or writes it.
void k_access(const ops_t *ops, void *const *params) {
  float *x = param_ptr<float>(params, 0);
  const uint32_t index = uint32_t(param_u64(params, 1));
  const bool write = param_u64(params, 2) != 0;
  if (linear_tid(ops) != 5 || ops->block_id(1) != 1)
    return;
  if (write)
    st(ops, x + index, 1.0f);
  else
    (void)ld(ops, x + index);
}

TEST(CudaEmuBugs, AccessPastABuffersEnd) {
  std::vector<float> x(16, 0);
  launch l = make_launch("past_end", k_access, {1, 2, 1}, {8, 1, 1});
  add_buffer(l, x, false, "layer 0 q weight");
  l.params.push_back(16);
  l.params.push_back(0);
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"block (0, 1, 0) thread (5, 0, 0) at 'k: "
                          "memref.load at t.mlir:4': access out of bounds: a "
                          "read of 4 bytes at 0x",
                          ", past the end of 'layer 0 q weight' (64 bytes) "
                          "at offset 64"}));
  l.params[1] = 15;
  EXPECT_TRUE(run(l, schedules(1)).ok());
  // Writing a buffer the launch does not write.
  l.params[2] = 1;
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"at 'k: memref.store at t.mlir:5': write of 4 "
                          "bytes into 'layer 0 q weight', which the launch "
                          "does not write"}));
}

// Thread 5 of block (0, 1, 0) reads or writes |T| at byte |offset| of
// the block's shared memory (params: offset, write).
template <typename T>
void k_shared_access(const ops_t *ops, void *const *params) {
  uint8_t *smem = static_cast<uint8_t *>(ops->shared_memory());
  const uint64_t offset = param_u64(params, 0);
  const bool write = param_u64(params, 1) != 0;
  if (linear_tid(ops) != 5 || ops->block_id(1) != 1)
    return;
  T *p = reinterpret_cast<T *>(smem + offset);
  if (write)
    st(ops, p, T(1));
  else
    (void)ld(ops, p);
}

TEST(CudaEmuBugs, SharedLoadPastTheEnd) {
  // 64 bytes of dynamic shared memory (the emulator's allocation is padded
  // past them, so only its check can see the access).
  launch l = make_launch("shared_load", k_shared_access<float>, {1, 2, 1},
                         {8, 1, 1});
  l.dynamic_shared_bytes = 64;
  l.params = {64, 0};
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"block (0, 1, 0) thread (5, 0, 0) at 'k: "
                          "memref.load at t.mlir:4': access out of bounds: a "
                          "read of 4 bytes at 0x",
                          ", past the end of the block's shared memory (64 "
                          "bytes) at offset 64"}));
  // The last element is inside.
  l.params = {60, 0};
  EXPECT_TRUE(run(l, schedules(1)).ok());
}

TEST(CudaEmuBugs, SharedStorePastTheEnd) {
  // A static allocation of 40 bytes; an 8-byte store at offset 36 straddles
  // its end.
  launch l = make_launch("shared_store", k_shared_access<uint64_t>, {1, 2, 1},
                         {8, 1, 1});
  l.static_shared_bytes = 40;
  l.params = {36, 1};
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"block (0, 1, 0) thread (5, 0, 0) at 'k: "
                          "memref.store at t.mlir:5': access out of bounds: a "
                          "write of 8 bytes at 0x",
                          ", past the end of the block's shared memory (40 "
                          "bytes) at offset 36"}));
  l.params = {32, 1};
  EXPECT_TRUE(run(l, schedules(1)).ok());
}

void k_out_of_bounds(const ops_t *ops, void *const *) {
  if (linear_tid(ops) == 3)
    ops->out_of_bounds(S_LOAD, 17, 16);
}

TEST(CudaEmuBugs, OutOfBoundsReportedByCompiledCode) {
  launch l = make_launch("oob", k_out_of_bounds, {1, 1, 1}, {8, 1, 1});
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"emulated kernel 'oob' (test launch 0): block (0, "
                          "0, 0) thread (3, 0, 0) at 'k: memref.load at "
                          "t.mlir:4': index 17 out of bounds of a dimension "
                          "of size 16"}));
}

TEST(CudaEmuBugs, LaunchesACtaCannotHave) {
  launch l = make_launch("too_big", k_out_of_bounds, {1, 1, 1}, {32, 33, 1});
  EXPECT_TRUE(fails_with(run(l, schedules(1)),
                         {"1056 threads, more than a CTA can (1024)"}));
  l.block[1] = 1;
  l.grid[0] = l.grid[1] = 1u << 16;
  l.grid[2] = 2;
  EXPECT_TRUE(fails_with(run(l, schedules(1)), {"8589934592 blocks"}));
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  l.dynamic_shared_bytes = 300 * 1024;
  EXPECT_TRUE(fails_with(run(l, schedules(1)), {"bytes of shared memory"}));
}

//===--------------------------------------------------------------------===//
// The arithmetic on its own
//===--------------------------------------------------------------------===//

TEST(CudaEmuMath, ShuffleSourceFollowsPtx) {
  // Width 32: the clamp operand is 31 (xor, down, idx) and 0 (up), as in
  // CUDA.md 2.1's `shfl.sync.bfly.b32 ..., 16, 31, -1`.
  EXPECT_EQ(shuffle_source_lane(3, 16, 32, SGC_ABI_SHUFFLE_XOR).lane, 19);
  EXPECT_FALSE(shuffle_source_lane(20, 16, 32, SGC_ABI_SHUFFLE_DOWN).valid);
  EXPECT_EQ(shuffle_source_lane(20, 16, 32, SGC_ABI_SHUFFLE_DOWN).lane, 20);
  EXPECT_TRUE(shuffle_source_lane(15, 16, 32, SGC_ABI_SHUFFLE_DOWN).valid);
  EXPECT_EQ(shuffle_source_lane(0, 0, 32, SGC_ABI_SHUFFLE_UP).lane, 0);
  EXPECT_TRUE(shuffle_source_lane(0, 0, 32, SGC_ABI_SHUFFLE_UP).valid);
  EXPECT_EQ(shuffle_member_mask(8), 0xffu);
  EXPECT_EQ(shuffle_member_mask(32), 0xffffffffu);
}

} // namespace
} // namespace emu
} // namespace runtime
} // namespace sgc
