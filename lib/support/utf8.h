/*
 * utf8.h - UTF-8 validation and safe quoting of untrusted names.
 */
#ifndef SGC_LIB_SUPPORT_UTF8_H
#define SGC_LIB_SUPPORT_UTF8_H

#include <cstddef>
#include <string>
#include <string_view>

namespace sgc {

/// Returns true when |text| is well-formed UTF-8 (no overlong forms, no
/// surrogates, nothing above U+10FFFF). On failure stores the offset of the
/// first bad byte in |bad_offset| when it is not null.
bool utf8_valid(std::string_view text, size_t *bad_offset = nullptr);

/// Copies |text| for use in a message: valid UTF-8 and printable ASCII stay
/// as they are; control bytes, invalid bytes, quotes and backslashes become
/// escapes (\xNN, \', \\). Output longer than |max_bytes| is cut with "...".
std::string escape_for_message(std::string_view text, size_t max_bytes = 200);

} // namespace sgc

#endif // SGC_LIB_SUPPORT_UTF8_H
