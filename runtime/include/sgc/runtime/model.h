/*
 * sgc/runtime/model.h - Models and their weights.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>, which includes
 * every part; its conventions hold here.
 */
#ifndef SGC_RUNTIME_MODEL_H
#define SGC_RUNTIME_MODEL_H

#include "sgc/runtime/checkpoint.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Models
 *===----------------------------------------------------------------------===*/

typedef struct sgc_model_t sgc_model_t;

/**
 * dlopens |library_path| and reads its table. Fails with
 *  - SGC_STATUS_BAD_INPUT when the file cannot be loaded, has no
 *    sgc_model_query symbol ("not an sgc model"), returns a table with the
 *    wrong magic, or a table that breaks its own rules (sizes, counts);
 *  - SGC_STATUS_MISMATCH when the table is for another ABI major version
 *    (the message names both versions) or the library returns no table.
 */
sgc_status_t *sgc_model_open(const char *library_path, sgc_model_t **out_model);
void sgc_model_release(sgc_model_t *model);

typedef struct sgc_model_info_t {
  const char *model_id;
  const char *target;
  const char *family;
  /** "" when the table has none. */
  const char *producer;
  uint32_t abi_major;
  uint32_t abi_minor;
  sgc_device_kind_t device;
  int64_t vocab_size;
  int64_t context_length;
  int64_t max_prefill_chunk;
  int32_t bos_token_id; /**< -1 if unknown */
  int32_t eos_token_id; /**< -1 if unknown */
  int32_t pad_token_id; /**< -1 if unknown */
  size_t num_stop_tokens;
  const int32_t *stop_tokens;
  size_t num_tensors;
  /** Sum of the manifest's tensor bytes. */
  uint64_t weight_bytes;
  size_t num_layers;
  /** KV-cache bytes the plan needs (what a session allocates). */
  uint64_t kv_cache_bytes;
  uint64_t workspace_bytes;
  /** Compiled variants (sgc_model_variant). */
  size_t num_variants;
} sgc_model_info_t;

void sgc_model_get_info(const sgc_model_t *model, sgc_model_info_t *out_info);

/** The |index|-th manifest tensor (weight-table order); 0 if out of range.
 *  location = the graph object. */
int sgc_model_tensor(const sgc_model_t *model, size_t index,
                     sgc_tensor_info_t *out_info);

typedef enum sgc_kv_kind_e { SGC_KV_FULL = 0, SGC_KV_RING = 1 } sgc_kv_kind_t;

typedef struct sgc_kv_layer_info_t {
  sgc_kv_kind_t kind;
  sgc_dtype_t dtype;
  int64_t slots;
  int64_t kv_heads;
  int64_t head_dim;
  int v_from_k;
  int has_v_cache;
  uint64_t bytes_per_token;
  /** slots x bytes_per_token. */
  uint64_t bytes;
} sgc_kv_layer_info_t;

/**
 * The row counts of the model's batched decode entries (sgc compile
 * --decode-batch; one-token decode not counted), fewest first: writes up to
 * |capacity| into |out_rows| (may be NULL) and returns how many there are.
 */
size_t sgc_model_decode_batches(const sgc_model_t *model, int64_t *out_rows,
                                size_t capacity);

/** The |index|-th layer's cache plan; 0 if out of range. */
int sgc_model_kv_layer(const sgc_model_t *model, size_t index,
                       sgc_kv_layer_info_t *out_info);

typedef struct sgc_variant_info_t {
  const char *name;
  /** The device the variant's code runs on. */
  sgc_device_kind_t device;
  /** CPU variants: the SGC_ABI_CPU_* features the code needs; else 0. */
  uint64_t required_cpu_features;
  /** CPU variants: 1 when this CPU has every required feature. */
  int supported;
} sgc_variant_info_t;

/** The |index|-th compiled variant (best first); 0 if out of range. */
int sgc_model_variant(const sgc_model_t *model, size_t index,
                      sgc_variant_info_t *out_info);

/*===----------------------------------------------------------------------===*
 * Weights
 *===----------------------------------------------------------------------===*/

typedef enum sgc_load_format_e {
  /** Safetensors when a path is given; a usage error otherwise. */
  SGC_LOAD_FORMAT_AUTO = 0,
  SGC_LOAD_FORMAT_SAFETENSORS = 1,
  /**
   * Deterministic values, no checkpoint. Each tensor's elements come from
   * the tensor's manifest name: seed = FNV-1a-64(name bytes); element i
   * takes r = splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15) (the standard
   * splitmix64 finalizer), v = (float)((int64_t)(r >> 40) - 2^23) *
   * (0.02f / 2^23), a float in [-0.02, 0.02), stored rounded to nearest
   * even in the tensor's dtype (F32/F16/BF16/F64). Tensors whose manifest
   * fill is ones or zeros get 1 or 0. Integer tensors get
   * (int)(r % 5) - 2 (unsigned: r % 3; BOOL: r & 1); F8 tensors get zero
   * bytes.
   */
  SGC_LOAD_FORMAT_DUMMY = 2
} sgc_load_format_t;

/** Called while weights are mapped, touched, filled or written:
 *  |done_bytes| of |total_bytes|, on the calling thread. */
typedef void (*sgc_progress_fn_t)(void *user, uint64_t done_bytes,
                                  uint64_t total_bytes);

/** Where a checkpoint's tensors live once bound. */
typedef enum sgc_weights_placement_t {
  /**
   * COPY for a CPU model with at least 64 MiB of weights that fit in half
   * the available memory, on a kernel with transparent huge pages; MAP
   * otherwise (CUDA models, small or huge checkpoints).
   */
  SGC_WEIGHTS_AUTO = 0,
  /** In place: the checkpoint's file pages (mmap, zero copy). */
  SGC_WEIGHTS_MAP = 1,
  /**
   * Copied at bind into anonymous memory on 2 MiB transparent huge pages
   * (where the kernel offers them). A CPU decode step streams every weight
   * once; on 4 KiB file pages it pays a TLB miss every 4 KiB and the
   * hardware prefetcher stops at each page boundary (B1 decode on huge
   * pages: ~10-17 % faster on Zen 3; on a znver5 host 1.07x / 1.03x on 1 /
   * 2 threads, every round of bench/b1/compare.sh faster). Costs one copy at load and the
   * weights' size in anonymous memory.
   */
  SGC_WEIGHTS_COPY = 2
} sgc_weights_placement_t;

typedef struct sgc_weights_options_t {
  sgc_load_format_t format;
  /** Threads for filling dummy weights; 0 = sgc_default_thread_count(). */
  int32_t num_threads;
  /**
   * Nonzero: read every bound page now (so the first token does not pay for
   * page faults and the progress bar shows the real load). Zero: pages load
   * on first touch. Ignored for dummy weights.
   */
  int populate;
  sgc_progress_fn_t progress;
  void *progress_user;
  /** Checkpoint tensors only (dummy weights are always in anonymous
   *  memory, on huge pages where the kernel offers them). */
  sgc_weights_placement_t placement;
} sgc_weights_options_t;

/** format AUTO, num_threads 0, populate 0, no progress callback,
 *  placement AUTO. */
void sgc_weights_options_default(sgc_weights_options_t *out_options);

typedef struct sgc_weights_t sgc_weights_t;

/**
 * Binds weights to |model|. With a checkpoint (|path|: file, index or
 * directory, see sgc_checkpoint_open), every manifest tensor is looked up by
 * name (for gemma3/gemma4 families also under the other prefix spelling,
 * e.g. model.language_model. for language_model.model.), and its dtype and
 * shape are compared with the manifest. All problems are collected: the
 * status (SGC_STATUS_MISMATCH) lists every missing and every mismatched
 * tensor with both shapes, one note each. Bad files fail earlier with
 * SGC_STATUS_BAD_INPUT. Tensors are used in place (mmap, zero copy) unless
 * the placement copies them (see sgc_weights_placement_t) or their offset is
 * not a multiple of the element size. |path| may be NULL for dummy weights.
 * The weights keep |model| alive.
 */
sgc_status_t *sgc_weights_bind(sgc_model_t *model, const char *path,
                               const sgc_weights_options_t *options,
                               sgc_weights_t **out_weights);
void sgc_weights_release(sgc_weights_t *weights);
/** The format actually used (never AUTO). */
sgc_load_format_t sgc_weights_format(const sgc_weights_t *weights);
/** Sum of bound tensor bytes. */
uint64_t sgc_weights_bytes(const sgc_weights_t *weights);
/** Bytes the runtime copied or made (the COPY placement, misaligned
 *  tensors, dummy weights). */
uint64_t sgc_weights_copied_bytes(const sgc_weights_t *weights);
/** The placement actually used (never AUTO; COPY for dummy weights). */
sgc_weights_placement_t sgc_weights_placement(const sgc_weights_t *weights);
/** The checkpoint name a manifest tensor was bound to (it differs from the
 *  manifest name when the other prefix spelling was used); NULL if out of
 *  range. */
const char *sgc_weights_source_name(const sgc_weights_t *weights, size_t index);

/**
 * Writes |model|'s dummy weights (the values SGC_LOAD_FORMAT_DUMMY binds) to
 * |path| as one safetensors file, streaming (memory use stays small), under
 * the manifest's names. |options| may be NULL; only progress and threads are
 * used.
 */
sgc_status_t *
sgc_model_write_dummy_weights(const sgc_model_t *model, const char *path,
                              const sgc_weights_options_t *options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_MODEL_H */
