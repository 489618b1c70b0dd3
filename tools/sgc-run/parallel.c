/*
 * parallel.c - --prompt-ids-file (parallel.h).
 */
#include "tools/sgc-run/parallel.h"

#include "tools/sgc-run/errors.h"
#include "tools/sgc-run/generation.h"
#include "tools/sgc-run/logits_dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One prompt of the file and what it generated. */
typedef struct sequence {
  id_list prompt;
  growing_ids generated;
  run_state dump;
  int failed;
} sequence;

static int collect_token(void *user, int32_t token) {
  sequence *s = (sequence *)user;
  if (!ids_push(&s->generated, token))
    s->failed = 1;
  return s->failed;
}

static void collect_logits(void *user, sgc_logits_kind_t kind, int64_t index,
                           const float *row, int64_t vocab) {
  dump_on_logits(&((sequence *)user)->dump, kind, index, row, vocab);
}

/* The prompts of |path|, one per non-empty line; 0 or an exit code naming
 * the line. */
static int read_prompts(const char *path, sequence **out, size_t *count) {
  FILE *f = fopen(path, "r");
  char *line = NULL;
  size_t cap = 0, n = 0, lineno = 0;
  sequence *seqs = NULL;
  int rc = 0;
  if (!f)
    return bad_input("cannot read '%s': %s", path, strerror(errno));
  while (getline(&line, &cap, f) >= 0) {
    size_t len = strlen(line);
    sequence *grown;
    int r;
    ++lineno;
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                   line[len - 1] == ' '))
      line[--len] = '\0';
    if (!len)
      continue;
    grown = (sequence *)realloc(seqs, (n + 1) * sizeof *seqs);
    if (!grown) {
      rc = out_of_memory();
      break;
    }
    seqs = grown;
    memset(&seqs[n], 0, sizeof seqs[n]);
    r = parse_ids(line, &seqs[n].prompt);
    if (r <= 0) {
      rc = r < 0 ? out_of_memory()
                 : bad_input("%s:%zu: expected comma-separated integer ids",
                             path, lineno);
      break;
    }
    ++n;
  }
  free(line);
  fclose(f);
  if (!rc && n == 0)
    rc = bad_input("%s: no prompts (one line of comma-separated ids each)",
                   path);
  *out = seqs;
  *count = n;
  return rc;
}

int run_parallel(const options *o, sgc_session_t *session,
                 const sgc_generate_options_t *base, int64_t vocab) {
  sequence *seqs = NULL;
  size_t n = 0, i, total = 0;
  sgc_generate_options_t *gopts = NULL;
  sgc_sequence_request_t *requests = NULL;
  sgc_status_t *st;
  double t0;
  int rc = read_prompts(o->prompt_ids_file, &seqs, &n);
  if (!rc) {
    gopts = (sgc_generate_options_t *)calloc(n, sizeof *gopts);
    requests = (sgc_sequence_request_t *)calloc(n, sizeof *requests);
    if (!gopts || !requests)
      rc = out_of_memory();
  }
  for (i = 0; !rc && i < n; ++i) {
    sequence *s = &seqs[i];
    gopts[i] = *base;
    gopts[i].max_new_tokens = o->max_new_tokens;
    gopts[i].on_token = collect_token;
    gopts[i].user = s;
    if (o->dump_logits_path) {
      s->dump.vocab = vocab;
      s->dump.n_prompt = (int64_t)s->prompt.count;
      s->dump.dump = 1;
      s->dump.prefill = (float *)calloc(s->prompt.count * (size_t)vocab,
                                        sizeof(float));
      if (!s->dump.prefill) {
        rc = out_of_memory();
        break;
      }
      gopts[i].on_logits = collect_logits;
      gopts[i].prefill_all_logits = 1;
    }
    requests[i].prompt = s->prompt.ids;
    requests[i].n_prompt = (int64_t)s->prompt.count;
    requests[i].options = &gopts[i];
  }
  if (!rc) {
    t0 = now_seconds();
    st = sgc_session_generate_batch(session, requests, n);
    if (st)
      rc = report(st);
  }
  for (i = 0; !rc && i < n; ++i) {
    sequence *s = &seqs[i];
    size_t k;
    if (s->failed || s->dump.failed) {
      rc = out_of_memory();
      break;
    }
    total += s->generated.count;
    if (o->json) {
      printf("{\"sequence\":%zu,\"prompt_tokens\":%zu,\"ids\":[", i,
             s->prompt.count);
      for (k = 0; k < s->generated.count; ++k)
        printf(k ? ",%d" : "%d", (int)s->generated.ids[k]);
      printf("],\"generated_tokens\":%zu}\n", s->generated.count);
    } else {
      for (k = 0; k < s->generated.count; ++k)
        printf(k ? " %d" : "%d", (int)s->generated.ids[k]);
      putchar('\n');
    }
    if (o->dump_logits_path) {
      char path[4096];
      if ((size_t)snprintf(path, sizeof path, "%s.%zu", o->dump_logits_path,
                           i) >= sizeof path) {
        rc = usage_error("--dump-logits path is too long");
        break;
      }
      s->dump.generated = s->generated.ids;
      s->dump.n_generated = (int64_t)s->generated.count;
      rc = write_logits(path, &s->dump, s->prompt.ids);
    }
  }
  if (!rc && o->verbose) {
    double t = now_seconds() - t0;
    fprintf(stderr,
            "%zu sequences, %d at a time: %zu tokens generated in %.2f s "
            "(%.1f tok/s)\n",
            n, sgc_session_num_sequences(session), total, t,
            t > 0 ? (double)total / t : 0.0);
  }
  fflush(stdout);
  for (i = 0; i < n; ++i) {
    free(seqs[i].prompt.ids);
    free(seqs[i].generated.ids);
    free(seqs[i].dump.prefill);
    free(seqs[i].dump.decode);
  }
  free(seqs);
  free(gopts);
  free(requests);
  return rc;
}
