/*
 * json_cursor.cc - see json_cursor.h.
 */
#include "runtime/src/tokenizer/json_cursor.h"

#include "lib/support/json_strict.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sgc::runtime {

namespace {
const nlohmann::json &null_json() {
  static const nlohmann::json null_value;
  return null_value;
}
} // namespace

status read_json_file(const std::string &path, nlohmann::json *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return bad_input_error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad())
    return bad_input_error(path + ": cannot read");
  const std::string text = buf.str();
  json_parse_error err;
  if (!parse_json_strict(text, out, &err)) {
    if (!err.duplicate_key.empty())
      return bad_input_error(path + ": " +
                             (err.object_path.empty() ? "/" : err.object_path) +
                             ": duplicate key " + quote(err.duplicate_key));
    return bad_input_error(path + ": not valid JSON: " + err.message);
  }
  return {};
}

bool json_cursor::has(const char *key) const {
  return value_->is_object() && value_->contains(key);
}

json_cursor json_cursor::at(const char *key) const {
  const std::string sub = path_ + "." + key;
  if (!value_->is_object())
    return json_cursor(file_, &null_json(), sub);
  auto it = value_->find(key);
  return json_cursor(file_, it == value_->end() ? &null_json() : &*it, sub);
}

json_cursor json_cursor::at(size_t index) const {
  const std::string sub = path_ + "[" + std::to_string(index) + "]";
  if (!value_->is_array() || index >= value_->size())
    return json_cursor(file_, &null_json(), sub);
  return json_cursor(file_, &(*value_)[index], sub);
}

status json_cursor::error(const std::string &message) const {
  return bad_input_error(*file_ + ": " + path_ + ": " + message);
}

status json_cursor::expect_object() const {
  return value_->is_object() ? status() : error("expected an object");
}

status json_cursor::expect_array() const {
  return value_->is_array() ? status() : error("expected an array");
}

status json_cursor::get(std::string *out) const {
  if (!value_->is_string())
    return error("expected a string");
  *out = value_->get<std::string>();
  return {};
}

status json_cursor::get(bool *out) const {
  if (!value_->is_boolean())
    return error("expected true or false");
  *out = value_->get<bool>();
  return {};
}

status json_cursor::get(int64_t *out) const {
  if (value_->is_number_unsigned()) {
    const uint64_t v = value_->get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX))
      return error("integer out of range");
    *out = static_cast<int64_t>(v);
    return {};
  }
  if (!value_->is_number_integer())
    return error("expected an integer");
  *out = value_->get<int64_t>();
  return {};
}

status json_cursor::get_optional(const char *key, std::string *out) const {
  json_cursor c = at(key);
  return c.is_null() ? status() : c.get(out);
}

status json_cursor::get_optional(const char *key, bool *out) const {
  json_cursor c = at(key);
  return c.is_null() ? status() : c.get(out);
}

status json_cursor::get_required(const char *key, std::string *out) const {
  if (!has(key))
    return at(key).error("missing");
  return at(key).get(out);
}

status json_cursor::get_required(const char *key, int64_t *out) const {
  if (!has(key))
    return at(key).error("missing");
  return at(key).get(out);
}

} // namespace sgc::runtime
