/*
 * sampler.cc - greedy and stochastic sampling.
 */
#include "runtime/src/sampler.h"

#include "lib/support/hash.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sgc {
namespace runtime {

sampler::sampler(const sampling &s)
    : temperature_(s.temperature), top_k_(s.top_k), top_p_(s.top_p),
      min_p_(s.min_p), repetition_penalty_(s.repetition_penalty),
      state_(s.seed) {}

sampler::sampler(float temperature, int32_t top_k, float top_p, uint64_t seed)
    : sampler(sampling{temperature, top_k, top_p, 0.0f, 1.0f, seed}) {}

int32_t sampler::argmax(const float *logits, int64_t vocab) {
  // Two passes in blocks of 16 that the compiler turns into vector code (the
  // one-pass loop carrying the best index did not: 0.3 ms, 1.2 % of a B1
  // decode step): the largest value that is not NaN (`v > m ? v : m` keeps m
  // for a NaN v, which is maxps), then the first index holding it.
  constexpr int64_t kBlock = 16;
  float lanes[kBlock];
  std::fill(lanes, lanes + kBlock, -std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + kBlock <= vocab; i += kBlock)
    for (int64_t l = 0; l < kBlock; ++l)
      lanes[l] = logits[i + l] > lanes[l] ? logits[i + l] : lanes[l];
  float best = -std::numeric_limits<float>::infinity();
  for (float v : lanes)
    best = v > best ? v : best;
  for (; i < vocab; ++i)
    best = logits[i] > best ? logits[i] : best;
  for (i = 0; i < vocab; i += kBlock) {
    const int64_t end = std::min(vocab, i + kBlock);
    bool found = false;
    for (int64_t j = i; j < end; ++j)
      found |= logits[j] == best;
    if (!found)
      continue;
    for (int64_t j = i; j < end; ++j)
      if (logits[j] == best)
        return static_cast<int32_t>(j);
  }
  return 0; // every logit NaN
}

double sampler::next_uniform() {
  state_ += 0x9E3779B97F4A7C15ull;
  return static_cast<double>(splitmix64_mix(state_) >> 11) * 0x1.0p-53;
}

int32_t sampler::sample(const float *logits, int64_t vocab,
                        const std::vector<int32_t> &history) {
  if (repetition_penalty_ != 1.0f && !history.empty()) {
    // Once per distinct token, whatever its count (as Hugging Face does).
    penalized_.assign(logits, logits + vocab);
    for (int32_t t : history)
      if (t >= 0 && t < vocab) {
        const float original = logits[t];
        penalized_[t] = original > 0.0f ? original / repetition_penalty_
                                        : original * repetition_penalty_;
      }
    logits = penalized_.data();
  }
  if (!(temperature_ > 0.0f))
    return argmax(logits, vocab);

  ids_.clear();
  for (int64_t i = 0; i < vocab; ++i)
    if (!std::isnan(logits[i]))
      ids_.push_back(static_cast<int32_t>(i));
  if (ids_.empty())
    return 0;
  auto by_logit = [logits](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  size_t keep = ids_.size();
  if (top_k_ > 0 && static_cast<size_t>(top_k_) < keep)
    keep = static_cast<size_t>(top_k_);
  const bool need_order = keep < ids_.size() || top_p_ < 1.0f;
  if (need_order) {
    std::partial_sort(ids_.begin(), ids_.begin() + static_cast<long>(keep),
                      ids_.end(), by_logit);
    ids_.resize(keep);
  }

  const double max_logit =
      logits[*std::min_element(ids_.begin(), ids_.end(), by_logit)];
  if (!std::isfinite(max_logit))
    return argmax(logits, vocab);
  probs_.resize(ids_.size());
  double sum = 0.0;
  for (size_t i = 0; i < ids_.size(); ++i) {
    probs_[i] = std::exp((logits[ids_[i]] - max_logit) / temperature_);
    sum += probs_[i];
  }
  size_t n = ids_.size();
  if (top_p_ < 1.0f) {
    double cumulative = 0.0;
    for (size_t i = 0; i < ids_.size(); ++i) {
      cumulative += probs_[i] / sum;
      if (cumulative >= top_p_) {
        n = i + 1;
        break;
      }
    }
    sum = std::accumulate(probs_.begin(), probs_.begin() + static_cast<long>(n),
                          0.0);
  }
  if (min_p_ > 0.0f) {
    // Relative to the most likely token left; order does not matter.
    const double largest = *std::max_element(
        probs_.begin(), probs_.begin() + static_cast<long>(n));
    size_t kept = 0;
    double kept_sum = 0.0;
    for (size_t i = 0; i < n; ++i)
      if (probs_[i] >= min_p_ * largest) {
        ids_[kept] = ids_[i];
        probs_[kept] = probs_[i];
        kept_sum += probs_[i];
        ++kept;
      }
    n = kept;
    sum = kept_sum;
  }
  const double u = next_uniform() * sum;
  double acc = 0.0;
  for (size_t i = 0; i < n; ++i) {
    acc += probs_[i];
    if (u < acc)
      return ids_[i];
  }
  return ids_[n - 1];
}

} // namespace runtime
} // namespace sgc
