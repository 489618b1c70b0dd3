/*
 * writer.cc - writing GGUF files (writer.h).
 */
#include "lib/gguf/writer.h"

#include "lib/support/half.h"
#include "lib/support/pending_file.h"

#include <cstring>

namespace sgc {
namespace gguf {

namespace {

constexpr uint64_t round_up(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

/// Little-endian bytes of a number.
template <typename T> void put(std::string &out, T number) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((static_cast<uint64_t>(number) >> (8 * i)) & 0xFF));
}

void put_text(std::string &out, const std::string &text) {
  put<uint64_t>(out, text.size());
  out += text;
}

/// A scalar's bytes by its type (numbers keep their bits in |bits|).
void put_scalar(std::string &out, value_type type, uint64_t bits) {
  switch (type) {
  case value_type::u8:
  case value_type::i8:
  case value_type::boolean:
    put<uint8_t>(out, static_cast<uint8_t>(bits));
    return;
  case value_type::u16:
  case value_type::i16:
    put<uint16_t>(out, static_cast<uint16_t>(bits));
    return;
  case value_type::u32:
  case value_type::i32:
  case value_type::f32:
    put<uint32_t>(out, static_cast<uint32_t>(bits));
    return;
  default:
    put<uint64_t>(out, bits);
  }
}

value array_of(value_type element) {
  value v;
  v.type = value_type::array;
  v.element_type = element;
  return v;
}

} // namespace

void writer::set(std::string key, value v) {
  for (metadata_entry &e : metadata_)
    if (e.key == key) {
      e.val = std::move(v);
      return;
    }
  metadata_.push_back({std::move(key), std::move(v)});
}

void writer::set_string(std::string key, std::string text) {
  value v;
  v.type = value_type::string;
  v.text = std::move(text);
  set(std::move(key), std::move(v));
}

void writer::set_u32(std::string key, uint32_t number) {
  value v;
  v.type = value_type::u32;
  v.bits = number;
  set(std::move(key), std::move(v));
}

void writer::set_f32(std::string key, float number) {
  value v;
  v.type = value_type::f32;
  v.bits = float_bits(number);
  set(std::move(key), std::move(v));
}

void writer::set_bool(std::string key, bool flag) {
  value v;
  v.type = value_type::boolean;
  v.bits = flag;
  set(std::move(key), std::move(v));
}

void writer::set_strings(std::string key, std::vector<std::string> texts) {
  value v = array_of(value_type::string);
  v.strings = std::move(texts);
  set(std::move(key), std::move(v));
}

void writer::set_f32s(std::string key, const std::vector<float> &numbers) {
  value v = array_of(value_type::f32);
  for (float f : numbers)
    v.numbers.push_back(float_bits(f));
  set(std::move(key), std::move(v));
}

void writer::set_i32s(std::string key, const std::vector<int32_t> &numbers) {
  value v = array_of(value_type::i32);
  for (int32_t n : numbers)
    v.numbers.push_back(static_cast<uint32_t>(n));
  set(std::move(key), std::move(v));
}

void writer::set_bools(std::string key, const std::vector<bool> &flags) {
  value v = array_of(value_type::boolean);
  for (bool b : flags)
    v.numbers.push_back(b);
  set(std::move(key), std::move(v));
}

void writer::add_tensor(std::string name, ggml_type type,
                        std::vector<uint64_t> dims) {
  tensor_info t;
  t.name = std::move(name);
  t.type = static_cast<uint32_t>(type);
  t.dims = std::move(dims);
  t.offset = data_bytes_;
  t.bytes = row_bytes(type, t.dims[0]);
  for (size_t i = 1; i < t.dims.size(); ++i)
    t.bytes *= t.dims[i];
  data_bytes_ = round_up(t.offset + t.bytes, default_alignment);
  tensors_.push_back(std::move(t));
}

std::string writer::header_bytes() const {
  std::string out = "GGUF";
  put<uint32_t>(out, supported_version);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, metadata_.size());
  for (const metadata_entry &e : metadata_) {
    put_text(out, e.key);
    put<uint32_t>(out, static_cast<uint32_t>(e.val.type));
    if (e.val.type == value_type::string) {
      put_text(out, e.val.text);
    } else if (e.val.type == value_type::array) {
      put<uint32_t>(out, static_cast<uint32_t>(e.val.element_type));
      put<uint64_t>(out, e.val.size());
      for (const std::string &s : e.val.strings)
        put_text(out, s);
      for (uint64_t bits : e.val.numbers)
        put_scalar(out, e.val.element_type, bits);
    } else {
      put_scalar(out, e.val.type, e.val.bits);
    }
  }
  for (const tensor_info &t : tensors_) {
    put_text(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims)
      put<uint64_t>(out, d);
    put<uint32_t>(out, t.type);
    put<uint64_t>(out, t.offset);
  }
  out.resize(round_up(out.size(), default_alignment), '\0');
  return out;
}

uint64_t writer::file_bytes() const {
  return header_bytes().size() + data_bytes_;
}

status writer::write(const std::string &path, const produce_fn &produce) const {
  pending_file out(path);
  if (status st = out.open(); !st.ok())
    return st;
  const std::string header = header_bytes();
  if (status st = write_all(out.fd(), header.data(), header.size(), path); !st.ok())
    return st;
  static const char zeros[default_alignment] = {};
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const tensor_info &t = tensors_[i];
    uint64_t done = 0;
    status st = produce(i, [&](const void *data, size_t bytes) -> status {
      if (done + bytes > t.bytes)
        return internal_error(quote(path) + ": tensor " + quote(t.name) +
                              ": more bytes than its type and shape hold");
      done += bytes;
      return write_all(out.fd(), data, bytes, path);
    });
    if (!st.ok())
      return st;
    if (done != t.bytes)
      return internal_error(quote(path) + ": tensor " + quote(t.name) + ": " +
                            std::to_string(done) + " bytes written of " +
                            std::to_string(t.bytes));
    const uint64_t pad = round_up(t.bytes, default_alignment) - t.bytes;
    if (pad != 0)
      if (status st = write_all(out.fd(), zeros, pad, path); !st.ok())
        return st;
  }
  return out.commit();
}

} // namespace gguf
} // namespace sgc
