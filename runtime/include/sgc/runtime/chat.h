/*
 * sgc/runtime/chat.h - the chat formats of the model families: a
 * conversation rendered as the family's published chat template renders it
 * with Hugging Face's apply_chat_template (test/Inputs/chat/
 * chat-templates.json holds what transformers makes of both templates; the
 * unit test compares). sgc-run and sgc-serve share it.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>, which includes
 * every part; its conventions hold here, except that sgc_chat_render
 * reports its refusal as a static string (it is pure text work).
 */
#ifndef SGC_RUNTIME_CHAT_H
#define SGC_RUNTIME_CHAT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sgc_chat_format_t {
  SGC_CHAT_NONE = 0,
  /* <start_of_turn>user\n...<end_of_turn>\n; the system prompt is folded
   * into the first user turn; roles must alternate. */
  SGC_CHAT_GEMMA3,
  /* <|turn>system\n...<turn|>\n, <|turn>user\n...; the generation prompt
   * opens an empty thinking channel (thinking off). */
  SGC_CHAT_GEMMA4
} sgc_chat_format_t;

typedef struct sgc_chat_message_t {
  const char *role; /* "system", "user", "assistant" (others as given) */
  const char *content;
  /* Image items before the text (a content list [image, ..., text]): each
   * rendered as the template's image marker (sgc_chat_image_marker), which the
   * processor then expands. */
  size_t images;
} sgc_chat_message_t;

/* The format of a model family ("gemma3", "gemma4"); SGC_CHAT_NONE otherwise. */
sgc_chat_format_t sgc_chat_format_for_family(const char *family);
/* The format whose turn markers a chat template's text uses; SGC_CHAT_NONE when
 * it uses neither family's. */
sgc_chat_format_t sgc_chat_format_of_template(const char *template_text);
/* "gemma3", "gemma4", "none" (static). */
const char *sgc_chat_format_name(sgc_chat_format_t format);
/* The token that ends a turn: "<end_of_turn>" or "<turn|>" (static). */
const char *sgc_chat_end_of_turn(sgc_chat_format_t format);

/* The text the family's template renders for an image content item:
 * "<start_of_image>" or "<|image|>" (static; "" for SGC_CHAT_NONE). */
const char *sgc_chat_image_marker(sgc_chat_format_t format);

/* Renders |count| messages: |bos| first (the tokenizer's BOS text; NULL or
 * "" for none), then every turn, then the generation prompt when
 * |add_generation_prompt|. Returns 0 and a malloc'ed NUL-terminated
 * |*out|, or 1 and a static |*error| (the template's own refusal, e.g.
 * roles that do not alternate; or "out of memory"). */
int sgc_chat_render(sgc_chat_format_t format, const char *bos,
                const sgc_chat_message_t *messages, size_t count,
                int add_generation_prompt, char **out, const char **error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_CHAT_H */
