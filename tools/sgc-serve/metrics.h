// metrics.h - what /metrics reports, in Prometheus' text format: requests
// running and waiting, tokens, latency histograms, KV slots in use.
#ifndef SGC_TOOLS_SGC_SERVE_METRICS_H
#define SGC_TOOLS_SGC_SERVE_METRICS_H

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sgc::serve {

/// A cumulative histogram over fixed bucket bounds (seconds).
class histogram {
public:
  explicit histogram(std::vector<double> bounds);
  void observe(double value);
  /// NAME_bucket{le="..."} lines, NAME_sum and NAME_count.
  void write(std::string &out, const std::string &name) const;

private:
  mutable std::mutex mu_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_; // per bucket, not cumulative
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct metrics {
  metrics();

  std::atomic<int64_t> running{0}, waiting{0};
  std::atomic<int64_t> prompt_tokens{0}, generation_tokens{0};
  std::atomic<int64_t> slots_total{0};
  histogram time_to_first_token, time_per_output_token, e2e_latency;

  /// Counts a finished HTTP request by its status code.
  void count_response(int status);
  /// The whole exposition (names prefixed sgc:).
  std::string render() const;

private:
  mutable std::mutex mu_;
  std::map<int, uint64_t> responses_;
};

} // namespace sgc::serve

#endif // SGC_TOOLS_SGC_SERVE_METRICS_H
