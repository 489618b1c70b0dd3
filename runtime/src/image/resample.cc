/*
 * resample.cc - antialiased resizing as torch computes it for uint8 images
 * on the CPU (F.interpolate(..., antialias=True) on a uint8 tensor, which
 * torchvision's resize uses there; the algorithm follows Pillow's
 * Resample.c). The numbers have to be torch's exactly, so this is the same
 * computation, not just the same filter:
 *   - scale = in / out (double); support = (taps / 2) * max(scale, 1);
 *   - output i covers input [xmin, xmin + xsize) around center
 *     scale * (i + 0.5), with weights filter((j + xmin - center + 0.5) /
 *     max(scale, 1)) normalized to sum 1;
 *   - weights become int16 at the largest precision p < 22 with
 *     round(max weight * 2^(p+1)) < 2^15, rounding half away from zero;
 *   - a pass sums pixel * weight in int32 from 2^(p-1), shifts by p and
 *     clamps to [0, 255]; horizontal pass first, then vertical.
 */
#include "runtime/src/image/image.h"

#include <algorithm>
#include <cmath>

namespace sgc::runtime::image {
namespace {

double triangle(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

/// Keys' cubic with a = -0.5 (torch's antialiased bicubic, as PIL's).
double keys_cubic(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0)
    return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0)
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

struct taps {
  int ksize = 0;
  unsigned precision = 0;
  std::vector<int64_t> start, count;
  std::vector<int16_t> weights; ///< [out, ksize]
};

taps compute_taps(int64_t in, int64_t out, filter f) {
  const int interp = f == filter::bilinear ? 2 : 4;
  double (*fn)(double) = f == filter::bilinear ? triangle : keys_cubic;
  const double scale = double(in) / double(out);
  const double support = scale >= 1.0 ? (interp * 0.5) * scale : interp * 0.5;
  const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  taps t;
  t.ksize = int(std::ceil(support)) * 2 + 1;
  t.start.resize(size_t(out));
  t.count.resize(size_t(out));
  std::vector<double> w(size_t(out * t.ksize), 0.0);
  double wt_max = 0.0;
  for (int64_t i = 0; i < out; ++i) {
    const double center = scale * (double(i) + 0.5);
    int64_t xmin = std::max(int64_t(center - support + 0.5), int64_t(0));
    int64_t xsize = std::min(int64_t(center + support + 0.5), in) - xmin;
    xsize = std::clamp(xsize, int64_t(0), int64_t(t.ksize));
    double *wi = &w[size_t(i * t.ksize)];
    double total = 0.0;
    for (int64_t j = 0; j < xsize; ++j) {
      wi[j] = fn(((j + xmin) - center + 0.5) * invscale);
      total += wi[j];
    }
    if (total != 0.0)
      for (int64_t j = 0; j < xsize; ++j) {
        wi[j] /= total;
        wt_max = std::max(wt_max, wi[j]);
      }
    t.start[size_t(i)] = xmin;
    t.count[size_t(i)] = xsize;
  }
  unsigned p = 0;
  for (; p < 22; ++p)
    if (int(0.5 + wt_max * double(1 << (p + 1))) >= (1 << 15))
      break;
  t.precision = p;
  t.weights.resize(w.size());
  for (size_t k = 0; k < w.size(); ++k) {
    const double v = w[k] * double(1 << p);
    t.weights[k] = int16_t(v < 0 ? int(-0.5 + v) : int(0.5 + v));
  }
  return t;
}

uint8_t round_shift(int32_t sum, unsigned p) {
  const int32_t v = sum >> p; // arithmetic: floor, as _mm_srai_epi32
  return uint8_t(v < 0 ? 0 : v > 255 ? 255 : v);
}

/// One pass along x (|horizontal|) or y of a 3-channel HWC image.
rgb_image pass(const rgb_image &in, int64_t out_size, bool horizontal,
               filter f) {
  const int64_t in_size = horizontal ? in.width : in.height;
  const taps t = compute_taps(in_size, out_size, f);
  rgb_image out;
  out.width = horizontal ? int32_t(out_size) : in.width;
  out.height = horizontal ? in.height : int32_t(out_size);
  out.pixels.resize(size_t(out.width) * out.height * 3);
  const int32_t init = t.precision ? int32_t(1) << (t.precision - 1) : 0;
  const int64_t w = in.width;
  for (int64_t y = 0; y < out.height; ++y)
    for (int64_t x = 0; x < out.width; ++x) {
      const int64_t i = horizontal ? x : y;
      const int16_t *k = &t.weights[size_t(i * t.ksize)];
      const int64_t s0 = t.start[size_t(i)], n = t.count[size_t(i)];
      for (int c = 0; c < 3; ++c) {
        int32_t sum = init;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t sx = horizontal ? s0 + j : x,
                        sy = horizontal ? y : s0 + j;
          sum += int32_t(in.pixels[size_t((sy * w + sx) * 3 + c)]) * k[j];
        }
        out.pixels[size_t((y * out.width + x) * 3 + c)] =
            round_shift(sum, t.precision);
      }
    }
  return out;
}

} // namespace

rgb_image resize_rgb(const rgb_image &in, int32_t width, int32_t height,
                     filter f) {
  rgb_image cur = in;
  if (width != in.width)
    cur = pass(cur, width, /*horizontal=*/true, f);
  if (height != in.height)
    cur = pass(cur, height, /*horizontal=*/false, f);
  return cur;
}

} // namespace sgc::runtime::image
