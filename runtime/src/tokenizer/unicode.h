/*
 * unicode.h - the few Unicode facts the tokenizers need: stepping through
 * UTF-8, White_Space (for added tokens' lstrip/rstrip, as the Rust regex
 * \s), and an approximation of \w (for single_word), and turning bytes into
 * UTF-8 with U+FFFD for what is not.
 */
#ifndef SGC_RUNTIME_TOKENIZER_UNICODE_H
#define SGC_RUNTIME_TOKENIZER_UNICODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sgc::runtime::unicode {

/// Length of the UTF-8 sequence starting with |lead| (1 for bytes that do
/// not start one). |text| is assumed valid where it matters.
size_t sequence_length(unsigned char lead);
/// The code point at |pos| of valid UTF-8 |text|; |*len| its byte length.
char32_t decode_at(std::string_view text, size_t pos, size_t *len);
/// The code point ending at |end| (exclusive) of valid UTF-8 |text|.
char32_t decode_before(std::string_view text, size_t end, size_t *len);

/// The Unicode White_Space property (what \s matches).
bool is_space(char32_t c);
/// \w: letters, marks, digits, connector punctuation. ASCII is exact;
/// above ASCII everything counts as a word character except White_Space,
/// punctuation and symbol blocks, and emoji (documented approximation).
bool is_word(char32_t c);

/// True when |text| is exactly the UTF-8 of some code points (no partial
/// sequence, no surrogate, nothing overlong).
bool valid(std::string_view text);

} // namespace sgc::runtime::unicode

#endif // SGC_RUNTIME_TOKENIZER_UNICODE_H
