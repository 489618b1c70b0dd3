// metrics.cc - counters and histograms, rendered for Prometheus.
#include "tools/sgc-serve/metrics.h"

#include <cstdio>

namespace sgc::serve {

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void gauge(std::string &out, const std::string &name, const char *help,
           const char *type, double value) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type +
         "\n" + name + " " + number(value) + "\n";
}

} // namespace

histogram::histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void histogram::observe(double value) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t b = 0;
  while (b < bounds_.size() && value > bounds_[b])
    ++b;
  ++counts_[b];
  sum_ += value;
  ++count_;
}

void histogram::write(std::string &out, const std::string &name) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t cumulative = 0;
  for (size_t b = 0; b < bounds_.size(); ++b) {
    cumulative += counts_[b];
    out += name + "_bucket{le=\"" + number(bounds_[b]) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
}

metrics::metrics()
    : time_to_first_token({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                           0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                           40.0, 80.0}),
      time_per_output_token({0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,
                             0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}),
      e2e_latency({0.01, 0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0,
                   15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0}) {}

void metrics::count_response(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++responses_[status];
}

std::string metrics::render() const {
  std::string out;
  gauge(out, "sgc:num_requests_running",
        "Requests holding a sequence slot.", "gauge", running.load());
  gauge(out, "sgc:num_requests_waiting",
        "Requests waiting for a sequence slot.", "gauge", waiting.load());
  gauge(out, "sgc:kv_slots_used", "Sequence slots (KV caches) in use.",
        "gauge", running.load());
  gauge(out, "sgc:kv_slots_total", "Sequence slots (KV caches) held.",
        "gauge", slots_total.load());
  gauge(out, "sgc:prompt_tokens_total", "Prompt tokens prefilled.", "counter",
        prompt_tokens.load());
  gauge(out, "sgc:generation_tokens_total", "Tokens generated.", "counter",
        generation_tokens.load());
  const std::pair<const histogram *, const char *> hists[] = {
      {&time_to_first_token, "time_to_first_token_seconds"},
      {&time_per_output_token, "time_per_output_token_seconds"},
      {&e2e_latency, "e2e_request_latency_seconds"}};
  const char *helps[] = {"Seconds from arrival to the first token.",
                         "Seconds between a request's tokens.",
                         "Seconds from arrival to the last token."};
  for (size_t i = 0; i < 3; ++i) {
    const std::string name = std::string("sgc:") + hists[i].second;
    out += "# HELP " + name + " " + helps[i] + "\n# TYPE " + name +
           " histogram\n";
    hists[i].first->write(out, name);
  }
  out += "# HELP sgc:http_responses_total HTTP responses by status.\n"
         "# TYPE sgc:http_responses_total counter\n";
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto &[status, n] : responses_)
    out += "sgc:http_responses_total{status=\"" + std::to_string(status) +
           "\"} " + std::to_string(n) + "\n";
  return out;
}

} // namespace sgc::serve
