/*
 * model.cc - opening compiled models: the ELF image is checked before
 * dlopen (elf_check.h), the ABI header before any other byte of the table
 * is read, then every field the runtime relies on.
 */
#include "runtime/src/model.h"

#include "lib/support/dtype.h"
#include "lib/support/mapped_file.h"
#include "runtime/src/elf_check.h"
#include "runtime/src/memory.h"

#include <algorithm>
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

  // dlopen maps whatever the program headers claim; in a truncated file
  // the first touch of a page past the end is a SIGBUS. So the ELF image
  // is checked first (elf_check.h).
  {
    mapped_file image;
    status st = mapped_file::open(path, &image);
    if (!st.ok())
      return st;
    const elf_verdict v = check_elf_library(image.data(), image.size());
    if (!v.ok()) {
      status e = bad_input_error(where + ": not an sgc model: " + v.reason);
      if (v.what == elf_verdict::kind::truncated)
        e.note("an interrupted copy or build leaves such a file; copy or "
               "compile it again");
      return e;
    }
  }

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
  // A 2.0/2.1 table ends before the 2.2 fields; cuda_emu() reads them only
  // when they are there.
  if (h->struct_size < SGC_ABI_MODEL_V2_1_SIZE)
    return bad_input_error(where + ": invalid model table: struct_size " +
                           std::to_string(h->struct_size) +
                           " is smaller than ABI 2.0's " +
                           std::to_string(SGC_ABI_MODEL_V2_1_SIZE));
  m->table_ = reinterpret_cast<const sgc_model_v2_t *>(h);
  status st = m->validate();
  if (!st.ok())
    return st;
  *out = std::move(m);
  return status();
}

void *model_library::symbol(const char *name) const {
  return dlsym(handle_, name);
}

status model_library::validate() {
  const sgc_model_v2_t &t = *table_;
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
    uint64_t bytes = 0;
    if (!dtype_tensor_bytes(static_cast<dtype>(w.dtype), w.shape, w.rank,
                            &bytes))
      return bad("tensor " + quote(name) + ": invalid shape " +
                 shape_string(w.shape, w.rank) + " for " +
                 dtype_name(static_cast<dtype>(w.dtype)));
    if (bytes != w.bytes)
      return bad(
          "tensor " + quote(name) + ": bytes is " + std::to_string(w.bytes) +
          ", but " + dtype_name(static_cast<dtype>(w.dtype)) + " x " +
          shape_string(w.shape, w.rank) + " is " + std::to_string(bytes));
    if (w.num_alt_names > 0 && !w.alt_names)
      return bad("tensor " + quote(name) + ": alt_names is NULL");
    for (uint32_t a = 0; a < w.num_alt_names; ++a)
      if (!w.alt_names[a] || !*w.alt_names[a])
        return bad("tensor " + quote(name) + ": alternative name " +
                   std::to_string(a) + " is empty");
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

  return validate_plan();
}

int64_t model_library::slots_at(size_t layer, int64_t context) const {
  return std::min(table_->kv_layers[layer].slots, context);
}

uint64_t model_library::k_bytes_at(size_t layer, int64_t context) const {
  const int64_t slots = table_->kv_layers[layer].slots;
  // Validated: slots x bytes per slot does not overflow, and fewer slots
  // take proportionally fewer bytes.
  return k_bytes_[layer] / static_cast<uint64_t>(slots) *
         static_cast<uint64_t>(slots_at(layer, context));
}

uint64_t model_library::v_bytes_at(size_t layer, int64_t context) const {
  return v_bytes_[layer] ? k_bytes_at(layer, context) : 0;
}

uint64_t model_library::kv_cache_bytes_at(int64_t context) const {
  uint64_t total = 0;
  for (uint32_t i = 0; i < table_->num_layers; ++i)
    total += k_bytes_at(i, context) + v_bytes_at(i, context);
  return total;
}

status model_library::kv_buffer_offsets(int64_t context, int32_t sequences,
                                        uint64_t alignment,
                                        std::vector<uint64_t> *offsets,
                                        uint64_t *total) const {
  offsets->clear();
  *total = 0;
  for (int32_t s = 0; s < sequences; ++s)
    for (uint32_t i = 0; i < table_->num_layers; ++i)
      for (uint64_t bytes : {k_bytes_at(i, context), v_bytes_at(i, context)}) {
        uint64_t off = 0;
        if (!align_up(*total, alignment, &off) ||
            __builtin_add_overflow(off, bytes, total))
          return internal_error("KV cache size overflows");
        offsets->push_back(off);
      }
  return status();
}

const sgc_abi_phase_t *model_library::phase(uint32_t kind) const {
  for (uint32_t i = 0; i < table_->num_phases; ++i)
    if (table_->phases[i].kind == kind)
      return &table_->phases[i];
  return nullptr;
}

namespace {

/// Bytes of a workspace operand with |tokens| for its token dimensions, or
/// 0 when the operand is malformed.
uint64_t operand_bytes(const sgc_abi_operand_t &o, int64_t tokens) {
  if (!dtype_is_valid(o.dtype) || o.rank < 1 ||
      o.rank > SGC_ABI_MAX_OPERAND_RANK)
    return 0;
  uint64_t bytes = dtype_size(static_cast<dtype>(o.dtype));
  for (uint32_t d = 0; d < o.rank; ++d) {
    const int64_t dim = o.shape[d] == SGC_ABI_DIM_TOKENS ? tokens : o.shape[d];
    if (dim < 1 ||
        __builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
      return 0;
  }
  return bytes;
}

} // namespace

/// The plan (phases, steps, operands) and the variants that run it: every
/// index in range, every workspace buffer inside the workspace.
status model_library::validate_plan() {
  const sgc_model_v2_t &t = *table_;
  const std::string where = quote(path_) + ": invalid model table: ";
  auto bad = [&](const std::string &why) {
    return bad_input_error(where + why);
  };
  if (t.num_phases == 0 || !t.phases)
    return bad("the model has no phases");
  if ((t.num_steps > 0 && !t.steps) || (t.num_operands > 0 && !t.operands))
    return bad("steps or operands is NULL");
  if (t.num_variants == 0 || !t.variants)
    return bad("the model has no variants");

  uint32_t max_function = 0;
  bool any_step = false;
  for (uint32_t p = 0; p < t.num_phases; ++p) {
    const sgc_abi_phase_t &ph = t.phases[p];
    const std::string pw = "phase " + std::to_string(p) + ": ";
    if (ph.kind > SGC_ABI_PHASE_DECODE_BATCH)
      return bad(pw + "unknown kind " + std::to_string(ph.kind));
    const bool batched = ph.kind == SGC_ABI_PHASE_DECODE_BATCH;
    for (uint32_t q = 0; q < p; ++q)
      if (t.phases[q].kind == ph.kind &&
          (!batched || t.phases[q].max_tokens == ph.max_tokens))
        return bad(pw + "a second phase of kind " + std::to_string(ph.kind) +
                   (batched ? " for " + std::to_string(ph.max_tokens) +
                                  " rows"
                            : std::string()));
    if (batched && ph.max_tokens > 1)
      decode_batches_.push_back(&ph);
    const int64_t want_tokens = ph.kind == SGC_ABI_PHASE_DECODE ? 1
                                : ph.kind == SGC_ABI_PHASE_PREFILL
                                    ? t.max_prefill_chunk
                                    : ph.max_tokens;
    if (ph.max_tokens != want_tokens || ph.max_tokens < 1)
      return bad(pw + "max_tokens is " + std::to_string(ph.max_tokens) +
                 ", expected " + std::to_string(want_tokens));
    if (ph.first_step > t.num_steps ||
        ph.num_steps > t.num_steps - ph.first_step)
      return bad(pw + "steps [" + std::to_string(ph.first_step) + ", +" +
                 std::to_string(ph.num_steps) + ") outside the " +
                 std::to_string(t.num_steps) + " steps");
    // Every operand this phase passes, at its largest token count.
    auto check_operand = [&](const sgc_abi_operand_t &o,
                             const std::string &ow) -> status {
      // The row a DECODE_BATCH operand is of (abi.h 2.7).
      if ((o.kind == SGC_ABI_OPERAND_POSITION ||
           o.kind == SGC_ABI_OPERAND_K_CACHE ||
           o.kind == SGC_ABI_OPERAND_V_CACHE) &&
          o.offset >= static_cast<uint64_t>(batched ? ph.max_tokens : 1))
        return bad(ow + "row " + std::to_string(o.offset) + " of a phase of " +
                   std::to_string(batched ? ph.max_tokens : 1) + " rows");
      switch (o.kind) {
      case SGC_ABI_OPERAND_TOKENS:
      case SGC_ABI_OPERAND_POSITION:
        return status();
      case SGC_ABI_OPERAND_WEIGHT:
        if (o.index >= t.num_tensors)
          return bad(ow + "weight " + std::to_string(o.index) +
                     " is not in the manifest");
        return status();
      case SGC_ABI_OPERAND_K_CACHE:
      case SGC_ABI_OPERAND_V_CACHE:
        if (o.index >= t.num_layers)
          return bad(ow + "layer " + std::to_string(o.index) +
                     " is not in the KV plan");
        if (o.kind == SGC_ABI_OPERAND_V_CACHE &&
            !t.kv_layers[o.index].has_v_cache)
          return bad(ow + "layer " + std::to_string(o.index) +
                     " has no V cache");
        return status();
      case SGC_ABI_OPERAND_WORKSPACE: {
        const uint64_t bytes = operand_bytes(o, ph.max_tokens);
        uint64_t end = 0;
        if (bytes == 0 || o.offset % 64 != 0 ||
            __builtin_add_overflow(o.offset, bytes, &end) ||
            end > t.workspace_bytes)
          return bad(ow + "workspace buffer at offset " +
                     std::to_string(o.offset) + " (" + std::to_string(bytes) +
                     " bytes) is malformed or outside the workspace of " +
                     std::to_string(t.workspace_bytes) + " bytes");
        return status();
      }
      case SGC_ABI_OPERAND_PIXELS:
      case SGC_ABI_OPERAND_PATCH_POSITIONS: {
        const bool pixels = o.kind == SGC_ABI_OPERAND_PIXELS;
        if (pixels && image_patch_values_ != 0 &&
            image_patch_values_ != o.shape[1])
          return bad(ow + "pixels of two widths in one phase");
        if (pixels) {
          image_patches_ = o.shape[0];
          image_patch_values_ = o.shape[1];
        }
        if (ph.kind != SGC_ABI_PHASE_ENCODE_IMAGE || o.rank != 2 ||
            o.dtype != (pixels ? SGC_ABI_DTYPE_F32 : SGC_ABI_DTYPE_I32) ||
            o.shape[0] != ph.max_tokens ||
            (pixels ? o.shape[1] < 1 : o.shape[1] != 2))
          return bad(ow + (pixels ? "pixels" : "patch positions") +
                     " must be an encode_image operand of " +
                     (pixels ? "F32 [patches, values]" : "I32 [patches, 2]") +
                     " with patches = max_tokens");
        return status();
      }
      case SGC_ABI_OPERAND_IMAGE_EMBEDS:
      case SGC_ABI_OPERAND_IMAGE_BLOCKS: {
        const bool embeds = o.kind == SGC_ABI_OPERAND_IMAGE_EMBEDS;
        if (ph.kind != SGC_ABI_PHASE_PREFILL ||
            o.rank != (embeds ? 2u : 1u) ||
            o.dtype != (embeds ? SGC_ABI_DTYPE_F32 : SGC_ABI_DTYPE_I32) ||
            o.shape[0] != SGC_ABI_DIM_TOKENS || (embeds && o.shape[1] < 1) ||
            (embeds && image_embed_width_ != 0 &&
             image_embed_width_ != o.shape[1]))
          return bad(ow + (embeds ? "image soft tokens" : "image blocks") +
                     " must be a prefill operand of " +
                     (embeds ? "F32 [tokens, hidden]" : "I32 [tokens]"));
        if (embeds)
          image_embed_width_ = o.shape[1];
        prefill_takes_images_ = true;
        return status();
      }
      default:
        return bad(ow + "unknown operand kind " + std::to_string(o.kind));
      }
    };
    for (uint32_t s = ph.first_step; s < ph.first_step + ph.num_steps; ++s) {
      const sgc_abi_step_t &st = t.steps[s];
      const std::string sw = "step " + std::to_string(s) + ": ";
      if (st.first_operand > t.num_operands ||
          st.num_operands > t.num_operands - st.first_operand)
        return bad(sw + "operands outside the table");
      for (uint32_t j = 0; j < st.num_operands; ++j) {
        status err = check_operand(t.operands[st.first_operand + j],
                                   sw + "operand " + std::to_string(j) + ": ");
        if (!err.ok())
          return err;
      }
      max_function = std::max(max_function, st.function);
      max_step_operands_ = std::max(max_step_operands_, st.num_operands);
      any_step = true;
    }
    const sgc_abi_operand_t &logits = ph.logits;
    const bool encode = ph.kind == SGC_ABI_PHASE_ENCODE_IMAGE;
    const sgc_abi_image_t *img = image();
    if (encode &&
        (!img || logits.kind != SGC_ABI_OPERAND_WORKSPACE ||
         logits.rank != 2 || logits.shape[0] != img->soft_tokens ||
         logits.shape[1] < 1 ||
         (logits.dtype != SGC_ABI_DTYPE_F32 &&
          logits.dtype != SGC_ABI_DTYPE_BF16)))
      return bad(pw + "an encode_image phase needs the image record and "
                      "writes [soft_tokens, hidden] F32 or BF16 soft tokens");
    if (!encode &&
        (logits.kind != SGC_ABI_OPERAND_WORKSPACE || logits.rank != 2 ||
         logits.shape[1] != t.vocab_size ||
         (logits.dtype != SGC_ABI_DTYPE_F32 &&
          logits.dtype != SGC_ABI_DTYPE_BF16)))
      return bad(pw + "logits must be a [tokens, vocab_size] workspace "
                      "buffer of F32 or BF16");
    status err = check_operand(logits, pw + "logits: ");
    if (!err.ok())
      return err;
    if (const sgc_abi_operand_t *best = argmax(ph)) {
      if (encode || best->kind != SGC_ABI_OPERAND_WORKSPACE ||
          best->dtype != SGC_ABI_DTYPE_I32 || best->rank != 1 ||
          best->shape[0] != 1)
        return bad(pw + "the argmax must be a [1] I32 workspace buffer of a "
                        "prefill or decode phase");
      err = check_operand(*best, pw + "argmax: ");
      if (!err.ok())
        return err;
    }
  }
  std::sort(decode_batches_.begin(), decode_batches_.end(),
            [](const sgc_abi_phase_t *a, const sgc_abi_phase_t *b) {
              return a->max_tokens < b->max_tokens;
            });
  if (!phase(SGC_ABI_PHASE_PREFILL) || !phase(SGC_ABI_PHASE_DECODE))
    return bad("the model needs a prefill and a decode phase");
  if (image() && !phase(SGC_ABI_PHASE_ENCODE_IMAGE))
    return bad("the model has an image record but no encode_image phase");
  if (prefill_takes_images_ != (image() != nullptr))
    return bad("the prefill phase takes image rows exactly when the model "
               "has an image record");
  if (image() && image_embed_width_ !=
                     phase(SGC_ABI_PHASE_ENCODE_IMAGE)->logits.shape[1])
    return bad("the prefill's image soft tokens and the encode_image output "
               "differ in width");
  if (const sgc_abi_image_t *img = image()) {
    auto token_ok = [&](int32_t id) { return id >= 0 && id < t.vocab_size; };
    if (image_patch_values_ < 1 || img->patch_size < 1 ||
        img->pooling_kernel < 1 || img->image_size < 0 ||
        !token_ok(img->image_token_id) || !token_ok(img->boi_token_id) ||
        !token_ok(img->eoi_token_id))
      return bad("the image record (patch size, pooling kernel, token ids "
                 "within the vocabulary) or the encode_image pixels operand "
                 "is malformed");
  }

  for (uint32_t i = 0; i < t.num_variants; ++i) {
    const sgc_abi_variant_t &v = t.variants[i];
    const std::string vw = "variant " + std::to_string(i) + ": ";
    if (!v.name || v.device != t.device)
      return bad(vw + "no name, or a device other than the model's");
    if (any_step && v.num_functions <= max_function)
      return bad(vw + "steps call function " + std::to_string(max_function) +
                 " of " + std::to_string(v.num_functions));
    if (v.device == SGC_ABI_DEVICE_CPU) {
      if (!v.functions)
        return bad(vw + "a CPU variant needs its functions");
      for (uint32_t f = 0; f < v.num_functions; ++f)
        if (!v.functions[f])
          return bad(vw + "function " + std::to_string(f) + " is NULL");
    } else if (!v.kernels || !v.fatbin || v.fatbin_bytes == 0) {
      return bad(vw + "a CUDA variant needs its kernels and fatbin");
    }
  }
  return status();
}

} // namespace runtime
} // namespace sgc
