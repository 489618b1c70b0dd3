/*
 * sgc/runtime/session.h - Sessions: prefill, decode, generation.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>, which includes
 * every part; its conventions hold here.
 */
#ifndef SGC_RUNTIME_SESSION_H
#define SGC_RUNTIME_SESSION_H

#include "sgc/runtime/model.h"

#ifdef __cplusplus
extern "C" {
#endif

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
  /**
   * Sequence slots (0 = 1): each holds one sequence's KV cache (its rings
   * and its full-layer cache at max_context), so that many sequences can be
   * decoded together (sgc_session_decode_batch, sgc_session_generate_batch).
   * The memory check counts every slot. CPU only for more than one.
   */
  int32_t num_sequences;
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

/** Sequence slots the session holds (see num_sequences). */
int32_t sgc_session_num_sequences(const sgc_session_t *session);

/**
 * The sequence slot that later prefill, decode and generate calls read and
 * write (0 until changed; < sgc_session_num_sequences, else
 * SGC_STATUS_USAGE).
 */
sgc_status_t *sgc_session_use_sequence(sgc_session_t *session,
                                       int32_t sequence);

/** KV-cache bytes this session allocated (sum over layers of K and V, over
 *  every sequence slot). */
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
/** Its host-dependent parameters and why ("row prefetch 0 B (...)"), or "". */
const char *sgc_session_tuning(const sgc_session_t *session);

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

/**
 * One decode step for |n| sequences at once: row i feeds tokens[i] at
 * positions[i] to the sequence in slot sequences[i] (distinct slots) and
 * receives its logits in logits_out[i * vocab, +vocab). The rows run
 * through the model's batched decode entries (sgc compile --decode-batch),
 * the smallest that holds them, in groups of the largest when there are
 * more, one-token decode where none is compiled; a row's logits are
 * bit-identical to a one-row decode of the same sequence whatever runs
 * beside it.
 */
sgc_status_t *sgc_session_decode_batch(sgc_session_t *session, int64_t n,
                                       const int32_t *sequences,
                                       const int32_t *tokens,
                                       const int64_t *positions,
                                       float *logits_out);

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

/** One sequence of sgc_session_generate_batch. */
typedef struct sgc_sequence_request_t {
  const int32_t *prompt;
  int64_t n_prompt;
  /** As for sgc_session_generate, per sequence (its own sampling, seed,
   *  stop tokens, callbacks and images: a prefill chunk never splits an
   *  image block); cached tokens are not taken here. */
  const sgc_generate_options_t *options;
  /** Out: the tokens reported to its on_token. */
  int64_t num_generated;
} sgc_sequence_request_t;

/**
 * Generates for |n| sequences at once, as sgc_session_generate does for
 * each: up to num_sequences run at a time, each in a slot of its own (a
 * finished sequence's slot takes the next waiting one). Every step runs
 * one prefill chunk of a sequence still reading its prompt, then one
 * decode step for all the others together (sgc_session_decode_batch), so
 * running sequences keep flowing while a new one starts. A sequence's
 * tokens and logits are those it gets alone, sampled with its own seed.
 */
sgc_status_t *sgc_session_generate_batch(sgc_session_t *session,
                                         sgc_sequence_request_t *requests,
                                         size_t n);

/**
 * A batch that sequences join and leave between steps (a server's engine):
 * sgc_session_generate_batch for requests that arrive over time. Each
 * sequence runs in a sequence slot of its own; each step runs one prefill
 * chunk of the first sequence still reading its prompt, then one decode
 * step for all the others together. A sequence's tokens and logits are
 * those it gets alone. The batch uses its session's slots: while it holds
 * sequences, nothing else may run on the session. One thread at a time.
 */
typedef struct sgc_batch_t sgc_batch_t;

/** A batch over |session|'s slots; the session must outlive it. */
sgc_status_t *sgc_batch_create(sgc_session_t *session,
                               sgc_batch_t **out_batch);
/** Ends every sequence still running (without reporting) and frees the
 *  batch; the session stays. */
void sgc_batch_release(sgc_batch_t *batch);

/**
 * Starts |request| in a free slot (its slot in |out_slot|, may be NULL):
 * checked as sgc_session_generate checks its arguments; no free slot is
 * SGC_STATUS_USAGE. |request|, its options and what they point at must
 * stay valid until the sequence ends (a step reports it) or is cancelled.
 */
sgc_status_t *sgc_batch_add(sgc_batch_t *batch,
                            sgc_sequence_request_t *request,
                            int32_t *out_slot);

/** Ends |request| now, reporting nothing more, and frees its slot; 0 when
 *  it was not running. */
int sgc_batch_cancel(sgc_batch_t *batch, const sgc_sequence_request_t *request);

/**
 * One step (see sgc_batch_t). The sequences that ended in it (a stop
 * token, max_new_tokens, or on_token returning nonzero) are written to
 * |out_ended| (room for sgc_session_num_sequences entries; may be NULL)
 * and counted in |out_num_ended|; their slots are free again. A step with
 * nothing running does nothing.
 */
sgc_status_t *sgc_batch_step(sgc_batch_t *batch,
                             sgc_sequence_request_t **out_ended,
                             size_t *out_num_ended);

/** Sequences running, and slots free. */
int32_t sgc_batch_running(const sgc_batch_t *batch);
int32_t sgc_batch_free_slots(const sgc_batch_t *batch);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_SESSION_H */
