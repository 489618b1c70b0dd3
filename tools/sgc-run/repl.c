/*
 * repl.c - the --chat loop. The conversation is kept as the tokens the
 * model saw (its answers as generated, not re-tokenized); a new turn is the
 * text the chat template puts after a model answer: the end of that turn,
 * the user's turn, the generation prompt. Images go with a user turn
 * (--image: the first; "/image FILE": the next): the template writes their
 * markers, the processor's rule expands them, and their blocks are rows of
 * that turn's prompt, after the cached positions.
 */
#include "tools/sgc-run/repl.h"
#include "tools/sgc-run/errors.h"
#include "tools/sgc-run/images.h"

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
                          size_t images, int answer_closed, char **out) {
  sgc_chat_message_t m[3];
  char *full = NULL;
  const char *error = NULL, *after;
  const char *eot = sgc_chat_end_of_turn(s->format);
  memset(m, 0, sizeof m);
  m[0].role = "user";
  m[0].content = "x";
  m[1].role = "assistant";
  m[1].content = answer_mark;
  m[2].role = "user";
  m[2].content = line;
  m[2].images = images;
  if (sgc_chat_render(s->format, "", m, 3, 1, &full, &error)) {
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

/* The images of the turn being prepared: |pending| (NULL for a model
 * without a vision tower), empty until --image or /image fills it. */
typedef struct turn_images {
  image_inputs *pending;
  int64_t max_chunk;
} turn_images;

static size_t pending_count(const turn_images *ti) {
  return ti->pending ? ti->pending->count : 0;
}

/* The turn's text: |*rendered| as the template writes it, with the images'
 * markers (before the text unless it holds them); |*out| as tokenized,
 * expanded as the processor does (NULL without images). */
static int turn_text(const options *o, const settings *s,
                     const conversation *c, const turn_images *ti,
                     const char *line, char **rendered_out, char **out) {
  const size_t n_images = pending_count(ti);
  const size_t before =
      n_images ? images_before_text(ti->pending, s->tokenizer, line) : 0;
  char *rendered = NULL;
  int rc;
  *out = NULL;
  if (c->tokens.count == 0) {
    sgc_chat_message_t m[2];
    size_t count = 0;
    memset(m, 0, sizeof m);
    if (o->system_prompt) {
      m[count].role = "system";
      m[count++].content = o->system_prompt;
    }
    m[count].role = "user";
    m[count].images = before;
    m[count++].content = line;
    rc = settings_render(s, m, count, &rendered);
  } else {
    rc = next_turn_text(s, line, before, c->answer_closed, &rendered);
  }
  *rendered_out = rendered;
  if (rc == 0 && n_images)
    rc = images_expand_rendered(ti->pending, s->tokenizer, rendered, out);
  return rc;
}

/* Lays the turn's images out in |prompt| (the rows after the cached
 * positions, of which the turn's own are the last |*n|); the rows to run
 * and remember are then the layout's. */
static int turn_layout(const turn_images *ti, growing_ids *prompt,
                       int32_t **ids, size_t *n) {
  image_inputs *in = ti->pending;
  const int32_t *rows;
  size_t count, tail = prompt->count - *n;
  int32_t *own;
  int rc;
  if ((rc = images_layout(in, prompt->ids, prompt->count, ti->max_chunk)))
    return rc;
  rows = sgc_prompt_layout_ids(in->layout);
  count = sgc_prompt_layout_length(in->layout);
  own = (int32_t *)malloc((count - tail) * sizeof *own + 1);
  if (!own)
    return out_of_memory();
  memcpy(own, rows + tail, (count - tail) * sizeof *own);
  free(*ids);
  *ids = own;
  *n = count - tail;
  prompt->count = tail;
  return append_ids(prompt, own, *n) ? 0 : out_of_memory();
}

/* Runs the tower on the turn's images and points |gopts| at their soft
 * tokens. */
static int turn_encode(const options *o, const turn_images *ti,
                       sgc_session_t *session, sgc_generate_options_t *gopts) {
  image_inputs *in = ti->pending;
  size_t i;
  int rc;
  if ((rc = images_encode(in, session, gopts)))
    return rc;
  if (o->verbose)
    for (i = 0; i < in->count; ++i)
      fprintf(stderr, "image %zu: %lld soft tokens from the tower\n", i + 1,
              (long long)in->soft_tokens[i]);
  return 0;
}

/* One turn: tokenize, check the room, generate, remember. */
static int turn(const options *o, const settings *s, sgc_session_t *session,
                sgc_generate_options_t *gopts, generation *g,
                conversation *c, const turn_images *ti, const char *line) {
  const int64_t context = sgc_session_context(session);
  growing_ids prompt = {0};
  int32_t *ids = NULL;
  size_t n = 0;
  char *rendered = NULL, *expanded = NULL;
  int rc;
  int64_t room, wanted;
  sgc_status_t *st;
  /* From here on a Ctrl-C stops this answer, not the program. */
  set_interrupt_graceful(1);
  rc = turn_text(o, s, c, ti, line, &rendered, &expanded);
  if (rc == 0)
    rc = settings_encode(s, expanded ? expanded : rendered, &ids, &n);
  if (rc)
    goto done;
  if (o->verbose) {
    /* The template's text; the images' expansion shows in the ids. */
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
  if (pending_count(ti) && (rc = turn_layout(ti, &prompt, &ids, &n)))
    goto done;
  room = context - (int64_t)c->cached - (int64_t)prompt.count;
  if (room < 1) {
    end_progress_line();
    fprintf(stderr,
            "this turn (%zu tokens) does not fit: the conversation holds %zu "
            "of the %lld positions of the context; /reset starts over\n",
            prompt.count, c->cached, (long long)context);
    goto done; /* the conversation stays as it was */
  }
  if (pending_count(ti) && (rc = turn_encode(o, ti, session, gopts)))
    goto done;
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
  /* The images went with this turn (or with its refusal): later turns are
   * text until the next /image. */
  gopts->prompt_image_blocks = NULL;
  gopts->prompt_soft_slots = NULL;
  gopts->image_soft_tokens = NULL;
  if (ti->pending)
    images_clear(ti->pending);
  free(prompt.ids);
  free(ids);
  free(rendered);
  free(expanded);
  return rc;
}

/* "/image FILE": the file is loaded and checked now; a bad one is an error
 * line and the conversation goes on. */
static void attach_image(const options *o, const turn_images *ti,
                         const char *path) {
  while (*path == ' ' || *path == '\t')
    ++path;
  if (*path == '\0') {
    fputs("error: /image needs a file: /image FILE\n", stderr);
    return;
  }
  if (!ti->pending) {
    fprintf(stderr,
            "error: %s: this model has no vision component (no encode_image "
            "entry point), so it takes no /image\n",
            o->model_path);
    return;
  }
  if (images_add(ti->pending, path, 0) == 0)
    fprintf(stderr, "[image %zu: %s, %lld soft tokens, for the next message]\n",
            ti->pending->count, path,
            (long long)ti->pending->soft_tokens[ti->pending->count - 1]);
}

int chat_repl(const options *o, const settings *s, sgc_session_t *session,
              sgc_generate_options_t *gopts, generation *g,
              image_inputs *images, int64_t max_chunk) {
  conversation c;
  turn_images ti;
  char *line = NULL;
  size_t cap = 0;
  int rc = 0;
  memset(&c, 0, sizeof c);
  ti.pending = images;
  ti.max_chunk = max_chunk;
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
      if (images)
        images_clear(images);
      fputs("[conversation cleared]\n", stderr);
      continue;
    }
    if (strncmp(line, "/image", 6) == 0 &&
        (line[6] == '\0' || line[6] == ' ' || line[6] == '\t')) {
      attach_image(o, &ti, line + 6);
      continue;
    }
    if ((rc = turn(o, s, session, gopts, g, &c, &ti, line)) != 0)
      break;
  }
  free(line);
  free(c.tokens.ids);
  return rc;
}
