/*
 * api.cc - the C API of sgc/runtime.h over the C++ internals. Every entry
 * point catches exceptions (only std::bad_alloc is expected) and turns them
 * into statuses: nothing escapes across the C boundary.
 */
#include <sgc/runtime.h>

#include "lib/safetensors/safetensors.h"
#include "lib/support/dtype.h"
#include "runtime/src/api_status.h"
#include "runtime/src/batch.h"
#include "runtime/src/cpu/cpu_features.h"
#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/model.h"
#include "runtime/src/session.h"
#include "runtime/src/weights.h"
#include "runtime/src/weight_source.h"

#include <sgc/abi.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>

using sgc::status;
using sgc::status_code;

static_assert(static_cast<int>(SGC_DTYPE_BF16) ==
                  static_cast<int>(SGC_ABI_DTYPE_BF16),
              "");
static_assert(static_cast<int>(SGC_DTYPE_F8_E8M0) ==
                  static_cast<int>(SGC_ABI_DTYPE_F8_E8M0),
              "");
static_assert(SGC_STATUS_MISMATCH == static_cast<int>(status_code::mismatch),
              "");
static_assert(SGC_STATUS_INTERNAL == static_cast<int>(status_code::internal),
              "");
static_assert(static_cast<int>(SGC_KV_RING) ==
                  static_cast<int>(SGC_ABI_KV_RING),
              "");
static_assert(static_cast<int>(SGC_DEVICE_CUDA) ==
                  static_cast<int>(SGC_ABI_DEVICE_CUDA),
              "");

struct sgc_checkpoint_t {
  std::unique_ptr<sgc::runtime::weight_source> impl;
};

struct sgc_model_t {
  std::shared_ptr<sgc::runtime::model_library> impl;
};

struct sgc_weights_t {
  std::shared_ptr<sgc::runtime::bound_weights> impl;
};

struct sgc_session_t {
  std::unique_ptr<sgc::runtime::session> impl;
};

struct sgc_batch_t {
  sgc::runtime::batch impl;
};

namespace {

/// Returned when not even a status can be allocated; never freed.
sgc_status_t *out_of_memory_status() {
  static sgc_status_t oom{sgc::internal_error("out of memory")};
  return &oom;
}

/// NULL for ok, else a heap status the caller frees.
sgc_status_t *to_c(status st) {
  if (st.ok())
    return nullptr;
  try {
    return new sgc_status_t{std::move(st)};
  } catch (...) {
    return out_of_memory_status();
  }
}

sgc_status_t *from_exception() {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return out_of_memory_status();
  } catch (const std::exception &e) {
    return to_c(
        sgc::internal_error(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return to_c(sgc::internal_error("unexpected exception"));
  }
}

sgc_status_t *null_argument(const char *what) {
  return to_c(sgc::usage_error(std::string(what) + " must not be NULL"));
}

} // namespace

sgc_status_t *sgc::runtime::status_to_c(status st) { return to_c(std::move(st)); }
sgc_status_t *sgc::runtime::status_from_exception() { return from_exception(); }

#define SGC_API_TRY try {
#define SGC_API_CATCH                                                          \
  }                                                                            \
  catch (...) {                                                                \
    return from_exception();                                                   \
  }

extern "C" {

/*===--- Status
 * ------------------------------------------------------------===*/

sgc_status_code_t sgc_status_code(const sgc_status_t *s) {
  return s ? static_cast<sgc_status_code_t>(s->st.code()) : SGC_STATUS_OK;
}

const char *sgc_status_message(const sgc_status_t *s) {
  return s ? s->st.message().c_str() : "";
}

size_t sgc_status_note_count(const sgc_status_t *s) {
  return s ? s->st.notes().size() : 0;
}

const char *sgc_status_note(const sgc_status_t *s, size_t index) {
  if (!s || index >= s->st.notes().size())
    return "";
  return s->st.notes()[index].c_str();
}

void sgc_status_free(sgc_status_t *s) {
  if (s != out_of_memory_status())
    delete s;
}

const char *sgc_status_code_name(sgc_status_code_t code) {
  return sgc::status_code_name(static_cast<status_code>(code));
}

/*===--- Versions, dtypes, devices
 * -----------------------------------------===*/

const char *sgc_runtime_version(void) { return "0.1.0"; }

void sgc_runtime_abi_version(uint32_t *out_major, uint32_t *out_minor) {
  if (out_major)
    *out_major = SGC_ABI_VERSION_MAJOR;
  if (out_minor)
    *out_minor = SGC_ABI_VERSION_MINOR;
}

const char *sgc_dtype_name(sgc_dtype_t dtype) {
  return sgc::dtype_name(static_cast<sgc::dtype>(dtype));
}

size_t sgc_dtype_size(sgc_dtype_t dtype) {
  return sgc::dtype_size(static_cast<sgc::dtype>(dtype));
}

sgc_status_t *sgc_device_probe(sgc_device_kind_t kind, int32_t ordinal) {
  SGC_API_TRY
  switch (kind) {
  case SGC_DEVICE_CPU:
  case SGC_DEVICE_CUDA_EMU:
    return nullptr;
  case SGC_DEVICE_CUDA:
    return to_c(sgc::runtime::probe_cuda(sgc::runtime::cuda_driver_library,
                                         ordinal, nullptr));
  }
  return to_c(sgc::usage_error("unknown device kind"));
  SGC_API_CATCH
}

uint64_t sgc_cpu_features(void) { return sgc::runtime::detect_cpu_features(); }

size_t sgc_cpu_features_string(uint64_t features, char *buf, size_t size) {
  try {
    const std::string s = sgc::runtime::cpu_feature_names(features);
    if (buf && size > 0) {
      const size_t n = s.size() < size - 1 ? s.size() : size - 1;
      std::memcpy(buf, s.data(), n);
      buf[n] = '\0';
    }
    return s.size() + 1;
  } catch (...) {
    if (buf && size > 0)
      buf[0] = '\0';
    return 0;
  }
}

int32_t sgc_default_thread_count(void) {
  try {
    return sgc::runtime::physical_core_count();
  } catch (...) {
    return 1;
  }
}

/*===--- Tensors
 * -----------------------------------------------------------===*/

sgc_status_t *sgc_safetensors_write(const char *path,
                                    const sgc_tensor_view_t *tensors,
                                    size_t count) {
  SGC_API_TRY
  if (!path)
    return null_argument("path");
  if (count > 0 && !tensors)
    return null_argument("tensors");
  std::vector<sgc::safetensors::tensor_source> sources(count);
  for (size_t i = 0; i < count; ++i) {
    const sgc_tensor_view_t &v = tensors[i];
    if (!v.name || (v.rank > 0 && !v.shape))
      return null_argument("tensor name and shape");
    sources[i].name = v.name;
    sources[i].type = static_cast<sgc::dtype>(v.dtype);
    sources[i].shape.assign(v.shape, v.shape + v.rank);
    sources[i].data = v.data;
  }
  return to_c(sgc::safetensors::write(path, sources));
  SGC_API_CATCH
}

/*===--- Checkpoints
 * -------------------------------------------------------===*/

sgc_status_t *sgc_checkpoint_open(const char *path,
                                  sgc_checkpoint_t **out_checkpoint) {
  SGC_API_TRY
  if (!path || !out_checkpoint)
    return null_argument("path and out_checkpoint");
  auto c = std::make_unique<sgc_checkpoint_t>();
  status st = sgc::runtime::weight_source::open(path, &c->impl);
  if (!st.ok())
    return to_c(std::move(st));
  *out_checkpoint = c.release();
  return nullptr;
  SGC_API_CATCH
}

void sgc_checkpoint_release(sgc_checkpoint_t *c) { delete c; }

size_t sgc_checkpoint_tensor_count(const sgc_checkpoint_t *c) {
  return c ? c->impl->tensors().size() : 0;
}

int sgc_checkpoint_tensor(const sgc_checkpoint_t *c, size_t index,
                          sgc_tensor_info_t *out_info) {
  if (!c || !out_info || index >= c->impl->tensors().size())
    return 0;
  const auto &e = c->impl->tensors()[index];
  sgc_tensor_info_t info{};
  info.name = e.name.c_str();
  info.dtype = static_cast<sgc_dtype_t>(e.type);
  info.rank = static_cast<uint32_t>(e.shape.size());
  info.shape = e.shape.data();
  info.bytes = e.bytes;
  info.location = e.file.c_str();
  info.fill = 0;
  *out_info = info;
  return 1;
}

const char *sgc_checkpoint_tensor_encoding(const sgc_checkpoint_t *c,
                                           size_t index) {
  if (!c || index >= c->impl->tensors().size())
    return nullptr;
  return c->impl->tensors()[index].type_name.c_str();
}

size_t sgc_checkpoint_shard_count(const sgc_checkpoint_t *c) {
  return c ? c->impl->files().size() : 0;
}

const char *sgc_checkpoint_shard_path(const sgc_checkpoint_t *c, size_t index) {
  if (!c || index >= c->impl->files().size())
    return nullptr;
  return c->impl->files()[index].c_str();
}

uint64_t sgc_checkpoint_tensor_bytes(const sgc_checkpoint_t *c) {
  return c ? c->impl->tensor_bytes() : 0;
}

/*===--- Models
 * ------------------------------------------------------------===*/

sgc_status_t *sgc_model_open(const char *library_path,
                             sgc_model_t **out_model) {
  SGC_API_TRY
  if (!library_path || !out_model)
    return null_argument("library_path and out_model");
  auto m = std::make_unique<sgc_model_t>();
  status st = sgc::runtime::model_library::open(library_path, &m->impl);
  if (!st.ok())
    return to_c(std::move(st));
  *out_model = m.release();
  return nullptr;
  SGC_API_CATCH
}

void sgc_model_release(sgc_model_t *m) { delete m; }

void sgc_model_get_info(const sgc_model_t *m, sgc_model_info_t *out) {
  if (!m || !out)
    return;
  const sgc_model_v2_t &t = m->impl->table();
  sgc_model_info_t info{};
  info.model_id = t.model_id;
  info.target = t.target;
  info.family = t.family;
  info.producer = t.producer ? t.producer : "";
  info.abi_major = t.header.version_major;
  info.abi_minor = t.header.version_minor;
  info.device = static_cast<sgc_device_kind_t>(t.device);
  info.vocab_size = t.vocab_size;
  info.context_length = t.context_length;
  info.max_prefill_chunk = t.max_prefill_chunk;
  info.bos_token_id = t.bos_token_id;
  info.eos_token_id = t.eos_token_id;
  info.pad_token_id = t.pad_token_id;
  info.num_stop_tokens = t.num_stop_tokens;
  info.stop_tokens = t.stop_tokens;
  info.num_tensors = t.num_tensors;
  info.weight_bytes = m->impl->weight_bytes();
  info.num_layers = t.num_layers;
  info.kv_cache_bytes = m->impl->kv_cache_bytes();
  info.workspace_bytes = t.workspace_bytes;
  info.num_variants = t.num_variants;
  *out = info;
}

size_t sgc_model_decode_batches(const sgc_model_t *m, int64_t *out_rows,
                                size_t capacity) {
  if (!m)
    return 0;
  const auto &batches = m->impl->decode_batches();
  for (size_t i = 0; out_rows && i < batches.size() && i < capacity; ++i)
    out_rows[i] = batches[i]->max_tokens;
  return batches.size();
}

int sgc_model_image_info(const sgc_model_t *m, sgc_model_image_info_t *out) {
  if (!m || !out)
    return 0;
  const sgc_abi_image_t *img = m->impl->image();
  const sgc_abi_phase_t *phase =
      m->impl->phase(SGC_ABI_PHASE_ENCODE_IMAGE);
  if (!img || !phase)
    return 0;
  sgc_model_image_info_t info{};
  info.tokens = {img->image_token_id, img->boi_token_id, img->eoi_token_id};
  const bool gemma4 = std::strcmp(m->impl->table().family, "gemma4") == 0;
  sgc_image_options_default(gemma4 ? SGC_IMAGE_FAMILY_GEMMA4
                                   : SGC_IMAGE_FAMILY_GEMMA3,
                            &info.options);
  if (gemma4) {
    info.options.patch_size = img->patch_size;
    info.options.pooling_kernel_size = img->pooling_kernel;
    info.options.max_soft_tokens = static_cast<int32_t>(img->soft_tokens);
  } else {
    info.options.image_size = img->image_size;
  }
  info.soft_tokens = img->soft_tokens;
  info.hidden_size = phase->logits.shape[1];
  info.patches = m->impl->image_patches();
  info.patch_values = m->impl->image_patch_values();
  *out = info;
  return 1;
}

int sgc_model_tensor(const sgc_model_t *m, size_t index,
                     sgc_tensor_info_t *out) {
  if (!m || !out || index >= m->impl->table().num_tensors)
    return 0;
  const sgc_abi_tensor_t &w = m->impl->table().tensors[index];
  sgc_tensor_info_t info{};
  info.name = w.name;
  info.dtype = static_cast<sgc_dtype_t>(w.dtype);
  info.rank = w.rank;
  info.shape = w.shape;
  info.bytes = w.bytes;
  info.location = w.graph_object ? w.graph_object : "";
  info.fill = w.fill;
  *out = info;
  return 1;
}

int sgc_model_kv_layer(const sgc_model_t *m, size_t index,
                       sgc_kv_layer_info_t *out) {
  if (!m || !out || index >= m->impl->table().num_layers)
    return 0;
  const sgc_abi_kv_layer_t &l = m->impl->table().kv_layers[index];
  sgc_kv_layer_info_t info{};
  info.kind = static_cast<sgc_kv_kind_t>(l.kind);
  info.dtype = static_cast<sgc_dtype_t>(l.dtype);
  info.slots = l.slots;
  info.kv_heads = l.kv_heads;
  info.head_dim = l.head_dim;
  info.v_from_k = static_cast<int>(l.v_from_k);
  info.has_v_cache = static_cast<int>(l.has_v_cache);
  info.bytes_per_token = l.bytes_per_token;
  info.bytes = m->impl->k_bytes(index) + m->impl->v_bytes(index);
  *out = info;
  return 1;
}

int sgc_model_variant(const sgc_model_t *m, size_t index,
                      sgc_variant_info_t *out) {
  if (!m || !out || index >= m->impl->table().num_variants)
    return 0;
  const sgc_abi_variant_t &v = m->impl->table().variants[index];
  sgc_variant_info_t info{};
  info.name = v.name;
  info.device = static_cast<sgc_device_kind_t>(v.device);
  info.required_cpu_features = v.required_cpu_features;
  info.supported =
      v.device == SGC_ABI_DEVICE_CPU &&
      (v.required_cpu_features & ~sgc::runtime::detect_cpu_features()) == 0;
  *out = info;
  return 1;
}

/*===--- Weights
 * -----------------------------------------------------------===*/

void sgc_weights_options_default(sgc_weights_options_t *o) {
  if (!o)
    return;
  std::memset(o, 0, sizeof *o);
  o->format = SGC_LOAD_FORMAT_AUTO;
}

sgc_status_t *sgc_weights_bind(sgc_model_t *model, const char *path,
                               const sgc_weights_options_t *options,
                               sgc_weights_t **out_weights) {
  SGC_API_TRY
  if (!model || !out_weights)
    return null_argument("model and out_weights");
  sgc_weights_options_t o;
  sgc_weights_options_default(&o);
  if (options)
    o = *options;
  auto w = std::make_unique<sgc_weights_t>();
  status st = sgc::runtime::bound_weights::bind(model->impl, path, o, &w->impl);
  if (!st.ok())
    return to_c(std::move(st));
  *out_weights = w.release();
  return nullptr;
  SGC_API_CATCH
}

void sgc_weights_release(sgc_weights_t *w) { delete w; }

sgc_load_format_t sgc_weights_format(const sgc_weights_t *w) {
  return w ? w->impl->format() : SGC_LOAD_FORMAT_AUTO;
}

uint64_t sgc_weights_bytes(const sgc_weights_t *w) {
  return w ? w->impl->bytes() : 0;
}

uint64_t sgc_weights_copied_bytes(const sgc_weights_t *w) {
  return w ? w->impl->copied_bytes() : 0;
}

sgc_weights_placement_t sgc_weights_placement(const sgc_weights_t *w) {
  return w ? w->impl->placement() : SGC_WEIGHTS_MAP;
}

const char *sgc_weights_source_name(const sgc_weights_t *w, size_t index) {
  if (!w || index >= w->impl->source_names().size())
    return nullptr;
  return w->impl->source_names()[index].c_str();
}

sgc_status_t *
sgc_model_write_dummy_weights(const sgc_model_t *model, const char *path,
                              const sgc_weights_options_t *options) {
  SGC_API_TRY
  if (!model || !path)
    return null_argument("model and path");
  sgc_weights_options_t o;
  sgc_weights_options_default(&o);
  if (options)
    o = *options;
  return to_c(sgc::runtime::write_dummy_weights(*model->impl, path, o));
  SGC_API_CATCH
}

/*===--- Sessions
 * ----------------------------------------------------------===*/

void sgc_session_options_default(sgc_session_options_t *o) {
  if (!o)
    return;
  std::memset(o, 0, sizeof *o);
  o->device = SGC_DEVICE_CPU;
}

sgc_status_t *sgc_session_create(sgc_model_t *model, sgc_weights_t *weights,
                                 const sgc_session_options_t *options,
                                 sgc_session_t **out_session) {
  SGC_API_TRY
  if (!model || !weights || !out_session)
    return null_argument("model, weights and out_session");
  sgc_session_options_t o;
  sgc_session_options_default(&o);
  if (options)
    o = *options;
  auto s = std::make_unique<sgc_session_t>();
  status st =
      sgc::runtime::session::create(model->impl, weights->impl, o, &s->impl);
  if (!st.ok())
    return to_c(std::move(st));
  *out_session = s.release();
  return nullptr;
  SGC_API_CATCH
}

void sgc_session_release(sgc_session_t *s) { delete s; }

uint64_t sgc_session_kv_cache_bytes(const sgc_session_t *s) {
  return s ? s->impl->kv_cache_bytes() : 0;
}

int64_t sgc_session_context(const sgc_session_t *s) {
  return s ? s->impl->context() : 0;
}

uint64_t sgc_model_kv_cache_bytes_at(const sgc_model_t *m, int64_t context) {
  if (!m)
    return 0;
  const int64_t full = m->impl->table().context_length;
  return m->impl->kv_cache_bytes_at(context > 0 ? std::min(context, full)
                                                : full);
}

uint64_t sgc_session_workspace_bytes(const sgc_session_t *s) {
  return s ? s->impl->workspace_bytes() : 0;
}

int32_t sgc_session_num_threads(const sgc_session_t *s) {
  return s ? s->impl->num_threads() : 0;
}

const char *sgc_session_variant(const sgc_session_t *s) {
  return s ? s->impl->variant() : "";
}

const char *sgc_session_tuning(const sgc_session_t *s) {
  return s ? s->impl->tuning() : "";
}

sgc_status_t *sgc_session_prefill(sgc_session_t *s, const int32_t *tokens,
                                  int64_t n, int64_t pos0, float *logits_out,
                                  int all_positions) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  return to_c(s->impl->prefill(tokens, n, pos0, logits_out, all_positions));
  SGC_API_CATCH
}

sgc_status_t *sgc_session_decode(sgc_session_t *s, int32_t token, int64_t pos,
                                 float *logits_out) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  return to_c(s->impl->decode(token, pos, logits_out));
  SGC_API_CATCH
}

int32_t sgc_session_num_sequences(const sgc_session_t *s) {
  return s ? s->impl->num_sequences() : 0;
}

sgc_status_t *sgc_session_use_sequence(sgc_session_t *s, int32_t sequence) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  return to_c(s->impl->use_sequence(sequence));
  SGC_API_CATCH
}

sgc_status_t *sgc_session_decode_batch(sgc_session_t *s, int64_t n,
                                       const int32_t *sequences,
                                       const int32_t *tokens,
                                       const int64_t *positions,
                                       float *logits_out) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  return to_c(s->impl->decode_batch(n, sequences, tokens, positions,
                                    logits_out));
  SGC_API_CATCH
}

sgc_status_t *sgc_session_generate_batch(sgc_session_t *s,
                                         sgc_sequence_request_t *requests,
                                         size_t n) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  return to_c(s->impl->generate_batch(requests, n));
  SGC_API_CATCH
}

sgc_status_t *sgc_batch_create(sgc_session_t *s, sgc_batch_t **out) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  if (!out)
    return null_argument("out_batch");
  *out = new sgc_batch_t{sgc::runtime::batch(*s->impl)};
  return nullptr;
  SGC_API_CATCH
}

void sgc_batch_release(sgc_batch_t *b) { delete b; }

sgc_status_t *sgc_batch_add(sgc_batch_t *b, sgc_sequence_request_t *request,
                            int32_t *out_slot) {
  SGC_API_TRY
  if (!b)
    return null_argument("batch");
  return to_c(b->impl.add(request, out_slot));
  SGC_API_CATCH
}

int sgc_batch_cancel(sgc_batch_t *b, const sgc_sequence_request_t *request) {
  return b && b->impl.cancel(request) ? 1 : 0;
}

sgc_status_t *sgc_batch_step(sgc_batch_t *b, sgc_sequence_request_t **ended,
                             size_t *num_ended) {
  SGC_API_TRY
  if (!b)
    return null_argument("batch");
  std::vector<sgc_sequence_request_t *> done;
  sgc::status st = b->impl.step(&done);
  for (size_t i = 0; ended && i < done.size(); ++i)
    ended[i] = done[i];
  if (num_ended)
    *num_ended = done.size();
  return to_c(std::move(st));
  SGC_API_CATCH
}

int32_t sgc_batch_running(const sgc_batch_t *b) {
  return b ? b->impl.running() : 0;
}

int32_t sgc_batch_free_slots(const sgc_batch_t *b) {
  return b ? b->impl.free_slots() : 0;
}

sgc_status_t *sgc_session_encode_image(sgc_session_t *s,
                                       const sgc_image_t *image,
                                       float *out_soft_tokens,
                                       int64_t *out_count) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  if (!image)
    return null_argument("image");
  return to_c(s->impl->encode_image(*image, out_soft_tokens, out_count));
  SGC_API_CATCH
}

void sgc_generate_options_default(sgc_generate_options_t *o) {
  if (!o)
    return;
  std::memset(o, 0, sizeof *o);
  o->max_new_tokens = 16;
  o->top_p = 1.0f;
  o->repetition_penalty = 1.0f;
}

sgc_status_t *sgc_session_generate(sgc_session_t *s, const int32_t *prompt,
                                   int64_t n_prompt,
                                   const sgc_generate_options_t *options,
                                   int64_t *out_num_generated) {
  SGC_API_TRY
  if (!s)
    return null_argument("session");
  sgc_generate_options_t o;
  sgc_generate_options_default(&o);
  if (options)
    o = *options;
  return to_c(s->impl->generate(prompt, n_prompt, o, out_num_generated));
  SGC_API_CATCH
}

} // extern "C"
