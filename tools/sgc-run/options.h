/*
 * options.h - sgc-run's options, parsed from the command line.
 */
#ifndef SGC_TOOLS_SGC_RUN_OPTIONS_H
#define SGC_TOOLS_SGC_RUN_OPTIONS_H

#include <sgc/runtime.h>

#include <stdint.h>
#include <stdio.h>

typedef struct id_list {
  int32_t *ids;
  size_t count;
} id_list;

typedef struct string_list {
  const char **items; /* point into argv */
  size_t count;
} string_list;

typedef struct device_choice {
  sgc_device_kind_t kind;
  int32_t ordinal;
  int chosen; /* --device was given; otherwise the model's target decides */
} device_choice;

typedef struct options {
  const char *model_path;
  const char *weights_path;
  device_choice device;
  id_list prompt;
  const char *prompt_ids_file; /* --prompt-ids-file: many prompts */
  int32_t parallel;            /* --parallel: sequence slots (0 = 1) */
  string_list images;       /* --image, in order */
  string_list pixel_values; /* --pixel-values, in order */
  const char *prompt_text;   /* --prompt */
  const char *system_prompt; /* --system */
  const char *tokenizer_path;
  int raw;  /* --raw: no chat template */
  int chat; /* --chat: the interactive session */
  int json; /* --json: one record instead of streamed text */
  string_list stop_strings;
  id_list stop;
  id_list feed;
  int64_t max_new_tokens;
  int64_t prefill_chunk;
  sgc_load_format_t load_format;
  sgc_weights_placement_t weights_memory; /* --weights-memory */
  const char *write_dummy_path;
  const char *dump_logits_path;
  const char *perplexity_path;  /* --perplexity: a text to score */
  int64_t perplexity_context;   /* --perplexity-context: tokens a chunk */
  const char *kl_base_path;     /* --kl-divergence-base */
  const char *inspect_path;
  const char *cpu_variant;
  int32_t threads;
  int64_t max_context; /* 0 = the model's */
  int dry_run;
  int progress; /* -1 auto (tty), 0 off, 1 on */
  float temperature;
  int32_t top_k;
  float top_p;
  float min_p;
  float repetition_penalty;
  uint64_t seed;
  int ignore_eos;
  int check;
  int verbose;
  int help;
  int version;
  /* Which rows of the option table the command line used (option_given). */
  unsigned char given[128];
} options;

/* The defaults every run starts from. */
void options_default(options *o);
void free_options(options *o);

/* Parses argv into |o|; 0, or the exit code of a usage error (printed). */
int parse_args(int argc, char **argv, options *o);

/* Parses "1,2,3" into |out| (replacing what was there). Returns 0 on a
 * malformed list, -1 when out of memory. */
int parse_ids(const char *text, id_list *out);

/* 1 when the command line gave option |name| ("--temperature"). */
int option_given(const options *o, const char *name);

/* 0 when |path| can be written; else one "error: cannot write 'PATH': ..."
 * line and exit code 1: its directory is missing or takes no new files, it
 * is a directory, or a file without write permission. */
int check_output_path(const char *path);

/* Prints the usage text, generated from the option table. */
void print_help(FILE *out);

#endif /* SGC_TOOLS_SGC_RUN_OPTIONS_H */
