/*
 * weight_source.cc - safetensors and GGUF tensors behind one lookup.
 */
#include "runtime/src/weight_source.h"

#include "runtime/src/compressed_tensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace sgc {
namespace runtime {

sgc::dtype dtype_of_ggml_type(uint32_t type) {
  // ggml names its types as safetensors and abi.h do ("BF16", "Q4_0").
  const gguf::type_traits *traits = gguf::find_type(type);
  for (uint32_t d = 1; traits && d < dtype_count; ++d)
    if (std::strcmp(dtype_name(static_cast<sgc::dtype>(d)), traits->name) == 0)
      return static_cast<sgc::dtype>(d);
  return sgc::dtype::invalid;
}

status weight_source::open(const std::string &path,
                           std::unique_ptr<weight_source> *out) {
  auto src = std::unique_ptr<weight_source>(new weight_source());
  status st = gguf::is_gguf_file(path)
                  ? gguf::file::open(path, &src->gguf_)
                  : safetensors::checkpoint::open(path, &src->safetensors_);
  if (!st.ok())
    return st;
  if (src->gguf_) {
    const gguf::file &g = *src->gguf_;
    src->files_.push_back(g.path());
    for (const gguf::tensor_info &t : g.hdr().tensors) {
      source_tensor e;
      e.name = t.name;
      e.type = dtype_of_ggml_type(t.type);
      const gguf::type_traits *traits = gguf::find_type(t.type);
      e.type_name =
          traits ? traits->name : "ggml type " + std::to_string(t.type);
      for (auto d = t.dims.rbegin(); d != t.dims.rend(); ++d)
        e.shape.push_back(static_cast<int64_t>(*d));
      e.data = g.data(t);
      e.bytes = t.bytes;
      e.file_offset = g.hdr().data_offset + t.offset;
      e.file = g.path();
      src->tensors_.push_back(std::move(e));
    }
  } else {
    for (const auto &shard : src->safetensors_->shards())
      src->files_.push_back(shard->path());
    for (const safetensors::checkpoint::entry &c :
         src->safetensors_->tensors()) {
      const safetensors::tensor_info &ci = *c.info;
      source_tensor e;
      e.name = ci.name;
      e.type = ci.type;
      e.type_name = dtype_name(ci.type);
      e.shape = ci.shape;
      e.data = static_cast<const uint8_t *>(c.shard->data(ci));
      e.bytes = ci.bytes();
      e.file_offset = c.shard->file_offset(ci);
      e.file = c.shard->path();
      src->tensors_.push_back(std::move(e));
    }
  }
  std::sort(src->tensors_.begin(), src->tensors_.end(),
            [](const source_tensor &a, const source_tensor &b) {
              return a.name < b.name;
            });
  if (src->safetensors_) {
    st = fold_compressed_tensors(src->tensors_);
    if (!st.ok())
      return st;
  }
  *out = std::move(src);
  return status();
}

bool weight_source::find(const std::string &name, source_tensor *out) const {
  auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const source_tensor &t, const std::string &n) { return t.name < n; });
  if (it == tensors_.end() || it->name != name)
    return false;
  *out = *it;
  return true;
}

uint64_t weight_source::tensor_bytes() const {
  uint64_t total = 0;
  for (const source_tensor &t : tensors_)
    total += t.bytes;
  return total;
}

} // namespace runtime
} // namespace sgc
