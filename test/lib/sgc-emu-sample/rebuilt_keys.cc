/*
 * rebuilt_keys.cc - the keys an attention kernel reads (check.h key_rows).
 * On a V-only cache (issue 37) the kernel rebuilds key j from V's row j:
 * round_bf16(v · w_k) (a product of two bf16 values, exact in f32), then
 * HF's partial RoPE of that key at position j: inv_freq as HF computes it
 * (within 4 f32 ulps, as qknorm_check.cc allows), the angle's f32 product,
 * cos/sin rounded to bf16, each product and sum rounded to bf16. The
 * intervals carry every rounding that may fall on either side.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <cmath>

namespace emu_sample {

key_rows::key_rows(const kernel_case &c, const operand *weight)
    : weight_(weight) {
  const kernel_spec &s = *c.spec;
  d_ = static_cast<int64_t>(s.number(c.kernel, "head_dim"));
  if (!weight_)
    return;
  rotated_ = static_cast<int64_t>(s.number(c.kernel, "key_rotated"));
  basis_ = static_cast<int64_t>(s.number(c.kernel, "key_basis"));
  theta_ = s.number(c.kernel, "key_theta");
}

std::vector<interval> key_rows::at(const operand &row, int64_t base,
                                   int64_t pos) const {
  std::vector<interval> key(d_);
  for (int64_t i = 0; i < d_; ++i) {
    const double v = bf16_value(row.bf16()[base + i]);
    key[i] = weight_ ? interval(round_bf16(v * bf16_value(weight_->bf16()[i])))
                     : interval(v);
  }
  const int64_t half = d_ / 2;
  const interval p(static_cast<double>(pos));
  for (int64_t k = 0; k < rotated_; ++k) {
    const float e = static_cast<float>(2 * k) / static_cast<float>(basis_);
    const double f = 1 / std::pow(theta_, static_cast<double>(e));
    rotate_pair(f32_rounded(p * widen(interval(f), 4 * f32_unit * f)), key[k],
                key[k + half]);
  }
  return key;
}

} // namespace emu_sample
