/*
 * sgc/runtime.h - the sgc runtime's C API (the only public runtime header).
 *
 * Loads a compiled model (.so), binds a safetensors checkpoint (or dummy
 * weights) to it, and runs it on a device. The steps are separate so that
 * every check happens before anything runs:
 *
 *   sgc_model_open      dlopen the .so, check the ABI, validate its tables
 *   sgc_weights_bind    open the checkpoint, check every tensor the model
 *                       binds (presence, dtype, shape), map it zero-copy
 *   sgc_session_create  pick the device and CPU variant, allocate the KV
 *                       cache and workspace, start the thread pool
 *   sgc_session_generate / _prefill / _decode
 *
 * Conventions (STYLE.md habit 9):
 *  - Every fallible call returns sgc_status_t*: NULL means success; a
 *    non-NULL status is owned by the caller and freed with sgc_status_free.
 *    Its code is the exit code a tool should use (sgc_status_code_t).
 *  - Handles are opaque and reference counted internally: a weights handle
 *    keeps its model alive and a session keeps both alive, so the release
 *    functions may be called in any order. Release functions accept NULL.
 *  - Options structs are initialized with their _default() function; unset
 *    fields then keep working when later versions append fields.
 *  - Out-parameters are prefixed out_ and written only on success.
 *  - Strings returned by the API are owned by the handle they came from and
 *    live as long as it does, unless stated otherwise.
 *  - No call throws, exits or aborts. Models and weights are immutable once
 *    created and may be shared by threads; a session must be used by one
 *    thread at a time.
 */
#ifndef SGC_RUNTIME_H
#define SGC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

/** Status codes; each is also the exit code of sgc and sgc-run. */
typedef enum sgc_status_code_e {
  SGC_STATUS_OK = 0,
  /** A bad input file: a checkpoint, a .so that is not an sgc model, ... */
  SGC_STATUS_BAD_INPUT = 1,
  /** Invalid arguments or options. */
  SGC_STATUS_USAGE = 2,
  /** Model, checkpoint and ABI do not fit: missing or misshapen tensors,
   *  another ABI major version, a model compiled for another device. */
  SGC_STATUS_MISMATCH = 3,
  /** The device is absent or unusable (no CUDA driver, no CUDA device,
   *  a CPU without the features a forced variant needs). */
  SGC_STATUS_DEVICE_UNAVAILABLE = 4,
  /** An internal error or an unexpected system failure. */
  SGC_STATUS_INTERNAL = 5
} sgc_status_code_t;

/** An error: a code, a one-line message and note lines. */
typedef struct sgc_status_t sgc_status_t;

/** SGC_STATUS_OK for NULL. */
sgc_status_code_t sgc_status_code(const sgc_status_t *status);
/** One line, no "error: " prefix, no newline; "" for NULL. */
const char *sgc_status_message(const sgc_status_t *status);
/** Number of detail lines (printed by tools as "note: ..."). */
size_t sgc_status_note_count(const sgc_status_t *status);
/** The |index|-th note; "" when out of range. */
const char *sgc_status_note(const sgc_status_t *status, size_t index);
/** Frees |status| (NULL is fine). */
void sgc_status_free(sgc_status_t *status);
/** A short name for |code|: "ok", "bad input", "usage", ... (static). */
const char *sgc_status_code_name(sgc_status_code_t code);

/*===----------------------------------------------------------------------===*
 * Versions, dtypes, devices
 *===----------------------------------------------------------------------===*/

/** Runtime version string, e.g. "0.1.0" (static). */
const char *sgc_runtime_version(void);
/** The model ABI version this runtime implements (sgc/abi.h). */
void sgc_runtime_abi_version(uint32_t *out_major, uint32_t *out_minor);

/** Element types (the same codes as the ABI's SGC_ABI_DTYPE_*). */
typedef enum sgc_dtype_e {
  SGC_DTYPE_INVALID = 0,
  SGC_DTYPE_BOOL = 1,
  SGC_DTYPE_U8 = 2,
  SGC_DTYPE_I8 = 3,
  SGC_DTYPE_I16 = 4,
  SGC_DTYPE_U16 = 5,
  SGC_DTYPE_F16 = 6,
  SGC_DTYPE_BF16 = 7,
  SGC_DTYPE_I32 = 8,
  SGC_DTYPE_U32 = 9,
  SGC_DTYPE_F32 = 10,
  SGC_DTYPE_F64 = 11,
  SGC_DTYPE_I64 = 12,
  SGC_DTYPE_U64 = 13,
  SGC_DTYPE_F8_E4M3 = 14,
  SGC_DTYPE_F8_E5M2 = 15,
  SGC_DTYPE_F8_E8M0 = 16
} sgc_dtype_t;

/** Safetensors spelling ("BF16"); "INVALID" otherwise (static). */
const char *sgc_dtype_name(sgc_dtype_t dtype);
/** Bytes per element; 0 for SGC_DTYPE_INVALID. */
size_t sgc_dtype_size(sgc_dtype_t dtype);

typedef enum sgc_device_kind_e {
  SGC_DEVICE_CPU = 0,
  SGC_DEVICE_CUDA = 1,
  /** A CUDA model's kernels compiled for the host (the model's cuda_emu
   *  table), each GPU thread a fiber, every launch checked for divergent
   *  barriers, out-of-bounds accesses and races (runtime/src/cuda_emu).
   *  For tests; slow. SGC_EMU_SCHEDULES (environment, default 3) is the
   *  number of schedules each launch runs under. */
  SGC_DEVICE_CUDA_EMU = 2
} sgc_device_kind_t;

/**
 * Checks that a device can be used, without creating a session. For CUDA:
 * loads libcuda.so.1 with dlopen ("no CUDA driver found" when that fails),
 * calls cuInit and cuDeviceGetCount ("no CUDA device" when they fail or
 * find none, or when |ordinal| is past the count). Code
 * SGC_STATUS_DEVICE_UNAVAILABLE on failure. CPU and CUDA_EMU always succeed.
 */
sgc_status_t *sgc_device_probe(sgc_device_kind_t kind, int32_t ordinal);

/** The CPU's features as SGC_ABI_CPU_* bits (sgc/abi.h). */
uint64_t sgc_cpu_features(void);
/** Writes the names of the bits in |features| ("avx2 fma f16c") into |buf|
 *  (NUL-terminated, truncated to |size|). Returns the length needed. */
size_t sgc_cpu_features_string(uint64_t features, char *buf, size_t size);

/** Physical cores this process may run on (at least 1). */
int32_t sgc_default_thread_count(void);

/*===----------------------------------------------------------------------===*
 * Tensors
 *===----------------------------------------------------------------------===*/

/** Describes one tensor of a checkpoint or of a model's manifest. */
typedef struct sgc_tensor_info_t {
  const char *name;
  sgc_dtype_t dtype;
  uint32_t rank;
  /** |rank| dimensions; owned by the handle. */
  const int64_t *shape;
  uint64_t bytes;
  /** Checkpoints: the shard file's path as opened. Models: the graph
   *  object ("target.decoder_stack"), or "" when unknown. */
  const char *location;
  /** Models: the dummy fill (0 random, 1 ones, 2 zeros); checkpoints: 0. */
  uint32_t fill;
} sgc_tensor_info_t;

/** A caller-owned tensor to write (sgc_safetensors_write). */
typedef struct sgc_tensor_view_t {
  const char *name;
  sgc_dtype_t dtype;
  uint32_t rank;
  const int64_t *shape;
  /** sgc_dtype_size(dtype) x product(shape) bytes, row-major. */
  const void *data;
} sgc_tensor_view_t;

/** Writes |count| tensors to |path| as a safetensors file (atomically:
 *  a temporary file is renamed over |path|). */
sgc_status_t *sgc_safetensors_write(const char *path,
                                    const sgc_tensor_view_t *tensors,
                                    size_t count);

/*===----------------------------------------------------------------------===*
 * Checkpoints (no model needed)
 *===----------------------------------------------------------------------===*/

typedef struct sgc_checkpoint_t sgc_checkpoint_t;

/**
 * Opens and validates a checkpoint: a .safetensors file, an
 * *.index.json, or a directory with model.safetensors or
 * model.safetensors.index.json. Every shard is validated in full (header
 * rules, exact tiling of the data region) and must hold exactly the tensors
 * the index gives it. Data stays on disk (mmap); nothing is read but the
 * headers. Errors name the file and the tensor; code SGC_STATUS_BAD_INPUT.
 */
sgc_status_t *sgc_checkpoint_open(const char *path,
                                  sgc_checkpoint_t **out_checkpoint);
void sgc_checkpoint_release(sgc_checkpoint_t *checkpoint);
/** Number of tensors over all shards. */
size_t sgc_checkpoint_tensor_count(const sgc_checkpoint_t *checkpoint);
/** The |index|-th tensor in name order; returns 0 when out of range, else 1.
 *  location = the shard file. */
int sgc_checkpoint_tensor(const sgc_checkpoint_t *checkpoint, size_t index,
                          sgc_tensor_info_t *out_info);
size_t sgc_checkpoint_shard_count(const sgc_checkpoint_t *checkpoint);
/** Path of the |index|-th shard; NULL when out of range. */
const char *sgc_checkpoint_shard_path(const sgc_checkpoint_t *checkpoint,
                                      size_t index);
/** Sum of all tensor bytes. */
uint64_t sgc_checkpoint_tensor_bytes(const sgc_checkpoint_t *checkpoint);

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

/*===----------------------------------------------------------------------===*
 * Sessions
 *===----------------------------------------------------------------------===*/

typedef struct sgc_session_options_t {
  sgc_device_kind_t device;
  int32_t device_ordinal;
  /** Threads for parallel_for, caller included; 0 = the default count. */
  int32_t num_threads;
  /** Force a variant by name; NULL = the best one the device supports. */
  const char *variant;
  /**
   * Positions the session holds (prompt + generated); 0 = the model's
   * context length, more is clamped to it. The KV cache of full-attention
   * layers is allocated for this many positions only.
   */
  int64_t max_context;
  /** CUDA: called as the weights are copied to the GPU (may be NULL). */
  sgc_progress_fn_t progress;
  void *progress_user;
} sgc_session_options_t;

/** CPU, ordinal 0, default threads, best variant. */
void sgc_session_options_default(sgc_session_options_t *out_options);

typedef struct sgc_session_t sgc_session_t;

/**
 * Creates a session: checks the device (CUDA: as sgc_device_probe; a model
 * compiled for another device is SGC_STATUS_MISMATCH), picks the CPU
 * variant, checks that the KV cache (as the model's plan says, for
 * max_context positions) and the workspace fit in the available memory
 * (SGC_STATUS_DEVICE_UNAVAILABLE naming the figures otherwise), allocates
 * them, and starts num_threads - 1 worker threads. |weights| must have
 * been bound to |model|. The session keeps both alive.
 *
 * CUDA: opens the device's primary context, loads the variant's fatbin,
 * checks everything fits in the GPU's free memory, allocates the cache,
 * workspace and step state there and copies the weights over (progress is
 * reported). A failing driver call is a status whose note names the call
 * and the CUresult: SGC_STATUS_DEVICE_UNAVAILABLE for out of memory, no
 * device or no code for it, SGC_STATUS_INTERNAL otherwise. CUDA_EMU needs
 * a CUDA model with emulator kernels (SGC_STATUS_MISMATCH otherwise).
 */
sgc_status_t *sgc_session_create(sgc_model_t *model, sgc_weights_t *weights,
                                 const sgc_session_options_t *options,
                                 sgc_session_t **out_session);
void sgc_session_release(sgc_session_t *session);

/** KV-cache bytes this session allocated (sum over layers of K and V). */
uint64_t sgc_session_kv_cache_bytes(const sgc_session_t *session);
/** Positions the session holds (see max_context). */
int64_t sgc_session_context(const sgc_session_t *session);

/**
 * KV-cache bytes a session of |model| allocates for |context| positions
 * (0 = the model's context length), without allocating anything.
 */
uint64_t sgc_model_kv_cache_bytes_at(const sgc_model_t *model, int64_t context);
uint64_t sgc_session_workspace_bytes(const sgc_session_t *session);
int32_t sgc_session_num_threads(const sgc_session_t *session);
/** The variant in use. */
const char *sgc_session_variant(const sgc_session_t *session);

/**
 * One prefill call: tokens at positions pos0..pos0+n-1 (1 <= n <=
 * max_prefill_chunk, pos0 + n <= context_length, ids in [0, vocab)).
 * |logits_out| receives vocab floats, or n x vocab when |all_positions|.
 * Invalid arguments: SGC_STATUS_USAGE; a failing entry point:
 * SGC_STATUS_INTERNAL.
 */
sgc_status_t *sgc_session_prefill(sgc_session_t *session, const int32_t *tokens,
                                  int64_t n, int64_t pos0, float *logits_out,
                                  int all_positions);
/** One decode call at |pos| (0 <= pos < context_length). */
sgc_status_t *sgc_session_decode(sgc_session_t *session, int32_t token,
                                 int64_t pos, float *logits_out);

/** Called for each generated token; return nonzero to stop generating. */
typedef int (*sgc_token_fn_t)(void *user, int32_t token);

typedef enum sgc_logits_kind_e {
  SGC_LOGITS_PREFILL = 0,
  SGC_LOGITS_DECODE = 1
} sgc_logits_kind_t;

/**
 * Called with each row of logits the runtime computed: prefill rows with
 * their prompt position (every position when prefill_all_logits, else the
 * last only), decode rows with the decode step (0, 1, ...). |row| holds
 * |vocab| floats and is valid only during the call.
 */
typedef void (*sgc_logits_fn_t)(void *user, sgc_logits_kind_t kind,
                                int64_t index, const float *row, int64_t vocab);

typedef struct sgc_generate_options_t {
  /** Tokens to generate at most (>= 0). */
  int64_t max_new_tokens;
  /** Prompt tokens per prefill call; 0 = the model's max_prefill_chunk;
   *  larger than that is a usage error. */
  int64_t prefill_chunk;
  /** <= 0: greedy (argmax, lowest id on ties). Otherwise softmax(logits/T)
   *  after top_k / top_p filtering, sampled with |seed|. */
  float temperature;
  /** Keep the k most likely tokens (0 = all). */
  int32_t top_k;
  /** Keep the smallest set whose probability reaches top_p (1 = all). */
  float top_p;
  uint64_t seed;
  /** Extra stop tokens (also stop: the model's eos and stop tokens unless
   *  ignore_eos). A stop token is emitted, then generation ends. */
  const int32_t *stop_tokens;
  size_t num_stop_tokens;
  int ignore_eos;
  /**
   * Teacher forcing: when non-NULL, decode step i is fed feed_tokens[i]
   * (for i < num_feed_tokens) instead of the token just sampled; the
   * sampled tokens are still reported. Lets a caller reproduce a reference
   * run's decode logits.
   */
  const int32_t *feed_tokens;
  size_t num_feed_tokens;
  /** Report every prompt position's logits to on_logits, not just the last
   *  (computes prefill with all_positions). */
  int prefill_all_logits;
  sgc_token_fn_t on_token;
  sgc_logits_fn_t on_logits;
  void *user;
  /** Keep only tokens whose probability is at least min_p times the most
   *  likely one's, after temperature, top_k and top_p (0 = off). */
  float min_p;
  /** Before anything else, each token already in the prompt or generated
   *  has its logit divided by this when positive, multiplied when negative
   *  (Hugging Face's rule; 1 or 0 = off). Applies to greedy decoding too. */
  float repetition_penalty;
  /**
   * Continues a sequence (a conversation's next turn): the session's KV
   * cache already holds these tokens at positions 0..num_cached_tokens-1,
   * computed by earlier calls on this session, so only the prompt is
   * prefilled, at positions num_cached_tokens onwards. The repetition
   * penalty sees them too. NULL and 0: a fresh sequence at position 0.
   */
  const int32_t *cached_tokens;
  size_t num_cached_tokens;
  /**
   * A prompt with images (a model with a vision tower): per prompt row its
   * image block (-1 on text rows; sgc_prompt_layout_blocks) and its slot in
   * |image_soft_tokens| (sgc_prompt_layout_soft_slots), the images' soft
   * tokens from sgc_session_encode_image concatenated in order ([slots,
   * hidden] floats). Prefill chunks end before a block they would split.
   * NULL: a text prompt.
   */
  const int32_t *prompt_image_blocks;
  const int64_t *prompt_soft_slots;
  const float *image_soft_tokens;
} sgc_generate_options_t;

/** max_new_tokens 16, chunk 0, greedy, top_k 0, top_p 1, seed 0, min_p 0,
 *  repetition_penalty 1. */
void sgc_generate_options_default(sgc_generate_options_t *out_options);

/**
 * Runs the prompt (positions c..c+n_prompt-1, in chunks, where c is
 * num_cached_tokens: 0 starts a fresh sequence) and then up to
 * max_new_tokens decode steps. The last token reported is not run through
 * the model (nothing needs its logits): a caller continuing the sequence
 * passes it at the start of its next prompt. n_prompt >= 1 and c +
 * n_prompt + max_new_tokens <= the session's context, else
 * SGC_STATUS_USAGE. |out_num_generated| (may be NULL) receives the number
 * of tokens reported to on_token.
 */
sgc_status_t *sgc_session_generate(sgc_session_t *session,
                                   const int32_t *prompt, int64_t n_prompt,
                                   const sgc_generate_options_t *options,
                                   int64_t *out_num_generated);

/*===----------------------------------------------------------------------===*
 * Tokenizers
 *===----------------------------------------------------------------------===*/

typedef struct sgc_tokenizer_t sgc_tokenizer_t;

/**
 * Opens a tokenizer: |path| is a tokenizer.json (Hugging Face tokenizers
 * format), a tokenizer.model (SentencePiece), or a directory holding one
 * (tokenizer.json is preferred when both exist, as HF's fast tokenizer
 * does). tokenizer_config.json and special_tokens_map.json next to it are
 * read when present (add_bos_token, the bos/eos/pad token names). Errors
 * (SGC_STATUS_BAD_INPUT) name the file and the JSON path or the piece,
 * e.g. "tokenizer.json: $.model.type: 'Unigram' is not supported".
 * A tokenizer is immutable and may be shared by threads.
 */
sgc_status_t *sgc_tokenizer_open(const char *path,
                                 sgc_tokenizer_t **out_tokenizer);
void sgc_tokenizer_release(sgc_tokenizer_t *tokenizer);
/** "sentencepiece" or "tokenizer.json" (static). */
const char *sgc_tokenizer_kind(const sgc_tokenizer_t *tokenizer);
/** Number of ids (the model's pieces plus added tokens): max id + 1. */
int32_t sgc_tokenizer_vocab_size(const sgc_tokenizer_t *tokenizer);
/** The id of |piece| (a vocabulary piece or an added token, e.g.
 *  "<end_of_turn>" or "\u2581the"); -1 if absent. */
int32_t sgc_tokenizer_token_id(const sgc_tokenizer_t *tokenizer,
                               const char *piece);
/** The piece of |id| as stored (NUL-terminated); NULL if out of range. */
const char *sgc_tokenizer_piece(const sgc_tokenizer_t *tokenizer, int32_t id);
/** -1 if none. */
int32_t sgc_tokenizer_bos_id(const sgc_tokenizer_t *tokenizer);
/** -1 if none. */
int32_t sgc_tokenizer_eos_id(const sgc_tokenizer_t *tokenizer);
/** -1 if none. */
int32_t sgc_tokenizer_pad_id(const sgc_tokenizer_t *tokenizer);
/** 1 when |id| is a special token (an added token marked special; for a
 *  tokenizer.model, the control and unknown pieces unless
 *  tokenizer_config.json's added_tokens_decoder says otherwise), else 0. */
int sgc_tokenizer_is_special(const sgc_tokenizer_t *tokenizer, int32_t id);

/**
 * Encodes |len| bytes of UTF-8 |text| as Hugging Face does with
 * add_special_tokens = (add_bos != 0): with add_bos, what the checkpoint
 * asks for is added: tokenizer_config.json's add_bos_token / add_eos_token
 * when it has them, else tokenizer.json's post-processor (a
 * TemplateProcessing), else nothing (a tokenizer.model without
 * add_bos_token gets no BOS, as in transformers). Special-token
 * literals in the text ("<start_of_turn>") are recognized as HF does.
 * Text that is not valid UTF-8 is refused (SGC_STATUS_USAGE) with the byte
 * offset of the first bad byte: HF's tokenizers take Python strings, which
 * cannot hold invalid UTF-8. |*out_ids| is malloc'ed (free with free());
 * it may be NULL when |*out_count| is 0.
 */
sgc_status_t *sgc_tokenizer_encode(const sgc_tokenizer_t *tokenizer,
                                   const char *text, size_t len, int add_bos,
                                   int32_t **out_ids, size_t *out_count);

/**
 * Decodes as HF's decode(ids, skip_special_tokens = skip_special): a run
 * of byte-fallback pieces <0xNN> becomes its UTF-8 text, or one U+FFFD per
 * byte when the run is not valid UTF-8 (HF's ByteFallback). An id out of
 * range is SGC_STATUS_USAGE (HF drops such ids silently).
 * |*out_text| is malloc'ed and NUL-terminated (free with free()).
 */
sgc_status_t *sgc_tokenizer_decode(const sgc_tokenizer_t *tokenizer,
                                   const int32_t *ids, size_t count,
                                   int skip_special, char **out_text,
                                   size_t *out_len);

/**
 * Streaming decode: push one token at a time and get the text it completes.
 * The text of trailing byte-fallback pieces is held back until a later
 * token (or finish) settles it, so a piece never ends inside a UTF-8
 * character and is never taken back; the concatenation of every
 * push's text and finish's text equals sgc_tokenizer_decode of all the
 * tokens pushed since create or reset. The detokenizer keeps its tokenizer
 * alive; one thread at a time.
 */
typedef struct sgc_detokenizer_t sgc_detokenizer_t;

sgc_status_t *sgc_detokenizer_create(const sgc_tokenizer_t *tokenizer,
                                     int skip_special,
                                     sgc_detokenizer_t **out_detokenizer);
/** |*out_text| (often "") is NUL-terminated and points into the
 *  detokenizer; it is valid until the next call on it. An id out of range
 *  is SGC_STATUS_USAGE. */
sgc_status_t *sgc_detokenizer_push(sgc_detokenizer_t *detokenizer,
                                   int32_t token, const char **out_text,
                                   size_t *out_len);
/** The text still held back (an incomplete UTF-8 tail becomes U+FFFD, as
 *  whole decode does); the detokenizer is then reset. */
sgc_status_t *sgc_detokenizer_finish(sgc_detokenizer_t *detokenizer,
                                     const char **out_text, size_t *out_len);
/** Forgets every token pushed (a new sequence). */
void sgc_detokenizer_reset(sgc_detokenizer_t *detokenizer);
void sgc_detokenizer_release(sgc_detokenizer_t *detokenizer);

/*===----------------------------------------------------------------------===*
 * Images (the vision models' preprocessing)
 *===----------------------------------------------------------------------===*/

/**
 * Turns a PNG or JPEG file into a vision model's input tensors, as the
 * image processor Hugging Face transformers 5.24 picks by default for the
 * family (the torchvision-backed Gemma3ImageProcessor / Gemma4ImageProcessor)
 * does for the image transformers' load_image returns: decoded by libpng /
 * libjpeg, EXIF orientation applied, converted to RGB as PIL's
 * convert("RGB") (alpha dropped), resized with torch's antialiased uint8
 * filter. runtime/README.md ("Images") has the rules and the limits.
 */
typedef enum sgc_image_family_e {
  /** Bilinear to image_size x image_size, (x - 127.5) / 127.5. Tensor
   *  "pixel_values" F32 [1, 3, image_size, image_size]. */
  SGC_IMAGE_FAMILY_GEMMA3 = 3,
  /** Bicubic to multiples of pooling_kernel_size x patch_size within the
   *  budget, x / 255, patched. Tensors "pixel_values" F32 [1, max_patches,
   *  patch_size^2 x 3] ((py, px, channel) per patch, row-major patches),
   *  "image_position_ids" I64 [1, max_patches, 2] ((x, y) of each patch;
   *  (-1, -1) marks padding, as HF returns it) and
   *  "num_soft_tokens_per_image" I64 [1]; max_patches = max_soft_tokens x
   *  pooling_kernel_size^2. */
  SGC_IMAGE_FAMILY_GEMMA4 = 4
} sgc_image_family_t;

typedef struct sgc_image_options_t {
  sgc_image_family_t family;
  /** Gemma 3: the side of the square output (896). */
  int32_t image_size;
  /** Gemma 4: the patch side (16) and pooling kernel (3). */
  int32_t patch_size;
  int32_t pooling_kernel_size;
  /** Gemma 4: the soft-token budget, one of 70, 140, 280 (default), 560,
   *  1120. */
  int32_t max_soft_tokens;
} sgc_image_options_t;

/** The family's defaults (gemma-3-12b-it / gemma-4-31B-it). */
void sgc_image_options_default(sgc_image_family_t family,
                               sgc_image_options_t *out_options);

/** A preprocessed image: its tensors, immutable. */
typedef struct sgc_image_t sgc_image_t;

/**
 * Reads, decodes and preprocesses |path|. Errors name the file and what is
 * wrong with it (truncated, empty, not PNG/JPEG, larger than the pixel
 * limit, corrupt) with SGC_STATUS_BAD_INPUT; bad options are
 * SGC_STATUS_USAGE. Nothing is allocated for the pixels before the
 * header's dimensions pass the limit.
 */
sgc_status_t *sgc_image_load(const char *path,
                             const sgc_image_options_t *options,
                             sgc_image_t **out_image);
void sgc_image_release(sgc_image_t *image);
/** The decoded size (after EXIF orientation) and the size after the resize;
 *  any out pointer may be NULL. */
void sgc_image_size(const sgc_image_t *image, int32_t *out_source_width,
                    int32_t *out_source_height, int32_t *out_width,
                    int32_t *out_height);
/** Gemma 4: the image's soft tokens (patches / kernel^2); Gemma 3: 0 (the
 *  model fixes the count). */
int64_t sgc_image_soft_token_count(const sgc_image_t *image);
size_t sgc_image_tensor_count(const sgc_image_t *image);
/** The |index|-th tensor (data owned by |image|); 0 when out of range. */
int sgc_image_tensor(const sgc_image_t *image, size_t index,
                     sgc_tensor_view_t *out_view);

/**
 * Reads a preprocessed image from a safetensors file, e.g. a golden's or
 * sgc-image's output: "pixel_values" F32 in the family's shape for
 * |options| (Gemma 3 [1, 3, image_size, image_size]; Gemma 4 [1,
 * max_soft_tokens x pooling_kernel_size^2, patch_size^2 x 3]) and, for
 * Gemma 4, "image_position_ids" I64 [1, max_patches, 2] (the valid patches
 * first, then (-1, -1) padding) and optionally "num_soft_tokens" or
 * "num_soft_tokens_per_image" I64 [1], which must equal the valid patches /
 * pooling_kernel_size^2. Other tensors are ignored. The image then is what
 * sgc_image_load gives (its source and resized sizes are 0). Errors name the
 * file and the tensor: SGC_STATUS_BAD_INPUT.
 */
sgc_status_t *sgc_image_load_tensors(const char *path,
                                     const sgc_image_options_t *options,
                                     sgc_image_t **out_image);

/*===----------------------------------------------------------------------===*
 * Prompts with images (runtime/src/image/prompt_layout.h)
 *===----------------------------------------------------------------------===*/

/** A vision model's image token ids. */
typedef struct sgc_image_tokens_t {
  int32_t image_token_id; /**< the soft-token placeholder */
  int32_t boi_token_id;   /**< begin of image */
  int32_t eoi_token_id;   /**< end of image */
} sgc_image_tokens_t;

/** Where each image goes in a prompt of token ids. */
typedef struct sgc_prompt_layout_t sgc_prompt_layout_t;

/**
 * Lays out |count| prompt ids for |num_images| images, image i having
 * soft_tokens[i] >= 1 soft tokens (Gemma 4: sgc_image_soft_token_count;
 * Gemma 3: the model's fixed count). Each BOI takes the next image in
 * order: a BOI followed by exactly soft_tokens[i] image tokens and an EOI
 * is kept as is, a BOI followed by no image token becomes BOI + N x image +
 * EOI (the ids form: Gemma 3's "\n\n" around the block is text, see
 * sgc_prompt_expand_images). SGC_STATUS_USAGE, naming the token index and
 * both counts, for a block of the wrong length or without its EOI, an image
 * token outside a block, or a BOI count other than |num_images|.
 */
sgc_status_t *sgc_prompt_layout_create(const int32_t *ids, size_t count,
                                       const sgc_image_tokens_t *tokens,
                                       const int64_t *soft_tokens,
                                       size_t num_images,
                                       sgc_prompt_layout_t **out_layout);
void sgc_prompt_layout_release(sgc_prompt_layout_t *layout);
/** Rows of the laid-out prompt. */
size_t sgc_prompt_layout_length(const sgc_prompt_layout_t *layout);
/** The laid-out ids (length rows). */
const int32_t *sgc_prompt_layout_ids(const sgc_prompt_layout_t *layout);
/** Per row: the index into the images' soft tokens concatenated in image
 *  order, -1 on text rows (BOI and EOI are text). */
const int64_t *sgc_prompt_layout_soft_slots(const sgc_prompt_layout_t *layout);
/** Per row: the image block (0, 1, ...: one per maximal run of image
 *  tokens, as HF's token_type_ids / mm_token_type_ids blocks), -1 on text. */
const int32_t *sgc_prompt_layout_blocks(const sgc_prompt_layout_t *layout);
size_t sgc_prompt_layout_num_images(const sgc_prompt_layout_t *layout);
/** Sum of the images' soft tokens. */
int64_t sgc_prompt_layout_soft_tokens(const sgc_prompt_layout_t *layout);

/**
 * The end of the prefill chunk starting at row |start| with at most
 * |max_chunk| rows: min(start + max_chunk, rows), moved back to the start
 * of an image block it would split. SGC_STATUS_USAGE when that block is
 * longer than |max_chunk| (naming its rows, length and |max_chunk|) or
 * |start| is inside a block.
 */
sgc_status_t *sgc_prompt_layout_chunk_end(const sgc_prompt_layout_t *layout,
                                          int64_t start, int64_t max_chunk,
                                          int64_t *out_end);

/**
 * The text expansion the family's Hugging Face processor (transformers
 * 5.24) applies to a prompt before tokenizing, one image per placeholder in
 * order. Gemma 3: each |boi| string becomes "\n\n" + boi + N x |image| +
 * |eoi| + "\n\n"; Gemma 4: each |image| string becomes boi + N x image +
 * eoi. The strings are the tokenizer's pieces of the model's ids.
 * SGC_STATUS_USAGE when the placeholders and |num_images| differ (naming
 * both). |*out_text| is malloc'ed and NUL-terminated (free with free()).
 */
sgc_status_t *sgc_prompt_expand_images(sgc_image_family_t family,
                                       const char *text, size_t len,
                                       const char *image, const char *boi,
                                       const char *eoi,
                                       const int64_t *soft_tokens,
                                       size_t num_images, char **out_text,
                                       size_t *out_len);

/*===----------------------------------------------------------------------===*
 * The vision tower (the model's encode_image phase)
 *===----------------------------------------------------------------------===*/

/** A vision model's image component. */
typedef struct sgc_model_image_info_t {
  sgc_image_tokens_t tokens;
  /** What sgc_image_load / sgc_image_load_tensors need for this model. */
  sgc_image_options_t options;
  /** Soft tokens the tower writes per image (Gemma 4: the budget; an
   *  image's own count, sgc_image_soft_token_count, may be fewer). */
  int64_t soft_tokens;
  /** Floats per soft token (the text hidden size). */
  int64_t hidden_size;
  /** The tower's input: patches and values per patch. */
  int64_t patches;
  int64_t patch_values;
} sgc_model_image_info_t;

/** 1 and |*out_info| when the model was compiled with its vision tower,
 *  else 0. */
int sgc_model_image_info(const sgc_model_t *model,
                         sgc_model_image_info_t *out_info);

/**
 * Runs the vision tower on |image|, preprocessed for this model (the
 * options of sgc_model_image_info). |out_soft_tokens| receives soft_tokens x
 * hidden_size floats, in the order they replace the image's placeholder
 * tokens; |*out_count| (may be NULL) the image's own soft tokens (Gemma 4:
 * the rows after them are padding). SGC_STATUS_USAGE for a model without a
 * tower or an image made for another one (naming both shapes).
 */
sgc_status_t *sgc_session_encode_image(sgc_session_t *session,
                                       const sgc_image_t *image,
                                       float *out_soft_tokens,
                                       int64_t *out_count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_H */
