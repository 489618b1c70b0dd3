/*
 * sgc-run - run a compiled sgc model on token ids.
 *
 * A thin main over <sgc/runtime.h> (and libc only): it proves the C API is
 * enough to use the runtime. Exit codes are the runtime's status codes:
 * 0 ok, 1 bad input file, 2 usage, 3 model/checkpoint/ABI mismatch,
 * 4 device unavailable, 5 internal. Every non-zero exit prints one line
 * "error: ..." first; details follow as "note: ..." lines.
 */
#include <sgc/runtime.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

/* Set while a progress line is on the terminal without its newline. */
static int progress_line_open = 0;

static void end_progress_line(void) {
  if (progress_line_open) {
    fputc('\n', stderr);
    progress_line_open = 0;
  }
}

/* Prints |status| as error/note lines, frees it, returns its exit code. */
static int report(sgc_status_t *status) {
  int code = (int)sgc_status_code(status);
  size_t i;
  end_progress_line();
  fprintf(stderr, "error: %s\n", sgc_status_message(status));
  for (i = 0; i < sgc_status_note_count(status); ++i)
    fprintf(stderr, "note: %s\n", sgc_status_note(status, i));
  sgc_status_free(status);
  return code == 0 ? SGC_STATUS_INTERNAL : code;
}

/* Prints a usage error and returns exit code 2. */
static int usage_error(const char *fmt, ...) {
  va_list args;
  end_progress_line();
  fputs("error: ", stderr);
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fputs("\nnote: see 'sgc-run --help'\n", stderr);
  return SGC_STATUS_USAGE;
}

static int out_of_memory(void) {
  end_progress_line();
  fputs("error: out of memory\n", stderr);
  return SGC_STATUS_INTERNAL;
}

/*===----------------------------------------------------------------------===*
 * Options
 *===----------------------------------------------------------------------===*/

typedef struct id_list {
  int32_t *ids;
  size_t count;
} id_list;

typedef struct device_choice {
  sgc_device_kind_t kind;
  int32_t ordinal;
} device_choice;

typedef struct options {
  const char *model_path;
  const char *weights_path;
  device_choice device;
  id_list prompt;
  id_list stop;
  id_list feed;
  int64_t max_new_tokens;
  int64_t prefill_chunk;
  sgc_load_format_t load_format;
  const char *write_dummy_path;
  const char *dump_logits_path;
  const char *inspect_path;
  const char *cpu_variant;
  int32_t threads;
  int progress; /* -1 auto (tty), 0 off, 1 on */
  float temperature;
  int32_t top_k;
  float top_p;
  uint64_t seed;
  int ignore_eos;
  int check;
  int verbose;
  int help;
  int version;
} options;

static void options_default(options *o) {
  memset(o, 0, sizeof *o);
  o->device.kind = SGC_DEVICE_CPU;
  o->max_new_tokens = 16;
  o->load_format = SGC_LOAD_FORMAT_AUTO;
  o->progress = -1;
  o->top_p = 1.0f;
}

static void free_options(options *o) {
  free(o->prompt.ids);
  free(o->stop.ids);
  free(o->feed.ids);
}

/* One row of option_table. A new flag is a field in options plus a row;
 * parse_args and --help both read the table, so they cannot drift apart. */
typedef struct option_spec option_spec;

/* Stores |value| (NULL for a flag) into |dest|, the row's field of options.
 * Returns 0 or an exit code. */
typedef int (*option_setter)(const option_spec *spec, void *dest,
                             const char *value);

struct option_spec {
  const char *name;    /* "--weights"; NULL makes the row a --help heading */
  const char *alias;   /* short spelling ("-v"), or NULL */
  const char *metavar; /* the value's name in --help; NULL: takes no value */
  option_setter set;
  size_t offset;       /* offsetof(options, destination) */
  int64_t min, max;    /* integers: accepted range; flags: min is stored */
  const char *expects; /* completes "NAME needs EXPECTS, not 'VALUE'" */
  const char *help;    /* word-wrapped by print_help; a heading's title */
};

static int bad_value(const option_spec *spec, const char *value) {
  return usage_error("%s needs %s, not '%s'", spec->name, spec->expects, value);
}

static int parse_i64(const char *text, int64_t min, int64_t max, int64_t *out) {
  char *end = NULL;
  long long v;
  if (!text || !*text)
    return 0;
  errno = 0;
  v = strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    return 0;
  *out = (int64_t)v;
  return 1;
}

static int parse_u64(const char *text, uint64_t *out) {
  char *end = NULL;
  unsigned long long v;
  if (!text || !*text || *text == '-')
    return 0;
  errno = 0;
  v = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0')
    return 0;
  *out = (uint64_t)v;
  return 1;
}

static int parse_float(const char *text, float *out) {
  char *end = NULL;
  double v;
  if (!text || !*text)
    return 0;
  errno = 0;
  v = strtod(text, &end);
  if (errno != 0 || *end != '\0' || v != v)
    return 0;
  *out = (float)v;
  return 1;
}

/* Parses "1,2,3" into |out| (replacing what was there). Returns 0 on a
 * malformed list, -1 when out of memory. */
static int parse_ids(const char *text, id_list *out) {
  size_t cap = 1, n = 0;
  const char *p;
  int32_t *ids;
  for (p = text; *p; ++p)
    if (*p == ',')
      ++cap;
  ids = (int32_t *)malloc(cap * sizeof *ids);
  if (!ids)
    return -1;
  p = text;
  for (;;) {
    char *end = NULL;
    long long v;
    while (*p == ' ')
      ++p;
    if (*p == '\0' || *p == ',' ||
        !((*p >= '0' && *p <= '9') || *p == '-' || *p == '+')) {
      free(ids);
      return 0;
    }
    errno = 0;
    v = strtoll(p, &end, 10);
    if (errno != 0 || end == p || v < INT32_MIN || v > INT32_MAX) {
      free(ids);
      return 0;
    }
    ids[n++] = (int32_t)v;
    p = end;
    while (*p == ' ')
      ++p;
    if (*p == '\0')
      break;
    if (*p != ',') {
      free(ids);
      return 0;
    }
    ++p;
  }
  free(out->ids);
  out->ids = ids;
  out->count = n;
  return 1;
}

/* Setters, one per kind of destination. */

static int set_flag(const option_spec *spec, void *dest, const char *value) {
  (void)value;
  *(int *)dest = (int)spec->min;
  return 0;
}

static int set_string(const option_spec *spec, void *dest, const char *value) {
  (void)spec;
  *(const char **)dest = value;
  return 0;
}

static int set_i32(const option_spec *spec, void *dest, const char *value) {
  int64_t v;
  if (!parse_i64(value, spec->min, spec->max, &v))
    return bad_value(spec, value);
  *(int32_t *)dest = (int32_t)v;
  return 0;
}

static int set_i64(const option_spec *spec, void *dest, const char *value) {
  if (!parse_i64(value, spec->min, spec->max, (int64_t *)dest))
    return bad_value(spec, value);
  return 0;
}

static int set_u64(const option_spec *spec, void *dest, const char *value) {
  if (!parse_u64(value, (uint64_t *)dest))
    return bad_value(spec, value);
  return 0;
}

/* A float >= min, checked after rounding to float (so -1e-50 is -0). */
static int set_float(const option_spec *spec, void *dest, const char *value) {
  float *f = (float *)dest;
  if (!parse_float(value, f) || *f < (float)spec->min)
    return bad_value(spec, value);
  return 0;
}

/* A float in (0, 1]. */
static int set_probability(const option_spec *spec, void *dest,
                           const char *value) {
  float *f = (float *)dest;
  if (!parse_float(value, f) || !(*f > 0.0f) || *f > 1.0f)
    return bad_value(spec, value);
  return 0;
}

static int set_ids(const option_spec *spec, void *dest, const char *value) {
  int r = parse_ids(value, (id_list *)dest);
  if (r < 0)
    return out_of_memory();
  return r == 0 ? bad_value(spec, value) : 0;
}

static int set_load_format(const option_spec *spec, void *dest,
                           const char *value) {
  sgc_load_format_t *format = (sgc_load_format_t *)dest;
  (void)spec;
  if (strcmp(value, "auto") == 0)
    *format = SGC_LOAD_FORMAT_AUTO;
  else if (strcmp(value, "safetensors") == 0)
    *format = SGC_LOAD_FORMAT_SAFETENSORS;
  else if (strcmp(value, "dummy") == 0)
    *format = SGC_LOAD_FORMAT_DUMMY;
  else
    return usage_error("unknown load format '%s' (expected auto, "
                       "safetensors or dummy)",
                       value);
  return 0;
}

static int set_device(const option_spec *spec, void *dest, const char *value) {
  device_choice *device = (device_choice *)dest;
  int64_t ordinal = 0;
  (void)spec;
  if (strcmp(value, "cpu") == 0) {
    device->kind = SGC_DEVICE_CPU;
  } else if (strcmp(value, "cuda") == 0) {
    device->kind = SGC_DEVICE_CUDA;
    device->ordinal = 0;
  } else if (strncmp(value, "cuda:", 5) == 0 &&
             parse_i64(value + 5, 0, INT32_MAX, &ordinal)) {
    device->kind = SGC_DEVICE_CUDA;
    device->ordinal = (int32_t)ordinal;
  } else {
    return usage_error("unknown device '%s' (expected cpu, cuda or cuda:N)",
                       value);
  }
  return 0;
}

#define FIELD(f) offsetof(options, f)
#define HEADING(title)                                                         \
  { .help = title }

static const option_spec option_table[] = {
    HEADING("weights"),
    {.name = "--weights",
     .metavar = "PATH",
     .set = set_string,
     .offset = FIELD(weights_path),
     .help = "safetensors file, *.index.json, or a directory holding "
             "model.safetensors[.index.json]"},
    {.name = "--load-format",
     .metavar = "F",
     .set = set_load_format,
     .offset = FIELD(load_format),
     .help = "auto | safetensors | dummy (default auto: safetensors when "
             "--weights is given)"},
    {.name = "--write-dummy-weights",
     .metavar = "F",
     .set = set_string,
     .offset = FIELD(write_dummy_path),
     .help = "write the model's dummy weights to F as safetensors (then run "
             "if --prompt-ids given)"},
    {.name = "--inspect-weights",
     .metavar = "PATH",
     .set = set_string,
     .offset = FIELD(inspect_path),
     .help = "validate a checkpoint (no model needed) and list name dtype "
             "[shape] bytes shard"},
    {.name = "--check",
     .set = set_flag,
     .offset = FIELD(check),
     .min = 1,
     .help = "bind the weights, print a summary, exit"},

    HEADING("running"),
    {.name = "--device",
     .metavar = "D",
     .set = set_device,
     .offset = FIELD(device),
     .help = "cpu | cuda | cuda:N (default cpu)"},
    {.name = "--threads",
     .metavar = "N",
     .set = set_i32,
     .offset = FIELD(threads),
     .min = 1,
     .max = 4096,
     .expects = "an integer in [1, 4096]",
     .help = "worker threads (default: physical cores)"},
    {.name = "--cpu-variant",
     .metavar = "NAME",
     .set = set_string,
     .offset = FIELD(cpu_variant),
     .help = "force a compiled CPU variant"},
    {.name = "--prompt-ids",
     .metavar = "1,2,3",
     .set = set_ids,
     .offset = FIELD(prompt),
     .expects = "comma-separated integer ids",
     .help = "prompt token ids"},
    {.name = "--max-new-tokens",
     .metavar = "N",
     .set = set_i64,
     .offset = FIELD(max_new_tokens),
     .min = 0,
     .max = INT64_MAX,
     .expects = "a non-negative integer",
     .help = "tokens to generate (default 16)"},
    {.name = "--prefill-chunk",
     .metavar = "C",
     .set = set_i64,
     .offset = FIELD(prefill_chunk),
     .min = 1,
     .max = INT64_MAX,
     .expects = "a positive integer",
     .help = "prompt tokens per prefill call (default and maximum: the "
             "model's max prefill chunk)"},
    {.name = "--stop-ids",
     .metavar = "1,106",
     .set = set_ids,
     .offset = FIELD(stop),
     .expects = "comma-separated integer ids",
     .help = "extra stop tokens (eos always stops)"},
    {.name = "--ignore-eos",
     .set = set_flag,
     .offset = FIELD(ignore_eos),
     .min = 1,
     .help = "do not stop at the model's eos/stop tokens"},
    {.name = "--feed-ids",
     .metavar = "5,6,7",
     .set = set_ids,
     .offset = FIELD(feed),
     .expects = "comma-separated integer ids",
     .help = "teacher forcing: feed these ids to the decode steps instead "
             "of the sampled ones"},
    {.name = "--temperature",
     .metavar = "T",
     .set = set_float,
     .offset = FIELD(temperature),
     .min = 0,
     .expects = "a number >= 0",
     .help = "0 = greedy (default); > 0 samples"},
    {.name = "--top-k",
     .metavar = "K",
     .set = set_i32,
     .offset = FIELD(top_k),
     .min = 0,
     .max = INT32_MAX,
     .expects = "a non-negative integer",
     .help = "keep the K likeliest tokens (default 0 = off)"},
    {.name = "--top-p",
     .metavar = "P",
     .set = set_probability,
     .offset = FIELD(top_p),
     .expects = "a number in (0, 1]",
     .help = "keep only the most likely tokens that together reach "
             "probability P (default 1.0 = off)"},
    {.name = "--seed",
     .metavar = "S",
     .set = set_u64,
     .offset = FIELD(seed),
     .expects = "a non-negative integer",
     .help = "sampling seed (default 0)"},

    HEADING("output"),
    {.name = "--dump-logits",
     .metavar = "FILE",
     .set = set_string,
     .offset = FIELD(dump_logits_path),
     .help = "write every logits row computed, as safetensors F32: "
             "prefill_logits [S,V], decode_logits [D,V] (D decode steps), "
             "prompt_ids [S], generated_ids [G] (I32)"},
    {.name = "--progress",
     .set = set_flag,
     .offset = FIELD(progress),
     .min = 1,
     .help = "show the weight-loading progress bar even when stderr is not "
             "a terminal"},
    {.name = "--no-progress",
     .set = set_flag,
     .offset = FIELD(progress),
     .min = 0,
     .help = "never show it"},
    {.name = "--verbose",
     .alias = "-v",
     .set = set_flag,
     .offset = FIELD(verbose),
     .min = 1,
     .help = "describe the model and session on stderr"},
    {.name = "--version",
     .set = set_flag,
     .offset = FIELD(version),
     .min = 1,
     .help = "print versions"},
    {.name = "--help",
     .alias = "-h",
     .set = set_flag,
     .offset = FIELD(help),
     .min = 1,
     .help = "this text"},
};

#undef HEADING
#undef FIELD

static const size_t option_count = sizeof option_table / sizeof *option_table;

/* The option spelled by the first |len| bytes of |arg|, or NULL. */
static const option_spec *find_option(const char *arg, size_t len) {
  size_t i;
  for (i = 0; i < option_count; ++i) {
    const option_spec *spec = &option_table[i];
    const char *spellings[2];
    int s;
    spellings[0] = spec->name;
    spellings[1] = spec->alias;
    for (s = 0; s < 2; ++s)
      if (spellings[s] && strlen(spellings[s]) == len &&
          strncmp(spellings[s], arg, len) == 0)
        return spec;
  }
  return NULL;
}

static int parse_args(int argc, char **argv, options *o) {
  int i;
  for (i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (arg[0] == '-' && arg[1] != '\0') {
      const char *eq = strchr(arg, '=');
      size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
      const option_spec *spec = find_option(arg, len);
      const char *value = NULL;
      int rc;
      if (!spec)
        return usage_error("unknown option '%.*s'", (int)len, arg);
      if (spec->metavar) {
        if (eq)
          value = eq + 1;
        else if (i + 1 < argc)
          value = argv[++i];
        else
          return usage_error("option '%.*s' needs a value", (int)len, arg);
      } else if (eq) {
        return usage_error("option '%.*s' takes no value", (int)len, arg);
      }
      rc = spec->set(spec, (char *)o + spec->offset, value);
      if (rc != 0)
        return rc;
    } else if (!o->model_path) {
      o->model_path = arg;
    } else {
      return usage_error("more than one model given ('%s' and '%s')",
                         o->model_path, arg);
    }
  }
  return 0;
}

/*===----------------------------------------------------------------------===*
 * --help
 *===----------------------------------------------------------------------===*/

enum {
  help_indent = 27, /* where the descriptions start */
  help_width = 73   /* the last column a description may fill */
};

/* Prints |text| from column help_indent, wrapping at word boundaries. */
static void print_wrapped(FILE *out, const char *text) {
  int col = help_indent;
  while (*text) {
    size_t word = strcspn(text, " ");
    if (col > help_indent && col + 1 + (int)word > help_width) {
      fprintf(out, "\n%*s", help_indent, "");
      col = help_indent;
    } else if (col > help_indent) {
      fputc(' ', out);
      ++col;
    }
    fwrite(text, 1, word, out);
    col += (int)word;
    text += word;
    text += strspn(text, " ");
  }
  fputc('\n', out);
}

static void print_help(FILE *out) {
  size_t i;
  fputs("usage: sgc-run MODEL.so [--weights PATH] [options]\n"
        "       sgc-run --inspect-weights PATH\n"
        "\n"
        "Runs a model compiled by 'sgc compile' on token ids and prints the\n"
        "generated ids on stdout.\n",
        out);
  for (i = 0; i < option_count; ++i) {
    const option_spec *spec = &option_table[i];
    char left[64];
    int n;
    if (!spec->name) {
      fprintf(out, "\n%s:\n", spec->help);
      continue;
    }
    n = snprintf(left, sizeof left, "%s%s%s%s%s",
                 spec->alias ? spec->alias : "", spec->alias ? ", " : "",
                 spec->name, spec->metavar ? " " : "",
                 spec->metavar ? spec->metavar : "");
    /* A spelling too long for its column gets a line of its own. */
    if (n > help_indent - 3)
      fprintf(out, "  %s\n%*s", left, help_indent, "");
    else
      fprintf(out, "  %-*s", help_indent - 2, left);
    print_wrapped(out, spec->help);
  }
  fputs("\n"
        "exit codes: 0 ok, 1 bad input file, 2 usage, 3 model/checkpoint/ABI\n"
        "mismatch, 4 device unavailable, 5 internal error\n",
        out);
}

/*===----------------------------------------------------------------------===*
 * Progress bar
 *===----------------------------------------------------------------------===*/

typedef struct progress_state {
  const char *label;
  double start;
  double last;
  int done;
} progress_state;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void format_bytes(double bytes, char *buf, size_t size) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
}

static void on_progress(void *user, uint64_t done, uint64_t total) {
  progress_state *p = (progress_state *)user;
  double t = now_seconds();
  double fraction = total ? (double)done / (double)total : 1.0;
  char done_text[32], total_text[32], rate_text[32];
  int width = 30, filled, i;
  if (p->done)
    return;
  if (done < total && t - p->last < 0.1)
    return;
  p->last = t;
  filled = (int)(fraction * width);
  format_bytes((double)done, done_text, sizeof done_text);
  format_bytes((double)total, total_text, sizeof total_text);
  format_bytes(t > p->start ? (double)done / (t - p->start) : 0.0, rate_text,
               sizeof rate_text);
  fprintf(stderr, "\r%s [", p->label);
  for (i = 0; i < width; ++i)
    fputc(i < filled ? '#' : '.', stderr);
  fprintf(stderr, "] %5.1f%%  %s / %s  %s/s ", fraction * 100.0, done_text,
          total_text, rate_text);
  progress_line_open = 1;
  if (done >= total) {
    end_progress_line();
    p->done = 1;
  }
  fflush(stderr);
}

/*===----------------------------------------------------------------------===*
 * --inspect-weights
 *===----------------------------------------------------------------------===*/

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int inspect_weights(const char *path) {
  sgc_checkpoint_t *ckpt = NULL;
  sgc_status_t *st = sgc_checkpoint_open(path, &ckpt);
  size_t i, n;
  char total_text[32];
  if (st)
    return report(st);
  n = sgc_checkpoint_tensor_count(ckpt);
  for (i = 0; i < n; ++i) {
    sgc_tensor_info_t t;
    uint32_t d;
    if (!sgc_checkpoint_tensor(ckpt, i, &t))
      break;
    printf("%s %s [", t.name, sgc_dtype_name(t.dtype));
    for (d = 0; d < t.rank; ++d)
      printf(d ? ", %lld" : "%lld", (long long)t.shape[d]);
    printf("] %llu %s\n", (unsigned long long)t.bytes, base_name(t.location));
  }
  format_bytes((double)sgc_checkpoint_tensor_bytes(ckpt), total_text,
               sizeof total_text);
  printf("total: %zu tensors, %llu bytes (%s), %zu shard%s\n", n,
         (unsigned long long)sgc_checkpoint_tensor_bytes(ckpt), total_text,
         sgc_checkpoint_shard_count(ckpt),
         sgc_checkpoint_shard_count(ckpt) == 1 ? "" : "s");
  sgc_checkpoint_release(ckpt);
  return 0;
}

/*===----------------------------------------------------------------------===*
 * Generation callbacks and --dump-logits
 *===----------------------------------------------------------------------===*/

typedef struct run_state {
  int64_t vocab;
  int64_t n_prompt;
  int printed;
  /* --dump-logits */
  int dump;
  float *prefill; /* n_prompt x vocab */
  float *decode;  /* decode_rows x vocab */
  int64_t decode_rows;
  int64_t decode_cap;
  int32_t *generated;
  int64_t n_generated;
  int64_t generated_cap;
  int failed; /* out of memory while collecting */
} run_state;

static int on_token(void *user, int32_t token) {
  run_state *s = (run_state *)user;
  printf(s->printed ? " %d" : "%d", (int)token);
  fflush(stdout);
  s->printed = 1;
  if (s->dump && !s->failed) {
    if (s->n_generated == s->generated_cap) {
      int64_t cap = s->generated_cap ? s->generated_cap * 2 : 64;
      int32_t *g = (int32_t *)realloc(s->generated, (size_t)cap * sizeof *g);
      if (!g) {
        s->failed = 1;
        return 1;
      }
      s->generated = g;
      s->generated_cap = cap;
    }
    s->generated[s->n_generated++] = token;
  }
  return 0;
}

static void on_logits(void *user, sgc_logits_kind_t kind, int64_t index,
                      const float *row, int64_t vocab) {
  run_state *s = (run_state *)user;
  size_t row_bytes = (size_t)vocab * sizeof(float);
  if (!s->dump || s->failed)
    return;
  if (kind == SGC_LOGITS_PREFILL) {
    if (index >= 0 && index < s->n_prompt)
      memcpy(s->prefill + index * vocab, row, row_bytes);
    return;
  }
  if (s->decode_rows == s->decode_cap) {
    int64_t cap = s->decode_cap ? s->decode_cap * 2 : 16;
    float *d = (float *)realloc(s->decode, (size_t)cap * row_bytes);
    if (!d) {
      s->failed = 1;
      return;
    }
    s->decode = d;
    s->decode_cap = cap;
  }
  memcpy(s->decode + s->decode_rows * vocab, row, row_bytes);
  ++s->decode_rows;
}

static int write_logits(const char *path, const run_state *s,
                        const int32_t *prompt) {
  int64_t prefill_shape[2], decode_shape[2], prompt_shape[1], gen_shape[1];
  sgc_tensor_view_t views[4];
  sgc_status_t *st;
  prefill_shape[0] = s->n_prompt;
  prefill_shape[1] = s->vocab;
  decode_shape[0] = s->decode_rows;
  decode_shape[1] = s->vocab;
  prompt_shape[0] = s->n_prompt;
  gen_shape[0] = s->n_generated;
  views[0].name = "prefill_logits";
  views[0].dtype = SGC_DTYPE_F32;
  views[0].rank = 2;
  views[0].shape = prefill_shape;
  views[0].data = s->prefill;
  views[1].name = "decode_logits";
  views[1].dtype = SGC_DTYPE_F32;
  views[1].rank = 2;
  views[1].shape = decode_shape;
  views[1].data = s->decode;
  views[2].name = "prompt_ids";
  views[2].dtype = SGC_DTYPE_I32;
  views[2].rank = 1;
  views[2].shape = prompt_shape;
  views[2].data = prompt;
  views[3].name = "generated_ids";
  views[3].dtype = SGC_DTYPE_I32;
  views[3].rank = 1;
  views[3].shape = gen_shape;
  views[3].data = s->generated;
  st = sgc_safetensors_write(path, views, 4);
  return st ? report(st) : 0;
}

/*===----------------------------------------------------------------------===*
 * main
 *===----------------------------------------------------------------------===*/

static void print_summary(FILE *out, sgc_model_t *model, sgc_weights_t *w,
                          sgc_session_t *session) {
  sgc_model_info_t info;
  char weights_text[32], kv_text[32], ws_text[32];
  sgc_model_get_info(model, &info);
  format_bytes((double)sgc_weights_bytes(w), weights_text, sizeof weights_text);
  format_bytes((double)sgc_session_kv_cache_bytes(session), kv_text,
               sizeof kv_text);
  format_bytes((double)sgc_session_workspace_bytes(session), ws_text,
               sizeof ws_text);
  fprintf(out,
          "model '%s' (family %s, target %s, ABI %u.%u): vocab %lld, "
          "context %lld, max prefill chunk %lld\n",
          info.model_id, info.family, info.target, info.abi_major,
          info.abi_minor, (long long)info.vocab_size,
          (long long)info.context_length, (long long)info.max_prefill_chunk);
  fprintf(out, "weights: %zu tensors, %llu bytes (%s), %s\n", info.num_tensors,
          (unsigned long long)sgc_weights_bytes(w), weights_text,
          sgc_weights_format(w) == SGC_LOAD_FORMAT_DUMMY ? "dummy"
                                                         : "safetensors");
  fprintf(out,
          "kv cache: %zu layers, %llu bytes (%s); workspace %llu bytes "
          "(%s)\n",
          info.num_layers,
          (unsigned long long)sgc_session_kv_cache_bytes(session), kv_text,
          (unsigned long long)sgc_session_workspace_bytes(session), ws_text);
  fprintf(out, "cpu: variant '%s', %d threads\n",
          sgc_session_variant(session),
          (int)sgc_session_num_threads(session));
}

static int run(options *o) {
  sgc_model_t *model = NULL;
  sgc_weights_t *weights = NULL;
  sgc_session_t *session = NULL;
  sgc_status_t *st = NULL;
  sgc_model_info_t info;
  sgc_weights_options_t wopts;
  sgc_session_options_t sopts;
  sgc_generate_options_t gopts;
  progress_state progress;
  run_state state;
  int show_progress = o->progress < 0 ? isatty(STDERR_FILENO) : o->progress;
  int rc = 0;
  int64_t generated = 0;

  memset(&state, 0, sizeof state);
  memset(&progress, 0, sizeof progress);

  st = sgc_model_open(o->model_path, &model);
  if (st)
    return report(st);
  sgc_model_get_info(model, &info);

  if (o->device.kind == SGC_DEVICE_CUDA) {
    st = sgc_device_probe(SGC_DEVICE_CUDA, o->device.ordinal);
    if (st) {
      rc = report(st);
      goto done;
    }
  }

  sgc_weights_options_default(&wopts);
  wopts.format = o->load_format;
  wopts.num_threads = o->threads;
  wopts.populate = 1;
  if (show_progress) {
    wopts.progress = on_progress;
    wopts.progress_user = &progress;
  }

  if (o->write_dummy_path) {
    progress.label = "writing dummy weights";
    progress.start = progress.last = now_seconds();
    st = sgc_model_write_dummy_weights(model, o->write_dummy_path, &wopts);
    if (st) {
      rc = report(st);
      goto done;
    }
    if (o->prompt.count == 0 && !o->check)
      goto done;
  }

  memset(&progress, 0, sizeof progress);
  progress.label = wopts.format == SGC_LOAD_FORMAT_DUMMY
                       ? "filling dummy weights"
                       : "loading weights";
  progress.start = progress.last = now_seconds();
  st = sgc_weights_bind(model, o->weights_path, &wopts, &weights);
  if (st) {
    rc = report(st);
    goto done;
  }

  sgc_session_options_default(&sopts);
  sopts.device = o->device.kind;
  sopts.device_ordinal = o->device.ordinal;
  sopts.num_threads = o->threads;
  sopts.variant = o->cpu_variant;
  st = sgc_session_create(model, weights, &sopts, &session);
  if (st) {
    rc = report(st);
    goto done;
  }
  if (o->verbose)
    print_summary(stderr, model, weights, session);
  if (o->prompt.count == 0) { /* --check */
    print_summary(stdout, model, weights, session);
    goto done;
  }

  state.vocab = info.vocab_size;
  state.n_prompt = (int64_t)o->prompt.count;
  state.dump = o->dump_logits_path != NULL;
  if (state.dump) {
    state.prefill = (float *)calloc(
        (size_t)state.n_prompt * (size_t)info.vocab_size, sizeof(float));
    if (!state.prefill) {
      rc = out_of_memory();
      goto done;
    }
  }

  sgc_generate_options_default(&gopts);
  gopts.max_new_tokens = o->max_new_tokens;
  gopts.prefill_chunk = o->prefill_chunk;
  gopts.temperature = o->temperature;
  gopts.top_k = o->top_k;
  gopts.top_p = o->top_p;
  gopts.seed = o->seed;
  gopts.stop_tokens = o->stop.ids;
  gopts.num_stop_tokens = o->stop.count;
  gopts.ignore_eos = o->ignore_eos;
  gopts.feed_tokens = o->feed.ids;
  gopts.num_feed_tokens = o->feed.count;
  gopts.prefill_all_logits = state.dump;
  gopts.on_token = on_token;
  gopts.on_logits = state.dump ? on_logits : NULL;
  gopts.user = &state;
  st = sgc_session_generate(session, o->prompt.ids, state.n_prompt, &gopts,
                            &generated);
  if (state.printed)
    fputc('\n', stdout);
  fflush(stdout);
  if (st) {
    rc = report(st);
    goto done;
  }
  if (state.failed) {
    rc = out_of_memory();
    goto done;
  }
  if (state.dump)
    rc = write_logits(o->dump_logits_path, &state, o->prompt.ids);

done:
  free(state.prefill);
  free(state.decode);
  free(state.generated);
  sgc_session_release(session);
  sgc_weights_release(weights);
  sgc_model_release(model);
  return rc;
}

/* What the options ask for, once they parsed. */
static int dispatch(options *o) {
  if (o->help) {
    print_help(stdout);
    return 0;
  }
  if (o->version) {
    uint32_t major = 0, minor = 0;
    sgc_runtime_abi_version(&major, &minor);
    printf("sgc-run %s (model ABI %u.%u)\n", sgc_runtime_version(), major,
           minor);
    return 0;
  }
  if (o->inspect_path)
    return inspect_weights(o->inspect_path);
  if (!o->model_path)
    return usage_error("no model given");
  if (o->prompt.count == 0 && !o->check && !o->write_dummy_path)
    return usage_error("nothing to do: give --prompt-ids, --check or "
                       "--write-dummy-weights");
  if (o->load_format == SGC_LOAD_FORMAT_DUMMY && o->weights_path)
    return usage_error("--weights and --load-format=dummy exclude each other");
  if (o->load_format != SGC_LOAD_FORMAT_DUMMY && !o->weights_path &&
      (o->prompt.count > 0 || o->check))
    return usage_error("no weights given: use --weights PATH or "
                       "--load-format=dummy");
  return run(o);
}

int main(int argc, char **argv) {
  options o;
  int rc;
  options_default(&o);
  rc = parse_args(argc, argv, &o);
  if (rc == 0)
    rc = dispatch(&o);
  free_options(&o);
  return rc;
}
