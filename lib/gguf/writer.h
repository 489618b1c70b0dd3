/*
 * writer.h - writing GGUF files (version 3), the layout gguf.h describes.
 *
 * The metadata and the tensor infos go first, in the order they were
 * added; then each tensor's bytes, at offsets rounded up to 32 (GGUF's
 * default alignment; no `general.alignment` key is written). Tensor data
 * is streamed: a producer hands the bytes of one tensor at a time, so a
 * file of any size is written in bounded memory. The file appears whole at
 * its path or not at all (pending_file.h).
 */
#ifndef SGC_LIB_GGUF_WRITER_H
#define SGC_LIB_GGUF_WRITER_H

#include "lib/gguf/gguf.h"
#include "lib/gguf/quantize.h"

#include <functional>
#include <string>
#include <vector>

namespace sgc {
namespace gguf {

class writer {
public:
  void set_string(std::string key, std::string text);
  void set_u32(std::string key, uint32_t number);
  void set_f32(std::string key, float number);
  void set_bool(std::string key, bool flag);
  void set_strings(std::string key, std::vector<std::string> texts);
  void set_f32s(std::string key, const std::vector<float> &numbers);
  void set_i32s(std::string key, const std::vector<int32_t> &numbers);
  void set_bools(std::string key, const std::vector<bool> &flags);
  /// Sets |key| to |v| (a key set again keeps its first place).
  void set(std::string key, value v);

  /// Declares a tensor of |type| with |dims| innermost first; the first
  /// must be a whole number of the type's blocks.
  void add_tensor(std::string name, ggml_type type, std::vector<uint64_t> dims);

  const std::vector<metadata_entry> &metadata() const { return metadata_; }
  const std::vector<tensor_info> &tensors() const { return tensors_; }
  /// Bytes of the whole file.
  uint64_t file_bytes() const;

  /// Hands the bytes of tensor |index| to |emit|, in one or more calls.
  using emit_fn = std::function<status(const void *data, size_t bytes)>;
  using produce_fn = std::function<status(size_t index, const emit_fn &emit)>;
  /// Writes the file to |path|: the header, then the tensors in the order
  /// added, each from |produce|, which must emit exactly the tensor's bytes.
  status write(const std::string &path, const produce_fn &produce) const;

private:
  /// The header through the padding before the data section.
  std::string header_bytes() const;

  std::vector<metadata_entry> metadata_;
  std::vector<tensor_info> tensors_;
  uint64_t data_bytes_ = 0;
};

} // namespace gguf
} // namespace sgc

#endif // SGC_LIB_GGUF_WRITER_H
