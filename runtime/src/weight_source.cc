/*
 * weight_source.cc - safetensors and GGUF tensors behind one lookup.
 */
#include "runtime/src/weight_source.h"

#include <cstdio>
#include <cstring>

namespace sgc {
namespace runtime {

namespace {

/// Whether |path| is a regular file that starts with GGUF's magic.
bool starts_with_gguf_magic(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  char magic[4] = {};
  const bool is = std::fread(magic, 1, 4, f) == 4 &&
                  std::memcmp(magic, "GGUF", 4) == 0;
  std::fclose(f);
  return is;
}

} // namespace

sgc::dtype dtype_of_ggml_type(uint32_t type) {
  switch (type) {
  case 0:
    return sgc::dtype::f32;
  case 1:
    return sgc::dtype::f16;
  case 2:
    return sgc::dtype::q4_0;
  case 8:
    return sgc::dtype::q8_0;
  case 14:
    return sgc::dtype::q6_k;
  case 24:
    return sgc::dtype::i8;
  case 25:
    return sgc::dtype::i16;
  case 26:
    return sgc::dtype::i32;
  case 27:
    return sgc::dtype::i64;
  case 28:
    return sgc::dtype::f64;
  case 30:
    return sgc::dtype::bf16;
  default:
    return sgc::dtype::invalid;
  }
}

status weight_source::open(const std::string &path,
                           std::unique_ptr<weight_source> *out) {
  auto src = std::unique_ptr<weight_source>(new weight_source());
  status st = starts_with_gguf_magic(path)
                  ? gguf::file::open(path, &src->gguf_)
                  : safetensors::checkpoint::open(path, &src->safetensors_);
  if (!st.ok())
    return st;
  *out = std::move(src);
  return status();
}

bool weight_source::find(const std::string &name, source_tensor *out) const {
  if (gguf_) {
    const gguf::tensor_info *t = gguf_->hdr().find_tensor(name);
    if (!t)
      return false;
    out->name = t->name;
    out->type = dtype_of_ggml_type(t->type);
    const gguf::type_traits *traits = gguf::find_type(t->type);
    out->type_name = traits ? traits->name : "ggml type " + std::to_string(t->type);
    out->shape.assign(t->dims.rbegin(), t->dims.rend());
    out->data = gguf_->data(*t);
    out->bytes = t->bytes;
    out->file_offset = gguf_->hdr().data_offset + t->offset;
    out->file = gguf_->path();
    return true;
  }
  const safetensors::checkpoint::entry *e = safetensors_->find(name);
  if (!e)
    return false;
  const safetensors::tensor_info &ci = *e->info;
  out->name = ci.name;
  out->type = ci.type;
  out->type_name = dtype_name(ci.type);
  out->shape = ci.shape;
  out->data = static_cast<const uint8_t *>(e->shard->data(ci));
  out->bytes = ci.bytes();
  out->file_offset = e->shard->file_offset(ci);
  out->file = e->shard->path();
  return true;
}

} // namespace runtime
} // namespace sgc
