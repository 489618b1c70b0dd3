/*
 * sgc-tokenize - a thin command line over the runtime's tokenizers, for
 * tests and for looking at a checkpoint's tokenizer:
 *
 *   sgc-tokenize TOKENIZER info               kind, ids, bos/eos/pad
 *   sgc-tokenize TOKENIZER encode [--bos] TEXT  ids, space separated
 *   sgc-tokenize TOKENIZER decode [--skip-special] ID...
 *   sgc-tokenize TOKENIZER stream [--skip-special] ID...
 *                                             one line per pushed token:
 *                                             the text it completed, quoted
 *
 * TOKENIZER is a tokenizer.json, a tokenizer.model or a directory. TEXT
 * "-" reads standard input. C, and sees nothing but <sgc/runtime.h>.
 */
#include <sgc/runtime.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report(sgc_status_t *status) {
  int code = (int)sgc_status_code(status);
  size_t i;
  fprintf(stderr, "error: %s\n", sgc_status_message(status));
  for (i = 0; i < sgc_status_note_count(status); ++i)
    fprintf(stderr, "note: %s\n", sgc_status_note(status, i));
  sgc_status_free(status);
  return code == 0 ? SGC_STATUS_INTERNAL : code;
}

static int usage(void) {
  fputs("usage: sgc-tokenize TOKENIZER info\n"
        "       sgc-tokenize TOKENIZER encode [--bos] TEXT|-\n"
        "       sgc-tokenize TOKENIZER decode [--skip-special] ID...\n"
        "       sgc-tokenize TOKENIZER stream [--skip-special] ID...\n",
        stderr);
  return SGC_STATUS_USAGE;
}

/* Reads all of standard input; NULL when out of memory. */
static char *read_stdin(size_t *out_len) {
  size_t cap = 4096, len = 0, n;
  char *buf = malloc(cap), *grown;
  while (buf && (n = fread(buf + len, 1, cap - len, stdin)) > 0) {
    len += n;
    if (len == cap) {
      grown = realloc(buf, cap *= 2);
      if (!grown)
        free(buf);
      buf = grown;
    }
  }
  *out_len = len;
  return buf;
}

/* Prints |text| in double quotes, escaping quotes, backslashes and
 * control bytes. */
static void print_quoted(const char *text, size_t len) {
  size_t i;
  putchar('"');
  for (i = 0; i < len; ++i) {
    unsigned char c = (unsigned char)text[i];
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c == '\n')
      fputs("\\n", stdout);
    else if (c < 0x20 || c == 0x7f)
      printf("\\x%02x", c);
    else
      putchar(c);
  }
  puts("\"");
}

static int parse_ids(int argc, char **argv, int32_t **out, size_t *count) {
  int i;
  *out = malloc(sizeof(int32_t) * (size_t)(argc > 0 ? argc : 1));
  *count = 0;
  if (!*out)
    return 0;
  for (i = 0; i < argc; ++i) {
    char *end = NULL;
    long v;
    errno = 0;
    v = strtol(argv[i], &end, 10);
    if (errno || end == argv[i] || *end || v < INT32_MIN || v > INT32_MAX) {
      fprintf(stderr, "error: '%s' is not a token id\n", argv[i]);
      return 0;
    }
    (*out)[(*count)++] = (int32_t)v;
  }
  return 1;
}

static int run(sgc_tokenizer_t *tok, const char *command, int argc,
               char **argv) {
  int skip = 0, bos = 0, rc = 0;
  sgc_status_t *st;
  if (argc > 0 && strcmp(argv[0], "--skip-special") == 0)
    skip = 1, ++argv, --argc;
  else if (argc > 0 && strcmp(argv[0], "--bos") == 0)
    bos = 1, ++argv, --argc;

  if (strcmp(command, "info") == 0 && argc == 0) {
    printf("kind %s\nvocab %d\nbos %d\neos %d\npad %d\n",
           sgc_tokenizer_kind(tok), (int)sgc_tokenizer_vocab_size(tok),
           (int)sgc_tokenizer_bos_id(tok), (int)sgc_tokenizer_eos_id(tok),
           (int)sgc_tokenizer_pad_id(tok));
    return 0;
  }
  if (strcmp(command, "encode") == 0 && argc == 1) {
    char *text = argv[0];
    size_t len = strlen(text), count = 0, i;
    int32_t *ids = NULL;
    int owned = 0;
    if (strcmp(text, "-") == 0) {
      text = read_stdin(&len);
      if (!text)
        return SGC_STATUS_INTERNAL;
      owned = 1;
    }
    st = sgc_tokenizer_encode(tok, text, len, bos, &ids, &count);
    if (owned)
      free(text);
    if (st)
      return report(st);
    for (i = 0; i < count; ++i)
      printf("%s%d", i ? " " : "", (int)ids[i]);
    putchar('\n');
    free(ids);
    return 0;
  }
  if ((strcmp(command, "decode") == 0 || strcmp(command, "stream") == 0) &&
      !bos) {
    int32_t *ids = NULL;
    size_t count = 0, i, len = 0;
    if (!parse_ids(argc, argv, &ids, &count)) {
      free(ids);
      return SGC_STATUS_USAGE;
    }
    if (strcmp(command, "decode") == 0) {
      char *text = NULL;
      st = sgc_tokenizer_decode(tok, ids, count, skip, &text, &len);
      if (!st)
        print_quoted(text, len);
      free(text);
    } else {
      sgc_detokenizer_t *d = NULL;
      const char *piece = NULL;
      st = sgc_detokenizer_create(tok, skip, &d);
      for (i = 0; !st && i < count; ++i)
        if (!(st = sgc_detokenizer_push(d, ids[i], &piece, &len)))
          print_quoted(piece, len);
      if (!st && !(st = sgc_detokenizer_finish(d, &piece, &len)))
        print_quoted(piece, len);
      sgc_detokenizer_release(d);
    }
    free(ids);
    return st ? report(st) : rc;
  }
  return usage();
}

int main(int argc, char **argv) {
  sgc_tokenizer_t *tok = NULL;
  sgc_status_t *st;
  int rc;
  if (argc < 3)
    return usage();
  if ((st = sgc_tokenizer_open(argv[1], &tok)))
    return report(st);
  rc = run(tok, argv[2], argc - 3, argv + 3);
  sgc_tokenizer_release(tok);
  return rc;
}
