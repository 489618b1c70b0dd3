/*
 * check.cc - what every family's check shares: seeded inputs, the sampled
 * blocks, the emulator launch, the comparison.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include "lib/support/half.h"
#include "runtime/src/cuda_emu/emulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace emu_sample {

uint64_t normal_source::bits() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double normal_source::next() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  const double u1 = (static_cast<double>(bits() >> 11) + 0.5) * 0x1p-53;
  const double u2 = static_cast<double>(bits() >> 11) * 0x1p-53;
  const double r = std::sqrt(-2 * std::log(u1));
  spare_ = r * std::sin(2 * M_PI * u2);
  have_spare_ = true;
  return r * std::cos(2 * M_PI * u2);
}

void normal_source::fill_bf16(uint16_t *out, uint64_t n, double sigma) {
  for (uint64_t i = 0; i < n; ++i)
    out[i] = to_bf16(sigma * next());
}

double bf16_value(uint16_t v) { return sgc::bf16_to_f32(v); }
uint16_t to_bf16(double v) {
  return sgc::f32_to_bf16(static_cast<float>(round_bf16(v)));
}

void set_step_state(const kernel_case &c, int64_t position, int64_t tokens) {
  auto *state = static_cast<sgc_abi_step_state_t *>(c.ops[0].memory->data());
  state->position = position;
  state->num_tokens = tokens;
  state->full_slots = c.opt.full_slots;
  state->first_logits_row = 0;
}

void count_unwritten_rows(const operand &out, int64_t width, int64_t tokens,
                          check_result *r) {
  for (int64_t t = 0; t < out.shape[0]; ++t) {
    if (t < tokens &&
        std::find(r->ctas.begin(), r->ctas.end(), t) != r->ctas.end())
      continue;
    for (int64_t i = 0; i < width; ++i)
      r->untouched_bad += out.bf16()[t * width + i] != 0xFFFF;
  }
}

void compare(double kernel, interval range, const std::string &where,
             check_result *r) {
  const double ref = range.pt;
  ++r->outputs;
  const double err = std::fabs(kernel - ref);
  const double bound = kernel >= ref ? range.hi - ref : ref - range.lo;
  r->max_bound = std::max(r->max_bound, std::max(range.hi - ref, ref - range.lo));
  const bool inside = kernel >= range.lo && kernel <= range.hi;
  if (err > r->max_error || std::isnan(kernel)) {
    r->max_error = std::isnan(kernel) ? INFINITY : err;
    r->bound_at_max = bound;
  }
  if (err > 0)
    r->worst_ratio = std::max(r->worst_ratio, bound > 0 ? err / bound : INFINITY);
  if (!inside) {
    if (r->outside++ == 0) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "%s: kernel %.9g, reference %.9g, allowed [%.9g, %.9g]",
                    where.c_str(), kernel, ref, range.lo, range.hi);
      r->first_bad = text;
    }
  }
}

std::vector<uint32_t> sample_blocks(uint32_t blocks,
                                    std::vector<uint32_t> extra,
                                    const kernel_case &c) {
  std::set<uint32_t> s = {0, blocks - 1};
  for (uint32_t b : extra)
    if (b < blocks)
      s.insert(b);
  for (int i = 0; i < c.opt.random_ctas && s.size() < blocks; ++i) {
    uint32_t b = 0;
    do
      b = static_cast<uint32_t>(c.random->bits() % blocks);
    while (s.count(b));
    s.insert(b);
  }
  return {s.begin(), s.end()};
}

std::string run_blocks(const kernel_case &c, const std::vector<uint32_t> &blocks,
                       const std::vector<uint32_t> &outputs) {
  namespace emu = sgc::runtime::emu;
  emu::launch l;
  l.kernel = c.kernel;
  l.where = c.m->path() + ": " + c.phase + " step " +
            std::to_string(c.step_index);
  l.fn = c.m->kernel_fn(*c.step);
  for (int d = 0; d < 3; ++d) {
    l.grid[d] = c.step->grid[d];
    l.block[d] = c.step->block[d];
  }
  l.static_shared_bytes = c.m->static_shared_bytes(*c.step);
  l.dynamic_shared_bytes = c.step->dynamic_shared_bytes;
  l.sites = c.m->emu().sites;
  l.num_sites = c.m->emu().num_sites;
  for (size_t j = 0; j < c.ops.size(); ++j) {
    const operand &o = c.ops[j];
    l.params.push_back(reinterpret_cast<uintptr_t>(o.memory->data()));
    bool seen = false;
    for (const emu::buffer &b : l.buffers)
      seen |= b.data == o.memory->data();
    if (seen)
      continue;
    emu::buffer b;
    b.data = o.memory->data();
    b.bytes = o.memory->bytes();
    b.writable = std::count(outputs.begin(), outputs.end(), j) != 0;
    b.what = o.what;
    l.buffers.push_back(b);
  }
  emu::options eo;
  eo.schedules = c.opt.schedules;
  eo.seed = c.opt.seed;
  eo.only_blocks = blocks;
  sgc::status st = emu::run(l, eo);
  return st.ok() ? std::string() : st.to_string();
}

} // namespace emu_sample
