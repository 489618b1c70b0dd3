/*
 * json_strict.cc - a DOM-building SAX handler that refuses duplicate keys.
 */
#include "lib/support/json_strict.h"

#include "lib/support/utf8.h"

#include <vector>

namespace sgc {

namespace {

using json = nlohmann::json;

/// Builds a json DOM from SAX events, like nlohmann's own DOM parser, but
/// fails on a repeated key and on excessive depth.
class strict_dom_builder {
public:
  strict_dom_builder(json *root, json_parse_error *error, size_t max_depth)
      : root_(root), error_(error), max_depth_(max_depth) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t &) {
    return put(json(v));
  }
  bool string(json::string_t &v) { return put(json(std::move(v))); }
  bool binary(json::binary_t &v) { return put(json::binary(std::move(v))); }

  bool start_object(std::size_t) {
    json *obj = put_container(json::value_t::object);
    if (!obj)
      return false;
    stack_.push_back({obj, {}});
    return true;
  }

  bool key(json::string_t &k) {
    frame &top = stack_.back();
    if (top.value->contains(k)) {
      error_->message = "duplicate key '" + escape_for_message(k) + "'";
      error_->duplicate_key = k;
      error_->object_path = pointer();
      return false;
    }
    top.pending_key = std::move(k);
    return true;
  }

  bool end_object() {
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) {
    json *arr = put_container(json::value_t::array);
    if (!arr)
      return false;
    stack_.push_back({arr, {}});
    return true;
  }

  bool end_array() {
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) {
    error_->message = ex.what();
    error_->offset = position;
    return false;
  }

private:
  struct frame {
    json *value;
    std::string pending_key;
  };

  /// JSON pointer of the innermost open container.
  std::string pointer() const {
    std::string p;
    for (size_t i = 1; i < stack_.size(); ++i)
      p += "/" + escape_for_message(stack_[i - 1].pending_key);
    return p.empty() ? "/" : p;
  }

  /// Stores |v| where the parser is: the root, the next array element, or
  /// the value of the pending key. Returns the stored value.
  json *place(json &&v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    frame &top = stack_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(v));
      return &top.value->back();
    }
    json &slot = (*top.value)[top.pending_key];
    slot = std::move(v);
    return &slot;
  }

  bool put(json &&v) {
    place(std::move(v));
    return true;
  }

  json *put_container(json::value_t kind) {
    if (stack_.size() >= max_depth_) {
      error_->message = "nesting deeper than " + std::to_string(max_depth_);
      return nullptr;
    }
    return place(json(kind));
  }

  json *root_;
  json_parse_error *error_;
  size_t max_depth_;
  std::vector<frame> stack_;
};

} // namespace

bool parse_json_strict(std::string_view text, nlohmann::json *out,
                       json_parse_error *error, size_t max_depth) {
  json_parse_error local;
  json_parse_error *err = error ? error : &local;
  *err = json_parse_error();
  *out = json();
  strict_dom_builder builder(out, err, max_depth);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &builder,
                         json::input_format_t::json, /*strict=*/true);
  } catch (const nlohmann::json::exception &ex) {
    // Not expected with a SAX handler, but never let one escape.
    err->message = ex.what();
    ok = false;
  }
  if (!ok) {
    *out = json();
    if (err->message.empty())
      err->message = "invalid JSON";
  }
  return ok;
}

} // namespace sgc
