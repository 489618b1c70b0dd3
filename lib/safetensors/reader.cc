/*
 * reader.cc - validation of one safetensors image (header + data layout).
 */
#include "lib/safetensors/safetensors.h"

#include "lib/support/json_strict.h"
#include "lib/support/utf8.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace sgc {
namespace safetensors {

namespace {

using json = nlohmann::json;

uint64_t read_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

const char *json_kind(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::object:
    return "an object";
  case json::value_t::array:
    return "an array";
  case json::value_t::string:
    return "a string";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a number with a fraction or exponent";
  default:
    return "an unsupported value";
  }
}

/// Explains an invalid UTF-8 byte at |bad| in the header text: names the
/// JSON string (usually a tensor name) that holds it.
std::string describe_bad_utf8(std::string_view text, size_t bad) {
  bool in_string = false;
  size_t start = 0;
  for (size_t i = 0; i < bad; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
      start = i + 1;
    }
  }
  std::string out = "header is not valid UTF-8 (byte 0x";
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02X", static_cast<uint8_t>(text[bad]));
  out += buf;
  out += " at header offset " + std::to_string(bad) + ")";
  if (in_string) {
    size_t end = bad;
    while (end < text.size() && text[end] != '"')
      ++end;
    out += " in the name or string " +
           quote(std::string(text.substr(start, end - start)));
  }
  return out;
}

struct entry_error {
  std::string text;
};

/// Reads a non-negative integer; |what| names it in errors.
bool read_uint(const json &v, uint64_t *out, std::string *why) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    const int64_t s = v.get<int64_t>();
    if (s < 0) {
      *why = "is negative (" + std::to_string(s) + ")";
      return false;
    }
    *out = static_cast<uint64_t>(s);
    return true;
  }
  *why = std::string("is ") + json_kind(v) + ", not an integer";
  return false;
}

/// Validates one tensor entry. On error returns false and sets |why| (the
/// part after "tensor 'name': ").
bool parse_entry(const std::string &name, const json &v, uint64_t data_bytes,
                 tensor_info *t, std::string *why) {
  t->name = name;
  if (!v.is_object()) {
    *why = std::string("entry is ") + json_kind(v) + ", not an object";
    return false;
  }
  for (const auto &item : v.items()) {
    const std::string &k = item.key();
    if (k != "dtype" && k != "shape" && k != "data_offsets") {
      *why = "unknown field " + quote(k);
      return false;
    }
  }
  for (const char *k : {"dtype", "shape", "data_offsets"}) {
    if (!v.contains(k)) {
      *why = std::string("missing field '") + k + "'";
      return false;
    }
  }

  const json &dt = v["dtype"];
  if (!dt.is_string()) {
    *why = std::string("dtype is ") + json_kind(dt) + ", not a string";
    return false;
  }
  t->type = dtype_from_name(dt.get_ref<const std::string &>());
  if (t->type == dtype::invalid) {
    *why = "unknown dtype " + quote(dt.get_ref<const std::string &>());
    return false;
  }

  const json &shape = v["shape"];
  if (!shape.is_array()) {
    *why = std::string("shape is ") + json_kind(shape) + ", not an array";
    return false;
  }
  t->shape.clear();
  t->shape.reserve(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    uint64_t d = 0;
    std::string sub;
    if (!read_uint(shape[i], &d, &sub)) {
      *why = "dimension " + std::to_string(i) + " of the shape " + sub;
      if (shape[i].is_number_integer() && shape[i].get<int64_t>() < 0)
        *why = "negative dimension " + std::to_string(shape[i].get<int64_t>()) +
               " (dimension " + std::to_string(i) + ")";
      return false;
    }
    if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      *why = "dimension " + std::to_string(i) + " (" + std::to_string(d) +
             ") does not fit in int64";
      return false;
    }
    t->shape.push_back(static_cast<int64_t>(d));
  }

  const json &offs = v["data_offsets"];
  if (!offs.is_array() || offs.size() != 2) {
    *why = "data_offsets must be an array of two integers";
    return false;
  }
  std::string sub;
  if (!read_uint(offs[0], &t->begin, &sub)) {
    *why = "data_offsets begin " + sub;
    return false;
  }
  if (!read_uint(offs[1], &t->end, &sub)) {
    *why = "data_offsets end " + sub;
    return false;
  }
  const std::string offs_text =
      "[" + std::to_string(t->begin) + ", " + std::to_string(t->end) + "]";
  if (t->begin > t->end) {
    *why = "data_offsets " + offs_text + " are reversed (begin > end)";
    return false;
  }
  if (t->end > data_bytes) {
    *why = "data_offsets " + offs_text + " run past the data region (" +
           std::to_string(data_bytes) + " bytes)";
    return false;
  }

  uint64_t count = 0;
  if (!element_count(t->shape, &count)) {
    *why = "shape " + shape_string(t->shape) +
           " has more elements than fit in 64 bits";
    return false;
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, uint64_t{dtype_size(t->type)}, &bytes)) {
    *why = std::string(dtype_name(t->type)) + " x " + shape_string(t->shape) +
           " is more bytes than fit in 64 bits";
    return false;
  }
  if (bytes != t->end - t->begin) {
    *why = "data_offsets " + offs_text + " hold " +
           std::to_string(t->end - t->begin) + " bytes, but " +
           dtype_name(t->type) + " x " + shape_string(t->shape) + " needs " +
           std::to_string(bytes);
    return false;
  }
  return true;
}

std::string range_text(const tensor_info &t) {
  return "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")";
}

} // namespace

bool element_count(const std::vector<int64_t> &shape, uint64_t *out) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return false;
  }
  *out = n;
  return true;
}

const tensor_info *header::find(std::string_view name) const {
  auto it = std::lower_bound(
      tensors.begin(), tensors.end(), name,
      [](const tensor_info &t, std::string_view n) { return t.name < n; });
  if (it == tensors.end() || it->name != name)
    return nullptr;
  return &*it;
}

status parse(const uint8_t *data, uint64_t size, const std::string &label,
             header *out) {
  *out = header();
  const std::string where = quote(label);
  if (size < 8) {
    if (size == 0)
      return bad_input_error(where + ": file is empty, not a safetensors file");
    return bad_input_error(where + ": file is " + std::to_string(size) +
                           " bytes, too short for the 8-byte header length");
  }
  if (std::memcmp(data, "GGUF", 4) == 0)
    return bad_input_error(where + ": a GGUF file (llama.cpp's format), not "
                                   "safetensors; sgc reads safetensors "
                                   "checkpoints so far");
  const uint64_t n = read_le64(data);
  if (n > max_header_bytes)
    return bad_input_error(where + ": header length " + std::to_string(n) +
                           " exceeds the limit of " +
                           std::to_string(max_header_bytes) + " bytes");
  if (n > size - 8)
    return bad_input_error(where + ": header length " + std::to_string(n) +
                           " runs past the end of the file (" +
                           std::to_string(size) + " bytes)");
  const std::string_view text(reinterpret_cast<const char *>(data + 8),
                              static_cast<size_t>(n));
  size_t bad = 0;
  if (!utf8_valid(text, &bad))
    return bad_input_error(where + ": " + describe_bad_utf8(text, bad));

  json j;
  json_parse_error perr;
  if (!parse_json_strict(text, &j, &perr, /*max_depth=*/16)) {
    if (!perr.duplicate_key.empty()) {
      if (perr.object_path == "/")
        return bad_input_error(where + ": tensor " + quote(perr.duplicate_key) +
                               " appears more than once in the header");
      return bad_input_error(where + ": duplicate key " +
                             quote(perr.duplicate_key) + " in header object " +
                             quote(perr.object_path));
    }
    return bad_input_error(where +
                           ": header is not valid JSON: " + perr.message);
  }
  if (!j.is_object())
    return bad_input_error(where + ": header is " + json_kind(j) +
                           ", not a JSON object");
  if (text.empty() || text[0] != '{')
    return bad_input_error(where + ": header must start with '{'");

  out->header_bytes = n;
  out->data_offset = 8 + n;
  out->data_bytes = size - 8 - n;

  std::vector<tensor_info> tensors;
  tensors.reserve(j.size());
  for (const auto &item : j.items()) {
    const std::string &name = item.key();
    if (name == "__metadata__") {
      const json &m = item.value();
      if (!m.is_object())
        return bad_input_error(where + ": '__metadata__' is " + json_kind(m) +
                               ", not an object of strings");
      for (const auto &kv : m.items()) {
        if (!kv.value().is_string())
          return bad_input_error(where + ": '__metadata__' entry " +
                                 quote(kv.key()) + " is " +
                                 json_kind(kv.value()) + ", not a string");
        out->metadata[kv.key()] = kv.value().get<std::string>();
      }
      continue;
    }
    if (name.find('\0') != std::string::npos)
      return bad_input_error(where + ": tensor " + quote(name) +
                             ": name contains a NUL character");
    tensor_info t;
    std::string why;
    if (!parse_entry(name, item.value(), out->data_bytes, &t, &why))
      return bad_input_error(where + ": tensor " + quote(name) + ": " + why);
    tensors.push_back(std::move(t));
  }

  // The tensors must tile the data region exactly.
  std::vector<const tensor_info *> by_offset;
  by_offset.reserve(tensors.size());
  for (const tensor_info &t : tensors)
    by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const tensor_info *a, const tensor_info *b) {
              if (a->begin != b->begin)
                return a->begin < b->begin;
              if (a->end != b->end)
                return a->end < b->end;
              return a->name < b->name;
            });
  uint64_t expected = 0;
  const tensor_info *prev = nullptr;
  for (const tensor_info *t : by_offset) {
    if (t->begin < expected)
      return bad_input_error(where + ": tensors " + quote(prev->name) + " " +
                             range_text(*prev) + " and " + quote(t->name) +
                             " " + range_text(*t) + " overlap");
    if (t->begin > expected) {
      const std::string gap = std::to_string(t->begin - expected);
      if (!prev)
        return bad_input_error(where + ": hole of " + gap +
                               " bytes before the first tensor " +
                               quote(t->name) + " " + range_text(*t));
      return bad_input_error(where + ": hole of " + gap +
                             " bytes between tensors " + quote(prev->name) +
                             " " + range_text(*prev) + " and " +
                             quote(t->name) + " " + range_text(*t));
    }
    expected = t->end;
    prev = t;
  }
  if (expected != out->data_bytes) {
    const std::string extra = std::to_string(out->data_bytes - expected);
    if (!prev)
      return bad_input_error(where + ": data region has " + extra +
                             " bytes but the header lists no tensors");
    return bad_input_error(where + ": " + extra +
                           " bytes of the data region follow the last tensor " +
                           quote(prev->name) + " " + range_text(*prev));
  }

  std::sort(tensors.begin(), tensors.end(),
            [](const tensor_info &a, const tensor_info &b) {
              return a.name < b.name;
            });
  out->tensors = std::move(tensors);
  return status();
}

status file::open(const std::string &path, std::unique_ptr<file> *out) {
  auto f = std::unique_ptr<file>(new file());
  status st = mapped_file::open(path, &f->map_);
  if (!st.ok())
    return st;
  st = parse(f->map_.data(), f->map_.size(), path, &f->header_);
  if (!st.ok())
    return st;
  *out = std::move(f);
  return status();
}

} // namespace safetensors
} // namespace sgc
