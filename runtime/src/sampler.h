/*
 * sampler.h - picking the next token from a row of logits.
 */
#ifndef SGC_RUNTIME_SRC_SAMPLER_H
#define SGC_RUNTIME_SRC_SAMPLER_H

#include <cstdint>
#include <vector>

namespace sgc {
namespace runtime {

/// How the next token is chosen (see sgc_generate_options_t).
struct sampling {
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;
};

/// Greedy (temperature <= 0) or temperature / top-k / top-p / min-p
/// sampling with a seeded splitmix64 stream, so runs are reproducible; the
/// repetition penalty applies first, to both.
class sampler {
public:
  explicit sampler(const sampling &settings);
  sampler(float temperature, int32_t top_k, float top_p, uint64_t seed);

  /// The chosen token id in [0, vocab); |history| (the tokens so far) is
  /// what the repetition penalty looks at.
  int32_t sample(const float *logits, int64_t vocab,
                 const std::vector<int32_t> &history = {});

  /// Argmax; NaN never wins; ties go to the lowest id.
  static int32_t argmax(const float *logits, int64_t vocab);

private:
  double next_uniform();

  float temperature_;
  int32_t top_k_;
  float top_p_;
  float min_p_;
  float repetition_penalty_;
  uint64_t state_;
  std::vector<int32_t> ids_;
  std::vector<double> probs_;
  std::vector<float> penalized_;
};

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_SAMPLER_H
