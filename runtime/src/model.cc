/*
 * model.cc - opening compiled models: the ABI header is checked before any
 * other byte of the table is read, then every field the runtime relies on.
 */
#include "runtime/src/model.h"

#include "lib/support/dtype.h"
#include "lib/support/mapped_file.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <set>

namespace sgc {
namespace runtime {

namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

std::string version_string(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace

model_library::~model_library() {
  if (handle_)
    dlclose(handle_);
}

std::string model_library::describe() const {
  return quote(table_ && table_->model_id ? table_->model_id : "?") + " (" +
         quote(path_) + ")";
}

status model_library::open(const std::string &path,
                           std::shared_ptr<model_library> *out) {
  const std::string where = quote(path);
  const int kind = path_kind(path);
  if (kind == 0)
    return bad_input_error(where + ": no such file");
  if (kind != 1)
    return bad_input_error(where + ": not a regular file");

  // dlopen searches the library path for names without a slash; a model
  // path always means a file.
  const std::string load_path =
      path.find('/') == std::string::npos ? "./" + path : path;
  std::shared_ptr<model_library> m(new model_library());
  m->path_ = path;
  dlerror();
  m->handle_ = dlopen(load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle_) {
    const char *why = dlerror();
    return bad_input_error(where + ": not an sgc model: cannot load it")
        .note(why ? why : "unknown dlopen error");
  }
  dlerror();
  void *sym = dlsym(m->handle_, SGC_ABI_QUERY_SYMBOL);
  if (!sym)
    return bad_input_error(where + ": not an sgc model")
        .note(std::string("the library does not export '") +
              SGC_ABI_QUERY_SYMBOL + "'");
  auto query = reinterpret_cast<sgc_abi_query_fn_t>(sym);
  const sgc_abi_header_t *h =
      query(SGC_ABI_VERSION_MAJOR, SGC_ABI_VERSION_MINOR);
  const std::string ours =
      version_string(SGC_ABI_VERSION_MAJOR, SGC_ABI_VERSION_MINOR);
  if (!h)
    return mismatch_error(where +
                          ": the model has no table for this "
                          "runtime's ABI " +
                          ours);
  if (h->magic != SGC_ABI_MAGIC)
    return bad_input_error(where + ": not an sgc model")
        .note("its table starts with magic " + hex32(h->magic) + ", not " +
              hex32(SGC_ABI_MAGIC));
  if (h->version_major != SGC_ABI_VERSION_MAJOR)
    return mismatch_error(where + ": model ABI version " +
                          version_string(h->version_major, h->version_minor) +
                          " is not supported by this runtime (ABI " + ours +
                          ")")
        .note(h->version_major > SGC_ABI_VERSION_MAJOR
                  ? "the model was compiled by a newer sgc; use a runtime of "
                    "ABI major " +
                        std::to_string(h->version_major)
                  : "the model was compiled by an older sgc; recompile it");
  if (h->struct_size < sizeof(sgc_model_v1_t))
    return bad_input_error(where + ": invalid model table: struct_size " +
                           std::to_string(h->struct_size) +
                           " is smaller than ABI " + ours + "'s " +
                           std::to_string(sizeof(sgc_model_v1_t)));
  m->table_ = reinterpret_cast<const sgc_model_v1_t *>(h);
  status st = m->validate();
  if (!st.ok())
    return st;
  *out = std::move(m);
  return status();
}

status model_library::validate() {
  const sgc_model_v1_t &t = *table_;
  const std::string where = quote(path_) + ": invalid model table: ";
  auto bad = [&](const std::string &why) {
    return bad_input_error(where + why);
  };

  if (!t.model_id || !t.target || !t.family)
    return bad("model_id, target and family must not be NULL");
  if (t.device != SGC_ABI_DEVICE_CPU && t.device != SGC_ABI_DEVICE_CUDA)
    return bad("unknown device " + std::to_string(t.device));
  if (t.vocab_size < 1 || t.context_length < 1 || t.max_prefill_chunk < 1)
    return bad("vocab_size, context_length and max_prefill_chunk must be "
               "positive (got " +
               std::to_string(t.vocab_size) + ", " +
               std::to_string(t.context_length) + ", " +
               std::to_string(t.max_prefill_chunk) + ")");
  auto token_ok = [&](int32_t id) { return id >= -1 && id < t.vocab_size; };
  if (!token_ok(t.bos_token_id) || !token_ok(t.eos_token_id) ||
      !token_ok(t.pad_token_id))
    return bad("special token ids must be -1 or below vocab_size");
  if (t.num_stop_tokens > 0 && !t.stop_tokens)
    return bad("stop_tokens is NULL");
  for (uint32_t i = 0; i < t.num_stop_tokens; ++i)
    if (t.stop_tokens[i] < 0 || t.stop_tokens[i] >= t.vocab_size)
      return bad("stop token " + std::to_string(t.stop_tokens[i]) +
                 " is outside the vocabulary");

  // The manifest.
  if (t.num_tensors > 0 && !t.tensors)
    return bad("tensors is NULL");
  std::set<std::string> names;
  for (uint32_t i = 0; i < t.num_tensors; ++i) {
    const sgc_abi_tensor_t &w = t.tensors[i];
    const std::string tw = "tensor " + std::to_string(i);
    if (!w.name || !*w.name)
      return bad(tw + " has no name");
    const std::string name = w.name;
    if (!names.insert(name).second)
      return bad("tensor " + quote(name) + " is listed twice");
    if (!dtype_is_valid(w.dtype))
      return bad("tensor " + quote(name) + ": unknown dtype " +
                 std::to_string(w.dtype));
    if (w.rank > SGC_ABI_MAX_RANK)
      return bad("tensor " + quote(name) + ": rank " + std::to_string(w.rank) +
                 " exceeds " + std::to_string(SGC_ABI_MAX_RANK));
    uint64_t bytes = dtype_size(static_cast<dtype>(w.dtype));
    for (uint32_t d = 0; d < w.rank; ++d)
      if (w.shape[d] < 0 ||
          __builtin_mul_overflow(bytes, static_cast<uint64_t>(w.shape[d]),
                                 &bytes))
        return bad("tensor " + quote(name) + ": invalid shape " +
                   shape_string(w.shape, w.rank));
    if (bytes != w.bytes)
      return bad(
          "tensor " + quote(name) + ": bytes is " + std::to_string(w.bytes) +
          ", but " + dtype_name(static_cast<dtype>(w.dtype)) + " x " +
          shape_string(w.shape, w.rank) + " is " + std::to_string(bytes));
    if (w.fill > SGC_ABI_FILL_ZEROS)
      return bad("tensor " + quote(name) + ": unknown fill " +
                 std::to_string(w.fill));
    if (__builtin_add_overflow(weight_bytes_, bytes, &weight_bytes_))
      return bad("total weight bytes overflow");
  }

  // The KV plan.
  if (t.num_layers > 0 && !t.kv_layers)
    return bad("kv_layers is NULL");
  k_bytes_.assign(t.num_layers, 0);
  v_bytes_.assign(t.num_layers, 0);
  for (uint32_t i = 0; i < t.num_layers; ++i) {
    const sgc_abi_kv_layer_t &l = t.kv_layers[i];
    const std::string lw = "layer " + std::to_string(i) + ": ";
    if (l.kind != SGC_ABI_KV_FULL && l.kind != SGC_ABI_KV_RING)
      return bad(lw + "unknown cache kind " + std::to_string(l.kind));
    if (!dtype_is_valid(l.dtype))
      return bad(lw + "unknown dtype " + std::to_string(l.dtype));
    if (l.slots < 1 || l.kv_heads < 1 || l.head_dim < 1)
      return bad(lw + "slots, kv_heads and head_dim must be positive");
    if (l.kind == SGC_ABI_KV_FULL && l.slots != t.context_length)
      return bad(lw + "a full cache needs context_length (" +
                 std::to_string(t.context_length) + ") slots, not " +
                 std::to_string(l.slots));
    if (l.v_from_k > 1 || l.has_v_cache > 1)
      return bad(lw + "v_from_k and has_v_cache must be 0 or 1");
    uint64_t per_slot = dtype_size(static_cast<dtype>(l.dtype));
    uint64_t k = 0, total = 0;
    if (__builtin_mul_overflow(per_slot, static_cast<uint64_t>(l.kv_heads),
                               &per_slot) ||
        __builtin_mul_overflow(per_slot, static_cast<uint64_t>(l.head_dim),
                               &per_slot) ||
        __builtin_mul_overflow(per_slot, static_cast<uint64_t>(l.slots), &k))
      return bad(lw + "cache size overflows");
    const uint64_t bpt = per_slot * (1 + l.has_v_cache);
    if (bpt != l.bytes_per_token)
      return bad(lw + "bytes_per_token is " +
                 std::to_string(l.bytes_per_token) + ", but the layer stores " +
                 std::to_string(bpt));
    k_bytes_[i] = k;
    v_bytes_[i] = l.has_v_cache ? k : 0;
    if (__builtin_add_overflow(kv_bytes_, k, &total) ||
        __builtin_add_overflow(total, v_bytes_[i], &kv_bytes_))
      return bad("total cache size overflows");
  }

  // Code.
  if (t.device == SGC_ABI_DEVICE_CPU && t.num_cpu_variants == 0)
    return bad("a CPU model needs at least one CPU variant");
  if (t.num_cpu_variants > 0 && !t.cpu_variants)
    return bad("cpu_variants is NULL");
  for (uint32_t i = 0; i < t.num_cpu_variants; ++i) {
    const sgc_abi_cpu_variant_t &v = t.cpu_variants[i];
    if (!v.name || !v.prefill || !v.decode)
      return bad("CPU variant " + std::to_string(i) +
                 " lacks a name or an entry point");
  }
  return status();
}

} // namespace runtime
} // namespace sgc
