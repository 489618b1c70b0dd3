/*
 * logits_dump.h - --dump-logits: every logits row a generation computes,
 * written as safetensors.
 */
#ifndef SGC_TOOLS_SGC_RUN_LOGITS_DUMP_H
#define SGC_TOOLS_SGC_RUN_LOGITS_DUMP_H

#include <sgc/runtime.h>

#include <stdint.h>

/* --dump-logits: every row computed. */
typedef struct run_state {
  int64_t vocab;
  int64_t n_prompt;
  int dump;
  float *prefill; /* n_prompt x vocab */
  float *decode;  /* decode_rows x vocab */
  int64_t decode_rows;
  int64_t decode_cap;
  const int32_t *generated;
  int64_t n_generated;
  int failed; /* out of memory while collecting */
  /* The images' soft tokens ([soft_rows, hidden]), or NULL. */
  const float *soft_tokens;
  int64_t soft_rows, hidden;
} run_state;

/* An sgc_logits_fn_t: keeps the row in the run_state |user|. */
void dump_on_logits(void *user, sgc_logits_kind_t kind, int64_t index,
                    const float *row, int64_t vocab);

/* Writes prefill_logits, decode_logits, prompt_ids, generated_ids (and the
 * image soft tokens) to |path|; 0 or the exit code of the error (reported). */
int write_logits(const char *path, const run_state *s, const int32_t *prompt);

#endif /* SGC_TOOLS_SGC_RUN_LOGITS_DUMP_H */
