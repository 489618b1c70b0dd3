/*
 * chat.h - the chat formats of the model families: a conversation rendered
 * as the family's published chat template renders it with Hugging Face's
 * apply_chat_template (test/Inputs/chat/chat-templates.json holds what
 * transformers makes of both templates; the unit test compares).
 */
#ifndef SGC_TOOLS_SGC_RUN_CHAT_H
#define SGC_TOOLS_SGC_RUN_CHAT_H

#include <stddef.h>

typedef enum chat_format {
  CHAT_NONE = 0,
  /* <start_of_turn>user\n...<end_of_turn>\n; the system prompt is folded
   * into the first user turn; roles must alternate. */
  CHAT_GEMMA3,
  /* <|turn>system\n...<turn|>\n, <|turn>user\n...; the generation prompt
   * opens an empty thinking channel (thinking off). */
  CHAT_GEMMA4
} chat_format;

typedef struct chat_message {
  const char *role; /* "system", "user", "assistant" (others as given) */
  const char *content;
  /* Image items before the text (a content list [image, ..., text]): each
   * rendered as the template's image marker (chat_image_marker), which the
   * processor then expands. */
  size_t images;
} chat_message;

/* The format of a model family ("gemma3", "gemma4"); CHAT_NONE otherwise. */
chat_format chat_format_for_family(const char *family);
/* The format whose turn markers a chat template's text uses; CHAT_NONE when
 * it uses neither family's. */
chat_format chat_format_of_template(const char *template_text);
/* "gemma3", "gemma4", "none" (static). */
const char *chat_format_name(chat_format format);
/* The token that ends a turn: "<end_of_turn>" or "<turn|>" (static). */
const char *chat_end_of_turn(chat_format format);

/* The text the family's template renders for an image content item:
 * "<start_of_image>" or "<|image|>" (static; "" for CHAT_NONE). */
const char *chat_image_marker(chat_format format);

/* Renders |count| messages: |bos| first (the tokenizer's BOS text; NULL or
 * "" for none), then every turn, then the generation prompt when
 * |add_generation_prompt|. Returns 0 and a malloc'ed NUL-terminated
 * |*out|, or 1 and a static |*error| (the template's own refusal, e.g.
 * roles that do not alternate; or "out of memory"). */
int chat_render(chat_format format, const char *bos,
                const chat_message *messages, size_t count,
                int add_generation_prompt, char **out, const char **error);

#endif /* SGC_TOOLS_SGC_RUN_CHAT_H */
