/*
 * generation.c - streaming, stop strings, stop reasons, timings.
 */
#include "tools/sgc-run/generation.h"
#include "tools/sgc-run/errors.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ids_push(growing_ids *g, int32_t id) {
  if (g->count == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 64;
    int32_t *ids = (int32_t *)realloc(g->ids, cap * sizeof *ids);
    if (!ids)
      return 0;
    g->ids = ids;
    g->cap = cap;
  }
  g->ids[g->count++] = id;
  return 1;
}

static int append_text(generation *g, const char *s, size_t n) {
  if (g->text_len + n + 1 > g->text_cap) {
    size_t cap = g->text_cap ? g->text_cap : 256;
    char *t;
    while (cap < g->text_len + n + 1)
      cap *= 2;
    t = (char *)realloc(g->text, cap);
    if (!t)
      return 0;
    g->text = t;
    g->text_cap = cap;
  }
  memcpy(g->text + g->text_len, s, n);
  g->text_len += n;
  g->text[g->text_len] = '\0';
  return 1;
}

/* Adds settled text (the runtime's text stream held back what could still
 * become a stop string) and prints it when streaming. 0 when out of
 * memory. */
static int add_text(generation *g, const char *s, size_t n) {
  if (!append_text(g, s, n))
    return 0;
  if (n && g->stream_text) {
    fwrite(s, 1, n, stdout);
    fflush(stdout);
  }
  return 1;
}

/* SGC_RUN_TEST_TOKEN_DELAY_MS paces the tokens: the --chat test needs an
 * answer slow enough to be interrupted in the middle. */
static void test_delay(void) {
  static long ms = -1;
  if (ms < 0) {
    const char *v = getenv("SGC_RUN_TEST_TOKEN_DELAY_MS");
    ms = v ? strtol(v, NULL, 10) : 0;
    if (ms < 0)
      ms = 0;
  }
  if (ms > 0) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
  }
}

static int on_token(void *user, int32_t token) {
  generation *g = (generation *)user;
  double t;
  test_delay();
  t = now_seconds();
  if (g->generated.count == 0)
    g->t_first = t;
  g->t_last = t;
  if (!ids_push(&g->generated, token)) {
    g->failed = 1;
    return 1;
  }
  if (g->print_ids) {
    printf(g->printed_ids ? " %d" : "%d", (int)token);
    fflush(stdout);
    g->printed_ids = 1;
  }
  if (g->stream) {
    const char *piece = NULL;
    size_t len = 0;
    int stopped = 0;
    sgc_status_t *st =
        sgc_text_stream_push(g->stream, token, &piece, &len, &stopped);
    if (st) {
      sgc_status_free(st);
      g->failed = 1;
      return 1;
    }
    if (!add_text(g, piece, len)) {
      g->failed = 1;
      return 1;
    }
    if (stopped) {
      g->stop_string_hit = 1;
      return 1;
    }
  }
  /* Ctrl-C: this token was the last one. */
  return interrupt_requested();
}

static void on_logits(void *user, sgc_logits_kind_t kind, int64_t index,
                      const float *row, int64_t vocab) {
  generation *g = (generation *)user;
  g->on_logits(g->logits_user, kind, index, row, vocab);
}

static int is_stop_id(const generation *g, int32_t token) {
  size_t i;
  for (i = 0; i < g->num_stop_ids; ++i)
    if (g->stop_ids[i] == token)
      return 1;
  return 0;
}

sgc_status_t *generation_run(generation *g, const int32_t *prompt,
                             int64_t n_prompt, sgc_generate_options_t *gopts) {
  sgc_status_t *st;
  generation_clear(g);
  g->n_prompt = n_prompt;
  if (g->tokenizer) {
    st = sgc_text_stream_create(g->tokenizer, 1, g->stop_strings,
                                g->num_stop_strings, &g->stream);
    if (st)
      return st;
  }
  gopts->on_token = on_token;
  gopts->on_logits = g->on_logits ? on_logits : NULL;
  gopts->user = g;
  gopts->max_new_tokens = g->max_new_tokens;
  g->t_start = now_seconds();
  st = sgc_session_generate(g->session, prompt, n_prompt, gopts, NULL);
  if (!st && g->stream && !g->stop_string_hit && !g->failed) {
    const char *rest = NULL;
    size_t len = 0;
    st = sgc_text_stream_finish(g->stream, &rest, &len, &g->stop_string_hit);
    if (!st && !add_text(g, rest, len))
      g->failed = 1;
  }
  if (!g->text && !append_text(g, "", 0))
    g->failed = 1;
  if (g->stop_string_hit)
    g->stop_reason = "stop string";
  else if (interrupt_requested())
    g->stop_reason = "interrupted";
  else if (g->generated.count > 0 &&
           is_stop_id(g, g->generated.ids[g->generated.count - 1]))
    g->stop_reason = "stop token";
  else if (g->context_bound)
    g->stop_reason = "context full";
  else
    g->stop_reason = "max new tokens";
  return st;
}

void generation_clear(generation *g) {
  free(g->generated.ids);
  memset(&g->generated, 0, sizeof g->generated);
  free(g->text);
  g->text = NULL;
  g->text_len = g->text_cap = 0;
  g->stop_string_hit = 0;
  g->stop_reason = NULL;
  g->failed = 0;
  g->printed_ids = 0;
  g->t_start = g->t_first = g->t_last = 0;
  sgc_text_stream_release(g->stream);
  g->stream = NULL;
}

/* Seconds to the first token; prefill and decode rates (0 when unknown). */
static void rates(const generation *g, double *ttft, double *prefill,
                  double *decode) {
  size_t n = g->generated.count;
  *ttft = n ? g->t_first - g->t_start : 0.0;
  *prefill = n && *ttft > 0 ? (double)g->n_prompt / *ttft : 0.0;
  *decode = n > 1 && g->t_last > g->t_first
                ? (double)(n - 1) / (g->t_last - g->t_first)
                : 0.0;
}

void print_generation_summary(FILE *out, const generation *g) {
  double ttft, prefill, decode;
  rates(g, &ttft, &prefill, &decode);
  fprintf(out,
          "prompt %lld tokens, generated %zu (stop: %s); time to first token "
          "%.1f ms; prefill %.1f tok/s; decode ",
          (long long)g->n_prompt, g->generated.count,
          g->stop_reason ? g->stop_reason : "none", ttft * 1e3, prefill);
  if (g->generated.count > 1)
    fprintf(out, "%.1f tok/s\n", decode);
  else
    fputs("- (one token)\n", out);
}

void print_json_string(FILE *out, const char *s, size_t len) {
  size_t i;
  fputc('"', out);
  for (i = 0; i < len; ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c == '\r')
      fputs("\\r", out);
    else if (c == '\t')
      fputs("\\t", out);
    else if (c < 0x20 || c == 0x7f)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void print_ids_array(FILE *out, const int32_t *ids, size_t n) {
  size_t i;
  fputc('[', out);
  for (i = 0; i < n; ++i)
    fprintf(out, i ? ",%d" : "%d", (int)ids[i]);
  fputc(']', out);
}

static void print_optional_string(FILE *out, const char *s) {
  if (s)
    print_json_string(out, s, strlen(s));
  else
    fputs("null", out);
}

void print_generation_json(FILE *out, const generation *g,
                           const char *prompt_text, const char *rendered,
                           const int32_t *prompt, size_t n_prompt) {
  double ttft, prefill, decode;
  rates(g, &ttft, &prefill, &decode);
  fputs("{\"prompt\":", out);
  print_optional_string(out, prompt_text);
  fputs(",\"rendered_prompt\":", out);
  print_optional_string(out, rendered);
  fputs(",\"prompt_ids\":", out);
  print_ids_array(out, prompt, n_prompt);
  fputs(",\"text\":", out);
  if (g->tokenizer)
    print_json_string(out, g->text, g->text_len);
  else
    fputs("null", out);
  fputs(",\"ids\":", out);
  print_ids_array(out, g->generated.ids, g->generated.count);
  fprintf(out,
          ",\"prompt_tokens\":%lld,\"generated_tokens\":%zu,"
          "\"stop_reason\":",
          (long long)g->n_prompt, g->generated.count);
  print_optional_string(out, g->stop_reason);
  fprintf(out,
          ",\"time_to_first_token_s\":%.6f,\"prefill_tokens_per_s\":%.3f,"
          "\"decode_tokens_per_s\":%.3f}\n",
          ttft, prefill, decode);
}
