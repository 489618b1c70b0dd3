/*
 * status.h - the error type shared by lib/ and runtime/ internals.
 *
 * A status is a code plus a one-line message and optional note lines. The
 * codes are the project's exit codes (ARCHITECTURE.md section 4), so a tool
 * can return status.code() from main. An ok status is empty and cheap to
 * copy. Nothing here throws except std::bad_alloc.
 */
#ifndef SGC_LIB_SUPPORT_STATUS_H
#define SGC_LIB_SUPPORT_STATUS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sgc {

/// Error classes; the values are the exit codes of `sgc` and `sgc-run`.
enum class status_code : int {
  ok = 0,
  bad_input = 1,          ///< a file is malformed or unreadable
  usage = 2,              ///< invalid arguments or options
  mismatch = 3,           ///< model, checkpoint or ABI do not fit together
  device_unavailable = 4, ///< the requested device is absent or unusable
  internal = 5,           ///< a bug or an unexpected system failure
};

/// Returns a short name for |code| ("bad input", "mismatch", ...).
const char *status_code_name(status_code code);

class [[nodiscard]] status {
public:
  /// An ok status.
  status() = default;

  static status error(status_code code, std::string message) {
    status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return code_ == status_code::ok; }
  status_code code() const { return code_; }
  /// One line, no trailing newline, lowercase start (LLVM convention).
  const std::string &message() const { return message_; }
  /// Further detail lines, printed as `note: ...`.
  const std::vector<std::string> &notes() const { return notes_; }

  /// Appends a note line.
  status &note(std::string text) & {
    notes_.push_back(std::move(text));
    return *this;
  }
  status &&note(std::string text) && {
    notes_.push_back(std::move(text));
    return std::move(*this);
  }

  /// Prefixes the message with |context| + ": ".
  status &&with_context(const std::string &context) && {
    message_ = context + ": " + message_;
    return std::move(*this);
  }

  /// "error: message\nnote: ...\n" form, for logs and test failures.
  std::string to_string() const;

private:
  status_code code_ = status_code::ok;
  std::string message_;
  std::vector<std::string> notes_;
};

inline status bad_input_error(std::string message) {
  return status::error(status_code::bad_input, std::move(message));
}
inline status usage_error(std::string message) {
  return status::error(status_code::usage, std::move(message));
}
inline status mismatch_error(std::string message) {
  return status::error(status_code::mismatch, std::move(message));
}
inline status device_error(std::string message) {
  return status::error(status_code::device_unavailable, std::move(message));
}
inline status internal_error(std::string message) {
  return status::error(status_code::internal, std::move(message));
}

/// Quotes |text| for a message: 'text', with bytes that are not printable
/// ASCII or valid UTF-8 escaped as \xNN and quotes/backslashes escaped.
std::string quote(const std::string &text);

/// Formats a shape as "[a, b, c]".
std::string shape_string(const std::vector<int64_t> &shape);
std::string shape_string(const int64_t *dims, size_t rank);

} // namespace sgc

#endif // SGC_LIB_SUPPORT_STATUS_H
