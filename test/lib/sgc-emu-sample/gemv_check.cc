/*
 * gemv_check.cc - gemv_rows (CUDA.md §1.2): y[r] = sum_k W[r,k] xs[k] for
 * the sampled CTAs' rows, xs the input row or its RMSNorm (the prologue:
 * x * rsqrt(mean(x^2) + eps) * (offset + w), rounded to the compute dtype),
 * the epilogue softcap (the LM head) or GELU(gate) x up, each with the
 * rounding points of the CPU path (Conversion/SGToCPU/Linear.cpp).
 *
 * With a "prologue" (decode: the row chain before the projection fused into
 * it), the input row is that chain's result: the first block stores it (the
 * chain's output, the launch's last operand), checked like row_chain's; the
 * projection's reference then starts from the row the kernel stored.
 *
 * With "argmax" (the decode LM head, Argmax.cpp) each sampled CTA's best
 * (partial value and id, the four operands after the outputs: values, ids,
 * counter, token) must be the largest of the rows it stored, the lowest id
 * of equal ones; the counter counts each sampled CTA once, and the token is
 * written only when every CTA ran (then it is the row's argmax).
 *
 * Error bounds (interval.h): the exact sums in double, widened by Higham's
 * gamma_n * sum |terms| with n the longest chain of f32 roundings in the
 * kernel's order (a lane's K / (8 * 32) FMAs of 8-wide chunks, then 8 adds
 * of the vector and 5 shuffle adds; the prologue's K / 128 squares per
 * thread and the block sum); exp/tanh/rsqrt by interval.h's function
 * error; bf16 rounding on both ends.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include "lib/support/half.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace emu_sample {

namespace {

constexpr double gelu_beta = 0.7978845608028654; // sqrt(2 / pi)
/// Where GELU(tanh) has its minimum (it is not monotone below it).
constexpr double gelu_argmin = -0.7517916;

double gelu(double z) {
  return 0.5 * z * (1 + std::tanh(gelu_beta * (z + 0.044715 * z * z * z)));
}

double element(const operand &o, int64_t i) {
  return o.dtype == SGC_ABI_DTYPE_BF16 ? bf16_value(o.bf16()[i]) : o.f32()[i];
}

void fill(const operand &o, int64_t begin, int64_t n, double mean,
          double sigma, normal_source &random) {
  for (int64_t i = begin; i < begin + n; ++i) {
    const double v = mean + sigma * random.next();
    if (o.dtype == SGC_ABI_DTYPE_BF16)
      o.bf16()[i] = to_bf16(v);
    else
      o.f32()[i] = static_cast<float>(v);
  }
}

bool is_sentinel(const operand &o, int64_t i) {
  return o.dtype == SGC_ABI_DTYPE_BF16 ? o.bf16()[i] == 0xFFFF
                                       : sgc::float_bits(o.f32()[i]) == ~0u;
}

/// The argmax epilogue's partials of the sampled |ctas|, its counter and
/// token (operands |first| to first + 3) against the logits row |out| the
/// kernel stored: "" or what is wrong.
std::string check_argmax(const kernel_case &c,
                         const std::vector<uint32_t> &ctas, int64_t per_block,
                         int64_t total_rows, uint32_t blocks,
                         const operand &out, size_t first) {
  const float *values = c.ops[first].f32();
  const int32_t *ids = static_cast<const int32_t *>(c.ops[first + 1].memory->data());
  const int32_t counter =
      *static_cast<const int32_t *>(c.ops[first + 2].memory->data());
  const int32_t token =
      *static_cast<const int32_t *>(c.ops[first + 3].memory->data());
  int64_t best_row = -1;
  double best = 0;
  for (uint32_t b : ctas) {
    const int64_t begin = b * per_block;
    const int64_t end = std::min(total_rows, begin + per_block);
    int64_t want = begin;
    for (int64_t j = begin; j < end; ++j)
      if (element(out, j) > element(out, want))
        want = j;
    const std::string where = "argmax: CTA " + std::to_string(b);
    if (ids[b] != want || values[b] != element(out, want))
      return where + " has row " + std::to_string(ids[b]) + " (" +
             std::to_string(values[b]) + "), its best is row " +
             std::to_string(want) + " (" + std::to_string(element(out, want)) +
             ")";
    if (best_row < 0 || element(out, want) > best)
      best_row = want, best = element(out, want);
  }
  const bool all = ctas.size() == blocks;
  if (counter != (all ? 0 : static_cast<int32_t>(ctas.size())))
    return "argmax: the counter is " + std::to_string(counter) + " after " +
           std::to_string(ctas.size()) + " of " + std::to_string(blocks) +
           " CTAs (0 once the last has reset it)";
  if (token != (all ? best_row : -1))
    return "argmax: the token is " + std::to_string(token) + ", expected " +
           std::to_string(all ? best_row : -1);
  return "";
}

} // namespace

/// The kernel's rounding of a value stored (or rounded) as |dtype|.
interval round_to(interval v, uint32_t dtype) {
  return dtype == SGC_ABI_DTYPE_BF16 ? round_bf16(v) : f32_rounded(v);
}

/// GELU on an interval, with the f32 evaluation's error: 1 + tanh(...)
/// cancels for negative z, so the error is absolute, |z| * function_error.
interval gelu_of(interval z) {
  double lo = std::min(gelu(z.lo), gelu(z.hi));
  double hi = std::max(gelu(z.lo), gelu(z.hi));
  if (z.lo < gelu_argmin && gelu_argmin < z.hi)
    lo = gelu(gelu_argmin);
  interval g(lo, hi, gelu(z.pt));
  return widen(g, 2 * function_error * (z.magnitude() + g.magnitude()) + 1e-30);
}

interval softcap_of(interval y, double cap, uint32_t dtype) {
  interval t1 = round_to(f32_rounded(increasing(y, [&](double v) {
                           return v / cap;
                         })),
                         dtype);
  interval t2 = round_to(
      function_rounded(increasing(t1, [](double v) { return std::tanh(v); })),
      dtype);
  return round_to(f32_rounded(t2 * interval(cap)), dtype);
}

check_result check_gemv_rows(kernel_case &c) {
  check_result r;
  const std::string &name = c.kernel;
  const kernel_spec &s = *c.spec;
  const int64_t k = static_cast<int64_t>(s.number(name, "k"));
  const std::vector<int64_t> rows = s.integers(name, "rows");
  const std::string epilogue = s.text(name, "epilogue");
  const int64_t warps = static_cast<int64_t>(s.number(name, "warps"));
  // A block's rows: warps x rows_per_warp consecutive ones.
  const int64_t per_warp =
      s.has("rows_per_warp")
          ? static_cast<int64_t>(s.number(name, "rows_per_warp"))
          : 1;
  const int64_t per_block = warps * per_warp;
  const int64_t vec = static_cast<int64_t>(s.number(name, "vector"));
  const bool norm = s.has("norm_eps");
  const bool norm_weight = norm && s.number(name, "norm_weight") != 0;
  const bool gated = epilogue == "gated_gelu";
  const size_t num_weights = rows.size();
  const size_t num_outputs = gated ? 1 : num_weights;
  // The state, the input row (or the chain's inputs), the norm weight.
  std::vector<chain_step> chain;
  int after_input = 2;
  if (s.has("prologue")) {
    r.error = parse_chain(s.text(name, "prologue"), 2, &chain, &after_input);
    if (!r.error.empty())
      return r;
  }
  const size_t norm_index = static_cast<size_t>(after_input);
  const size_t first_weight = norm_index + (norm_weight ? 1 : 0);
  const bool argmax = s.has("argmax") && s.number(name, "argmax") != 0;
  const size_t first_argmax =
      first_weight + num_weights + num_outputs + (chain.empty() ? 0 : 1);
  const size_t expected = first_argmax + (argmax ? 4 : 0);
  if (c.ops.size() != expected) {
    r.error = "the step has " + std::to_string(c.ops.size()) +
              " operands, the spec asks for " + std::to_string(expected);
    return r;
  }
  const operand &x = c.ops[1];
  int64_t total_rows = 0;
  std::vector<int64_t> row_begin;
  for (int64_t n : rows) {
    row_begin.push_back(total_rows);
    total_rows += gated ? 0 : n;
  }
  if (gated)
    total_rows = rows[0];
  const uint32_t blocks = c.step->grid[0];

  // The CTAs: first, last, random, and the ones holding a weight's first
  // and last rows (where a row-offset bug shows).
  std::vector<uint32_t> edges;
  for (size_t i = 1; i < num_weights && !gated; ++i) {
    edges.push_back(static_cast<uint32_t>(row_begin[i] / per_block));
    edges.push_back(static_cast<uint32_t>((row_begin[i] - 1) / per_block));
  }
  r.ctas = sample_blocks(blocks, edges, c);

  // Inputs: the state, the row, the norm weight, the sampled rows of W.
  set_step_state(c, c.opt.position, 1);
  // A hidden state's spread before the norm (large), otherwise an
  // activation's (attention output, GELU x up).
  // A chain's input is a projection's output (spread 1), its sides as
  // row_chain's.
  fill(x, 0, k, 0, norm && chain.empty() ? 8.0 : 1.0, *c.random);
  fill_chain_sides(c, chain);
  const int64_t offset = norm ? static_cast<int64_t>(s.number(name, "norm_offset")) : 0;
  if (norm_weight) // the norm's scale offset + w around 1.5
    fill(c.ops[norm_index], 0, k, offset ? 0.5 : 1.5, 0.5, *c.random);
  const double w_sigma = 1 / std::sqrt(static_cast<double>(k));
  // fn(cta, global row g, which weight, its local row) for every row the
  // sampled CTAs own.
  auto for_sampled_rows = [&](auto fn) {
    for (uint32_t b : r.ctas)
      for (int64_t wr = 0; wr < per_block; ++wr) {
        const int64_t g = b * per_block + wr;
        if (g >= total_rows)
          continue;
        size_t which = 0;
        if (!gated)
          while (which + 1 < num_weights && g >= row_begin[which + 1])
            ++which;
        fn(b, g, which, g - (gated ? 0 : row_begin[which]));
      }
  };
  for_sampled_rows([&](uint32_t, int64_t, size_t which, int64_t local) {
    for (size_t i = 0; i < (gated ? 2u : 1u); ++i)
      fill(c.ops[first_weight + which + i], local * k, k, 0, w_sigma,
           *c.random);
  });
  for (size_t i = 0; i < num_outputs; ++i) {
    const operand &o = c.ops[first_weight + num_weights + i];
    std::memset(o.memory->data(), 0xFF, o.memory->bytes());
  }

  std::vector<uint32_t> outputs;
  for (size_t i = 0; i < num_outputs; ++i)
    outputs.push_back(static_cast<uint32_t>(first_weight + num_weights + i));
  const size_t stored_index = first_argmax - 1;
  if (!chain.empty()) {
    const operand &stored = c.ops[stored_index];
    std::memset(stored.memory->data(), 0xFF, stored.memory->bytes());
    outputs.push_back(static_cast<uint32_t>(stored_index));
  }
  // The argmax's partials and token start as sentinels, its counter zero.
  if (argmax) {
    for (size_t i = 0; i < 4; ++i) {
      const operand &o = c.ops[first_argmax + i];
      std::memset(o.memory->data(), i == 2 ? 0 : 0xFF, o.memory->bytes());
      outputs.push_back(static_cast<uint32_t>(first_argmax + i));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  r.error = run_blocks(c, r.ctas, outputs);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start).count();
  if (!r.error.empty())
    return r;

  // The input row: x, or the chain's result as the first block stored it
  // (each element checked against the chain's reference).
  std::vector<double> input(k);
  for (int64_t i = 0; i < k; ++i)
    input[i] = element(x, i);
  if (!chain.empty()) {
    const operand &stored = c.ops[stored_index];
    std::vector<interval> v(k);
    for (int64_t i = 0; i < k; ++i)
      v[i] = interval(input[i]);
    chain_row(c, chain, 0, k, warps * 32, v, stored.dtype);
    for (int64_t i = 0; i < k; ++i) {
      input[i] = element(stored, i);
      compare(input[i], v[i], "prologue column " + std::to_string(i), &r);
    }
  }

  // The prologue: xs, each element an interval.
  std::vector<interval> xs(k);
  const bool round_xs = x.dtype == SGC_ABI_DTYPE_BF16;
  if (norm) {
    const double eps = s.number(name, "norm_eps");
    double sum = 0;
    for (int64_t i = 0; i < k; ++i)
      sum += input[i] * input[i];
    const int64_t threads = warps * 32;
    interval ss = f32_rounded(interval(sum), k / threads + 16);
    interval mean = f32_rounded(increasing(ss, [&](double v) { return v / k; }));
    interval scale = function_rounded(decreasing(
        f32_rounded(mean + interval(static_cast<float>(eps))),
        [](double v) { return 1 / std::sqrt(v); }));
    for (int64_t i = 0; i < k; ++i) {
      interval v = f32_rounded(interval(input[i]) * scale);
      if (norm_weight) {
        interval w =
            f32_rounded(interval(element(c.ops[norm_index], i) + offset));
        v = f32_rounded(v * w);
      }
      xs[i] = round_xs ? round_bf16(v) : v;
    }
  } else {
    for (int64_t i = 0; i < k; ++i)
      xs[i] = interval(input[i]);
  }

  // The planted bug: the reference doubles the weight of the largest term
  // of the first sampled row.
  int64_t bug_row = -1, bug_k = -1;
  // dot(W row, xs) as an interval.
  const double dot_chain =
      k % vec == 0 ? k / (vec * 32) + vec + 5 : k / 32 + 5;
  const double gamma = dot_chain * f32_unit / (1 - dot_chain * f32_unit);
  auto dot = [&](const operand &w, int64_t local, int64_t global) {
    const int64_t base = local * k;
    if (c.opt.plant_bug && bug_row < 0) {
      bug_row = global;
      double best = -1;
      for (int64_t i = 0; i < k; ++i) {
        const double t = std::fabs(element(w, base + i) * xs[i].pt);
        if (t > best)
          best = t, bug_k = i;
      }
    }
    interval acc(0.0);
    double terms = 0;
    for (int64_t i = 0; i < k; ++i) {
      double wv = element(w, base + i);
      if (global == bug_row && i == bug_k)
        wv *= 2;
      const interval t = interval(wv) * xs[i];
      acc = acc + t;
      terms += t.magnitude();
    }
    return widen(acc, gamma * terms);
  };

  for_sampled_rows([&](uint32_t b, int64_t g, size_t which, int64_t local) {
    const operand &out = c.ops[first_weight + num_weights + which];
    interval y;
    if (gated) {
      interval gr = round_to(dot(c.ops[first_weight], local, g), out.dtype);
      interval ur = round_to(dot(c.ops[first_weight + 1], local, g), out.dtype);
      interval act = round_to(gelu_of(gr), out.dtype);
      y = round_to(f32_rounded(act * ur), out.dtype);
    } else {
      y = round_to(dot(c.ops[first_weight + which], local, g), out.dtype);
      if (epilogue == "softcap")
        y = softcap_of(y, s.number(name, "cap"), out.dtype);
    }
    compare(element(out, local), y,
            "CTA " + std::to_string(b) + " row " + std::to_string(g), &r);
  });

  if (argmax) {
    r.error = check_argmax(c, r.ctas, per_block, total_rows, blocks,
                           c.ops[first_weight + num_weights], first_argmax);
    if (!r.error.empty())
      return r;
  }

  // Rows of the CTAs that did not run must be untouched.
  for (size_t i = 0; i < num_outputs; ++i) {
    const operand &out = c.ops[first_weight + num_weights + i];
    const int64_t n = out.shape.back();
    const int64_t base = gated ? 0 : row_begin[i];
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t b = static_cast<uint32_t>((base + j) / per_block);
      const bool sampled =
          std::find(r.ctas.begin(), r.ctas.end(), b) != r.ctas.end();
      if (!sampled && !is_sentinel(out, j))
        ++r.untouched_bad;
    }
  }
  return r;
}

} // namespace emu_sample
