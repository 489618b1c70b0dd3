// options.cc - sgc-serve's flags: --name VALUE or --name=VALUE.
#include "tools/sgc-serve/options.h"

#include <sgc/runtime/status.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace sgc::serve {
namespace {

const char usage[] =
    "usage: sgc-serve MODEL.so --weights PATH [options]\n"
    "\n"
    "An OpenAI-compatible HTTP server for a compiled model:\n"
    "POST /v1/chat/completions, /v1/completions, /tokenize, /detokenize;\n"
    "GET /v1/models, /health, /metrics.\n"
    "\n"
    "  --weights PATH          safetensors file or checkpoint directory\n"
    "  --tokenizer PATH        tokenizer (default: the weights directory's)\n"
    "  --host ADDR             address to listen on (default 127.0.0.1)\n"
    "  --port N                port (default 8080; 0 picks a free one)\n"
    "  --parallel S            sequences decoded together (default 1)\n"
    "  --max-context N         positions per sequence (default: the model's)\n"
    "  --threads N             CPU threads (default: all)\n"
    "  --api-key KEY           require 'Authorization: Bearer KEY' (not on\n"
    "                          /health and /metrics)\n"
    "  --alias NAME            the model's id in the API (default: the .so's\n"
    "                          file name without .so)\n"
    "  --max-queue N           requests that may wait for a slot (default 64;\n"
    "                          more get 503 with Retry-After)\n"
    "  --timeout S             seconds a client may take to send a request or\n"
    "                          take a response (default 600)\n"
    "  --drain-timeout S       on SIGTERM, seconds running requests get to\n"
    "                          finish (default 30)\n"
    "  --max-body-bytes N      largest request body (default 8388608)\n"
    "  --max-image-pixels N    largest image, width x height (default\n"
    "                          16777216)\n"
    "  --cors-origins LIST     comma-separated origins allowed by CORS, or *\n"
    "                          (default: none, CORS off)\n"
    "  --verbose               log what the checkpoint's files decide\n";

int usage_error(const std::string &message) {
  std::fprintf(stderr, "sgc-serve: error: %s\nrun 'sgc-serve --help' for "
                       "the options\n",
               message.c_str());
  return SGC_STATUS_USAGE;
}

/// A whole decimal integer in [lo, hi].
bool parse_int(const std::string &text, long long lo, long long hi,
               long long *out) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

std::vector<std::string> split_commas(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start)
      out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

} // namespace

int parse_options(int argc, char **argv, options *o) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (arg == "--verbose") {
      o->verbose = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      positional.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return usage_error(arg + " needs a value");
    }
    long long n = 0;
    const auto integer = [&](long long lo, long long hi) {
      return parse_int(value, lo, hi, &n);
    };
    const auto range = [&](long long lo, long long hi) {
      return usage_error(arg + ": '" + value + "' is not an integer in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
    };
    if (arg == "--weights") {
      o->weights_path = value;
    } else if (arg == "--tokenizer") {
      o->tokenizer_path = value;
    } else if (arg == "--host") {
      o->host = value;
    } else if (arg == "--port") {
      if (!integer(0, 65535))
        return range(0, 65535);
      o->port = static_cast<int>(n);
    } else if (arg == "--parallel") {
      if (!integer(1, 256))
        return range(1, 256);
      o->parallel = static_cast<int>(n);
    } else if (arg == "--max-context") {
      if (!integer(1, std::numeric_limits<int32_t>::max()))
        return range(1, std::numeric_limits<int32_t>::max());
      o->max_context = n;
    } else if (arg == "--threads") {
      if (!integer(1, 1024))
        return range(1, 1024);
      o->threads = static_cast<int>(n);
    } else if (arg == "--api-key") {
      if (value.empty())
        return usage_error("--api-key must not be empty");
      o->api_key = value;
    } else if (arg == "--alias") {
      if (value.empty())
        return usage_error("--alias must not be empty");
      o->alias = value;
    } else if (arg == "--max-queue") {
      if (!integer(0, 100000))
        return range(0, 100000);
      o->max_queue = static_cast<int>(n);
    } else if (arg == "--timeout") {
      if (!integer(1, 86400))
        return range(1, 86400);
      o->timeout_s = static_cast<int>(n);
    } else if (arg == "--drain-timeout") {
      if (!integer(0, 86400))
        return range(0, 86400);
      o->drain_s = static_cast<int>(n);
    } else if (arg == "--max-body-bytes") {
      if (!integer(1024, 1ll << 32))
        return range(1024, 1ll << 32);
      o->max_body_bytes = static_cast<size_t>(n);
    } else if (arg == "--max-image-pixels") {
      if (!integer(1, 89478485))
        return range(1, 89478485);
      o->max_image_pixels = static_cast<uint64_t>(n);
    } else if (arg == "--cors-origins") {
      o->cors_origins = split_commas(value);
    } else {
      return usage_error("unknown option " + arg);
    }
  }
  if (positional.size() != 1)
    return usage_error(positional.empty() ? "no model: give MODEL.so"
                                          : "one model only: '" +
                                                positional[1] + "'");
  o->model_path = positional[0];
  if (o->weights_path.empty())
    return usage_error("no weights: give --weights PATH");
  return -1;
}

} // namespace sgc::serve
