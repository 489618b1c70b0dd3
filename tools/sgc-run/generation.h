/*
 * generation.h - one call of sgc_session_generate as sgc-run shows it:
 * the generated ids, the answer streamed as text through the detokenizer
 * (held back while it could still become a stop string), the stop reason,
 * the timings, and the summary line or the --json record.
 */
#ifndef SGC_TOOLS_SGC_RUN_GENERATION_H
#define SGC_TOOLS_SGC_RUN_GENERATION_H

#include <sgc/runtime.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct growing_ids {
  int32_t *ids;
  size_t count, cap;
} growing_ids;

/* Appends; 0 when out of memory. */
int ids_push(growing_ids *g, int32_t id);

typedef struct generation {
  /* Set up by the caller. */
  sgc_session_t *session;
  const sgc_tokenizer_t *tokenizer; /* NULL: ids only */
  int stream_text;                  /* print the text on stdout as it comes */
  int print_ids;                    /* print ids on stdout (no tokenizer) */
  const char *const *stop_strings;
  size_t num_stop_strings;
  const int32_t *stop_ids; /* for the stop reason: what ends generation */
  size_t num_stop_ids;
  int64_t max_new_tokens;
  int context_bound; /* max_new_tokens was cut to what the context holds */
  sgc_logits_fn_t on_logits; /* passed on with logits_user */
  void *logits_user;

  /* Results. */
  growing_ids generated;
  char *text; /* the answer (NUL-terminated), cut before a stop string */
  size_t text_len, text_cap;
  int stop_string_hit;
  const char *stop_reason;
  int64_t n_prompt;
  double t_start, t_first, t_last;
  int failed; /* out of memory */

  sgc_text_stream_t *stream; /* the answer's text, cut at stop strings */
  int printed_ids;
} generation;

double now_seconds(void);

/* Runs |prompt| through sgc_session_generate with |gopts| (its on_token and
 * user are replaced). Returns the runtime's status. */
sgc_status_t *generation_run(generation *g, const int32_t *prompt,
                             int64_t n_prompt, sgc_generate_options_t *gopts);
/* Frees what a run collected (the setup fields stay). */
void generation_clear(generation *g);

/* "prompt 16 tokens, generated 8 (stop: length); time to first token ...;
 * prefill ... tok/s; decode ... tok/s" on |out|. */
void print_generation_summary(FILE *out, const generation *g);

/* The --json record: one line. |prompt_text| and |rendered| may be NULL. */
void print_generation_json(FILE *out, const generation *g,
                           const char *prompt_text, const char *rendered,
                           const int32_t *prompt, size_t n_prompt);

/* Writes |s| as a JSON string (quoted, escaped). */
void print_json_string(FILE *out, const char *s, size_t len);

#endif /* SGC_TOOLS_SGC_RUN_GENERATION_H */
