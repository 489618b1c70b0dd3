/*
 * kv_write_check.cc - a prefill chunk's keys or values into the cache
 * (KVWrite.cpp): block (t, h) copies row [t, h, :] of the call's n tokens
 * into slot (pos0 + t) mod window on a ring, pos0 + t on a full cache (the
 * session's full_slots). The call is placed so that a ring's slots wrap
 * around inside it; a full layer's call ends at the full position.
 *
 * Blocks sampled: the first and the last kv head on the first token, the
 * call's last token, the first token past it (it must write nothing) and
 * the grid's last, plus seeded others. The copied rows must equal the
 * inputs bit for bit; every other element of the cache must stay unwritten.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace emu_sample {

check_result check_kv_write(kernel_case &c) {
  check_result r;
  const std::string &name = c.kernel;
  const kernel_spec &s = *c.spec;
  const int64_t heads = static_cast<int64_t>(s.number(name, "heads"));
  const int64_t d = static_cast<int64_t>(s.number(name, "head_dim"));
  const int64_t window = static_cast<int64_t>(s.number(name, "window"));
  if (c.ops.size() != 3) {
    r.error = "the step has " + std::to_string(c.ops.size()) +
              " operands, the kernel takes 3";
    return r;
  }
  const operand &in = c.ops[1], &cache = c.ops[2];
  if (in.dtype != SGC_ABI_DTYPE_BF16 || cache.dtype != SGC_ABI_DTYPE_BF16) {
    r.error = "the rows or the cache are not bf16";
    return r;
  }
  const int64_t n = c.tokens, slots = cache.shape[0];
  // A ring: the call's middle token lands on slot 0 of the second lap.
  const int64_t pos0 =
      window > 0 ? 2 * window - n / 2 : c.opt.full_position - (n - 1);
  if (window > 0 ? slots != window : pos0 + n > slots) {
    r.error = "the cache's " + std::to_string(slots) +
              " slots do not hold the call";
    return r;
  }
  const uint32_t gx = static_cast<uint32_t>(c.max_tokens);
  if (c.step->grid[0] != gx || c.step->grid[1] != heads) {
    r.error = "the grid is not tokens x kv heads";
    return r;
  }
  std::vector<uint32_t> edges;
  for (int64_t h : {int64_t{0}, heads - 1})
    for (int64_t t : {int64_t{0}, n - 1, n, c.max_tokens - 1})
      if (t < c.max_tokens)
        edges.push_back(static_cast<uint32_t>(t + gx * h));
  r.ctas = sample_blocks(gx * static_cast<uint32_t>(heads), edges, c);

  set_step_state(c, pos0, n);
  c.random->fill_bf16(in.bf16(), in.memory->bytes() / 2, 1);
  std::memset(cache.memory->data(), 0xFF, cache.memory->bytes());

  const auto start = std::chrono::steady_clock::now();
  r.error = run_blocks(c, r.ctas, {2});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start).count();
  if (!r.error.empty())
    return r;

  // The slot of token t, or -1 when it writes none.
  auto slot_of = [&](int64_t t) -> int64_t {
    if (t >= n || (window > 0 && t + window < n))
      return -1;
    return window > 0 ? (pos0 + t) % window : pos0 + t;
  };
  std::vector<char> owned(static_cast<size_t>(slots * heads), 0);
  bool planted = !c.opt.plant_bug;
  for (uint32_t b : r.ctas) {
    const int64_t t = b % gx, h = b / gx, slot = slot_of(t);
    if (slot < 0)
      continue;
    owned[slot * heads + h] = 1;
    for (int64_t i = 0; i < d; ++i) {
      double want = bf16_value(in.bf16()[(t * heads + h) * d + i]);
      if (!planted && want != 0)
        want *= 2, planted = true;
      compare(bf16_value(cache.bf16()[(slot * heads + h) * d + i]),
              interval(want),
              "token " + std::to_string(t) + " kv head " + std::to_string(h) +
                  " slot " + std::to_string(slot) + " dim " +
                  std::to_string(i),
              &r);
    }
  }
  for (int64_t e = 0; e < slots * heads; ++e) {
    if (owned[e])
      continue;
    for (int64_t i = 0; i < d; ++i)
      r.untouched_bad += cache.bf16()[e * d + i] != 0xFFFF;
  }
  return r;
}

} // namespace emu_sample
