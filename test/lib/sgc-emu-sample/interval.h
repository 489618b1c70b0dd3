/*
 * interval.h - closed intervals of doubles for the CPU references of
 * sgc-emu-sample. A kernel computes in f32 and rounds to bf16 at fixed
 * points; the reference carries, for every value, an interval that holds
 * whatever the kernel may compute there: exact sums in double widened by a
 * bound on the f32 rounding of the kernel's summation order, transcendental
 * functions widened by a bound on their error, and bf16 rounding applied to
 * both ends (round-to-nearest is monotone, so the kernel's rounded value
 * lies between the rounded ends). A kernel output outside its interval is a
 * bug, not rounding.
 */
#ifndef SGC_TEST_TARGET_CUDA_EMU_SAMPLE_INTERVAL_H
#define SGC_TEST_TARGET_CUDA_EMU_SAMPLE_INTERVAL_H

#include <algorithm>
#include <cmath>

namespace emu_sample {

/// f32's unit roundoff.
constexpr double f32_unit = 0x1p-24;
/// Relative error allowed to the kernel's exp, tanh and rsqrt (libm's expf
/// and 1/sqrtf are within 1-2 f32 ulps, MLIR's rational tanh within a few):
/// 256 f32 ulps, still 1/256 of a bf16 ulp.
constexpr double function_error = 0x1p-16;

/// [lo, hi] and |pt|, the reference's own value: the same operations and
/// roundings in double, without the widening (what is printed as "the
/// reference"; the interval is what is allowed).
struct interval {
  double lo = 0, hi = 0, pt = 0;
  interval() = default;
  explicit interval(double v) : lo(v), hi(v), pt(v) {}
  /// How far the interval reaches from its point.
  double radius() const { return std::max(hi - pt, pt - lo); }
  interval(double l, double h, double p) : lo(l), hi(h), pt(p) {}
  double magnitude() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

inline interval operator+(interval a, interval b) {
  return {a.lo + b.lo, a.hi + b.hi, a.pt + b.pt};
}
inline interval operator-(interval a, interval b) {
  return {a.lo - b.hi, a.hi - b.lo, a.pt - b.pt};
}
inline interval operator*(interval a, interval b) {
  const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4),
          a.pt * b.pt};
}

/// |a| widened by |e| on both sides.
inline interval widen(interval a, double e) {
  return {a.lo - e, a.hi + e, a.pt};
}
/// One f32 operation's rounding (or |n| of them in a row, nu/(1-nu)).
inline interval f32_rounded(interval a, double n = 1) {
  const double g = n * f32_unit / (1 - n * f32_unit);
  return widen(a, g * a.magnitude());
}
/// A transcendental function's own error.
inline interval function_rounded(interval a) {
  return widen(a, function_error * a.magnitude() + 1e-30);
}

/// |v| rounded to the nearest bf16 (ties to even), straight from double.
inline double round_bf16(double v) {
  if (v == 0 || !std::isfinite(v))
    return v;
  int e = 0;
  const double m = std::frexp(v, &e); // |m| in [0.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8);
}
inline interval round_bf16(interval a) {
  return {round_bf16(a.lo), round_bf16(a.hi), round_bf16(a.pt)};
}

/// cos or sin (|f|) of an angle interval: Lipschitz 1 around the point, and
/// the f32 function's own error (none at angle 0, which is exact).
inline interval trig(interval a, double (*f)(double)) {
  const double p = f(a.pt);
  if (a.lo == 0 && a.hi == 0)
    return interval(p);
  const double r = std::max(a.hi - a.pt, a.pt - a.lo) + 0x1p-16;
  return {std::max(-1.0, p - r), std::min(1.0, p + r), p};
}

/// A product of bf16 values rounded to bf16 (RoPE's terms).
inline interval product(interval a, interval b) {
  return round_bf16(f32_rounded(a * b));
}

/// HF's rotate_half RoPE of the bf16 pair (lo, hi) at the f32 `angle`: cos
/// and sin rounded to bf16, each product and each sum rounded to bf16.
inline void rotate_pair(interval angle, interval &lo, interval &hi) {
  const interval cs =
      round_bf16(trig(angle, [](double v) { return std::cos(v); }));
  const interval sn =
      round_bf16(trig(angle, [](double v) { return std::sin(v); }));
  const interval x = lo, y = hi;
  lo = round_bf16(f32_rounded(product(x, cs) - product(y, sn)));
  hi = round_bf16(f32_rounded(product(y, cs) + product(x, sn)));
}

/// Monotone increasing |f| on an interval.
template <class F> interval increasing(interval a, F f) {
  return {f(a.lo), f(a.hi), f(a.pt)};
}
/// Monotone decreasing |f| on an interval.
template <class F> interval decreasing(interval a, F f) {
  return {f(a.hi), f(a.lo), f(a.pt)};
}

} // namespace emu_sample

#endif // SGC_TEST_TARGET_CUDA_EMU_SAMPLE_INTERVAL_H
