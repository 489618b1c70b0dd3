/*
 * model_dir.h - the files a Hugging Face checkpoint ships next to its
 * weights: the tokenizer, the chat template, generation_config.json.
 */
#ifndef SGC_TOOLS_SGC_RUN_MODEL_DIR_H
#define SGC_TOOLS_SGC_RUN_MODEL_DIR_H

#include <stddef.h>
#include <stdint.h>

/* The directory of |weights_path| (itself when it is one); malloc'ed. */
char *weights_directory(const char *weights_path);

/* |dir|/|name|, malloc'ed. */
char *path_join(const char *dir, const char *name);

/* 1 when |dir| holds tokenizer.json or tokenizer.model. */
int has_tokenizer(const char *dir);

/* The checkpoint's chat template: chat_template.jinja, else the
 * "chat_template" of tokenizer_config.json (a string, or the entry named
 * "default" of a list). 0 and a malloc'ed |*out| (NULL when there is
 * none), or 1 with |error| naming the file and the key. |*source| gets the
 * file it came from (static suffix: "chat_template.jinja" or
 * "tokenizer_config.json"). */
int read_chat_template(const char *dir, char **out, const char **source,
                       char *error, size_t size);

/* generation_config.json: the sampling defaults a checkpoint asks for. */
typedef struct generation_config {
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
} generation_config;

/* Reads |dir|/generation_config.json when present (|g->present| = 0
 * otherwise). 0, or 1 with |error| = "PATH: $.key: what". Keys that do not
 * affect sampling are ignored; null means absent, as in transformers. */
int read_generation_config(const char *dir, generation_config *g, char *error,
                           size_t size);
void free_generation_config(generation_config *g);

#endif /* SGC_TOOLS_SGC_RUN_MODEL_DIR_H */
