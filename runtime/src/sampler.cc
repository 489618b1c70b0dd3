/*
 * sampler.cc - greedy and stochastic sampling.
 */
#include "runtime/src/sampler.h"

#include "lib/support/hash.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sgc {
namespace runtime {

sampler::sampler(float temperature, int32_t top_k, float top_p, uint64_t seed)
    : temperature_(temperature), top_k_(top_k), top_p_(top_p), state_(seed) {}

int32_t sampler::argmax(const float *logits, int64_t vocab) {
  int32_t best = 0;
  bool have = false;
  for (int64_t i = 0; i < vocab; ++i) {
    if (std::isnan(logits[i]))
      continue;
    if (!have || logits[i] > logits[best]) {
      best = static_cast<int32_t>(i);
      have = true;
    }
  }
  return best;
}

double sampler::next_uniform() {
  state_ += 0x9E3779B97F4A7C15ull;
  return static_cast<double>(splitmix64_mix(state_) >> 11) * 0x1.0p-53;
}

int32_t sampler::sample(const float *logits, int64_t vocab) {
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
