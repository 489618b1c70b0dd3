/*
 * gguf.h - strict reader for GGUF files (version 3), llama.cpp's checkpoint
 * format.
 *
 * A GGUF file is: the magic "GGUF", a uint32 version, uint64 counts of
 * tensors and metadata entries; the metadata (key string, uint32 value
 * type, value; arrays carry an element type and a uint64 count); the tensor
 * infos (name, uint32 rank, the dimensions innermost first, uint32 ggml
 * type, uint64 offset into the data section); padding to the alignment
 * (`general.alignment`, 32 when absent); the data section. Every integer is
 * little-endian, every string a uint64 length and its bytes.
 *
 * The reader treats every byte as untrusted (STYLE.md habit 14): every
 * count is bounded by the bytes left before it is believed, keys and tensor
 * names are valid UTF-8 and unique, booleans are 0 or 1, arrays do not nest,
 * `general.alignment` is a uint32 power of two; a tensor has rank 1 to 4,
 * no zero dimension, a type the reader knows, a first dimension that is a
 * whole number of the type's blocks, an element and byte count that do not
 * overflow, an aligned offset, and data inside the file that no other
 * tensor's overlaps. Files are memory-mapped; tensor data is never copied.
 * Every error names the file, and the key or tensor where there is one; all
 * carry status_code::bad_input.
 */
#ifndef SGC_LIB_GGUF_GGUF_H
#define SGC_LIB_GGUF_GGUF_H

#include "lib/support/mapped_file.h"
#include "lib/support/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sgc {
namespace gguf {

/// The version the reader accepts.
constexpr uint32_t supported_version = 3;
/// The alignment of the data section and of every tensor offset when the
/// file has no `general.alignment`.
constexpr uint64_t default_alignment = 32;

/// A ggml tensor type's layout: elements per block and bytes per block
/// (1 and the element size for the plain types).
struct type_traits {
  uint32_t type;
  const char *name;
  uint32_t block_elements;
  uint32_t block_bytes;
};

/// The layout of ggml type |type| (its number in GGUF files), or nullptr
/// when the reader does not know it.
const type_traits *find_type(uint32_t type);

/// GGUF metadata value types, numbered as in the files.
enum class value_type : uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

/// "UINT8", "STRING", ... as gguf-py names them; "INVALID" for others.
const char *value_type_name(value_type type);

/// One metadata value. A number keeps its bits (zero-extended); the
/// accessors convert by the stored type.
struct value {
  value_type type = value_type::u8;
  uint64_t bits = 0;
  std::string text;
  /// Arrays: the element type, and the elements (numbers as bits, strings
  /// as text).
  value_type element_type = value_type::u8;
  std::vector<uint64_t> numbers;
  std::vector<std::string> strings;

  bool is_integer() const;
  /// The integer value of an integer or bool value (unsigned types as
  /// they are, signed ones sign-extended).
  int64_t as_int() const;
  uint64_t as_uint() const;
  /// The value of any number as a double.
  double as_double() const;
  /// Element |i| of a numeric array, converted as the scalar accessors do.
  int64_t element_int(size_t i) const;
  double element_double(size_t i) const;
  size_t size() const {
    return element_type == value_type::string ? strings.size()
                                              : numbers.size();
  }
};

struct metadata_entry {
  std::string key;
  value val;
};

struct tensor_info {
  std::string name;
  uint32_t type = 0;
  /// The dimensions as the file stores them: innermost (contiguous) first.
  std::vector<uint64_t> dims;
  /// Offset from the start of the data section, and the bytes of data.
  uint64_t offset = 0;
  uint64_t bytes = 0;

  uint64_t elements() const;
};

struct header {
  uint32_t version = 0;
  uint64_t alignment = default_alignment;
  /// In file order.
  std::vector<metadata_entry> metadata;
  std::vector<tensor_info> tensors;
  /// Where the data section begins in the file, and its size (to the end
  /// of the file).
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;

  const value *find(std::string_view key) const;
  const tensor_info *find_tensor(std::string_view name) const;
};

/// Whether |path| is a regular file that starts with GGUF's magic (what
/// decides, before any parsing, that a path is read as a GGUF).
bool is_gguf_file(const std::string &path);

/// Validates an in-memory GGUF image of |size| bytes and fills |out|.
/// |label| names the file in messages. This is the function the fuzz target
/// drives.
status parse(const uint8_t *data, uint64_t size, const std::string &label,
             header *out);

/// One validated, memory-mapped GGUF file.
class file {
public:
  static status open(const std::string &path, std::unique_ptr<file> *out);

  const std::string &path() const { return map_.path(); }
  const header &hdr() const { return header_; }
  /// Start of |t|'s bytes inside the mapping (t must come from this file).
  const uint8_t *data(const tensor_info &t) const {
    return map_.data() + header_.data_offset + t.offset;
  }

private:
  mapped_file map_;
  header header_;
};

} // namespace gguf
} // namespace sgc

#endif // SGC_LIB_GGUF_GGUF_H
