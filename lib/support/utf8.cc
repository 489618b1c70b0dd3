/*
 * utf8.cc - UTF-8 validation (RFC 3629) and escaping for messages.
 */
#include "lib/support/utf8.h"

#include <cstdint>
#include <cstdio>

namespace sgc {

namespace {

/// Length of the well-formed UTF-8 sequence at |s|[|i|], or 0 if there is
/// none.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) -> uint8_t { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  const size_t left = s.size() - i;
  if (b0 < 0x80)
    return 1;
  auto cont = [&](size_t k) { return (byte(k) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF)
    return left >= 2 && cont(i + 1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (left < 3 || !cont(i + 1) || !cont(i + 2))
      return 0;
    const uint8_t b1 = byte(i + 1);
    if (b0 == 0xE0 && b1 < 0xA0) // overlong
      return 0;
    if (b0 == 0xED && b1 >= 0xA0) // surrogates
      return 0;
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (left < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3))
      return 0;
    const uint8_t b1 = byte(i + 1);
    if (b0 == 0xF0 && b1 < 0x90) // overlong
      return 0;
    if (b0 == 0xF4 && b1 >= 0x90) // above U+10FFFF
      return 0;
    return 4;
  }
  return 0;
}

} // namespace

bool utf8_valid(std::string_view text, size_t *bad_offset) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      if (bad_offset)
        *bad_offset = i;
      return false;
    }
    i += n;
  }
  return true;
}

std::string escape_for_message(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    const uint8_t b = static_cast<uint8_t>(text[i]);
    const size_t n = utf8_sequence_length(text, i);
    if (n > 1) {
      out.append(text.data() + i, n);
      i += n;
      continue;
    }
    if (n == 1 && b >= 0x20 && b < 0x7F) {
      if (b == '\'' || b == '\\')
        out += '\\';
      out += static_cast<char>(b);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", b);
      out += buf;
    }
    ++i;
  }
  return out;
}

} // namespace sgc
