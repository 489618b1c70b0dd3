/*
 * qknorm_check.cc - decode qknorm_rope_append (QKNormRope.cpp): one warp
 * per head of each fused job (q, k, V norm, or V's copy); a norm job is
 * x * rsqrt(mean(x^2) + eps) * (offset + w) rounded to bf16, a job with a
 * norm weight (q and k on both families) then rotated by RoPE (rotate_half,
 * cos/sin of pos * inv_freq rounded to bf16, each product rounded, the sum
 * rounded: gemma-text.md §6), and an appending job's head written into
 * cache slot pos mod window (ring) or pos (full). Prefill (no appending
 * job: kv_write writes those caches) runs the call's tokens of the phase's
 * max, token t at position pos0 + t; blocks past them write nothing. The
 * reference's frequencies are its own, from the HF configs (gemma-text.md
 * §6.3-6.4): sliding theta 1e4; full Gemma 3 theta 1e6 / 8, Gemma 4 theta 1e6
 * with 64 of 256 frequencies (basis the head width 512), the rest zero.
 *
 * Error bounds (interval.h): the sum of squares by d/32 terms per lane + 5
 * shuffle adds; rsqrt by the function error; inv_freq as HF's f32 (pow of
 * an f32 exponent) within 4 f32 ulps; the angle's f32 product; cos/sin
 * within the angle's radius plus 2^-16; every f32 operation and bf16
 * rounding on both ends.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace emu_sample {

namespace {

struct job {
  int64_t heads = 0, d = 0, window = 0, offset = 0;
  double eps = 0;
  bool append = false, copy = false, weight = false, rope = false;
  int x = -1, w = -1, cache = -1, out = -1; ///< operand indices
  int64_t first_head = 0;                   ///< in the grid's y
};

double element(const operand &o, int64_t i) { return bf16_value(o.bf16()[i]); }

} // namespace

check_result check_qknorm_rope(kernel_case &c) {
  check_result r;
  const std::string &name = c.kernel;
  const kernel_spec &s = *c.spec;
  const int64_t num_jobs = static_cast<int64_t>(s.number(name, "jobs"));
  std::vector<job> jobs(num_jobs);
  int next = 1, total_heads = 0;
  for (int64_t i = 0; i < num_jobs; ++i) {
    const std::string p = "job" + std::to_string(i) + ".";
    job &j = jobs[i];
    j.heads = static_cast<int64_t>(s.number(name, p + "heads"));
    j.d = static_cast<int64_t>(s.number(name, p + "head_dim"));
    j.window = static_cast<int64_t>(s.number(name, p + "window"));
    j.append = s.number(name, p + "append") != 0;
    j.copy = s.has(p + "copy");
    if (!j.copy) {
      j.eps = s.number(name, p + "eps");
      j.weight = s.number(name, p + "norm_weight") != 0;
      j.offset = static_cast<int64_t>(s.number(name, p + "norm_offset"));
      // Gemma's q and k norms have a weight and get RoPE; V's has none.
      j.rope = j.weight;
      if (j.rope != s.has(p + "inv_freq")) {
        r.error = "job " + std::to_string(i) + (j.rope ? " has" : " has no") +
                  " norm weight but " + (j.rope ? "no" : "a") + " RoPE table";
        return r;
      }
    }
    j.first_head = total_heads;
    total_heads += static_cast<int>(j.heads);
    // Parameters: each job's x, [weight], [cache]; then each job's out.
    j.x = next++;
    if (j.weight)
      j.w = next++;
    if (j.append)
      j.cache = next++;
  }
  for (job &j : jobs)
    if (!j.copy)
      j.out = next++;
  if (static_cast<int>(c.ops.size()) != next) {
    r.error = "the step has " + std::to_string(c.ops.size()) +
              " operands, the spec asks for " + std::to_string(next);
    return r;
  }
  // The layer's kind: the step's layer's kv layer (a cache operand's
  // index is that layer).
  if (c.step->layer < 0) {
    r.error = "the step has no layer";
    return r;
  }
  const bool full =
      c.m->table().kv_layers[c.step->layer].kind == SGC_ABI_KV_FULL;
  for (const job &j : jobs)
    if (j.cache >= 0 &&
        c.ops[j.cache].abi->index != static_cast<uint32_t>(c.step->layer)) {
      r.error = c.ops[j.cache].what + " in a step of layer " +
                std::to_string(c.step->layer);
      return r;
    }
  for (const operand &o : c.ops)
    if (&o != &c.ops[0] && o.dtype != SGC_ABI_DTYPE_BF16) {
      r.error = o.what + " is not bf16";
      return r;
    }
  // V from K (Gemma 4 full layers): V's norm reads k_proj's raw output,
  // the buffer K's norm reads (gemma-text.md §5).
  for (const job &j : jobs)
    if (j.cache >= 0 && !j.copy && !j.rope &&
        c.m->table().kv_layers[c.ops[j.cache].abi->index].v_from_k)
      for (const job &k : jobs)
        if (k.cache >= 0 && k.rope && c.ops[k.x].memory != c.ops[j.x].memory) {
          r.error = "V's norm reads " + c.ops[j.x].what + ", K's " +
                    c.ops[k.x].what + " (V from K reads K's projection)";
          return r;
        }
  const std::string id = c.m->table().model_id;
  const bool gemma3 = id.rfind("gemma-3", 0) == 0;
  const bool gemma4 = id.rfind("gemma-4", 0) == 0;
  if (!gemma3 && !gemma4) {
    r.error = "no RoPE configuration for model " + id;
    return r;
  }
  // The call's tokens end at the position (decode: one token there).
  const int64_t n = c.tokens;
  const int64_t pos0 = (full ? c.opt.full_position : c.opt.position) - (n - 1);

  // Blocks (token x, head y): heads first, last, random, and both sides
  // of every job boundary; tokens first, the call's last, the first past it
  // and the grid's last.
  const uint32_t gx = c.step->grid[0];
  const uint32_t blocks = gx * c.step->grid[1];
  std::vector<uint32_t> edges;
  for (const job &j : jobs)
    for (int64_t h : {j.first_head, j.first_head + j.heads - 1})
      for (int64_t t : {int64_t{0}, n - 1, n, int64_t{gx} - 1})
        if (t < gx)
          edges.push_back(static_cast<uint32_t>(t + gx * h));
  r.ctas = sample_blocks(blocks, edges, c);

  set_step_state(c, pos0, n);
  // Projection outputs of spread 2, norm scales offset + w around 1.5; the
  // caches and outputs all sentinels (0xFFFF, a NaN), so a write anywhere
  // but the step's slot shows.
  for (const job &j : jobs) {
    c.random->fill_bf16(c.ops[j.x].bf16(), n * j.heads * j.d, 2);
    if (j.w >= 0)
      for (int64_t i = 0; i < j.d; ++i)
        c.ops[j.w].bf16()[i] =
            to_bf16((j.offset ? 0.5 : 1.5) + 0.5 * c.random->next());
  }
  std::vector<uint32_t> outputs;
  for (const job &j : jobs)
    for (int o : {j.cache, j.out})
      if (o >= 0) {
        std::memset(c.ops[o].memory->data(), 0xFF, c.ops[o].memory->bytes());
        outputs.push_back(static_cast<uint32_t>(o));
      }

  const auto start = std::chrono::steady_clock::now();
  r.error = run_blocks(c, r.ctas, outputs);
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!r.error.empty())
    return r;

  // inv_freq[k] as HF computes it: 1 / f32(theta^f32(2k / basis)) / factor,
  // k below the rotated count, else 0.
  auto inv_freq = [&](int64_t k, int64_t d) {
    const int64_t half = d / 2;
    double theta = 1e4, factor = 1;
    int64_t rotated = half, basis = d;
    if (full) {
      theta = 1e6;
      if (gemma3)
        factor = 8;
      else
        rotated = static_cast<int64_t>(0.25 * d) / 2;
    }
    if (k >= rotated)
      return interval(0.0);
    const float e = static_cast<float>(2 * k) / static_cast<float>(basis);
    const double v = 1 / std::pow(theta, static_cast<double>(e)) / factor;
    return widen(interval(v), 4 * f32_unit * v);
  };

  bool planted = false;
  for (uint32_t b : r.ctas) {
    const int64_t t = b % gx, head = b / gx;
    const job *jp = nullptr;
    for (const job &j : jobs)
      if (head >= j.first_head && head < j.first_head + j.heads)
        jp = &j;
    if (!jp || t >= n)
      continue;
    const job &j = *jp;
    const int64_t h = head - j.first_head, d = j.d, half = d / 2;
    const int64_t pos = pos0 + t, row = (t * j.heads + h) * d;
    const operand &x = c.ops[j.x];
    std::vector<double> xv(d);
    for (int64_t i = 0; i < d; ++i)
      xv[i] = element(x, row + i);
    // The planted bug: the reference doubles the first sampled head's
    // largest input element.
    if (c.opt.plant_bug && !planted) {
      planted = true;
      int64_t best = 0;
      for (int64_t i = 1; i < d; ++i)
        if (std::fabs(xv[i]) > std::fabs(xv[best]))
          best = i;
      xv[best] *= 2;
    }
    std::vector<interval> y(d);
    if (j.copy) {
      for (int64_t i = 0; i < d; ++i)
        y[i] = interval(xv[i]);
    } else {
      double ss = 0;
      for (double v : xv)
        ss += v * v;
      const interval sum = f32_rounded(interval(ss), d / 32 + 5);
      const interval mean =
          f32_rounded(increasing(sum, [&](double v) { return v / d; }));
      const interval scale = function_rounded(
          decreasing(f32_rounded(mean + interval(static_cast<float>(j.eps))),
                     [](double v) { return 1 / std::sqrt(v); }));
      for (int64_t i = 0; i < d; ++i) {
        interval v = f32_rounded(interval(xv[i]) * scale);
        if (j.weight)
          v = f32_rounded(
              v * f32_rounded(interval(element(c.ops[j.w], i) + j.offset)));
        y[i] = round_bf16(v);
      }
      if (j.rope) {
        const interval p(static_cast<double>(pos));
        for (int64_t k = 0; k < half; ++k)
          rotate_pair(f32_rounded(p * inv_freq(k, d)), y[k], y[k + half]);
      }
    }
    const int64_t slot = j.window > 0 ? pos % j.window : pos;
    for (int64_t i = 0; i < d; ++i) {
      const std::string where =
          (n > 1 ? "token " + std::to_string(t) + " " : "") + "head " +
          std::to_string(head) + " dim " + std::to_string(i);
      if (j.out >= 0)
        compare(element(c.ops[j.out], row + i), y[i], where + " (out)", &r);
      if (j.cache >= 0)
        compare(element(c.ops[j.cache], (slot * j.heads + h) * d + i), y[i],
                where + " (cache slot " + std::to_string(slot) + ")", &r);
    }
  }

  // Every other element of the outputs and caches must be unwritten: the
  // heads that did not run, and every slot but the step's.
  auto ran = [&](const job &j, int64_t t, int64_t h) {
    return t < n &&
           std::find(r.ctas.begin(), r.ctas.end(),
                     static_cast<uint32_t>(t + gx * (j.first_head + h))) !=
               r.ctas.end();
  };
  for (const job &j : jobs) {
    if (j.out >= 0)
      for (int64_t t = 0; t < gx; ++t)
        for (int64_t h = 0; h < j.heads; ++h)
          for (int64_t i = 0; !ran(j, t, h) && i < j.d; ++i)
            r.untouched_bad +=
                c.ops[j.out].bf16()[(t * j.heads + h) * j.d + i] != 0xFFFF;
    if (j.cache >= 0) {
      // Decode only (one token at pos0): the slot it writes.
      const operand &cache = c.ops[j.cache];
      const int64_t slot = j.window > 0 ? pos0 % j.window : pos0;
      for (int64_t t = 0; t < cache.shape[0]; ++t)
        for (int64_t h = 0; h < j.heads; ++h) {
          if (t == slot && ran(j, 0, h))
            continue;
          const uint16_t *row = cache.bf16() + (t * j.heads + h) * j.d;
          for (int64_t i = 0; i < j.d; ++i)
            r.untouched_bad += row[i] != 0xFFFF;
        }
    }
  }
  return r;
}

} // namespace emu_sample
