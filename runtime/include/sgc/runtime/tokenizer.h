/*
 * sgc/runtime/tokenizer.h - Tokenizers.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>, which includes
 * every part; its conventions hold here.
 */
#ifndef SGC_RUNTIME_TOKENIZER_H
#define SGC_RUNTIME_TOKENIZER_H

#include "sgc/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Tokenizers
 *===----------------------------------------------------------------------===*/

typedef struct sgc_tokenizer_t sgc_tokenizer_t;

/**
 * Opens a tokenizer: |path| is a tokenizer.json (Hugging Face tokenizers
 * format), a tokenizer.model (SentencePiece), or a directory holding one
 * (tokenizer.json is preferred when both exist, as HF's fast tokenizer
 * does). tokenizer_config.json and special_tokens_map.json next to it are
 * read when present (add_bos_token, the bos/eos/pad token names). |path|
 * may also be a GGUF file with a SentencePiece-style ("llama") vocabulary,
 * Gemma 3's: its tokenizer.ggml.* keys stand for all of these (errors name
 * the key, e.g. "m.gguf: tokenizer.ggml.model: 'gpt2' is not supported"). Errors
 * (SGC_STATUS_BAD_INPUT) name the file and the JSON path or the piece,
 * e.g. "tokenizer.json: $.model.type: 'Unigram' is not supported".
 * A tokenizer is immutable and may be shared by threads.
 */
sgc_status_t *sgc_tokenizer_open(const char *path,
                                 sgc_tokenizer_t **out_tokenizer);
void sgc_tokenizer_release(sgc_tokenizer_t *tokenizer);
/** "sentencepiece" (a GGUF's vocabulary too) or "tokenizer.json" (static). */
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

/**
 * A generated answer as text, token by token, cut at the first stop string:
 * a detokenizer (skip_special as for sgc_detokenizer_create) whose text is
 * also held back while it could still become one of |stops|, so that what
 * is handed out is never taken back and never holds a stop string (a
 * server's `stop`, sgc-run's --stop-string). Empty stop strings are
 * ignored. One thread at a time.
 */
typedef struct sgc_text_stream_t sgc_text_stream_t;

sgc_status_t *sgc_text_stream_create(const sgc_tokenizer_t *tokenizer,
                                     int skip_special,
                                     const char *const *stops,
                                     size_t num_stops,
                                     sgc_text_stream_t **out_stream);
/**
 * Pushes one generated token: |*out_text| (NUL-terminated, valid until the
 * next call) is the text it settles. |*out_stopped| (may be NULL) becomes 1
 * once a stop string has matched: the text handed out ends before it and
 * later tokens add nothing. An id out of range is SGC_STATUS_USAGE.
 */
sgc_status_t *sgc_text_stream_push(sgc_text_stream_t *stream, int32_t token,
                                   const char **out_text, size_t *out_len,
                                   int *out_stopped);
/** At the end of the answer: the text still held back (none after a stop
 *  string matched). */
sgc_status_t *sgc_text_stream_finish(sgc_text_stream_t *stream,
                                     const char **out_text, size_t *out_len,
                                     int *out_stopped);
void sgc_text_stream_release(sgc_text_stream_t *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_TOKENIZER_H */
