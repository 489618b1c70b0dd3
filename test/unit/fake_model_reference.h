/*
 * fake_model_reference.h - the toy model of fake_model.c, computed
 * independently (no caches, no runtime) so tests can check the runtime's
 * outputs exactly. Compiled with -ffp-contract=off like the fake model.
 */
#ifndef SGC_TEST_UNIT_FAKE_MODEL_REFERENCE_H
#define SGC_TEST_UNIT_FAKE_MODEL_REFERENCE_H

#include <cstdint>
#include <cstring>
#include <vector>

namespace fake_model {

constexpr int64_t vocab = 16;
constexpr int64_t hidden = 8;
constexpr int64_t context = 64;
constexpr int64_t window = 4;
constexpr int64_t max_chunk = 8;
constexpr int32_t eos = 1;
constexpr int32_t stop = 15;
constexpr const char *embed_name = "language_model.model.embed_tokens.weight";
constexpr const char *norm_name = "language_model.model.norm.weight";
/// K and V, full layer (64 slots) + ring layer (4 slots), 8 floats each.
constexpr uint64_t kv_bytes = (64 + 4) * 8 * 4 * 2;

inline float bf16(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

struct weights {
  std::vector<uint16_t> embed; // [vocab, hidden] bf16 bits
  std::vector<float> norm;     // [hidden]
};

/// Deterministic test weights: bf16 values in about [-1, 1].
inline weights make_weights(uint32_t seed = 1) {
  weights w;
  uint32_t x = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < vocab * hidden; ++i) {
    x = x * 1664525u + 1013904223u;
    const float f =
        static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) /
        static_cast<float>(1 << 23);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    w.embed.push_back(static_cast<uint16_t>(bits >> 16)); // truncation is fine
  }
  for (int64_t d = 0; d < hidden; ++d)
    w.norm.push_back(0.1f * static_cast<float>(d) - 0.3f);
  return w;
}

/// Logits for every position of |tokens| (row-major [n, vocab]).
inline std::vector<float> logits(const weights &w,
                                 const std::vector<int32_t> &tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  std::vector<float> h(static_cast<size_t>(n * hidden));
  std::vector<float> out(static_cast<size_t>(n * vocab));
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t d = 0; d < hidden; ++d)
      h[p * hidden + d] =
          bf16(w.embed[tokens[p] * hidden + d]) * (1.0f + w.norm[d]);
    float u[hidden];
    for (int64_t d = 0; d < hidden; ++d) {
      float s = 0.0f, r = 0.0f;
      for (int64_t j = 0; j <= p; ++j)
        s += h[j * hidden + d];
      for (int64_t j = p - window + 1 < 0 ? 0 : p - window + 1; j <= p; ++j)
        r += h[j * hidden + d];
      u[d] = s + 0.25f * r + 0.001f * static_cast<float>(p);
    }
    for (int64_t v = 0; v < vocab; ++v) {
      float acc = 0.0f;
      for (int64_t d = 0; d < hidden; ++d)
        acc += bf16(w.embed[v * hidden + d]) * u[d];
      out[p * vocab + v] = acc;
    }
  }
  return out;
}

inline int32_t argmax(const float *row) {
  int32_t best = 0;
  for (int32_t v = 1; v < vocab; ++v)
    if (row[v] > row[best])
      best = v;
  return best;
}

/// Greedy generation as the runtime does it: up to |max_new| tokens,
/// stopping after eos or the stop token unless |ignore_eos|.
inline std::vector<int32_t> greedy(const weights &w,
                                   std::vector<int32_t> tokens, int64_t max_new,
                                   bool ignore_eos = false) {
  std::vector<int32_t> generated;
  for (int64_t i = 0; i < max_new; ++i) {
    const std::vector<float> l = logits(w, tokens);
    const int32_t next = argmax(l.data() + (tokens.size() - 1) * vocab);
    generated.push_back(next);
    if (!ignore_eos && (next == eos || next == stop))
      break;
    tokens.push_back(next);
  }
  return generated;
}

} // namespace fake_model

#endif // SGC_TEST_UNIT_FAKE_MODEL_REFERENCE_H
