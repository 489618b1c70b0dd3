// options.h - sgc-serve's command line.
#ifndef SGC_TOOLS_SGC_SERVE_OPTIONS_H
#define SGC_TOOLS_SGC_SERVE_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

namespace sgc::serve {

struct options {
  std::string model_path;
  std::string weights_path;
  std::string tokenizer_path; // empty: the weights directory's
  std::string host = "127.0.0.1";
  int port = 8080;
  /// Sequences decoded together (the session's sequence slots).
  int parallel = 1;
  int64_t max_context = 0;
  int threads = 0;
  std::string api_key;
  std::string alias;
  /// Requests that may wait for a slot; one more is answered 503.
  int max_queue = 64;
  /// Seconds a connection may take to send a request or to take a
  /// response's bytes.
  int timeout_s = 600;
  /// SIGTERM: seconds running requests get to finish.
  int drain_s = 30;
  size_t max_body_bytes = 8u << 20;
  /// Largest image (width x height) a request may send.
  uint64_t max_image_pixels = 16u << 20;
  std::vector<std::string> cors_origins;
  bool verbose = false;
};

/// Parses argv; -1 when the server should start, else the exit code (the
/// message printed: --help 0, a usage error 2).
int parse_options(int argc, char **argv, options *out);

} // namespace sgc::serve

#endif // SGC_TOOLS_SGC_SERVE_OPTIONS_H
