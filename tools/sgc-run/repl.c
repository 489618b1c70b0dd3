/*
 * repl.c - the --chat loop. The conversation is kept as the tokens the
 * model saw (its answers as generated, not re-tokenized); a new turn is the
 * text the chat template puts after a model answer: the end of that turn,
 * the user's turn, the generation prompt.
 */
#include "tools/sgc-run/repl.h"
#include "tools/sgc-run/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stands for the previous answer while the template renders what follows
 * it; no whitespace, so the template's trim keeps it whole. */
static const char answer_mark[] = "\x01sgc-answer\x01";

/* The text of a turn after the first: what the chat template renders after
 * a model answer when |line| is the next user message. The end-of-turn
 * marker is dropped when the answer ended with that token already. */
static int next_turn_text(const settings *s, const char *line,
                          int answer_closed, char **out) {
  chat_message m[3];
  char *full = NULL;
  const char *error = NULL, *after;
  const char *eot = chat_end_of_turn(s->format);
  m[0].role = "user";
  m[0].content = "x";
  m[1].role = "assistant";
  m[1].content = answer_mark;
  m[2].role = "user";
  m[2].content = line;
  if (chat_render(s->format, "", m, 3, 1, &full, &error)) {
    end_progress_line();
    fprintf(stderr, "error: %s\n", error);
    return SGC_STATUS_USAGE;
  }
  after = strstr(full, answer_mark) + sizeof answer_mark - 1;
  if (answer_closed && strncmp(after, eot, strlen(eot)) == 0)
    after += strlen(eot);
  *out = strdup(after);
  free(full);
  return *out ? 0 : out_of_memory();
}

static void print_ids_line(FILE *out, const char *label, const int32_t *ids,
                           size_t n) {
  size_t i;
  fputs(label, out);
  for (i = 0; i < n; ++i)
    fprintf(out, " %d", (int)ids[i]);
  fputc('\n', out);
}

static char *trim_line(char *line) {
  size_t n = strlen(line);
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
    line[--n] = '\0';
  return line;
}

typedef struct conversation {
  growing_ids tokens; /* everything the model saw or will see next */
  size_t cached;      /* of which the KV cache holds the first |cached| */
  int answer_closed;  /* the last answer ended with the end-of-turn token */
} conversation;

static int append_ids(growing_ids *g, const int32_t *ids, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (!ids_push(g, ids[i]))
      return 0;
  return 1;
}

/* One turn: tokenize, check the room, generate, remember. */
static int turn(const options *o, const settings *s, sgc_session_t *session,
                sgc_generate_options_t *gopts, generation *g,
                conversation *c, const char *line) {
  const int64_t context = sgc_session_context(session);
  growing_ids prompt = {0};
  int32_t *ids = NULL;
  size_t n = 0;
  char *rendered = NULL, *text = NULL;
  int rc;
  int64_t room, wanted;
  sgc_status_t *st;
  /* From here on a Ctrl-C stops this answer, not the program. */
  set_interrupt_graceful(1);
  if (c->tokens.count == 0) {
    chat_message m[2];
    size_t count = 0;
    if (o->system_prompt) {
      m[count].role = "system";
      m[count++].content = o->system_prompt;
    }
    m[count].role = "user";
    m[count++].content = line;
    rc = settings_tokenize(s, m, count, &rendered, &ids, &n);
  } else {
    rc = next_turn_text(s, line, c->answer_closed, &text);
    if (rc == 0)
      rc = settings_encode(s, text, &ids, &n);
    rendered = text;
  }
  if (rc)
    goto done;
  if (o->verbose) {
    fputs("turn text: ", stderr);
    print_json_string(stderr, rendered, strlen(rendered));
    fputc('\n', stderr);
  }
  /* What is not in the cache yet: the last answer's last token. */
  if (!append_ids(&prompt, c->tokens.ids + c->cached,
                  c->tokens.count - c->cached) ||
      !append_ids(&prompt, ids, n)) {
    rc = out_of_memory();
    goto done;
  }
  room = context - (int64_t)c->cached - (int64_t)prompt.count;
  if (room < 1) {
    end_progress_line();
    fprintf(stderr,
            "this turn (%zu tokens) does not fit: the conversation holds %zu "
            "of the %lld positions of the context; /reset starts over\n",
            prompt.count, c->cached, (long long)context);
    goto done; /* the conversation stays as it was */
  }
  wanted = option_given(o, "--max-new-tokens") ? o->max_new_tokens : room;
  g->max_new_tokens = wanted < room ? wanted : room;
  g->context_bound = wanted > room;
  gopts->cached_tokens = c->tokens.ids;
  gopts->num_cached_tokens = c->cached;
  if (o->verbose) {
    fprintf(stderr, "prefill: %zu tokens at position %zu\n", prompt.count,
            c->cached);
    print_ids_line(stderr, "prefill ids:", prompt.ids, prompt.count);
  }
  st = generation_run(g, prompt.ids, (int64_t)prompt.count, gopts);
  fputc('\n', stdout);
  fflush(stdout);
  if (st) {
    rc = report(st);
    goto done;
  }
  if (g->failed) {
    rc = out_of_memory();
    goto done;
  }
  if (o->verbose) {
    print_ids_line(stderr, "answer ids:", g->generated.ids,
                   g->generated.count);
    print_generation_summary(stderr, g);
  }
  /* The cache now holds the prompt and every answer token but the last. */
  if (!append_ids(&c->tokens, ids, n) ||
      !append_ids(&c->tokens, g->generated.ids, g->generated.count)) {
    rc = out_of_memory();
    goto done;
  }
  c->cached = c->tokens.count - (g->generated.count ? 1 : 0);
  c->answer_closed = g->generated.count > 0 &&
                     g->generated.ids[g->generated.count - 1] == s->end_of_turn;
done:
  set_interrupt_graceful(0);
  if (interrupt_requested()) {
    fputs("[answer stopped]\n", stderr);
    clear_interrupt();
  }
  free(prompt.ids);
  free(ids);
  free(rendered);
  return rc;
}

int chat_repl(const options *o, const settings *s, sgc_session_t *session,
              sgc_generate_options_t *gopts, generation *g) {
  conversation c;
  char *line = NULL;
  size_t cap = 0;
  int rc = 0;
  memset(&c, 0, sizeof c);
  for (;;) {
    fputs("> ", stdout);
    fflush(stdout);
    if (getline(&line, &cap, stdin) < 0) {
      fputc('\n', stdout); /* Ctrl-D: leave the terminal on a new line */
      break;
    }
    trim_line(line);
    if (line[0] == '\0')
      continue;
    if (strcmp(line, "/reset") == 0) {
      c.tokens.count = 0;
      c.cached = 0;
      c.answer_closed = 0;
      fputs("[conversation cleared]\n", stderr);
      continue;
    }
    if ((rc = turn(o, s, session, gopts, g, &c, line)) != 0)
      break;
  }
  free(line);
  free(c.tokens.ids);
  return rc;
}
