/*
 * perplexity.c - --perplexity and --kl-divergence-base (perplexity.h).
 *
 * The scoring is llama-perplexity's, so that the two agree on the same
 * file and text: the text is tokenized once with BOS in front, cut into
 * n_chunk = tokens / C whole chunks of C tokens, each chunk's first token
 * replaced by BOS and run alone from position 0; row j of a chunk (j from
 * C / 2 to C - 2) is scored by its log-probability of token j + 1, so every
 * scored token has at least C / 2 tokens of context.
 */
#include "tools/sgc-run/perplexity.h"

#include "tools/sgc-run/errors.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The base file: this magic, int64 vocab, C and n_chunk, the n_chunk x C
 * tokens (int32, BOS in each chunk's first), then every scored row's
 * log-probabilities (vocab x f32), chunk by chunk. */
static const char kl_magic[8] = {'S', 'G', 'C', 'K', 'L', 'D', '0', '1'};

typedef struct totals {
  double nll, nll2;       /* sum of -log p(next), and of its square */
  double kld, kld2, kmax; /* sum, sum of squares, largest KL */
  double base_nll;        /* the base run's sum of -log p(next) */
  int64_t same_top;       /* rows whose top token both runs agree on */
  int64_t count;
} totals;

static char *read_text(const char *path, int *rc) {
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  size_t len = 0, cap = 0, got;
  if (!f) {
    *rc = bad_input("cannot read '%s': %s", path, strerror(errno));
    return NULL;
  }
  do {
    if (len + 4096 + 1 > cap) {
      char *grown;
      cap = cap ? 2 * cap : 65536;
      grown = (char *)realloc(text, cap);
      if (!grown) {
        free(text);
        fclose(f);
        *rc = out_of_memory();
        return NULL;
      }
      text = grown;
    }
    got = fread(text + len, 1, 4096, f);
    len += got;
  } while (got == 4096);
  if (ferror(f)) {
    *rc = bad_input("cannot read '%s': %s", path, strerror(errno));
    free(text);
    text = NULL;
  } else {
    text[len] = '\0';
    if (strlen(text) != len) {
      *rc = bad_input("'%s': a NUL byte at offset %zu; --perplexity reads "
                      "a text file",
                      path, strlen(text));
      free(text);
      text = NULL;
    }
  }
  fclose(f);
  return text;
}

/* out = log_softmax(row), summed in double. */
static void log_softmax(const float *row, int64_t vocab, float *out) {
  float max = row[0];
  double sum = 0.0, lse;
  int64_t i;
  for (i = 1; i < vocab; ++i)
    if (row[i] > max)
      max = row[i];
  for (i = 0; i < vocab; ++i)
    sum += exp((double)row[i] - (double)max);
  lse = (double)max + log(sum);
  for (i = 0; i < vocab; ++i)
    out[i] = (float)((double)row[i] - lse);
}

static int64_t argmax(const float *v, int64_t n) {
  int64_t best = 0, i;
  for (i = 1; i < n; ++i)
    if (v[i] > v[best])
      best = i;
  return best;
}

/* KL(base || ours) of one row of log-probabilities. */
static double kl_row(const float *base, const float *ours, int64_t vocab) {
  double kl = 0.0;
  int64_t i;
  for (i = 0; i < vocab; ++i) {
    double p = exp((double)base[i]);
    if (p > 0.0)
      kl += p * ((double)base[i] - (double)ours[i]);
  }
  return kl;
}

typedef struct kl_file {
  FILE *f;
  const char *path;
  int writing;
  float *row; /* a base row, read */
} kl_file;

/* Opens the base: writes its header when it does not exist; else reads and
 * checks it against this run's tokens. */
static int kl_open(kl_file *k, const char *path, int64_t vocab, int64_t ctx,
                   int64_t n_chunk, const int32_t *tokens) {
  int64_t head[3] = {vocab, ctx, n_chunk}, theirs[3];
  char magic[8];
  size_t n = (size_t)(n_chunk * ctx);
  int32_t *base_tokens;
  k->path = path;
  k->f = fopen(path, "rb");
  if (!k->f) {
    if (errno != ENOENT)
      return bad_input("cannot read '%s': %s", path, strerror(errno));
    k->writing = 1;
    k->f = fopen(path, "wb");
    if (!k->f)
      return bad_input("cannot write '%s': %s", path, strerror(errno));
    if (fwrite(kl_magic, 1, 8, k->f) != 8 || fwrite(head, 8, 3, k->f) != 3 ||
        fwrite(tokens, 4, n, k->f) != n)
      return bad_input("cannot write '%s': %s", path, strerror(errno));
    return 0;
  }
  if (fread(magic, 1, 8, k->f) != 8 || memcmp(magic, kl_magic, 8) != 0 ||
      fread(theirs, 8, 3, k->f) != 3)
    return bad_input("'%s' is not a --kl-divergence-base file of sgc-run",
                     path);
  if (theirs[0] != vocab || theirs[1] != ctx || theirs[2] != n_chunk)
    return bad_input("'%s' was written for vocab %lld, --perplexity-context "
                     "%lld and %lld chunks; this run has %lld, %lld and %lld",
                     path, (long long)theirs[0], (long long)theirs[1],
                     (long long)theirs[2], (long long)vocab, (long long)ctx,
                     (long long)n_chunk);
  base_tokens = (int32_t *)malloc(n * sizeof *base_tokens);
  k->row = (float *)malloc((size_t)vocab * sizeof *k->row);
  if (!base_tokens || !k->row) {
    free(base_tokens);
    return out_of_memory();
  }
  if (fread(base_tokens, 4, n, k->f) != n) {
    free(base_tokens);
    return bad_input("'%s' ends inside its tokens", path);
  }
  for (size_t i = 0; i < n; ++i)
    if (base_tokens[i] != tokens[i]) {
      int rc = bad_input("'%s' scored another text: token %zu is %d there, "
                         "%d here",
                         path, i, (int)base_tokens[i], (int)tokens[i]);
      free(base_tokens);
      return rc;
    }
  free(base_tokens);
  return 0;
}

/* Writes this row to the base, or compares it with the base's. */
static int kl_row_step(kl_file *k, const float *logp, int64_t vocab,
                       int32_t next, totals *t) {
  double kl;
  if (k->writing) {
    if (fwrite(logp, 4, (size_t)vocab, k->f) != (size_t)vocab)
      return bad_input("cannot write '%s': %s", k->path, strerror(errno));
    return 0;
  }
  if (fread(k->row, 4, (size_t)vocab, k->f) != (size_t)vocab)
    return bad_input("'%s' ends before row %lld of its log-probabilities",
                     k->path, (long long)t->count);
  kl = kl_row(k->row, logp, vocab);
  t->kld += kl;
  t->kld2 += kl * kl;
  if (kl > t->kmax)
    t->kmax = kl;
  t->base_nll -= (double)k->row[next];
  t->same_top += argmax(k->row, vocab) == argmax(logp, vocab);
  return 0;
}

static int kl_close(kl_file *k) {
  int rc = 0;
  if (k->f && k->writing && fclose(k->f) != 0)
    rc = bad_input("cannot write '%s': %s", k->path, strerror(errno));
  else if (k->f && !k->writing)
    fclose(k->f);
  free(k->row);
  return rc;
}

/* The standard error of a mean from sums of x and x^2 over n. */
static double mean_error(double sum, double sum2, int64_t n) {
  double mean = sum / (double)n, var = sum2 / (double)n - mean * mean;
  return n > 1 && var > 0 ? sqrt(var / (double)(n - 1)) : 0.0;
}

static void print_results(const totals *t, const kl_file *k, int64_t n_chunk,
                          int64_t ctx) {
  double nll = t->nll / (double)t->count;
  double ppl = exp(nll);
  printf("\nscored %lld tokens: %lld chunks of %lld, the second half of each\n",
         (long long)t->count, (long long)n_chunk, (long long)ctx);
  printf("Final estimate: PPL = %.4f +/- %.5f\n", ppl,
         mean_error(t->nll, t->nll2, t->count) * ppl);
  if (!k->f)
    return;
  if (k->writing) {
    printf("KL base written to '%s'\n", k->path);
    return;
  }
  printf("base PPL = %.4f\n", exp(t->base_nll / (double)t->count));
  printf("Mean KLD: %.8f +/- %.8f, maximum %.8f\n",
         t->kld / (double)t->count, mean_error(t->kld, t->kld2, t->count),
         t->kmax);
  {
    double same = (double)t->same_top / (double)t->count;
    printf("Same top token: %.3f +/- %.3f %%\n", 100.0 * same,
           100.0 * sqrt(same * (1.0 - same) / (double)(t->count > 1 ? t->count - 1 : 1)));
  }
}

int run_perplexity(const options *o, const settings *s,
                   sgc_session_t *session, int64_t vocab,
                   int64_t max_prefill_chunk) {
  const int64_t ctx = o->perplexity_context;
  const int64_t first = ctx / 2;
  const int64_t step = o->prefill_chunk > 0 && o->prefill_chunk < max_prefill_chunk
                           ? o->prefill_chunk
                           : max_prefill_chunk;
  int rc = 0;
  char *text = NULL;
  int32_t *ids = NULL, *tokens = NULL;
  size_t n_ids = 0;
  float *logits = NULL, *logp = NULL;
  int64_t n_chunk, n_tokens, c;
  int32_t bos;
  totals t;
  kl_file k;
  memset(&t, 0, sizeof t);
  memset(&k, 0, sizeof k);

  if (!s->tokenizer)
    return usage_error("--perplexity needs a tokenizer (--tokenizer, or one "
                       "next to --weights)");
  bos = sgc_tokenizer_bos_id(s->tokenizer);
  if (bos < 0)
    return bad_input("--perplexity: the tokenizer has no BOS token, which "
                     "starts every chunk");
  if (ctx > sgc_session_context(session))
    return usage_error("--perplexity-context %lld is longer than the "
                       "session's context of %lld positions",
                       (long long)ctx, (long long)sgc_session_context(session));
  if (!(text = read_text(o->perplexity_path, &rc)))
    return rc;
  if ((rc = settings_encode(s, text, &ids, &n_ids)))
    goto done;
  /* BOS in front, as llama-perplexity tokenizes. */
  n_tokens = (int64_t)n_ids + 1;
  if (n_tokens < 2 * ctx) {
    rc = bad_input("'%s' is %lld tokens with BOS; --perplexity-context %lld "
                   "needs at least %lld",
                   o->perplexity_path, (long long)n_tokens, (long long)ctx,
                   (long long)(2 * ctx));
    goto done;
  }
  n_chunk = n_tokens / ctx;
  tokens = (int32_t *)malloc((size_t)(n_chunk * ctx) * sizeof *tokens);
  logits = (float *)malloc((size_t)(step * vocab) * sizeof *logits);
  logp = (float *)malloc((size_t)vocab * sizeof *logp);
  if (!tokens || !logits || !logp) {
    rc = out_of_memory();
    goto done;
  }
  tokens[0] = bos;
  memcpy(tokens + 1, ids, (size_t)(n_chunk * ctx - 1) * sizeof *tokens);
  for (c = 0; c < n_chunk; ++c)
    tokens[c * ctx] = bos;
  if (o->kl_base_path &&
      (rc = kl_open(&k, o->kl_base_path, vocab, ctx, n_chunk, tokens)))
    goto done;

  fprintf(stderr, "perplexity: %lld tokens, %lld chunks of %lld\n",
          (long long)n_tokens, (long long)n_chunk, (long long)ctx);
  set_interrupt_graceful(1);
  for (c = 0; c < n_chunk && !interrupt_requested(); ++c) {
    const int32_t *chunk = tokens + c * ctx;
    int64_t at;
    for (at = 0; at < ctx; at += step) {
      int64_t n = ctx - at < step ? ctx - at : step, j;
      sgc_status_t *st =
          sgc_session_prefill(session, chunk + at, n, at, logits, 1);
      if (st) {
        rc = report(st);
        goto stop;
      }
      for (j = at; j < at + n; ++j) {
        double p;
        if (j < first || j > ctx - 2)
          continue;
        log_softmax(logits + (j - at) * vocab, vocab, logp);
        p = -(double)logp[chunk[j + 1]];
        t.nll += p;
        t.nll2 += p * p;
        if (k.f && (rc = kl_row_step(&k, logp, vocab, chunk[j + 1], &t)))
          goto stop;
        ++t.count;
      }
    }
    printf("[%lld]%.4f%s", (long long)(c + 1), exp(t.nll / (double)t.count),
           c + 1 < n_chunk ? "," : "");
    fflush(stdout);
  }
stop:
  set_interrupt_graceful(0);
  if (rc == 0 && interrupt_requested())
    rc = interrupted_error();
  if (rc == 0)
    print_results(&t, &k, n_chunk, ctx);
done:
  if (kl_close(&k) && rc == 0)
    rc = 1;
  /* A base cut short is no base: remove it rather than leave a file that
   * later runs would read as whole. */
  if (rc != 0 && k.writing)
    remove(k.path);
  free(text);
  free(ids);
  free(tokens);
  free(logits);
  free(logp);
  return rc;
}
