/*
 * gemm_mma_check.cc - the prefill projections on tensor cores (GemmMma.cpp):
 * Y[t, r] = sum_k xs[t, k] W[r, k] for the tokens t < n of the call and the
 * rows of a sampled block, xs the token's row or its RMSNorm (the prologue:
 * x * rsqrt(mean(x^2) + eps) * (offset + w), rounded to bf16), then the
 * epilogue of gemv_rows (none, softcap, GELU(gate) x up; gemv_check.cc's
 * intervals). A block (x, y) owns rows x * tile_n .. + tile_n (of one weight:
 * concatenated weights split the blocks) and tokens y * tile_m .. + tile_m.
 *
 * Blocks sampled: the first and the last, the last row tile on the call's
 * last token tile, each weight's first and last row tile, the first token
 * tile past the call (it must write nothing), and seeded others. Every
 * element of the outputs that no sampled block owns, and every token at or
 * past n, must stay unwritten.
 *
 * Error bounds (interval.h): the dot products exact in double, widened by
 * gamma_n * sum |terms| with n = K / 16 + 5: the accumulator's chain of K / 16
 * mma.sync steps, each of which may round its 16 products' sum at every
 * level of a 4-deep tree and once more adding the accumulator (the hardware's
 * internal order is not specified; this covers any order of that shape).
 * The prologue's sum of squares: a lane's K / 32 squares in sequence and 5
 * shuffle adds. bf16 rounding on both ends of every rounded value.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

namespace emu_sample {

namespace {
double element(const operand &o, int64_t i) { return bf16_value(o.bf16()[i]); }
} // namespace

check_result check_gemm_mma(kernel_case &c) {
  check_result r;
  const std::string &name = c.kernel;
  const kernel_spec &s = *c.spec;
  const int64_t k = static_cast<int64_t>(s.number(name, "k"));
  const std::vector<int64_t> rows = s.integers(name, "rows");
  const std::string epilogue = s.text(name, "epilogue");
  const int64_t tm = static_cast<int64_t>(s.number(name, "tile_m"));
  const int64_t tn = static_cast<int64_t>(s.number(name, "tile_n"));
  const bool norm = s.has("norm_eps");
  const bool norm_weight = norm && s.number(name, "norm_weight") != 0;
  const bool gated = epilogue == "gated_gelu";
  const size_t num_weights = rows.size();
  const size_t num_outputs = gated ? 1 : num_weights;
  // The state, X, the norm weight, the weights, the outputs.
  const size_t norm_index = 2;
  const size_t first_weight = norm_index + (norm_weight ? 1 : 0);
  const size_t first_out = first_weight + num_weights;
  if (c.ops.size() != first_out + num_outputs) {
    r.error = "the step has " + std::to_string(c.ops.size()) +
              " operands, the spec asks for " +
              std::to_string(first_out + num_outputs);
    return r;
  }
  for (size_t i = 1; i < c.ops.size(); ++i)
    if (c.ops[i].dtype != SGC_ABI_DTYPE_BF16) {
      r.error = c.ops[i].what + " is not bf16";
      return r;
    }
  const operand &x = c.ops[1];
  std::vector<int64_t> row_begin;
  int64_t total_rows = 0;
  for (int64_t n : rows) {
    row_begin.push_back(total_rows);
    total_rows += n;
  }
  if (gated)
    total_rows = rows[0];
  const int64_t n = c.tokens;
  const uint32_t gx = c.step->grid[0], gy = c.step->grid[1];
  if (gx * tn != total_rows || gy != (c.max_tokens + tm - 1) / tm) {
    r.error = "the grid is not row tiles x token tiles";
    return r;
  }
  const uint32_t last_tile = static_cast<uint32_t>((n - 1) / tm);
  std::vector<uint32_t> edges = {gx - 1 + gx * last_tile, gx * last_tile,
                                 gx * (last_tile + 1)};
  for (size_t i = 1; i < num_weights && !gated; ++i) {
    const uint32_t y = i % 2 ? last_tile : 0;
    edges.push_back(static_cast<uint32_t>(row_begin[i] / tn) + gx * y);
    edges.push_back(static_cast<uint32_t>((row_begin[i] - 1) / tn) + gx * y);
  }
  r.ctas = sample_blocks(gx * gy, edges, c);

  set_step_state(c, c.opt.position - (n - 1), n);
  // X: the call's tokens (a hidden state's spread before the norm, else an
  // activation's); the rows past it are left zero (the kernel reads none).
  c.random->fill_bf16(x.bf16(), n * k, norm ? 8.0 : 1.0);
  const double offset =
      norm ? s.number(name, "norm_offset") : 0; // offset + w around 1.5
  if (norm_weight)
    for (int64_t i = 0; i < k; ++i)
      c.ops[norm_index].bf16()[i] =
          to_bf16((offset ? 0.5 : 1.5) + 0.5 * c.random->next());
  // The sampled blocks' weight rows, of spread 1/sqrt(K).
  const double w_sigma = 1 / std::sqrt(static_cast<double>(k));
  std::vector<uint32_t> row_tiles;
  for (uint32_t b : r.ctas)
    if (std::find(row_tiles.begin(), row_tiles.end(), b % gx) ==
        row_tiles.end())
      row_tiles.push_back(b % gx);
  // Which weight a global row is in, and its row there.
  auto weight_of = [&](int64_t g) {
    size_t which = 0;
    if (!gated)
      while (which + 1 < num_weights && g >= row_begin[which + 1])
        ++which;
    return std::make_pair(which, g - (gated ? 0 : row_begin[which]));
  };
  for (uint32_t bx : row_tiles) {
    const auto [which, local] = weight_of(int64_t{bx} * tn);
    for (size_t i = 0; i < (gated ? 2u : 1u); ++i)
      c.random->fill_bf16(c.ops[first_weight + which + i].bf16() + local * k,
                          tn * k, w_sigma);
  }
  std::vector<uint32_t> outputs;
  for (size_t i = 0; i < num_outputs; ++i) {
    const operand &o = c.ops[first_out + i];
    std::memset(o.memory->data(), 0xFF, o.memory->bytes());
    outputs.push_back(static_cast<uint32_t>(first_out + i));
  }

  const auto start = std::chrono::steady_clock::now();
  r.error = run_blocks(c, r.ctas, outputs);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start).count();
  if (!r.error.empty())
    return r;

  // xs of a token, as lo / hi / pt arrays.
  struct row_values {
    std::vector<double> lo, hi, pt;
  };
  std::map<int64_t, row_values> xs_of;
  auto xs = [&](int64_t t) -> const row_values & {
    auto it = xs_of.find(t);
    if (it != xs_of.end())
      return it->second;
    row_values v;
    v.lo.resize(k), v.hi.resize(k), v.pt.resize(k);
    const uint16_t *row = x.bf16() + t * k;
    if (!norm) {
      for (int64_t i = 0; i < k; ++i)
        v.lo[i] = v.hi[i] = v.pt[i] = bf16_value(row[i]);
      return xs_of[t] = v;
    }
    const double eps = s.number(name, "norm_eps");
    double sum = 0;
    for (int64_t i = 0; i < k; ++i)
      sum += bf16_value(row[i]) * bf16_value(row[i]);
    interval ss = f32_rounded(interval(sum), k / 32 + 5);
    interval mean = f32_rounded(increasing(ss, [&](double m) { return m / k; }));
    interval scale = function_rounded(decreasing(
        f32_rounded(mean + interval(static_cast<float>(eps))),
        [](double m) { return 1 / std::sqrt(m); }));
    for (int64_t i = 0; i < k; ++i) {
      interval e = f32_rounded(interval(bf16_value(row[i])) * scale);
      if (norm_weight)
        e = f32_rounded(
            e * f32_rounded(interval(element(c.ops[norm_index], i) + offset)));
      e = round_bf16(e);
      v.lo[i] = e.lo, v.hi[i] = e.hi, v.pt[i] = e.pt;
    }
    return xs_of[t] = v;
  };

  // The planted bug: the reference doubles the weight of the largest term
  // of the first output it computes.
  bool planted = !c.opt.plant_bug;
  const double chain = static_cast<double>(k / 16 + 5);
  const double gamma = chain * f32_unit / (1 - chain * f32_unit);
  std::vector<double> wrow(k);
  auto dot = [&](const operand &w, int64_t local, const row_values &v) {
    for (int64_t i = 0; i < k; ++i)
      wrow[i] = element(w, local * k + i);
    if (!planted) {
      planted = true;
      int64_t best = 0;
      for (int64_t i = 1; i < k; ++i)
        if (std::fabs(wrow[i] * v.pt[i]) > std::fabs(wrow[best] * v.pt[best]))
          best = i;
      wrow[best] *= 2;
    }
    double lo = 0, hi = 0, pt = 0, terms = 0;
    for (int64_t i = 0; i < k; ++i) {
      const double a = wrow[i] * v.lo[i], b = wrow[i] * v.hi[i];
      lo += std::min(a, b);
      hi += std::max(a, b);
      pt += wrow[i] * v.pt[i];
      terms += std::max(std::fabs(a), std::fabs(b));
    }
    return widen(interval(lo, hi, pt), gamma * terms);
  };

  for (uint32_t b : r.ctas) {
    const int64_t bx = b % gx, by = b / gx;
    for (int64_t t = by * tm; t < std::min(by * tm + tm, n); ++t) {
      const row_values &v = xs(t);
      for (int64_t g = bx * tn; g < bx * tn + tn; ++g) {
        const auto [which, local] = weight_of(g);
        const operand &out = c.ops[first_out + which];
        interval y;
        if (gated) {
          interval gr = round_bf16(dot(c.ops[first_weight], local, v));
          interval ur = round_bf16(dot(c.ops[first_weight + 1], local, v));
          interval act = round_bf16(gelu_of(gr));
          y = round_bf16(f32_rounded(act * ur));
        } else {
          y = round_bf16(dot(c.ops[first_weight + which], local, v));
          if (epilogue == "softcap")
            y = softcap_of(y, s.number(name, "cap"), SGC_ABI_DTYPE_BF16);
        }
        const int64_t width = out.shape.back();
        compare(element(out, t * width + local), y,
                "CTA " + std::to_string(b) + " token " + std::to_string(t) +
                    " row " + std::to_string(g),
                &r);
      }
    }
  }

  // What no sampled block owns must be untouched.
  for (size_t i = 0; i < num_outputs; ++i) {
    const operand &out = c.ops[first_out + i];
    const int64_t width = out.shape.back();
    const int64_t base = gated ? 0 : row_begin[i];
    for (int64_t t = 0; t < out.shape[0]; ++t) {
      const uint16_t *row = out.bf16() + t * width;
      for (int64_t j = 0; j < width; ++j) {
        if (row[j] == 0xFFFF)
          continue;
        const uint32_t b = static_cast<uint32_t>((base + j) / tn) +
                           gx * static_cast<uint32_t>(t / tm);
        if (t >= n || !std::binary_search(r.ctas.begin(), r.ctas.end(), b))
          ++r.untouched_bad;
      }
    }
  }
  return r;
}

} // namespace emu_sample
