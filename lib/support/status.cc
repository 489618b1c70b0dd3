/*
 * status.cc - status formatting helpers.
 */
#include "lib/support/status.h"

#include "lib/support/utf8.h"

#include <cstdio>

namespace sgc {

const char *status_code_name(status_code code) {
  switch (code) {
  case status_code::ok:
    return "ok";
  case status_code::bad_input:
    return "bad input";
  case status_code::usage:
    return "usage";
  case status_code::mismatch:
    return "mismatch";
  case status_code::device_unavailable:
    return "device unavailable";
  case status_code::internal:
    return "internal";
  }
  return "unknown";
}

std::string status::to_string() const {
  if (ok())
    return "ok";
  std::string out = "error: " + message_ + "\n";
  for (const std::string &n : notes_)
    out += "note: " + n + "\n";
  return out;
}

std::string quote(const std::string &text) {
  return "'" + escape_for_message(text) + "'";
}

std::string shape_string(const int64_t *dims, size_t rank) {
  std::string out = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

std::string shape_string(const std::vector<int64_t> &shape) {
  return shape_string(shape.data(), shape.size());
}

} // namespace sgc
