/*
 * json_cursor.h - typed reads from a parsed JSON file whose errors name the
 * file and the JSON path ("tokenizer.json: $.model.merges[3]: expected a
 * string"), for the tokenizer files.
 */
#ifndef SGC_RUNTIME_TOKENIZER_JSON_CURSOR_H
#define SGC_RUNTIME_TOKENIZER_JSON_CURSOR_H

#include "lib/support/status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace sgc::runtime {

/// Reads and parses |path| (duplicate keys refused); errors name the file
/// and the line and column (or the duplicate key's object).
status read_json_file(const std::string &path, nlohmann::json *out);

class json_cursor {
public:
  json_cursor(const std::string *file, const nlohmann::json *value,
              std::string path = "$")
      : file_(file), value_(value), path_(std::move(path)) {}

  const nlohmann::json &value() const { return *value_; }
  const std::string &path() const { return path_; }

  bool is_null() const { return value_->is_null(); }
  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }
  /// True when this is an object with |key| (whatever its value).
  bool has(const char *key) const;
  /// The member |key|; a null value when absent (check has() first when
  /// absence matters).
  json_cursor at(const char *key) const;
  json_cursor at(size_t index) const;
  size_t size() const { return value_->size(); }

  /// bad_input_error("FILE: PATH: |message|").
  status error(const std::string &message) const;
  /// "expected an object" unless it is one.
  status expect_object() const;
  status expect_array() const;
  status get(std::string *out) const;
  status get(bool *out) const;
  status get(int64_t *out) const;
  /// Member |key| when present and not null; |out| untouched otherwise.
  status get_optional(const char *key, std::string *out) const;
  status get_optional(const char *key, bool *out) const;
  /// A member that must be present.
  status get_required(const char *key, std::string *out) const;
  status get_required(const char *key, int64_t *out) const;

private:
  const std::string *file_;
  const nlohmann::json *value_;
  std::string path_;
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_JSON_CURSOR_H
