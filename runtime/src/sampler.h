/*
 * sampler.h - picking the next token from a row of logits.
 */
#ifndef SGC_RUNTIME_SRC_SAMPLER_H
#define SGC_RUNTIME_SRC_SAMPLER_H

#include <cstdint>
#include <vector>

namespace sgc {
namespace runtime {

/// Greedy (temperature <= 0) or temperature / top-k / top-p sampling with a
/// seeded splitmix64 stream, so runs are reproducible.
class sampler {
public:
  sampler(float temperature, int32_t top_k, float top_p, uint64_t seed);

  /// The chosen token id in [0, vocab).
  int32_t sample(const float *logits, int64_t vocab);

  /// Argmax; NaN never wins; ties go to the lowest id.
  static int32_t argmax(const float *logits, int64_t vocab);

private:
  double next_uniform();

  float temperature_;
  int32_t top_k_;
  float top_p_;
  uint64_t state_;
  std::vector<int32_t> ids_;
  std::vector<double> probs_;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_SAMPLER_H
