/*
 * json.c - recursive descent over RFC 8259 JSON; strings are checked UTF-8
 * and \u escapes (surrogate pairs included) become UTF-8.
 */
#include "runtime/src/model_files/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
  const char *s, *end, *p;
  char *error;
  size_t size;
  int failed;
  int depth;
} parser;

static int fail(parser *ps, const char *what) {
  if (!ps->failed) {
    int line = 1, column = 1;
    const char *q;
    for (q = ps->s; q < ps->p; ++q) {
      if (*q == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    snprintf(ps->error, ps->size, "line %d, column %d: %s", line, column,
             what);
    ps->failed = 1;
  }
  return 0;
}

static void skip_space(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                             *ps->p == '\n' || *ps->p == '\r'))
    ++ps->p;
}

static int literal(parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
    return fail(ps, "unexpected character");
  ps->p += n;
  return 1;
}

static int hex4(parser *ps, unsigned *out) {
  unsigned v = 0;
  int i;
  for (i = 0; i < 4; ++i) {
    char c = ps->p < ps->end ? *ps->p : '\0';
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return fail(ps, "bad \\u escape");
    ++ps->p;
  }
  *out = v;
  return 1;
}

static size_t put_utf8(unsigned c, char *o) {
  if (c < 0x80) {
    o[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    o[0] = (char)(0xc0 | (c >> 6));
    o[1] = (char)(0x80 | (c & 0x3f));
    return 2;
  }
  if (c < 0x10000) {
    o[0] = (char)(0xe0 | (c >> 12));
    o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    o[2] = (char)(0x80 | (c & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (c >> 18));
  o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
  o[3] = (char)(0x80 | (c & 0x3f));
  return 4;
}

/* Length of the valid UTF-8 sequence at |p|, or 0. */
static size_t utf8_length(const unsigned char *p, const unsigned char *end) {
  size_t n, i;
  unsigned c;
  if (p[0] < 0x80)
    return 1;
  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    n = 2;
  else if (p[0] >= 0xe0 && p[0] <= 0xef)
    n = 3;
  else if (p[0] >= 0xf0 && p[0] <= 0xf4)
    n = 4;
  else
    return 0;
  if ((size_t)(end - p) < n)
    return 0;
  c = p[0] & (0xff >> (n + 1));
  for (i = 1; i < n; ++i) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    c = (c << 6) | (p[i] & 0x3f);
  }
  if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
      (n == 4 && (c < 0x10000 || c > 0x10ffff)))
    return 0;
  return n;
}

static char *parse_string(parser *ps) {
  /* The decoded text is never longer than the source. */
  const char *start = ++ps->p;
  char *out = (char *)malloc((size_t)(ps->end - start) + 1), *o = out;
  if (!out) {
    fail(ps, "out of memory");
    return NULL;
  }
  for (;;) {
    unsigned char c;
    if (ps->p >= ps->end) {
      fail(ps, "unterminated string");
      break;
    }
    c = (unsigned char)*ps->p;
    if (c == '"') {
      ++ps->p;
      *o = '\0';
      return out;
    }
    if (c < 0x20) {
      fail(ps, "control character in a string");
      break;
    }
    if (c == '\\') {
      char e;
      ++ps->p;
      e = ps->p < ps->end ? *ps->p++ : '\0';
      switch (e) {
      case '"': *o++ = '"'; break;
      case '\\': *o++ = '\\'; break;
      case '/': *o++ = '/'; break;
      case 'b': *o++ = '\b'; break;
      case 'f': *o++ = '\f'; break;
      case 'n': *o++ = '\n'; break;
      case 'r': *o++ = '\r'; break;
      case 't': *o++ = '\t'; break;
      case 'u': {
        unsigned u, low;
        if (!hex4(ps, &u))
          goto bad;
        if (u >= 0xdc00 && u <= 0xdfff) {
          fail(ps, "lone low surrogate in \\u escape");
          goto bad;
        }
        if (u >= 0xd800 && u <= 0xdbff) {
          if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
            fail(ps, "high surrogate without its low half");
            goto bad;
          }
          ps->p += 2;
          if (!hex4(ps, &low))
            goto bad;
          if (low < 0xdc00 || low > 0xdfff) {
            fail(ps, "high surrogate without its low half");
            goto bad;
          }
          u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
        }
        o += put_utf8(u, o);
        break;
      }
      default:
        fail(ps, "bad escape");
        goto bad;
      }
      continue;
    }
    {
      size_t n = utf8_length((const unsigned char *)ps->p,
                             (const unsigned char *)ps->end);
      if (n == 0) {
        fail(ps, "invalid UTF-8 in a string");
        break;
      }
      memcpy(o, ps->p, n);
      o += n;
      ps->p += n;
    }
  }
bad:
  free(out);
  return NULL;
}

static int parse_value(parser *ps, json_value *v);

static int parse_number(parser *ps, json_value *v) {
  const char *start = ps->p;
  char buf[64];
  char *end = NULL;
  v->kind = JSON_NUMBER;
  v->integral = 1;
  if (ps->p < ps->end && *ps->p == '-')
    ++ps->p;
  if (ps->p < ps->end && *ps->p == '0')
    ++ps->p;
  else if (ps->p < ps->end && *ps->p >= '1' && *ps->p <= '9')
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
      ++ps->p;
  else
    return fail(ps, "bad number");
  if (ps->p < ps->end && *ps->p == '.') {
    v->integral = 0;
    ++ps->p;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
      return fail(ps, "bad number");
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
      ++ps->p;
  }
  if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
    v->integral = 0;
    ++ps->p;
    if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
      ++ps->p;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
      return fail(ps, "bad number");
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
      ++ps->p;
  }
  if ((size_t)(ps->p - start) >= sizeof buf)
    return fail(ps, "number too long");
  memcpy(buf, start, (size_t)(ps->p - start));
  buf[ps->p - start] = '\0';
  errno = 0;
  v->number = strtod(buf, &end);
  if (errno == ERANGE && (v->number > 1 || v->number < -1))
    return fail(ps, "number out of range");
  return 1;
}

/* Appends one element to |v|'s items (and a key for objects). */
static json_value *grow(parser *ps, json_value *v, char *key) {
  json_value *items =
      (json_value *)realloc(v->items, (v->count + 1) * sizeof *items);
  if (!items) {
    fail(ps, "out of memory");
    free(key);
    return NULL;
  }
  v->items = items;
  if (v->kind == JSON_OBJECT) {
    char **keys = (char **)realloc(v->keys, (v->count + 1) * sizeof *keys);
    if (!keys) {
      fail(ps, "out of memory");
      free(key);
      return NULL;
    }
    v->keys = keys;
    keys[v->count] = key;
  }
  memset(&items[v->count], 0, sizeof *items);
  return &items[v->count++];
}

static int parse_container(parser *ps, json_value *v, char close) {
  if (++ps->depth > 256)
    return fail(ps, "nested too deeply");
  ++ps->p;
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ++ps->p;
    --ps->depth;
    return 1;
  }
  for (;;) {
    json_value *item;
    char *key = NULL;
    skip_space(ps);
    if (close == '}') {
      if (ps->p >= ps->end || *ps->p != '"')
        return fail(ps, "expected a member name");
      if (!(key = parse_string(ps)))
        return 0;
      skip_space(ps);
      if (ps->p >= ps->end || *ps->p != ':') {
        free(key);
        return fail(ps, "expected ':'");
      }
      ++ps->p;
    }
    if (!(item = grow(ps, v, key)))
      return 0;
    if (!parse_value(ps, item))
      return 0;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ++ps->p;
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) {
      ++ps->p;
      --ps->depth;
      return 1;
    }
    return fail(ps, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static int parse_value(parser *ps, json_value *v) {
  skip_space(ps);
  if (ps->p >= ps->end)
    return fail(ps, "unexpected end of input");
  switch (*ps->p) {
  case '{':
    v->kind = JSON_OBJECT;
    return parse_container(ps, v, '}');
  case '[':
    v->kind = JSON_ARRAY;
    return parse_container(ps, v, ']');
  case '"':
    v->kind = JSON_STRING;
    return (v->string = parse_string(ps)) != NULL;
  case 't':
    v->kind = JSON_BOOL;
    v->boolean = 1;
    return literal(ps, "true");
  case 'f':
    v->kind = JSON_BOOL;
    return literal(ps, "false");
  case 'n':
    v->kind = JSON_NULL;
    return literal(ps, "null");
  default:
    return parse_number(ps, v);
  }
}

static void free_members(json_value *v) {
  size_t i;
  for (i = 0; i < v->count; ++i) {
    free_members(&v->items[i]);
    if (v->keys)
      free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->string);
}

void json_free(json_value *v) {
  if (!v)
    return;
  free_members(v);
  free(v);
}

json_value *json_parse(const char *text, size_t len, char *error,
                       size_t size) {
  parser ps;
  json_value *v = (json_value *)calloc(1, sizeof *v);
  memset(&ps, 0, sizeof ps);
  ps.s = ps.p = text;
  ps.end = text + len;
  ps.error = error;
  ps.size = size;
  if (!v) {
    snprintf(error, size, "out of memory");
    return NULL;
  }
  if (parse_value(&ps, v)) {
    skip_space(&ps);
    if (ps.p != ps.end)
      fail(&ps, "text after the value");
  }
  if (ps.failed) {
    json_free(v);
    return NULL;
  }
  return v;
}

const json_value *json_member(const json_value *v, const char *key) {
  size_t i;
  if (!v || v->kind != JSON_OBJECT)
    return NULL;
  for (i = v->count; i-- > 0;) /* the last of duplicates, as Python does */
    if (strcmp(v->keys[i], key) == 0)
      return &v->items[i];
  return NULL;
}

const char *json_kind_name(json_kind kind) {
  switch (kind) {
  case JSON_NULL: return "null";
  case JSON_BOOL: return "a boolean";
  case JSON_NUMBER: return "a number";
  case JSON_STRING: return "a string";
  case JSON_ARRAY: return "an array";
  default: return "an object";
  }
}

int json_read_file(const char *path, json_value **out, char *error,
                   size_t size) {
  FILE *f = fopen(path, "rb");
  char *data = NULL, detail[256];
  size_t len = 0, cap = 0;
  if (!f) {
    if (errno == ENOENT)
      return 1;
    snprintf(error, size, "%s: %s", path, strerror(errno));
    return -1;
  }
  for (;;) {
    size_t n;
    if (len == cap) {
      char *d = (char *)realloc(data, cap ? cap * 2 : 4096);
      if (!d) {
        free(data);
        fclose(f);
        snprintf(error, size, "%s: out of memory", path);
        return -1;
      }
      data = d;
      cap = cap ? cap * 2 : 4096;
    }
    n = fread(data + len, 1, cap - len, f);
    len += n;
    if (n == 0)
      break;
  }
  if (ferror(f)) {
    snprintf(error, size, "%s: read error", path);
    free(data);
    fclose(f);
    return -1;
  }
  fclose(f);
  *out = json_parse(data, len, detail, sizeof detail);
  free(data);
  if (!*out) {
    snprintf(error, size, "%s: %s", path, detail);
    return -1;
  }
  return 0;
}
