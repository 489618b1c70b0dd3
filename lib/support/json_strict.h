/*
 * json_strict.h - parse untrusted JSON without exceptions, rejecting
 * duplicate object keys (nlohmann/json keeps the last one silently).
 */
#ifndef SGC_LIB_SUPPORT_JSON_STRICT_H
#define SGC_LIB_SUPPORT_JSON_STRICT_H

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace sgc {

struct json_parse_error {
  /// Human-readable reason, e.g. "duplicate key 'a'" or nlohmann's text.
  std::string message;
  /// Byte offset into the text where the problem was found.
  size_t offset = 0;
  /// For duplicate keys: the key, and the JSON pointer of its object.
  std::string duplicate_key;
  std::string object_path;
};

/// Parses |text| as one JSON value into |out|. Rejects duplicate keys at any
/// depth and nesting deeper than |max_depth|. Returns false and fills |error|
/// on failure. Never throws except std::bad_alloc.
bool parse_json_strict(std::string_view text, nlohmann::json *out,
                       json_parse_error *error, size_t max_depth = 64);

} // namespace sgc

#endif // SGC_LIB_SUPPORT_JSON_STRICT_H
