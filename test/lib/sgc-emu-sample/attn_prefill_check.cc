/*
 * attn_prefill_check.cc - prefill attention on tensor cores
 * (AttnPrefill.cpp): a call of n tokens ending at the position, token t at
 * p = pos0 + t; for the q heads of a sampled kv head and the tokens of a
 * sampled block, keys j in [lo, p] (lo = p - window + 1 on ring layers,
 * whose slot is j mod window; 0 on full layers), those before pos0 from the
 * cache and the rest from the call's own k/v rows; scores q.k rounded to
 * bf16, scaled and rounded again; softmax in f32 with the normalized
 * probabilities rounded to bf16 (the kernel's two passes), the output
 * rounded. Blocks (kv head, token tile): the first and last kv head with
 * the first token tile, the call's last, the first past it (which must
 * write nothing) and the grid's last, plus seeded others; every output
 * row that no sampled block owns must stay unwritten.
 *
 * Error bounds (interval.h): each q.k exact in double widened by gamma_n *
 * sum |q_c k_c|, n = head_dim / 16 mma steps + the column splits' adds;
 * the max of the scores as the interval of the maxima; each exp by the
 * function error; the sum of pass 1 by its rescalings (one exp and one
 * rounding per tile) and additions; the probabilities rounded to bf16 from
 * an interval (either neighbour where it straddles a tie); P V exact
 * products summed in f32 once per 16-key step, and the bf16 rounding on
 * both ends of the output.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>

namespace emu_sample {

namespace {
double element(const operand &o, int64_t i) { return bf16_value(o.bf16()[i]); }

void fill(const operand &o, double sigma, normal_source &random) {
  random.fill_bf16(o.bf16(), o.memory->bytes() / 2, sigma);
}
} // namespace

check_result check_attn_prefill(kernel_case &c) {
  check_result r;
  const std::string &name = c.kernel;
  const kernel_spec &s = *c.spec;
  auto spec = [&](const char *key) {
    return static_cast<int64_t>(s.number(name, key));
  };
  const int64_t hq = spec("q_heads"), hkv = spec("kv_heads");
  const int64_t d = spec("head_dim"), dv = spec("v_head_dim");
  const int64_t window = spec("window"), tq = spec("tile_queries");
  const int64_t tile_keys = spec("tile_keys"), splits = spec("col_splits");
  const double scale = s.number(name, "scale");
  const int64_t group = hq / hkv;
  // A V-only cache: k_norm's weight follows the caches.
  const uint32_t w = s.has("key_rotated") ? 1 : 0;
  if (c.ops.size() != 7 + w) {
    r.error = "the step has " + std::to_string(c.ops.size()) +
              " operands, attn_prefill takes " + std::to_string(7 + w);
    return r;
  }
  const operand &q = c.ops[1], &kn = c.ops[2], &vn = c.ops[3];
  const operand &kc = c.ops[4], &vc = c.ops[5], &out = c.ops[6 + w];
  const key_rows key_rows_of(c, w ? &c.ops[6] : nullptr);
  for (const operand &o : {q, kn, vn, kc, vc, out})
    if (o.dtype != SGC_ABI_DTYPE_BF16) {
      r.error = o.what + " is not bf16";
      return r;
    }
  // The call's tokens end at the position: a ring layer past its
  // wrap-around, a full layer with later slots it must not read.
  const int64_t n = c.tokens;
  const int64_t last_p = window > 0 ? c.opt.position : c.opt.full_position;
  const int64_t pos0 = last_p - (n - 1);
  if (window == 0 && last_p >= kc.shape[0]) {
    r.error = "position " + std::to_string(last_p) + " is past the cache's " +
              std::to_string(kc.shape[0]) + " slots";
    return r;
  }
  const int64_t tiles = (c.max_tokens + tq - 1) / tq;
  if (c.step->grid[0] != hkv || c.step->grid[1] != tiles) {
    r.error = "the grid is not kv heads x token tiles";
    return r;
  }
  const uint32_t gx = static_cast<uint32_t>(hkv);
  std::vector<uint32_t> edges;
  for (int64_t g : {int64_t{0}, hkv - 1})
    for (int64_t t : {int64_t{0}, (n - 1) / tq, (n - 1) / tq + 1, tiles - 1})
      if (t < tiles)
        edges.push_back(static_cast<uint32_t>(g + gx * t));
  r.ctas = sample_blocks(static_cast<uint32_t>(hkv * tiles), edges, c);

  set_step_state(c, pos0, n);
  // q and v of unit spread; keys scaled so that the scaled scores spread
  // by about 3 (a peaked softmax that is not one-hot). K and V may share a
  // buffer (V from K): then both are K's.
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

  const auto start = std::chrono::steady_clock::now();
  r.error = run_blocks(c, r.ctas, {6 + w});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start).count();
  if (!r.error.empty())
    return r;

  const double qk_chain = static_cast<double>(d / 16 + splits);
  const double gq = qk_chain * f32_unit / (1 - qk_chain * f32_unit);
  std::set<std::pair<int64_t, int64_t>> owned; // (token, kv head)
  bool planted = false;
  for (uint32_t b : r.ctas) {
    const int64_t g = b % gx, tile = b / gx;
    for (int64_t t = tile * tq; t < std::min((tile + 1) * tq, n); ++t) {
      owned.insert({t, g});
      const int64_t p = pos0 + t;
      const int64_t lo = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
      const int64_t keys = p - lo + 1;
      // Key j's row: the cache's slot before pos0, the call's own after.
      auto key = [&](int64_t j, const operand &cache, const operand &now,
                     int64_t width) {
        if (j < pos0) {
          const int64_t slot = window > 0 ? j % window : j;
          return std::make_pair(&cache, (slot * hkv + g) * width);
        }
        return std::make_pair(&now, ((j - pos0) * hkv + g) * width);
      };
      // The block's tiles start at a multiple of tile_keys: pass 1
      // rescales its sum once per tile, P V rounds once per 16 keys.
      const int64_t first_p = pos0 + tile * tq;
      const int64_t block_lo =
          window > 0 ? std::max<int64_t>(0, first_p - window + 1) : 0;
      const int64_t block_tiles =
          (p + 1 - block_lo / tile_keys * tile_keys + tile_keys - 1) /
          tile_keys;
      const double rel =
          static_cast<double>(block_tiles + 2) * function_error +
          static_cast<double>(2 * block_tiles + keys + 8) * f32_unit;
      const double pv_chain =
          static_cast<double>(block_tiles * tile_keys / 16 + 2);
      for (int64_t h = g * group; h < (g + 1) * group; ++h) {
        const int64_t qrow = (t * hq + h) * d;
        // The planted bug: the reference doubles q's largest element.
        int64_t bug_c = -1;
        if (c.opt.plant_bug && !planted) {
          planted = true;
          double best = -1;
          for (int64_t i = 0; i < d; ++i)
            if (std::fabs(element(q, qrow + i)) > best)
              best = std::fabs(element(q, qrow + i)), bug_c = i;
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
            double qv = element(q, qrow + i);
            if (i == bug_c)
              qv *= 2;
            const double term = qv * kv[i].pt;
            dot += term;
            terms += std::fabs(term);
            spread += std::fabs(qv) * kv[i].radius();
          }
          interval sc = round_bf16(widen(interval(dot), gq * terms + spread));
          if (scale != 1.0)
            sc = round_bf16(f32_rounded(sc * interval(static_cast<float>(scale))));
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
        std::vector<interval> prob(keys);
        for (int64_t j = 0; j < keys; ++j)
          prob[j] = round_bf16(f32_rounded(e[j] * inv));
        for (int64_t i = 0; i < dv; ++i) {
          interval acc(0.0);
          double terms = 0;
          for (int64_t j = lo; j <= p; ++j) {
            auto [buf, base] = key(j, vc, vn, dv);
            const interval term = prob[j - lo] * interval(element(*buf, base + i));
            acc = acc + term;
            terms += term.magnitude();
          }
          compare(element(out, (t * hq + h) * dv + i),
                  round_bf16(widen(acc, pv_chain * f32_unit * terms)),
                  "token " + std::to_string(t) + " q head " +
                      std::to_string(h) + " dim " + std::to_string(i),
                  &r);
        }
      }
    }
  }
  // Rows no sampled block owns (and every row past the call) unwritten.
  for (int64_t t = 0; t < out.shape[0]; ++t)
    for (int64_t h = 0; h < hq; ++h) {
      if (owned.count({t, h / group}))
        continue;
      for (int64_t i = 0; i < dv; ++i)
        r.untouched_bad += out.bf16()[(t * hq + h) * dv + i] != 0xFFFF;
    }
  return r;
}

} // namespace emu_sample
