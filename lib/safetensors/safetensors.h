/*
 * safetensors.h - strict reader and writer for safetensors checkpoints.
 *
 * A safetensors file is: an 8-byte little-endian header length N, N bytes of
 * JSON (an object mapping tensor names to {dtype, shape, data_offsets}, plus
 * an optional "__metadata__" object of strings), then the data region. The
 * reader treats every byte as untrusted (STYLE.md habit 14):
 *   - 8 <= file size, N <= 100,000,000 and 8 + N <= file size;
 *   - the header is UTF-8 JSON, starts with '{', is an object, has no
 *     duplicate keys at any depth;
 *   - each entry has exactly dtype, shape and data_offsets; dtype is known;
 *     dims are non-negative integers; offsets are two integers with
 *     begin <= end <= data size; dtype size x product(shape) == end - begin,
 *     computed without overflow;
 *   - sorted by begin, the tensors tile the data region exactly: no hole,
 *     no overlap, nothing left over.
 * Files are memory-mapped; tensor data is never copied. Every error message
 * names the file, and the tensor where there is one. All failures carry
 * status_code::bad_input.
 *
 * A checkpoint is a single file, or shards listed by a Hugging Face
 * "model.safetensors.index.json" ({"weight_map": {name: shard file}}); each
 * shard is validated in full and must hold exactly the tensors the index
 * assigns to it.
 */
#ifndef SGC_LIB_SAFETENSORS_SAFETENSORS_H
#define SGC_LIB_SAFETENSORS_SAFETENSORS_H

#include "lib/support/dtype.h"
#include "lib/support/mapped_file.h"
#include "lib/support/status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sgc {
namespace safetensors {

/// Largest header the reader accepts (the limit of the reference Rust crate).
constexpr uint64_t max_header_bytes = 100000000;

struct tensor_info {
  std::string name;
  sgc::dtype type = sgc::dtype::invalid;
  std::vector<int64_t> shape;
  /// Byte offsets relative to the start of the data region; [begin, end).
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t bytes() const { return end - begin; }
};

struct header {
  /// Sorted by name.
  std::vector<tensor_info> tensors;
  /// The "__metadata__" strings, if any.
  std::map<std::string, std::string> metadata;
  /// N, the JSON length in bytes.
  uint64_t header_bytes = 0;
  /// 8 + N: where the data region begins in the file.
  uint64_t data_offset = 0;
  /// Bytes in the data region (file size - 8 - N).
  uint64_t data_bytes = 0;

  /// Binary search by name; nullptr when absent.
  const tensor_info *find(std::string_view name) const;
};

/// Validates an in-memory safetensors image of |size| bytes and fills
/// |out|. |label| names the file in messages. Reads only the first 8 + N
/// bytes. This is the function the fuzz target drives.
status parse(const uint8_t *data, uint64_t size, const std::string &label,
             header *out);

/// One validated, memory-mapped safetensors file.
class file {
public:
  /// Maps and validates |path|.
  static status open(const std::string &path, std::unique_ptr<file> *out);

  const std::string &path() const { return map_.path(); }
  const header &hdr() const { return header_; }
  const std::vector<tensor_info> &tensors() const { return header_.tensors; }
  const tensor_info *find(std::string_view name) const {
    return header_.find(name);
  }
  /// Start of |t|'s bytes inside the mapping (t must come from this file).
  /// For a zero-byte tensor this may be one past the last byte.
  const uint8_t *data(const tensor_info &t) const {
    return map_.data() + header_.data_offset + t.begin;
  }
  /// Offset of |t|'s first byte from the start of the file.
  uint64_t file_offset(const tensor_info &t) const {
    return header_.data_offset + t.begin;
  }
  uint64_t size() const { return map_.size(); }

private:
  mapped_file map_;
  header header_;
};

/// A whole checkpoint: one file or an index and its shards.
class checkpoint {
public:
  struct entry {
    const tensor_info *info;
    const file *shard;
  };

  /// Opens |path|: a .safetensors file, a *.index.json file, or a directory
  /// holding model.safetensors or model.safetensors.index.json (the single
  /// file wins when both exist, as in transformers).
  static status open(const std::string &path, std::unique_ptr<checkpoint> *out);

  /// The path given to open().
  const std::string &path() const { return path_; }
  /// The index file, or empty for a single-file checkpoint.
  const std::string &index_path() const { return index_path_; }
  /// All tensors, sorted by name.
  const std::vector<entry> &tensors() const { return entries_; }
  /// Shards in index order (first mention), or the single file.
  const std::vector<std::unique_ptr<file>> &shards() const { return shards_; }
  const entry *find(std::string_view name) const;
  /// Sum of all tensor bytes.
  uint64_t tensor_bytes() const;

private:
  status open_single(const std::string &file_path);
  status open_index(const std::string &index_file);

  std::string path_;
  std::string index_path_;
  std::vector<std::unique_ptr<file>> shards_;
  std::vector<entry> entries_;
};

/// One tensor to write. Either |data| points at bytes() bytes, or |generate|
/// is called with consecutive chunks (byte offset within the tensor, a
/// destination, a byte count that is a multiple of the element size) and
/// returns a status.
struct tensor_source {
  std::string name;
  sgc::dtype type = sgc::dtype::invalid;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  std::function<status(uint64_t offset, void *dst, size_t bytes)> generate;
};

/// Progress while writing: bytes done so far and in total.
using write_progress = std::function<void(uint64_t done, uint64_t total)>;

/// Writes |tensors| to |path| as a safetensors file. Tensors are laid out by
/// decreasing element size, then by name, after a header padded with spaces
/// to a multiple of 8 bytes, so every tensor is aligned to its element size.
/// Writes to a temporary file in the same directory and renames it.
status write(const std::string &path, const std::vector<tensor_source> &tensors,
             const std::map<std::string, std::string> &metadata = {},
             const write_progress &progress = nullptr);

/// Number of elements of |shape|, or false on overflow or a negative dim.
bool element_count(const std::vector<int64_t> &shape, uint64_t *out);

} // namespace safetensors
} // namespace sgc

#endif // SGC_LIB_SAFETENSORS_SAFETENSORS_H
