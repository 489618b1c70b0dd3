/*
 * attention_check.cc - decode attention, split over the keys
 * (AttnDecode.cpp): for the q heads of a sampled kv head g at position p,
 * keys j in [lo, p] (lo = p - window + 1 on ring layers, whose slot is j mod
 * window; 0 on full layers), those before p from the cache and p's own from
 * the step's k/v; scores q.k rounded to the compute dtype, scaled and
 * rounded again; softmax in f32 (not rounded before weighting V: one
 * flash-decoding pass; on tensor cores, mma=1, the unnormalized
 * probability is rounded to bf16 as mma.sync's operand), the output
 * rounded. A V-only cache (keys_from_values) has its keys rebuilt from
 * V's rows (rebuilt_keys.cc). Every split of a sampled kv
 * head runs (the last one to finish combines them), and the split counters
 * of the zeroed workspace region must be zero again afterwards.
 *
 * Error bounds (interval.h): each q.k exact in double widened by gamma_n *
 * sum |q_c k_c|, n = head_dim / 32 FMAs per lane + 5 shuffle adds; the max
 * of the scores as the interval of the maxima; exp by the function error.
 * Each probability reaches the output through the online softmax's
 * rescalings (one exp and two roundings per later key of its part), the
 * part's weight in the combine (one exp) and the sums over keys and parts:
 * every term is widened by that many function errors and roundings, and the
 * bf16 rounding applies on both ends of the output.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace emu_sample {

namespace {
double element(const operand &o, int64_t i) {
  return o.dtype == SGC_ABI_DTYPE_BF16 ? bf16_value(o.bf16()[i]) : o.f32()[i];
}

void fill(const operand &o, double sigma, normal_source &random) {
  const uint64_t n = o.memory->bytes() / (o.dtype == SGC_ABI_DTYPE_BF16 ? 2 : 4);
  for (uint64_t i = 0; i < n; ++i) {
    const double v = sigma * random.next();
    if (o.dtype == SGC_ABI_DTYPE_BF16)
      o.bf16()[i] = to_bf16(v);
    else
      o.f32()[i] = static_cast<float>(v);
  }
}
} // namespace

check_result check_attn_decode(kernel_case &c) {
  check_result r;
  const std::string &name = c.kernel;
  const kernel_spec &s = *c.spec;
  const int64_t hq = static_cast<int64_t>(s.number(name, "q_heads"));
  const int64_t hkv = static_cast<int64_t>(s.number(name, "kv_heads"));
  const int64_t d = static_cast<int64_t>(s.number(name, "head_dim"));
  const int64_t dv = static_cast<int64_t>(s.number(name, "v_head_dim"));
  const int64_t window = static_cast<int64_t>(s.number(name, "window"));
  const int64_t splits = static_cast<int64_t>(s.number(name, "splits"));
  const int64_t key_groups =
      static_cast<int64_t>(s.number(name, "key_groups"));
  const double scale = s.number(name, "scale");
  const int64_t group = hq / hkv;
  // A V-only cache: k_norm's weight follows the caches.
  const uint32_t w = s.has("key_rotated") ? 1 : 0;
  if (c.ops.size() != 9 + w) {
    r.error = "the step has " + std::to_string(c.ops.size()) +
              " operands, the split-K decode attention takes " +
              std::to_string(9 + w);
    return r;
  }
  const operand &q = c.ops[1], &kn = c.ops[2], &vn = c.ops[3];
  const operand &kc = c.ops[4], &vc = c.ops[5], &out = c.ops[6 + w];
  const operand &counters = c.ops[8 + w];
  const key_rows key_rows_of(c, w ? &c.ops[6] : nullptr);
  // A ring layer past its wrap-around; a full layer with its later slots
  // holding values it must not read.
  const int64_t p = window > 0 ? c.opt.position : c.opt.full_position;
  const int64_t lo = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
  if (window == 0 && p >= kc.shape[0]) {
    r.error = "position " + std::to_string(p) + " is past the cache's " +
              std::to_string(kc.shape[0]) + " slots";
    return r;
  }
  if (c.step->grid[0] != hkv || c.step->grid[1] != splits) {
    r.error = "the grid is not kv heads x splits";
    return r;
  }
  // Kv heads: first, last, random; every split of each.
  const std::vector<uint32_t> heads =
      sample_blocks(static_cast<uint32_t>(hkv), {}, c);
  std::vector<uint32_t> blocks;
  for (uint32_t g : heads)
    for (int64_t sp = 0; sp < splits; ++sp)
      blocks.push_back(g + static_cast<uint32_t>(hkv * sp));
  std::sort(blocks.begin(), blocks.end());
  r.ctas = heads;

  set_step_state(c, p, 1);
  // q and v of unit spread; keys scaled so that the scaled scores spread
  // by about 3 (a peaked softmax that is not one-hot).
  const double k_sigma = 3 / (scale * std::sqrt(static_cast<double>(d)));
  fill(q, 1, *c.random);
  fill(kn, k_sigma, *c.random);
  fill(kc, k_sigma, *c.random);
  if (vn.memory != kn.memory)
    fill(vn, 1, *c.random);
  if (vc.memory != kc.memory)
    fill(vc, 1, *c.random);
  if (w)
    fill(c.ops[6], 1, *c.random);
  std::memset(out.memory->data(), 0xFF, out.memory->bytes());
  std::memset(counters.memory->data(), 0, counters.memory->bytes());

  const auto start = std::chrono::steady_clock::now();
  r.error = run_blocks(c, blocks, {6 + w, 7 + w, 8 + w});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start).count();
  if (!r.error.empty())
    return r;
  // The counters are left as they were found.
  const uint32_t *count = static_cast<const uint32_t *>(counters.memory->data());
  for (int64_t g = 0; g < hkv; ++g)
    if (count[g] != 0)
      ++r.untouched_bad;

  const double qk_chain = static_cast<double>((d + 31) / 32 + 5);
  const int64_t keys = p - lo + 1;
  const int64_t per_part =
      ((keys + splits - 1) / splits + key_groups - 1) / key_groups;
  const int64_t parts = splits * key_groups;
  // Relative error of one probability's way to the output (first order);
  // on tensor cores (mma=1) the probability is rounded to bf16 as the A
  // operand of P V (unit roundoff 2^-8).
  const bool mma = s.has("mma") && s.number(name, "mma") != 0;
  const double rel =
      static_cast<double>(per_part + 2) * function_error +
      static_cast<double>(2 * per_part + parts + 6) * f32_unit +
      (mma ? 0x1p-8 : 0.0);
  const uint32_t ct = q.dtype;
  bool planted = false;
  for (uint32_t g : heads) {
    for (int64_t h = g * group; h < (g + 1) * group; ++h) {
      // Key j's rows: the cache's slot before p, the step's own at p.
      auto key = [&](int64_t j, const operand &cache, const operand &now,
                     int64_t width) {
        if (j < p) {
          const int64_t slot = window > 0 ? j % window : j;
          return std::make_pair(&cache, (slot * hkv + g) * width);
        }
        return std::make_pair(&now, static_cast<int64_t>(g) * width);
      };
      // The planted bug: the reference doubles q's largest element.
      int64_t bug_c = -1;
      if (c.opt.plant_bug && !planted) {
        planted = true;
        double best = -1;
        for (int64_t i = 0; i < d; ++i)
          if (std::fabs(element(q, h * d + i)) > best)
            best = std::fabs(element(q, h * d + i)), bug_c = i;
      }
      std::vector<interval> score(keys);
      interval mx(-INFINITY);
      for (int64_t j = lo; j <= p; ++j) {
        auto [buf, base] =
            key_rows_of.rebuilt() ? key(j, vc, vn, d) : key(j, kc, kn, d);
        const std::vector<interval> kv = key_rows_of.at(*buf, base, j);
        // spread: how far the key's roundings may move the dot product.
        double dot = 0, terms = 0, spread = 0;
        for (int64_t i = 0; i < d; ++i) {
          double qv = element(q, h * d + i);
          if (i == bug_c)
            qv *= 2;
          const double t = qv * kv[i].pt;
          dot += t;
          terms += std::fabs(t);
          spread += std::fabs(qv) * kv[i].radius();
        }
        const double gq = qk_chain * f32_unit / (1 - qk_chain * f32_unit);
        interval sc = round_to(widen(interval(dot), gq * terms + spread), ct);
        sc = round_to(f32_rounded(sc * interval(static_cast<float>(scale))),
                      ct);
        score[j - lo] = sc;
        mx = {std::max(mx.lo, sc.lo), std::max(mx.hi, sc.hi),
              std::max(mx.pt, sc.pt)};
      }
      std::vector<interval> e(keys);
      interval sum(0.0);
      double sum_terms = 0;
      for (int64_t j = 0; j < keys; ++j) {
        e[j] = function_rounded(increasing(
            f32_rounded(score[j] - mx), [](double v) { return std::exp(v); }));
        sum = sum + e[j];
        sum_terms += e[j].magnitude();
      }
      sum = widen(sum, rel * sum_terms);
      const interval inv =
          f32_rounded(decreasing(sum, [](double v) { return 1 / v; }));
      for (int64_t i = 0; i < dv; ++i) {
        interval acc(0.0);
        double terms = 0;
        for (int64_t j = lo; j <= p; ++j) {
          auto [buf, base] = key(j, vc, vn, dv);
          const interval t = e[j - lo] * interval(element(*buf, base + i));
          acc = acc + t;
          terms += t.magnitude();
        }
        const interval o = round_to(
            f32_rounded(widen(acc, rel * terms) * inv), out.dtype);
        compare(element(out, h * dv + i), o,
                "q head " + std::to_string(h) + " dim " + std::to_string(i),
                &r);
      }
    }
  }
  // Heads of kv heads that did not run must be untouched.
  for (int64_t h = 0; h < hq; ++h) {
    if (std::find(heads.begin(), heads.end(), h / group) != heads.end())
      continue;
    for (int64_t i = 0; i < dv; ++i)
      if (out.bf16()[(h * dv + i) * (out.dtype == SGC_ABI_DTYPE_BF16 ? 1 : 2)] !=
          0xFFFF)
        ++r.untouched_bad;
  }
  return r;
}

} // namespace emu_sample
