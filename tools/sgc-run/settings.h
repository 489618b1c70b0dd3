/*
 * settings.h - what the flags and the checkpoint's own files decide
 * together: the tokenizer, the chat format, the sampling settings
 * (generation_config.json, flags override) and the tokens that stop.
 */
#ifndef SGC_TOOLS_SGC_RUN_SETTINGS_H
#define SGC_TOOLS_SGC_RUN_SETTINGS_H

#include "sgc/runtime/chat.h"
#include "tools/sgc-run/generation.h"
#include "tools/sgc-run/options.h"

#include <sgc/runtime.h>

typedef struct settings {
  sgc_tokenizer_t *tokenizer; /* NULL in ids mode without --stop */
  sgc_chat_format_t format;         /* SGC_CHAT_NONE: raw text */
  char *bos_text;             /* the BOS piece the chat format starts with */
  int32_t end_of_turn;        /* the format's end-of-turn id, or -1 */
  growing_ids runtime_stops;  /* passed as stop_tokens */
  growing_ids all_stops;      /* every id that ends generation */
} settings;

/* Fills |s| and the sampling fields of |gopts| (already defaulted). Prints
 * what came from where on stderr with --verbose. Returns 0 or an exit code
 * (the error printed). */
int settings_load(const options *o, const sgc_model_info_t *info,
                  settings *s, sgc_generate_options_t *gopts);
void settings_free(settings *s);

/* Tokenizes a conversation in the chat format (|s->format| != SGC_CHAT_NONE)
 * or, with |count| == 1 and no format, the message's text as is with the
 * tokenizer's BOS. |*rendered| (malloc'ed, may be NULL) receives the text
 * tokenized. Returns 0 or an exit code (printed). */
int settings_tokenize(const settings *s, const sgc_chat_message_t *messages,
                      size_t count, char **rendered, int32_t **ids,
                      size_t *n);

/* Renders a conversation in the chat format (|s->format| != SGC_CHAT_NONE)
 * with its BOS text and the generation prompt; |*rendered| is malloc'ed.
 * Returns 0 or an exit code (printed). */
int settings_render(const settings *s, const sgc_chat_message_t *messages,
                    size_t count, char **rendered);

/* Tokenizes |text| without BOS; 0 or an exit code (printed). */
int settings_encode(const settings *s, const char *text, int32_t **ids,
                    size_t *n);

#endif /* SGC_TOOLS_SGC_RUN_SETTINGS_H */
