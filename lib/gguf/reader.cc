/*
 * reader.cc - the strict GGUF reader (gguf.h).
 */
#include "lib/gguf/gguf.h"

#include "lib/support/utf8.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

namespace sgc {
namespace gguf {

namespace {

/// The ggml types the reader knows: the plain ones and the legacy and
/// K-quant blocks (ggml's block structs: a Q8_0 block is an f16 scale and
/// 32 int8; a K-quant block covers 256 elements).
constexpr type_traits known_types[] = {
    {0, "F32", 1, 4},       {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},    {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},    {9, "Q8_1", 32, 40},    {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110}, {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210}, {15, "Q8_K", 256, 292}, {24, "I8", 1, 1},
    {25, "I16", 1, 2},      {26, "I32", 1, 4},      {27, "I64", 1, 8},
    {28, "F64", 1, 8},      {30, "BF16", 1, 2},
};

/// Bytes of a scalar of |type|; 0 for strings and arrays.
uint64_t scalar_bytes(value_type type) {
  switch (type) {
  case value_type::u8:
  case value_type::i8:
  case value_type::boolean:
    return 1;
  case value_type::u16:
  case value_type::i16:
    return 2;
  case value_type::u32:
  case value_type::i32:
  case value_type::f32:
    return 4;
  case value_type::u64:
  case value_type::i64:
  case value_type::f64:
    return 8;
  default:
    return 0;
  }
}

bool known_value_type(uint32_t raw) { return raw <= 12; }

/// A cursor over the untrusted image; every read checks the bytes left.
class cursor {
public:
  cursor(const uint8_t *data, uint64_t size) : data_(data), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  bool read(uint64_t bytes, uint64_t *out) {
    if (left() < bytes)
      return false;
    uint64_t v = 0;
    for (uint64_t i = bytes; i-- > 0;)
      v = (v << 8) | data_[pos_ + i];
    pos_ += bytes;
    *out = v;
    return true;
  }
  bool read_u32(uint32_t *out) {
    uint64_t v = 0;
    if (!read(4, &v))
      return false;
    *out = static_cast<uint32_t>(v);
    return true;
  }
  bool read_u64(uint64_t *out) { return read(8, out); }
  /// A GGUF string: uint64 length, then the bytes (all within the image).
  bool read_string(std::string *out, uint64_t *length) {
    if (!read_u64(length) || *length > left())
      return false;
    out->assign(reinterpret_cast<const char *>(data_ + pos_), *length);
    pos_ += *length;
    return true;
  }

private:
  const uint8_t *data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

/// The parser of one image: its cursor and the label messages start with.
class parser {
public:
  parser(const uint8_t *data, uint64_t size, const std::string &label)
      : in_(data, size), size_(size), label_(label) {}

  status run(header *out);

private:
  status fail(const std::string &what) const {
    return bad_input_error(label_ + ": " + what);
  }
  status truncated(const std::string &what) const {
    return fail("the file ends inside " + what + " (at byte " +
                std::to_string(in_.pos()) + " of " + std::to_string(size_) +
                ")");
  }
  status read_name(const std::string &what, std::string *out);
  status read_value(const std::string &key, value_type type, value *out);
  status read_metadata(header *out);
  status read_tensor(const header &h, tensor_info *out);
  status check_alignment(header *h) const;

  cursor in_;
  uint64_t size_;
  const std::string &label_;
};

status parser::read_name(const std::string &what, std::string *out) {
  uint64_t length = 0;
  if (!in_.read_string(out, &length))
    return truncated(what);
  if (out->empty())
    return fail(what + " is empty");
  size_t bad = 0;
  if (!utf8_valid(*out, &bad))
    return fail(what + " '" + escape_for_message(*out) +
                "' is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  return status();
}

status parser::read_value(const std::string &key, value_type type,
                          value *out) {
  const std::string where = "the value of '" + escape_for_message(key) + "'";
  out->type = type;
  if (type == value_type::string) {
    uint64_t length = 0;
    if (!in_.read_string(&out->text, &length))
      return truncated(where);
    return status();
  }
  if (type != value_type::array) {
    if (!in_.read(scalar_bytes(type), &out->bits))
      return truncated(where);
    if (type == value_type::boolean && out->bits > 1)
      return fail(where + " is a BOOL of " + std::to_string(out->bits) +
                  " (0 or 1)");
    return status();
  }
  uint32_t raw = 0;
  uint64_t count = 0;
  if (!in_.read_u32(&raw) || !in_.read_u64(&count))
    return truncated(where);
  if (!known_value_type(raw))
    return fail(where + " is an array of unknown value type " +
                std::to_string(raw));
  out->element_type = static_cast<value_type>(raw);
  if (out->element_type == value_type::array)
    return fail(where + " is an array of arrays, which GGUF readers do not "
                        "take");
  // Each element takes at least its scalar bytes (a string its length).
  const uint64_t least = out->element_type == value_type::string
                             ? 8
                             : scalar_bytes(out->element_type);
  if (count > in_.left() / least)
    return fail(where + " has " + std::to_string(count) +
                " elements, more than the " + std::to_string(in_.left()) +
                " bytes left can hold");
  if (out->element_type == value_type::string) {
    out->strings.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t length = 0;
      if (!in_.read_string(&out->strings[i], &length))
        return truncated(where + " (element " + std::to_string(i) + ")");
    }
    return status();
  }
  out->numbers.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (!in_.read(least, &out->numbers[i]))
      return truncated(where);
    if (out->element_type == value_type::boolean && out->numbers[i] > 1)
      return fail(where + " holds a BOOL of " +
                  std::to_string(out->numbers[i]) + " at element " +
                  std::to_string(i) + " (0 or 1)");
  }
  return status();
}

status parser::read_metadata(header *out) {
  uint64_t count = 0;
  if (!in_.read_u64(&count))
    return truncated("the header");
  // A key takes at least its length, a byte, its type and a byte of value.
  if (count > in_.left() / 14)
    return fail(std::to_string(count) + " metadata entries cannot fit in " +
                "the " + std::to_string(in_.left()) + " bytes left");
  std::set<std::string> seen;
  out->metadata.resize(count);
  for (metadata_entry &entry : out->metadata) {
    status st = read_name("a metadata key", &entry.key);
    if (!st.ok())
      return st;
    if (!seen.insert(entry.key).second)
      return fail("the metadata key '" + escape_for_message(entry.key) +
                  "' appears twice");
    uint32_t raw = 0;
    if (!in_.read_u32(&raw))
      return truncated("the type of '" + escape_for_message(entry.key) + "'");
    if (!known_value_type(raw))
      return fail("the metadata key '" + escape_for_message(entry.key) +
                  "' has unknown value type " + std::to_string(raw));
    st = read_value(entry.key, static_cast<value_type>(raw), &entry.val);
    if (!st.ok())
      return st;
  }
  return status();
}

status parser::check_alignment(header *h) const {
  const value *v = h->find("general.alignment");
  if (!v)
    return status();
  if (v->type != value_type::u32)
    return fail("the metadata key 'general.alignment' is a " +
                std::string(value_type_name(v->type)) + ", not a UINT32");
  if (v->bits == 0 || (v->bits & (v->bits - 1)) != 0)
    return fail("the metadata key 'general.alignment' is " +
                std::to_string(v->bits) + ", not a power of two");
  h->alignment = v->bits;
  return status();
}

status parser::read_tensor(const header &h, tensor_info *out) {
  status st = read_name("a tensor name", &out->name);
  if (!st.ok())
    return st;
  const std::string where = "tensor '" + escape_for_message(out->name) + "'";
  uint32_t rank = 0;
  if (!in_.read_u32(&rank))
    return truncated(where);
  if (rank < 1 || rank > 4)
    return fail(where + " has " + std::to_string(rank) +
                " dimensions (1 to 4)");
  out->dims.resize(rank);
  for (uint64_t &d : out->dims) {
    if (!in_.read_u64(&d))
      return truncated(where);
    if (d == 0)
      return fail(where + " has a zero dimension");
  }
  if (!in_.read_u32(&out->type) || !in_.read_u64(&out->offset))
    return truncated(where);
  const type_traits *traits = find_type(out->type);
  if (!traits)
    return fail(where + " has ggml type " + std::to_string(out->type) +
                ", which sgc does not know");
  uint64_t elements = 1;
  for (uint64_t d : out->dims) {
    if (elements > std::numeric_limits<uint64_t>::max() / d)
      return fail(where + " has more elements than 2^64");
    elements *= d;
  }
  if (out->dims[0] % traits->block_elements != 0)
    return fail(where + " is " + traits->name + ", whose blocks hold " +
                std::to_string(traits->block_elements) +
                " elements, but its first dimension is " +
                std::to_string(out->dims[0]));
  const uint64_t blocks = elements / traits->block_elements;
  if (blocks > std::numeric_limits<uint64_t>::max() / traits->block_bytes)
    return fail(where + " has more bytes than 2^64");
  out->bytes = blocks * traits->block_bytes;
  if (out->offset % h.alignment != 0)
    return fail(where + " starts at data offset " +
                std::to_string(out->offset) + ", not a multiple of the " +
                "alignment " + std::to_string(h.alignment));
  return status();
}

status parser::run(header *out) {
  *out = header();
  if (size_ == 0)
    return fail("the file is empty, not a GGUF file");
  uint64_t magic = 0;
  if (!in_.read(4, &magic) || magic != 0x46554747) // "GGUF"
    return fail("not a GGUF file (it does not start with 'GGUF')");
  uint64_t tensor_count = 0;
  if (!in_.read_u32(&out->version) || !in_.read_u64(&tensor_count))
    return truncated("the header");
  if (out->version != supported_version)
    return fail("GGUF version " + std::to_string(out->version) +
                "; sgc reads version " + std::to_string(supported_version));
  status st = read_metadata(out);
  if (!st.ok())
    return st;
  st = check_alignment(out);
  if (!st.ok())
    return st;
  // A tensor info takes at least a name of one byte, a rank, a dimension,
  // a type and an offset.
  if (tensor_count > in_.left() / 33)
    return fail(std::to_string(tensor_count) + " tensors cannot fit in the " +
                std::to_string(in_.left()) + " bytes left");
  out->tensors.resize(tensor_count);
  std::set<std::string> names;
  for (tensor_info &t : out->tensors) {
    st = read_tensor(*out, &t);
    if (!st.ok())
      return st;
    if (!names.insert(t.name).second)
      return fail("tensor '" + escape_for_message(t.name) + "' appears twice");
  }
  // The data section starts at the next multiple of the alignment.
  const uint64_t end = in_.pos();
  const uint64_t padding = (out->alignment - end % out->alignment) %
                           out->alignment;
  if (padding > size_ - end)
    return fail("the data section would start at byte " +
                std::to_string(end) + " + " + std::to_string(padding) +
                ", past the end of the file (" + std::to_string(size_) +
                " bytes)");
  out->data_offset = end + padding;
  out->data_bytes = size_ - out->data_offset;
  std::vector<const tensor_info *> by_offset;
  for (const tensor_info &t : out->tensors) {
    if (t.offset > out->data_bytes || t.bytes > out->data_bytes - t.offset)
      return fail("tensor '" + escape_for_message(t.name) + "' has data [" +
                  std::to_string(t.offset) + ", " + std::to_string(t.offset) +
                  " + " + std::to_string(t.bytes) +
                  ") past the end of the data section (" +
                  std::to_string(out->data_bytes) + " bytes)");
    by_offset.push_back(&t);
  }
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [](const tensor_info *a, const tensor_info *b) {
                     return a->offset < b->offset;
                   });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const tensor_info &a = *by_offset[i - 1], &b = *by_offset[i];
    if (b.offset < a.offset + a.bytes)
      return fail("tensors '" + escape_for_message(a.name) + "' and '" +
                  escape_for_message(b.name) + "' share data bytes (" +
                  std::to_string(b.offset) + " < " +
                  std::to_string(a.offset) + " + " +
                  std::to_string(a.bytes) + ")");
  }
  return status();
}

} // namespace

const type_traits *find_type(uint32_t type) {
  for (const type_traits &t : known_types)
    if (t.type == type)
      return &t;
  return nullptr;
}

const char *value_type_name(value_type type) {
  static const char *const names[] = {"UINT8", "INT8",   "UINT16", "INT16",
                                      "UINT32", "INT32", "FLOAT32", "BOOL",
                                      "STRING", "ARRAY", "UINT64", "INT64",
                                      "FLOAT64"};
  const auto raw = static_cast<uint32_t>(type);
  return raw < sizeof(names) / sizeof(names[0]) ? names[raw] : "INVALID";
}

namespace {
bool integer_type(value_type t) {
  return t != value_type::f32 && t != value_type::f64 &&
         t != value_type::string && t != value_type::array;
}

/// The bits of a number of |type| as a signed integer.
int64_t to_int(value_type type, uint64_t bits) {
  switch (type) {
  case value_type::i8:
    return static_cast<int8_t>(bits);
  case value_type::i16:
    return static_cast<int16_t>(bits);
  case value_type::i32:
    return static_cast<int32_t>(bits);
  default:
    return static_cast<int64_t>(bits);
  }
}

double to_double(value_type type, uint64_t bits) {
  if (type == value_type::f32) {
    const uint32_t b32 = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b32, 4);
    return f;
  }
  if (type == value_type::f64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (type == value_type::u64)
    return static_cast<double>(bits);
  return static_cast<double>(to_int(type, bits));
}
} // namespace

bool value::is_integer() const { return integer_type(type); }
int64_t value::as_int() const { return to_int(type, bits); }
uint64_t value::as_uint() const { return bits; }
double value::as_double() const { return to_double(type, bits); }
int64_t value::element_int(size_t i) const {
  return to_int(element_type, numbers.at(i));
}
double value::element_double(size_t i) const {
  return to_double(element_type, numbers.at(i));
}

uint64_t tensor_info::elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims)
    n *= d;
  return n;
}

const value *header::find(std::string_view key) const {
  for (const metadata_entry &e : metadata)
    if (e.key == key)
      return &e.val;
  return nullptr;
}

const tensor_info *header::find_tensor(std::string_view name) const {
  for (const tensor_info &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

status parse(const uint8_t *data, uint64_t size, const std::string &label,
             header *out) {
  return parser(data, size, label).run(out);
}

bool is_gguf_file(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  char magic[4] = {};
  const bool is = std::fread(magic, 1, 4, f) == 4 &&
                  std::memcmp(magic, "GGUF", 4) == 0;
  std::fclose(f);
  return is;
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

} // namespace gguf
} // namespace sgc
