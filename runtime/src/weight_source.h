/*
 * weight_source.h - the tensors of a checkpoint file, whatever its format:
 * a safetensors checkpoint (file, index or directory) or a GGUF file.
 *
 * The binder (weights.cc) asks for a tensor by name and gets its dtype, its
 * shape outermost first (a GGUF stores dims innermost first; they are
 * reversed here), where its bytes are and which file holds them.
 */
#ifndef SGC_RUNTIME_SRC_WEIGHT_SOURCE_H
#define SGC_RUNTIME_SRC_WEIGHT_SOURCE_H

#include "lib/gguf/gguf.h"
#include "lib/safetensors/safetensors.h"
#include "lib/support/dtype.h"

#include <memory>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {

struct source_tensor {
  std::string name;
  /// dtype::invalid for a GGUF type sgc has no dtype for; type_name says
  /// which ("Q4_K").
  sgc::dtype type = sgc::dtype::invalid;
  std::string type_name;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  uint64_t bytes = 0;
  /// Offset of the data in its file (alignment checks).
  uint64_t file_offset = 0;
  /// The file that holds it.
  std::string file;
  /// Set on a compressed-tensors weight folded into a block encoding
  /// (compressed_tensors.h): data is null and the binder packs the blocks
  /// from these parts.
  struct parts {
    const uint8_t *values = nullptr;
    const uint8_t *scale = nullptr;
    sgc::dtype scale_type = sgc::dtype::invalid;
    /// 0: one scale for the tensor, else this many scales a row.
    int64_t scales_per_row = 0;
  } packed_from;
  bool is_packed() const { return packed_from.values != nullptr; }
};

class weight_source {
public:
  /// Opens |path|: a GGUF file (by its magic), else a safetensors
  /// checkpoint as safetensors::checkpoint::open takes it.
  static status open(const std::string &path,
                     std::unique_ptr<weight_source> *out);

  /// The tensor |name|; false when the file has none of that name.
  bool find(const std::string &name, source_tensor *out) const;
  bool is_gguf() const { return gguf_ != nullptr; }
  /// Every tensor, sorted by name.
  const std::vector<source_tensor> &tensors() const { return tensors_; }
  /// The files: the shards in index order, or the one file.
  const std::vector<std::string> &files() const { return files_; }
  uint64_t tensor_bytes() const;

private:
  std::vector<source_tensor> tensors_;
  std::vector<std::string> files_;
  std::unique_ptr<safetensors::checkpoint> safetensors_;
  std::unique_ptr<gguf::file> gguf_;
};

/// The sgc dtype of ggml type |type| (dtype::invalid when sgc has none).
sgc::dtype dtype_of_ggml_type(uint32_t type);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_WEIGHT_SOURCE_H
