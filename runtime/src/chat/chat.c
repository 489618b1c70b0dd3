/*
 * chat.c - the Gemma 3 and Gemma 4 chat formats, written from what their
 * templates do (examples/tiny-gemma{3,4}/chat_template.jinja) for text
 * messages, with images before the text: no tools or thinking.
 */
#include "sgc/runtime/chat.h"

#include <stdlib.h>
#include <string.h>

/*===----------------------------------------------------------------------===*
 * A growing string
 *===----------------------------------------------------------------------===*/

typedef struct text {
  char *data;
  size_t len, cap;
  int failed;
} text;

static void append(text *t, const char *s, size_t n) {
  if (t->failed)
    return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    char *p;
    while (cap < t->len + n + 1)
      cap *= 2;
    p = (char *)realloc(t->data, cap);
    if (!p) {
      t->failed = 1;
      return;
    }
    t->data = p;
    t->cap = cap;
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
}

static void append_str(text *t, const char *s) { append(t, s, strlen(s)); }

/*===----------------------------------------------------------------------===*
 * Jinja's trim: Python's str.strip(), whose whitespace is Unicode's
 *===----------------------------------------------------------------------===*/

/* Length of the whitespace character at |s| (of |n| bytes), or 0. */
static size_t space_at(const unsigned char *s, size_t n) {
  unsigned c;
  if (n == 0)
    return 0;
  if (s[0] < 0x80)
    return (s[0] >= 0x09 && s[0] <= 0x0d) || (s[0] >= 0x1c && s[0] <= 0x20)
               ? 1
               : 0;
  if (n >= 2 && s[0] == 0xc2)
    return s[1] == 0x85 || s[1] == 0xa0 ? 2 : 0;
  if (n < 3 || (s[0] & 0xf0) != 0xe0)
    return 0;
  c = ((unsigned)(s[0] & 0x0f) << 12) | ((unsigned)(s[1] & 0x3f) << 6) |
      (unsigned)(s[2] & 0x3f);
  return c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
                 c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000
             ? 3
             : 0;
}

/* The start of the last whitespace character ending at |end|, or NULL. */
static const unsigned char *space_before(const unsigned char *begin,
                                         const unsigned char *end) {
  size_t k;
  for (k = 1; k <= 3 && (size_t)(end - begin) >= k; ++k)
    if (space_at(end - k, k) == k)
      return end - k;
  return NULL;
}

static void append_trimmed(text *t, const char *s, size_t n) {
  const unsigned char *b = (const unsigned char *)s, *e = b + n, *p;
  size_t k;
  while ((k = space_at(b, (size_t)(e - b))) != 0)
    b += k;
  while (e > b && (p = space_before(b, e)) != NULL)
    e = p;
  append(t, (const char *)b, (size_t)(e - b));
}

/*===----------------------------------------------------------------------===*
 * Formats
 *===----------------------------------------------------------------------===*/

sgc_chat_format_t sgc_chat_format_for_family(const char *family) {
  if (family && strcmp(family, "gemma3") == 0)
    return SGC_CHAT_GEMMA3;
  if (family && strcmp(family, "gemma4") == 0)
    return SGC_CHAT_GEMMA4;
  return SGC_CHAT_NONE;
}

sgc_chat_format_t sgc_chat_format_of_template(const char *template_text) {
  if (!template_text)
    return SGC_CHAT_NONE;
  if (strstr(template_text, "<|turn>"))
    return SGC_CHAT_GEMMA4;
  if (strstr(template_text, "<start_of_turn>"))
    return SGC_CHAT_GEMMA3;
  return SGC_CHAT_NONE;
}

const char *sgc_chat_format_name(sgc_chat_format_t format) {
  switch (format) {
  case SGC_CHAT_GEMMA3:
    return "gemma3";
  case SGC_CHAT_GEMMA4:
    return "gemma4";
  default:
    return "none";
  }
}

const char *sgc_chat_end_of_turn(sgc_chat_format_t format) {
  switch (format) {
  case SGC_CHAT_GEMMA3:
    return "<end_of_turn>";
  case SGC_CHAT_GEMMA4:
    return "<turn|>";
  default:
    return "";
  }
}

const char *sgc_chat_image_marker(sgc_chat_format_t format) {
  switch (format) {
  case SGC_CHAT_GEMMA3:
    return "<start_of_image>";
  case SGC_CHAT_GEMMA4:
    return "<|image|>";
  default:
    return "";
  }
}

/* A message's content as the templates render a list [image..., text]:
 * the markers as they are, the text trimmed. */
static void append_content(text *t, sgc_chat_format_t format, const sgc_chat_message_t *m) {
  size_t i;
  for (i = 0; i < m->images; ++i)
    append_str(t, sgc_chat_image_marker(format));
  append_trimmed(t, m->content, strlen(m->content));
}

static int is_role(const sgc_chat_message_t *m, const char *role) {
  return strcmp(m->role, role) == 0;
}

/* Gemma 3: a system message becomes a prefix of the first user turn; the
 * rest must alternate user, model, user, ... */
static const char *render_gemma3(text *t, const sgc_chat_message_t *m, size_t n,
                                 int generation_prompt) {
  const char *prefix = NULL;
  size_t i;
  if (n > 0 && is_role(&m[0], "system")) {
    prefix = m[0].content;
    ++m;
    --n;
  }
  for (i = 0; i < n; ++i)
    if (is_role(&m[i], "user") != (i % 2 == 0))
      return "Conversation roles must alternate "
             "user/assistant/user/assistant/...";
  for (i = 0; i < n; ++i) {
    append_str(t, "<start_of_turn>");
    append_str(t, is_role(&m[i], "assistant") ? "model" : m[i].role);
    append_str(t, "\n");
    if (i == 0 && prefix) {
      append_str(t, prefix);
      append_str(t, "\n\n");
    }
    append_content(t, SGC_CHAT_GEMMA3, &m[i]);
    append_str(t, "<end_of_turn>\n");
  }
  if (generation_prompt)
    append_str(t, "<start_of_turn>model\n");
  return NULL;
}

/* Gemma 4 drops a model answer's thinking: of each piece ending at
 * <channel|>, what precedes its <|channel>. */
static void append_without_thinking(text *t, const char *s) {
  static const char open[] = "<|channel>", close[] = "<channel|>";
  text kept = {0};
  for (;;) {
    const char *end = strstr(s, close);
    size_t len = end ? (size_t)(end - s) : strlen(s);
    const char *o = strstr(s, open);
    append(&kept, s, o && o < s + len ? (size_t)(o - s) : len);
    if (!end)
      break;
    s = end + sizeof close - 1;
  }
  if (kept.failed)
    t->failed = 1;
  else if (kept.data)
    append_trimmed(t, kept.data, kept.len);
  free(kept.data);
}

/* Gemma 4: a system (or developer) message gets a turn of its own; a model
 * message right after another continues its turn. */
static const char *render_gemma4(text *t, const sgc_chat_message_t *m, size_t n,
                                 int generation_prompt) {
  const char *previous = NULL; /* the role before, tool messages skipped */
  size_t i;
  if (n > 0 && (is_role(&m[0], "system") || is_role(&m[0], "developer"))) {
    append_str(t, "<|turn>system\n");
    append_trimmed(t, m[0].content, strlen(m[0].content));
    append_str(t, "<turn|>\n");
    ++m;
    --n;
  }
  for (i = 0; i < n; ++i) {
    int model = is_role(&m[i], "assistant");
    if (is_role(&m[i], "tool"))
      continue;
    if (!(model && previous && strcmp(previous, "assistant") == 0)) {
      append_str(t, "<|turn>");
      append_str(t, model ? "model" : m[i].role);
      append_str(t, "\n");
    }
    if (model)
      append_without_thinking(t, m[i].content);
    else
      append_content(t, SGC_CHAT_GEMMA4, &m[i]);
    append_str(t, "<turn|>\n");
    previous = m[i].role;
  }
  if (generation_prompt)
    append_str(t, "<|turn>model\n<|channel>thought\n<channel|>");
  return NULL;
}

int sgc_chat_render(sgc_chat_format_t format, const char *bos,
                const sgc_chat_message_t *messages, size_t count,
                int add_generation_prompt, char **out, const char **error) {
  text t = {0};
  const char *refused = NULL;
  append_str(&t, bos ? bos : "");
  switch (format) {
  case SGC_CHAT_GEMMA3:
    refused = render_gemma3(&t, messages, count, add_generation_prompt);
    break;
  case SGC_CHAT_GEMMA4:
    refused = render_gemma4(&t, messages, count, add_generation_prompt);
    break;
  default:
    refused = "no chat format";
  }
  if (!refused && t.failed)
    refused = "out of memory";
  if (refused) {
    free(t.data);
    *error = refused;
    return 1;
  }
  *out = t.data;
  return 0;
}
