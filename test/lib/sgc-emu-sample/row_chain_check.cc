/*
 * row_chain_check.cc - decode row_chain (RowChain.cpp): one block per token
 * row runs the spec's steps in order over the row: an RMSNorm first
 * (x * rsqrt(mean(x^2) + eps) * (offset + w), rounded to bf16), then each
 * add / mul / layer_scalar in f32 with its side input (a [width] row or a
 * [1] scalar), rounded to bf16 after each step, as the CPU path rounds.
 * Prefill: the call's tokens of the phase's max, one row each; the blocks
 * past them must write nothing.
 *
 * Error bounds (interval.h): the sum of squares by width/128 terms per
 * thread + 16 for the block sum; rsqrt by the function error; one f32
 * rounding per operation, bf16 rounding on both ends.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace emu_sample {

namespace {

// bf16 rows, or f32 ones with --compute-dtype=f32 (the weights stay bf16).
double element(const operand &o, int64_t i) {
  return o.dtype == SGC_ABI_DTYPE_BF16 ? bf16_value(o.bf16()[i]) : o.f32()[i];
}

int64_t elements(const operand &o) {
  return static_cast<int64_t>(o.memory->bytes() /
                              (o.dtype == SGC_ABI_DTYPE_BF16 ? 2 : 4));
}

void set(const operand &o, int64_t i, double v) {
  if (o.dtype == SGC_ABI_DTYPE_BF16)
    o.bf16()[i] = to_bf16(v);
  else
    o.f32()[i] = static_cast<float>(v);
}

/// "rms_norm(eps=1e-06,offset=1,w)" -> the step; false if it is malformed.
bool parse_step(const std::string &text, chain_step *s) {
  const size_t paren = text.find('(');
  s->op = text.substr(0, paren);
  if (paren == std::string::npos)
    return true;
  if (text.back() != ')')
    return false;
  std::stringstream args(text.substr(paren + 1, text.size() - paren - 2));
  std::string a;
  while (std::getline(args, a, ',')) {
    if (a.rfind("eps=", 0) == 0)
      s->eps = std::strtod(a.c_str() + 4, nullptr);
    else if (a.rfind("offset=", 0) == 0)
      s->offset = std::strtoll(a.c_str() + 7, nullptr, 10);
    else if (a == "w")
      s->weight = true;
    else
      return false;
  }
  return true;
}

} // namespace

std::string parse_chain(const std::string &list, int first_side,
                        std::vector<chain_step> *steps, int *next) {
  std::stringstream items(list);
  std::string item;
  *next = first_side;
  while (std::getline(items, item, ';')) {
    chain_step s;
    if (!parse_step(item, &s))
      return "step '" + item + "' is malformed";
    const bool first = steps->empty();
    if (s.op == "rms_norm"
            ? !first
            : s.op != "add" && s.op != "mul" && s.op != "layer_scalar")
      return "no reference for step '" + item + "'" +
             (first ? "" : " at this place");
    if (s.op != "rms_norm" || s.weight)
      s.side = (*next)++;
    steps->push_back(s);
  }
  return "";
}

void fill_chain_sides(const kernel_case &c,
                      const std::vector<chain_step> &steps) {
  // Norm scales offset + w around 1.5, a layer scalar around 0.7, the
  // residual stream's rows of spread 8.
  for (const chain_step &s : steps) {
    if (s.side < 0)
      continue;
    const operand &o = c.ops[s.side];
    const int64_t count = elements(o);
    if (s.op == "rms_norm")
      for (int64_t i = 0; i < count; ++i)
        set(o, i, (s.offset ? 0.5 : 1.5) + 0.5 * c.random->next());
    else if (s.op == "layer_scalar")
      set(o, 0, 0.7 + 0.1 * c.random->next());
    else if (o.dtype == SGC_ABI_DTYPE_BF16)
      c.random->fill_bf16(o.bf16(), count, 8);
    else
      for (int64_t i = 0; i < count; ++i)
        set(o, i, 8 * c.random->next());
  }
}

void chain_row(const kernel_case &c, const std::vector<chain_step> &steps,
               int64_t t, int64_t width, int64_t threads,
               std::vector<interval> &v, uint32_t dtype) {
  // Each step's result is rounded to the row's dtype (f32: already is).
  auto round_row = [&](interval e) {
    return dtype == SGC_ABI_DTYPE_BF16 ? round_bf16(e) : e;
  };
  for (const chain_step &s : steps) {
    if (s.op == "rms_norm") {
      double ss = 0;
      for (const interval &e : v)
        ss += e.pt * e.pt;
      const interval sum = f32_rounded(interval(ss), width / threads + 16);
      const interval mean =
          f32_rounded(increasing(sum, [&](double x) { return x / width; }));
      const interval scale = function_rounded(
          decreasing(f32_rounded(mean + interval(static_cast<float>(s.eps))),
                     [](double x) { return 1 / std::sqrt(x); }));
      for (int64_t i = 0; i < width; ++i) {
        interval e = f32_rounded(v[i] * scale);
        if (s.weight)
          e = f32_rounded(
              e * f32_rounded(interval(element(c.ops[s.side], i) + s.offset)));
        v[i] = round_row(e);
      }
      continue;
    }
    const operand &o = c.ops[s.side];
    // A [1] scalar, a [width] vector, or [tokens, width] rows.
    const int64_t count = elements(o);
    for (int64_t i = 0; i < width; ++i) {
      const interval side(element(o, count == 1       ? 0
                                     : count == width ? i
                                                      : t * width + i));
      v[i] = round_row(f32_rounded(s.op == "add" ? v[i] + side : v[i] * side));
    }
  }
}

check_result check_row_chain(kernel_case &c) {
  check_result r;
  const std::string &name = c.kernel;
  const kernel_spec &sp = *c.spec;
  const int64_t width = static_cast<int64_t>(sp.number(name, "width"));
  const int64_t threads = static_cast<int64_t>(sp.number(name, "threads"));
  std::vector<chain_step> steps;
  int next = 0; // the state, x, then each step's side input
  r.error = parse_chain(sp.text(name, "steps"), 2, &steps, &next);
  if (!r.error.empty())
    return r;
  if (static_cast<int>(c.ops.size()) != next + 1) {
    r.error = "the step has " + std::to_string(c.ops.size()) +
              " operands, the spec asks for " + std::to_string(next + 1);
    return r;
  }
  for (const operand &o : c.ops)
    if (&o != &c.ops[0] && o.dtype != SGC_ABI_DTYPE_BF16) {
      r.error = o.what + " is not bf16";
      return r;
    }
  const operand &x = c.ops[1], &out = c.ops.back();
  const int64_t n = c.tokens;
  // Token rows: first, last, the call's last token and the first past it.
  r.ctas = sample_blocks(
      c.step->grid[0], {static_cast<uint32_t>(n - 1), static_cast<uint32_t>(n)},
      c);

  set_step_state(c, c.opt.position - (n - 1), n);
  // A projection's output of spread 1 (the sides: fill_chain_sides).
  c.random->fill_bf16(x.bf16(), n * width, 1);
  fill_chain_sides(c, steps);
  std::memset(out.memory->data(), 0xFF, out.memory->bytes());

  const auto start = std::chrono::steady_clock::now();
  r.error = run_blocks(c, r.ctas, {static_cast<uint32_t>(c.ops.size() - 1)});
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!r.error.empty())
    return r;

  bool planted = false;
  for (uint32_t t : r.ctas) {
    if (t >= n)
      continue;
    std::vector<interval> v(width);
    for (int64_t i = 0; i < width; ++i)
      v[i] = interval(element(x, t * width + i));
    // The planted bug: the reference doubles the first row's largest input.
    if (c.opt.plant_bug && !planted) {
      planted = true;
      int64_t best = 0;
      for (int64_t i = 1; i < width; ++i)
        if (std::fabs(v[i].pt) > std::fabs(v[best].pt))
          best = i;
      v[best] = interval(2 * v[best].pt);
    }
    chain_row(c, steps, t, width, threads, v, SGC_ABI_DTYPE_BF16);
    for (int64_t i = 0; i < width; ++i)
      compare(element(out, t * width + i), v[i],
              "token " + std::to_string(t) + " column " + std::to_string(i),
              &r);
  }
  // Rows of tokens that did not run (or are past the call) unwritten.
  count_unwritten_rows(out, width, n, &r);
  return r;
}

} // namespace emu_sample
