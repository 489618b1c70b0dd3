/*
 * unicode.cc - see unicode.h.
 */
#include "runtime/src/tokenizer/unicode.h"

#include "lib/support/utf8.h"

namespace sgc::runtime::unicode {

size_t sequence_length(unsigned char lead) {
  if (lead < 0x80)
    return 1;
  if ((lead >> 5) == 0x6)
    return 2;
  if ((lead >> 4) == 0xE)
    return 3;
  if ((lead >> 3) == 0x1E)
    return 4;
  return 1;
}

char32_t decode_at(std::string_view text, size_t pos, size_t *len) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  size_t n = sequence_length(lead);
  if (pos + n > text.size())
    n = 1;
  *len = n;
  if (n == 1)
    return lead;
  char32_t c = lead & (0x7F >> n);
  for (size_t i = 1; i < n; ++i)
    c = (c << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  return c;
}

char32_t decode_before(std::string_view text, size_t end, size_t *len) {
  size_t start = end - 1;
  while (start > 0 && end - start < 4 &&
         (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
    --start;
  return decode_at(text, start, len);
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_word(char32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '_';
  if (is_space(c))
    return false;
  // Latin-1 punctuation and symbols; general punctuation, arrows, math,
  // technical, box drawing, dingbats...; CJK punctuation; fullwidth ASCII
  // punctuation; emoji and pictographs.
  if ((c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB5 && c != 0xBA) ||
      c == 0xD7 || c == 0xF7 || (c >= 0x2010 && c <= 0x2BFF) ||
      (c >= 0x3001 && c <= 0x3004) || (c >= 0x3008 && c <= 0x3020) ||
      (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
      (c >= 0x1F000 && c <= 0x1FAFF) || (c >= 0xFE00 && c <= 0xFE0F))
    return false;
  return true;
}

bool valid(std::string_view text) { return utf8_valid(text); }

} // namespace sgc::runtime::unicode
