/*
 * settings.c - the tokenizer and chat template found next to the weights
 * (or in a GGUF file), generation_config.json's sampling defaults under the
 * flags, stop tokens.
 */
#include "tools/sgc-run/settings.h"
#include "tools/sgc-run/errors.h"
#include "sgc/runtime/model_files.h"

#include <stdlib.h>
#include <string.h>

static int error_line(int code, const char *message) {
  end_progress_line();
  fprintf(stderr, "error: %s\n", message);
  return code;
}

/*===----------------------------------------------------------------------===*
 * Sampling: flags, else generation_config.json, else the defaults
 *===----------------------------------------------------------------------===*/

static const char from_config[] = "generation_config.json";

static void resolve_sampling(const options *o, const sgc_generation_config_t *gc,
                             sgc_generate_options_t *g) {
  sgc_config_sampling_t c;
  const char *t_src = "default", *k_src = "default", *p_src = "default",
             *m_src = "default", *r_src = "default";
  const char *not_given = "transformers' default for do_sample";
  sgc_generation_config_sampling(gc, &c);
  g->temperature = o->temperature;
  g->top_k = o->top_k;
  g->top_p = o->top_p;
  g->min_p = o->min_p;
  g->repetition_penalty = o->repetition_penalty;
  if (option_given(o, "--temperature")) {
    t_src = "--temperature";
  } else if (c.sample) {
    g->temperature = c.temperature;
    t_src = c.given & SGC_SAMPLING_TEMPERATURE ? from_config : not_given;
  } else if (gc->present && gc->has_do_sample) {
    t_src = "generation_config.json do_sample false: greedy";
  }
  if (option_given(o, "--top-k")) {
    k_src = "--top-k";
  } else if (c.sample) {
    g->top_k = c.top_k;
    k_src = c.given & SGC_SAMPLING_TOP_K ? from_config : not_given;
  }
  if (option_given(o, "--top-p")) {
    p_src = "--top-p";
  } else if (c.given & SGC_SAMPLING_TOP_P) {
    g->top_p = c.top_p;
    p_src = from_config;
  }
  if (option_given(o, "--min-p")) {
    m_src = "--min-p";
  } else if (c.given & SGC_SAMPLING_MIN_P) {
    g->min_p = c.min_p;
    m_src = from_config;
  }
  if (option_given(o, "--repetition-penalty")) {
    r_src = "--repetition-penalty";
  } else if (c.given & SGC_SAMPLING_REPETITION_PENALTY) {
    g->repetition_penalty = c.repetition_penalty;
    r_src = from_config;
  }
  if (o->verbose)
    fprintf(stderr,
            "sampling: temperature %g (%s), top-k %d (%s), top-p %g (%s), "
            "min-p %g (%s), repetition penalty %g (%s), seed %llu\n",
            (double)g->temperature, t_src, (int)g->top_k, k_src,
            (double)g->top_p, p_src, (double)g->min_p, m_src,
            (double)g->repetition_penalty, r_src,
            (unsigned long long)o->seed);
}

/*===----------------------------------------------------------------------===*
 * Stop tokens
 *===----------------------------------------------------------------------===*/

static int has_id(const growing_ids *g, int32_t id) {
  size_t i;
  for (i = 0; i < g->count; ++i)
    if (g->ids[i] == id)
      return 1;
  return 0;
}

/* Adds |id| to the stop lists (to the runtime's unless it stops there by
 * itself); notes where it came from. */
static int add_stop(settings *s, int32_t id, int runtime, const char *source,
                    int verbose) {
  if (id < 0)
    return 1;
  if (verbose)
    fprintf(stderr, "stop token %d (%s)\n", (int)id, source);
  if (runtime && !has_id(&s->runtime_stops, id) &&
      !ids_push(&s->runtime_stops, id))
    return 0;
  return has_id(&s->all_stops, id) || ids_push(&s->all_stops, id);
}

/*===----------------------------------------------------------------------===*
 * Tokenizer and chat format
 *===----------------------------------------------------------------------===*/

/* The tokenizer: --tokenizer, else the GGUF file's own, else the weights
 * directory's. */
static int open_tokenizer(const options *o, const char *dir, const char *gguf,
                          settings *s) {
  const char *path = o->tokenizer_path;
  sgc_status_t *st;
  if (!path && gguf) {
    path = gguf;
  } else if (!path) {
    if (!dir)
      return usage_error("text needs a tokenizer: give --tokenizer PATH");
    if (!sgc_dir_has_tokenizer(dir)) {
      end_progress_line();
      fprintf(stderr,
              "error: no tokenizer: '%s' has no tokenizer.json or "
              "tokenizer.model\nnote: give --tokenizer PATH\n",
              dir);
      return SGC_STATUS_USAGE;
    }
    path = dir;
  }
  st = sgc_tokenizer_open(path, &s->tokenizer);
  if (st)
    return report(st);
  if (o->verbose)
    fprintf(stderr, "tokenizer: %s (%s), %d ids, bos %d, eos %d\n", path,
            sgc_tokenizer_kind(s->tokenizer),
            (int)sgc_tokenizer_vocab_size(s->tokenizer),
            (int)sgc_tokenizer_bos_id(s->tokenizer),
            (int)sgc_tokenizer_eos_id(s->tokenizer));
  return 0;
}

/* --prompt: the chat format when the checkpoint ships a chat template
 * (unless --raw); --chat: the template's format, else the family's. */
static int choose_format(const options *o, const sgc_model_info_t *info,
                         const char *dir, const char *gguf, settings *s) {
  char *template_text = NULL, error[512];
  const char *source = NULL;
  sgc_chat_format_t family = sgc_chat_format_for_family(info->family);
  s->format = SGC_CHAT_NONE;
  if (o->raw)
    return 0;
  if (gguf) {
    if (sgc_read_gguf_chat_template(gguf, &template_text, error, sizeof error))
      return error_line(SGC_STATUS_BAD_INPUT, error);
    source = "tokenizer.chat_template";
  } else if (dir && sgc_read_chat_template(dir, &template_text, &source,
                                           error, sizeof error)) {
    return error_line(SGC_STATUS_BAD_INPUT, error);
  }
  if (template_text) {
    s->format = sgc_chat_format_of_template(template_text);
    free(template_text);
    if (s->format == SGC_CHAT_NONE) {
      end_progress_line();
      fprintf(stderr,
              "error: %s%s%s: the chat template uses neither Gemma 3's "
              "(<start_of_turn>) nor Gemma 4's (<|turn>) turn markers\n"
              "note: give --raw to send the prompt as is\n",
              gguf ? gguf : dir, gguf ? ": " : "/", source);
      return SGC_STATUS_MISMATCH;
    }
  } else if (o->chat) {
    s->format = family;
    source = "the model's family";
    if (family == SGC_CHAT_NONE) {
      end_progress_line();
      fprintf(stderr,
              "error: --chat needs a chat format: the checkpoint has no chat "
              "template and model family '%s' has none built in\n",
              info->family);
      return SGC_STATUS_USAGE;
    }
  }
  if (o->verbose)
    fprintf(stderr, "chat format: %s (%s)\n", sgc_chat_format_name(s->format),
            s->format == SGC_CHAT_NONE ? "no chat template: the prompt as is"
                                   : source);
  return 0;
}

int settings_load(const options *o, const sgc_model_info_t *info,
                  settings *s, sgc_generate_options_t *gopts) {
  /* A GGUF file holds its tokenizer and chat template; a safetensors
   * checkpoint's directory holds them and generation_config.json. */
  const char *gguf = sgc_weights_is_gguf(o->weights_path) ? o->weights_path
                                                          : NULL;
  char *dir = gguf ? NULL : sgc_weights_directory(o->weights_path), error[512];
  sgc_generation_config_t gc;
  int text = o->prompt_text || o->chat;
  int rc = 0;
  size_t i;
  memset(s, 0, sizeof *s);
  s->end_of_turn = -1;
  memset(&gc, 0, sizeof gc);
  if (dir && sgc_read_generation_config(dir, &gc, error, sizeof error)) {
    rc = error_line(SGC_STATUS_BAD_INPUT, error);
    goto done;
  }
  if (o->verbose)
    fprintf(stderr, "generation config: %s%s\n",
            gc.present && dir ? dir : "none",
            gc.present && dir ? "/generation_config.json" : "");
  resolve_sampling(o, &gc, gopts);

  if (text || o->stop_strings.count || o->perplexity_path) {
    if ((rc = open_tokenizer(o, dir, gguf, s)) != 0)
      goto done;
  }
  if (text && (rc = choose_format(o, info, dir, gguf, s)) != 0)
    goto done;
  if (o->system_prompt && s->format == SGC_CHAT_NONE) {
    rc = usage_error(o->raw ? "--system needs the chat format, not --raw"
                            : "--system needs the chat format, and the "
                              "checkpoint has no chat template");
    goto done;
  }
  if (s->format != SGC_CHAT_NONE) {
    int32_t bos = sgc_tokenizer_bos_id(s->tokenizer);
    const char *piece = bos >= 0 ? sgc_tokenizer_piece(s->tokenizer, bos) : "";
    s->bos_text = strdup(piece ? piece : "");
    s->end_of_turn =
        sgc_tokenizer_token_id(s->tokenizer, sgc_chat_end_of_turn(s->format));
    if (!s->bos_text) {
      rc = out_of_memory();
      goto done;
    }
  }

  /* Stop tokens: --stop-ids always; the model's own (the runtime adds them
   * unless --ignore-eos), generation_config.json's eos_token_id and the
   * chat format's end of turn unless --ignore-eos. */
  for (i = 0; i < o->stop.count; ++i)
    if (!add_stop(s, o->stop.ids[i], 1, "--stop-ids", o->verbose)) {
      rc = out_of_memory();
      goto done;
    }
  if (!o->ignore_eos) {
    int ok = add_stop(s, info->eos_token_id, 0, "the model's eos", o->verbose);
    for (i = 0; i < info->num_stop_tokens; ++i)
      ok = ok && add_stop(s, info->stop_tokens[i], 0,
                          "the model's stop tokens", o->verbose);
    for (i = 0; i < gc.num_eos; ++i)
      ok = ok && add_stop(s, gc.eos_ids[i], 1,
                          "generation_config.json eos_token_id", o->verbose);
    if (s->end_of_turn >= 0)
      ok = ok && add_stop(s, s->end_of_turn, 1,
                          sgc_chat_end_of_turn(s->format), o->verbose);
    if (!ok) {
      rc = out_of_memory();
      goto done;
    }
  }
  gopts->stop_tokens = s->runtime_stops.ids;
  gopts->num_stop_tokens = s->runtime_stops.count;
done:
  sgc_generation_config_free(&gc);
  free(dir);
  if (rc)
    settings_free(s);
  return rc;
}

void settings_free(settings *s) {
  sgc_tokenizer_release(s->tokenizer);
  free(s->bos_text);
  free(s->runtime_stops.ids);
  free(s->all_stops.ids);
  memset(s, 0, sizeof *s);
  s->end_of_turn = -1;
}

static int encode(const settings *s, const char *text, int add_bos,
                  int32_t **ids, size_t *n) {
  sgc_status_t *st =
      sgc_tokenizer_encode(s->tokenizer, text, strlen(text), add_bos, ids, n);
  return st ? report(st) : 0;
}

int settings_encode(const settings *s, const char *text, int32_t **ids,
                    size_t *n) {
  return encode(s, text, 0, ids, n);
}

int settings_render(const settings *s, const sgc_chat_message_t *messages,
                    size_t count, char **rendered) {
  const char *error = NULL;
  *rendered = NULL;
  if (sgc_chat_render(s->format, s->bos_text, messages, count, 1, rendered,
                  &error))
    return error_line(SGC_STATUS_USAGE, error);
  return 0;
}

int settings_tokenize(const settings *s, const sgc_chat_message_t *messages,
                      size_t count, char **rendered, int32_t **ids,
                      size_t *n) {
  int rc;
  *rendered = NULL;
  if (s->format == SGC_CHAT_NONE)
    return encode(s, messages[count - 1].content, 1, ids, n);
  if ((rc = settings_render(s, messages, count, rendered)))
    return rc;
  /* The rendered text holds its BOS already, as apply_chat_template's. */
  return encode(s, *rendered, 0, ids, n);
}
