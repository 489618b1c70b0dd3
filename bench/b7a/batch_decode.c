/*
 * batch_decode.c - B7a: decode steps of B sequences at once through the
 * runtime's C API (sgc_session_decode_batch), for each B given.
 *
 *   batch_decode MODEL.so WEIGHTS THREADS STEPS B...
 *
 * Binds WEIGHTS (populated) once. Per B (in the order given): a session of
 * B sequence slots; each slot prefills its own 32-token prompt (token 2,
 * then ids that differ per slot); 4 untimed batched greedy steps; then
 * STEPS timed ones, each one sgc_session_decode_batch call for all B rows
 * (their positions differ by slot: 32 + slot + step) plus the host's
 * argmax of each row. Prints per B one line:
 *   B=<b> step_ms_median=<ms> tok_s=<B / median step> other_load=<cpus>
 */
#include "sgc/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../other_load.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(sgc_status_t *st, const char *what) {
  if (!st)
    return;
  fprintf(stderr, "batch_decode: %s: %s\n", what, sgc_status_message(st));
  for (size_t i = 0; i < sgc_status_note_count(st); ++i)
    fprintf(stderr, "note: %s\n", sgc_status_note(st, i));
  exit((int)sgc_status_code(st));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int32_t argmax(const float *row, int64_t n) {
  int32_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (row[i] > row[best])
      best = (int32_t)i;
  return best;
}

enum { PROMPT = 32, WARMUP = 4 };

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: batch_decode MODEL.so WEIGHTS THREADS STEPS B...\n");
    return 2;
  }
  int threads = atoi(argv[3]);
  long steps = atol(argv[4]);
  if (threads < 1 || steps < 1) {
    fprintf(stderr, "batch_decode: bad arguments\n");
    return 2;
  }
  sgc_model_t *model;
  check(sgc_model_open(argv[1], &model), "model");
  sgc_model_info_t info;
  sgc_model_get_info(model, &info);
  sgc_weights_options_t wopt;
  sgc_weights_options_default(&wopt);
  wopt.populate = 1;
  sgc_weights_t *weights;
  check(sgc_weights_bind(model, argv[2], &wopt, &weights), "weights");
  const int64_t vocab = info.vocab_size;
  const int64_t span = vocab - 100 < 100000 ? vocab - 100 : 100000;

  for (int a = 5; a < argc; ++a) {
    int b = atoi(argv[a]);
    if (b < 1) {
      fprintf(stderr, "batch_decode: bad B '%s'\n", argv[a]);
      return 2;
    }
    sgc_session_options_t sopt;
    sgc_session_options_default(&sopt);
    sopt.num_threads = threads;
    sopt.num_sequences = b;
    sopt.max_context = PROMPT + WARMUP + steps + b + 1;
    sgc_session_t *session;
    check(sgc_session_create(model, weights, &sopt, &session), "session");
    int32_t *seq = malloc(b * sizeof *seq), *tok = malloc(b * sizeof *tok);
    int64_t *pos = malloc(b * sizeof *pos);
    float *logits = malloc((size_t)b * vocab * sizeof *logits);
    int32_t prompt[PROMPT + 64];
    for (int s = 0; s < b; ++s) {
      /* Slot s: a prompt of PROMPT + s tokens, so positions differ. */
      int n = PROMPT + s % 64;
      for (int i = 0; i < n; ++i)
        prompt[i] = i == 0 ? 2 : (int32_t)(100 + ((i + 97 * s) * 7919) % span);
      check(sgc_session_use_sequence(session, s), "slot");
      check(sgc_session_prefill(session, prompt, n, 0, logits, 0), "prefill");
      seq[s] = s;
      tok[s] = argmax(logits, vocab);
      pos[s] = n;
    }
    double *t = malloc(steps * sizeof *t);
    struct load_sample l0 = {0, 0, 0, 0};
    for (long k = -WARMUP; k < steps; ++k) {
      if (k == 0)
        l0 = load_sample_now();
      double t0 = now();
      check(sgc_session_decode_batch(session, b, seq, tok, pos, logits),
            "decode_batch");
      for (int s = 0; s < b; ++s) {
        tok[s] = argmax(logits + (size_t)s * vocab, vocab);
        ++pos[s];
      }
      if (k >= 0)
        t[k] = now() - t0;
    }
    struct load_sample l1 = load_sample_now();
    double other = other_load(&l0, &l1);
    qsort(t, steps, sizeof *t, cmp_double);
    double med = steps % 2 ? t[steps / 2] : 0.5 * (t[steps / 2 - 1] + t[steps / 2]);
    printf("B=%d step_ms_median=%.3f tok_s=%.2f other_load=%.2f\n", b,
           med * 1e3, b / med, other);
    fflush(stdout);
    free(t);
    free(seq);
    free(tok);
    free(pos);
    free(logits);
    sgc_session_release(session);
  }
  sgc_weights_release(weights);
  sgc_model_release(model);
  return 0;
}
