/*
 * sgc/runtime/model_files.h - the files a Hugging Face checkpoint ships
 * next to its weights: the tokenizer, the chat template,
 * generation_config.json (a GGUF file holds the first two itself).
 * sgc-run and sgc-serve share them.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>. Pure file reading:
 * errors are written to the caller's buffer, not returned as statuses.
 */
#ifndef SGC_RUNTIME_MODEL_FILES_H
#define SGC_RUNTIME_MODEL_FILES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The directory of |weights_path| (itself when it is one); malloc'ed. */
char *sgc_weights_directory(const char *weights_path);

/* |dir|/|name|, malloc'ed. */
char *sgc_path_join(const char *dir, const char *name);

/* 1 when |dir| holds tokenizer.json or tokenizer.model. */
int sgc_dir_has_tokenizer(const char *dir);

/* The checkpoint's chat template: chat_template.jinja, else the
 * "chat_template" of tokenizer_config.json (a string, or the entry named
 * "default" of a list). 0 and a malloc'ed |*out| (NULL when there is
 * none), or 1 with |error| naming the file and the key. |*source| gets the
 * file it came from (static suffix: "chat_template.jinja" or
 * "tokenizer_config.json"). */
int sgc_read_chat_template(const char *dir, char **out, const char **source,
                       char *error, size_t size);

/* 1 when |weights_path| is a GGUF file. It carries its tokenizer
 * (sgc_tokenizer_open takes the file) and chat template itself; the files
 * of its directory belong to no one in particular and are not read. */
int sgc_weights_is_gguf(const char *weights_path);

/* A GGUF file's chat template, tokenizer.chat_template: 0 and a malloc'ed
 * |*out| (NULL when the file has none), or 1 with |error| naming the file
 * and the key. */
int sgc_read_gguf_chat_template(const char *path, char **out, char *error,
                                size_t size);

/* generation_config.json: the sampling defaults a checkpoint asks for. */
typedef struct sgc_generation_config_t {
  int present;
  int has_do_sample, do_sample;
  int has_temperature;
  float temperature;
  int has_top_k;
  int32_t top_k;
  int has_top_p;
  float top_p;
  int has_min_p;
  float min_p;
  int has_repetition_penalty;
  float repetition_penalty;
  int32_t *eos_ids; /* eos_token_id: an int or a list */
  size_t num_eos;
} sgc_generation_config_t;

/* Reads |dir|/generation_config.json when present (|g->present| = 0
 * otherwise). 0, or 1 with |error| = "PATH: $.key: what". Keys that do not
 * affect sampling are ignored; null means absent, as in transformers. */
int sgc_read_generation_config(const char *dir, sgc_generation_config_t *g, char *error,
                           size_t size);
void sgc_generation_config_free(sgc_generation_config_t *g);

/* Which sampling fields a generation_config.json gave (bits of
 * sgc_config_sampling_t.given). */
enum {
  SGC_SAMPLING_TEMPERATURE = 1,
  SGC_SAMPLING_TOP_K = 2,
  SGC_SAMPLING_TOP_P = 4,
  SGC_SAMPLING_MIN_P = 8,
  SGC_SAMPLING_REPETITION_PENALTY = 16
};

/* The sampling a generation_config.json asks for, as transformers applies
 * it: only with do_sample true do temperature (absent: 1), top_k (absent:
 * 50), top_p and min_p apply; the repetition penalty applies whenever given
 * (to greedy search too). Fields that do not apply hold the runtime's
 * defaults (temperature 0 = greedy, top_k 0, top_p 1, min_p 0, penalty 1).
 * sgc-run puts its flags over these; sgc-serve a request's fields. */
typedef struct sgc_config_sampling_t {
  int sample; /* do_sample is true */
  float temperature;
  int32_t top_k;
  float top_p;
  float min_p;
  float repetition_penalty;
  unsigned given; /* SGC_SAMPLING_* the file gave and that apply */
} sgc_config_sampling_t;

void sgc_generation_config_sampling(const sgc_generation_config_t *g,
                                    sgc_config_sampling_t *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_MODEL_FILES_H */
