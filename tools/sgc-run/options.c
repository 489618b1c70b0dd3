/*
 * options.c - sgc-run's command line: one table of options (name, value
 * kind, destination, help), read by the parser and by --help alike.
 */
#include "tools/sgc-run/options.h"
#include "tools/sgc-run/errors.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*===----------------------------------------------------------------------===*
 * Options
 *===----------------------------------------------------------------------===*/

void options_default(options *o) {
  memset(o, 0, sizeof *o);
  o->device.kind = SGC_DEVICE_CPU;
  o->max_new_tokens = 16;
  o->load_format = SGC_LOAD_FORMAT_AUTO;
  o->progress = -1;
  o->top_p = 1.0f;
  o->repetition_penalty = 1.0f;
  o->perplexity_context = 512;
}

void free_options(options *o) {
  free(o->prompt.ids);
  free(o->stop.ids);
  free(o->feed.ids);
  free(o->stop_strings.items);
  free(o->images.items);
  free(o->pixel_values.items);
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
int parse_ids(const char *text, id_list *out) {
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

/* A float in [0, 1]. */
static int set_fraction(const option_spec *spec, void *dest,
                        const char *value) {
  float *f = (float *)dest;
  if (!parse_float(value, f) || !(*f >= 0.0f) || *f > 1.0f)
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

/* Appends to a string list (a repeatable option). */
static int set_string_list(const option_spec *spec, void *dest,
                           const char *value) {
  string_list *list = (string_list *)dest;
  const char **items;
  /* Refused before the list grows: the grown block would be lost. */
  if (!*value)
    return usage_error("%s needs a non-empty string", spec->name);
  items = (const char **)realloc((void *)list->items,
                                 (list->count + 1) * sizeof *items);
  if (!items)
    return out_of_memory();
  items[list->count++] = value;
  list->items = items;
  return 0;
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

static int set_weights_memory(const option_spec *spec, void *dest,
                              const char *value) {
  sgc_weights_placement_t *placement = (sgc_weights_placement_t *)dest;
  (void)spec;
  if (strcmp(value, "auto") == 0)
    *placement = SGC_WEIGHTS_AUTO;
  else if (strcmp(value, "map") == 0)
    *placement = SGC_WEIGHTS_MAP;
  else if (strcmp(value, "copy") == 0)
    *placement = SGC_WEIGHTS_COPY;
  else
    return usage_error("unknown weights memory '%s' (expected auto, map or "
                       "copy)",
                       value);
  return 0;
}

static int set_device(const option_spec *spec, void *dest, const char *value) {
  device_choice *device = (device_choice *)dest;
  int64_t ordinal = 0;
  (void)spec;
  if (strcmp(value, "cpu") == 0) {
    device->kind = SGC_DEVICE_CPU;
  } else if (strcmp(value, "cuda-emu") == 0) {
    device->kind = SGC_DEVICE_CUDA_EMU;
    device->ordinal = 0;
  } else if (strcmp(value, "cuda") == 0) {
    device->kind = SGC_DEVICE_CUDA;
    device->ordinal = 0;
  } else if (strncmp(value, "cuda:", 5) == 0 &&
             parse_i64(value + 5, 0, INT32_MAX, &ordinal)) {
    device->kind = SGC_DEVICE_CUDA;
    device->ordinal = (int32_t)ordinal;
  } else {
    return usage_error("unknown device '%s' (expected cpu, cuda, cuda:N or "
                       "cuda-emu)",
                       value);
  }
  device->chosen = 1;
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
    {.name = "--weights-memory",
     .metavar = "M",
     .set = set_weights_memory,
     .offset = FIELD(weights_memory),
     .help = "auto | map | copy: the checkpoint's file pages in place, or a "
             "copy on huge pages (faster CPU decode); auto copies for the "
             "CPU when it fits in half the free memory"},
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
     .help = "cpu | cuda | cuda:N | cuda-emu (default: the model's target, "
             "cpu or cuda; cuda-emu runs a CUDA model's kernels on the CPU's "
             "emulator, checking every launch under SGC_EMU_SCHEDULES "
             "schedules, default 3)"},
    {.name = "--threads",
     .metavar = "N",
     .set = set_i32,
     .offset = FIELD(threads),
     .min = 1,
     .max = 4096,
     .expects = "an integer in [1, 4096]",
     .help = "worker threads (default: physical cores)"},
    {.name = "--max-context",
     .metavar = "N",
     .set = set_i64,
     .offset = FIELD(max_context),
     .min = 1,
     .max = INT64_MAX,
     .expects = "a positive integer",
     .help = "plan the KV cache for N positions (prompt + generated; "
             "default: the model's context length)"},
    {.name = "--dry-run",
     .set = set_flag,
     .offset = FIELD(dry_run),
     .min = 1,
     .help = "bind and plan without allocating, print the bytes each part "
             "would take, exit"},
    {.name = "--cpu-variant",
     .metavar = "NAME",
     .set = set_string,
     .offset = FIELD(cpu_variant),
     .help = "force a compiled CPU variant"},
    {.name = "--prompt",
     .metavar = "TEXT",
     .set = set_string,
     .offset = FIELD(prompt_text),
     .help = "the prompt as text: one user turn in the model's chat format "
             "when the checkpoint ships a chat template, else as is (see "
             "--raw); the answer streams as text"},
    {.name = "--system",
     .metavar = "TEXT",
     .set = set_string,
     .offset = FIELD(system_prompt),
     .help = "a system prompt for --prompt and --chat"},
    {.name = "--raw",
     .set = set_flag,
     .offset = FIELD(raw),
     .min = 1,
     .help = "tokenize --prompt as is (BOS as the tokenizer config says), "
             "without the chat template"},
    {.name = "--chat",
     .set = set_flag,
     .offset = FIELD(chat),
     .min = 1,
     .help = "interactive multi-turn chat on stdin (the KV cache is kept "
             "across turns; Ctrl-C stops an answer, Ctrl-D quits, /reset "
             "starts over; --image files go with the first message, a line "
             "'/image FILE' attaches one to the next)"},
    {.name = "--tokenizer",
     .metavar = "PATH",
     .set = set_string,
     .offset = FIELD(tokenizer_path),
     .help = "tokenizer.json, tokenizer.model, a directory holding one or "
             "a GGUF file (default: the --weights directory, or the GGUF "
             "file given as --weights)"},
    {.name = "--prompt-ids",
     .metavar = "1,2,3",
     .set = set_ids,
     .offset = FIELD(prompt),
     .expects = "comma-separated integer ids",
     .help = "prompt token ids"},
    {.name = "--prompt-ids-file",
     .metavar = "FILE",
     .set = set_string,
     .offset = FIELD(prompt_ids_file),
     .help = "many prompts, one line of comma-separated ids each: generated "
             "together, --parallel at a time, each on its own (one line of "
             "ids per prompt on stdout, in order)"},
    {.name = "--parallel",
     .metavar = "S",
     .set = set_i32,
     .offset = FIELD(parallel),
     .min = 1,
     .max = 4096,
     .expects = "an integer in [1, 4096]",
     .help = "sequence slots: how many prompts of --prompt-ids-file run at "
             "once, decoded together (default 1)"},
    {.name = "--image",
     .metavar = "FILE",
     .set = set_string_list,
     .offset = FIELD(images),
     .help = "an image for the prompt, PNG or JPEG (repeatable); each "
             "image placeholder takes the next one (--prompt-ids: each BOI "
             "id; --prompt and --chat's first message: Gemma 3's BOI text, "
             "Gemma 4's image token, else the images go before the text)"},
    {.name = "--pixel-values",
     .metavar = "FILE",
     .set = set_string_list,
     .offset = FIELD(pixel_values),
     .help = "instead of --image: a preprocessed image as safetensors "
             "(repeatable): pixel_values, and for Gemma 4 "
             "image_position_ids, as in a golden or sgc-image's output"},
    {.name = "--max-new-tokens",
     .metavar = "N",
     .set = set_i64,
     .offset = FIELD(max_new_tokens),
     .min = 0,
     .max = INT64_MAX,
     .expects = "a non-negative integer",
     .help = "tokens to generate (default: 16 for --prompt-ids; for text, "
             "until the end of the turn or of the context)"},
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
    {.name = "--stop",
     .metavar = "STR",
     .set = set_string_list,
     .offset = FIELD(stop_strings),
     .help = "stop when the output text contains STR, cut before it "
             "(repeatable)"},
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
    {.name = "--min-p",
     .metavar = "P",
     .set = set_fraction,
     .offset = FIELD(min_p),
     .expects = "a number in [0, 1]",
     .help = "keep only tokens at least P times as likely as the most "
             "likely one (default 0 = off)"},
    {.name = "--repetition-penalty",
     .metavar = "R",
     .set = set_float,
     .offset = FIELD(repetition_penalty),
     .min = 0,
     .expects = "a non-negative number",
     .help = "divide (multiply, if negative) the logits of tokens already "
             "in the sequence by R, as Hugging Face does (default 1 = off)"},
    {.name = "--seed",
     .metavar = "S",
     .set = set_u64,
     .offset = FIELD(seed),
     .expects = "a non-negative integer",
     .help = "sampling seed (default 0)"},

    HEADING("perplexity"),
    {.name = "--perplexity",
     .metavar = "FILE",
     .set = set_string,
     .offset = FIELD(perplexity_path),
     .help = "score a text file as llama-perplexity does: BOS and the "
             "text's tokens cut into chunks of --perplexity-context, each "
             "run from position 0 with BOS first, the second half of each "
             "scored; prints the running and final perplexity"},
    {.name = "--perplexity-context",
     .metavar = "C",
     .set = set_i64,
     .offset = FIELD(perplexity_context),
     .min = 4,
     .max = INT64_MAX,
     .expects = "an integer >= 4",
     .help = "tokens a chunk (default 512; the text needs 2 C tokens)"},
    {.name = "--kl-divergence-base",
     .metavar = "FILE",
     .set = set_string,
     .offset = FIELD(kl_base_path),
     .help = "with --perplexity: write every scored row's "
             "log-probabilities to FILE when it does not exist (vocab x 4 "
             "bytes a row); when it does, compare this run with it: mean KL "
             "divergence (base || this run), the base's perplexity, and how "
             "often both put the same token on top"},

    HEADING("output"),
    {.name = "--dump-logits",
     .metavar = "FILE",
     .set = set_string,
     .offset = FIELD(dump_logits_path),
     .help = "write every logits row computed, as safetensors F32: "
             "prefill_logits [S,V], decode_logits [D,V] (D decode steps), "
             "prompt_ids [S], generated_ids [G] (I32)"},
    {.name = "--json",
     .set = set_flag,
     .offset = FIELD(json),
     .min = 1,
     .help = "print one JSON record (prompt, text, ids, counts, timings, "
             "stop reason) on stdout instead of streaming"},
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
     .help = "describe the model and session on stderr, and the rendered "
             "prompt and where each sampling setting came from"},
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
_Static_assert(sizeof option_table / sizeof *option_table <=
                   sizeof((options *)0)->given,
               "options.given has a byte for every row");

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

int parse_args(int argc, char **argv, options *o) {
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
      o->given[spec - option_table] = 1;
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

int option_given(const options *o, const char *name) {
  const option_spec *spec = find_option(name, strlen(name));
  return spec && o->given[spec - option_table];
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

void print_help(FILE *out) {
  size_t i;
  fputs("usage: sgc-run MODEL.so [--weights PATH] [options]\n"
        "       sgc-run MODEL.so --weights DIR --prompt TEXT | --chat\n"
        "       sgc-run --inspect-weights PATH\n"
        "\n"
        "Runs a model compiled by 'sgc compile'. On --prompt-ids it prints the\n"
        "generated ids; on --prompt text (and in --chat) it streams the answer\n"
        "as text and ends with a summary on stderr. The tokenizer and\n"
        "generation_config.json are read from the --weights directory; flags\n"
        "override the sampling settings found there.\n",
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
        "mismatch, 4 device unavailable, 5 internal error, 130 interrupted\n"
        "(Ctrl-C: the tokens so far are printed and --dump-logits written;\n"
        "a second Ctrl-C ends at once)\n",
        out);
}


/*===----------------------------------------------------------------------===*
 * Output paths
 *===----------------------------------------------------------------------===*/

static int cannot_write(const char *path, const char *why, const char *dir) {
  end_progress_line();
  if (dir)
    fprintf(stderr, "error: cannot write '%s': %s '%s'\n", path, why, dir);
  else
    fprintf(stderr, "error: cannot write '%s': %s\n", path, why);
  return 1;
}

int check_output_path(const char *path) {
  struct stat st;
  const char *slash = strrchr(path, '/');
  char *dir;
  int rc = 0;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return cannot_write(path, strerror(EISDIR), NULL);
    if (access(path, W_OK) != 0)
      return cannot_write(path, strerror(errno), NULL);
    /* /dev/null and the like are written in place, not replaced. */
    if (!S_ISREG(st.st_mode))
      return 0;
  } else if (errno != ENOENT) {
    return cannot_write(path, strerror(errno), NULL);
  }
  /* The file is written next to |path| and renamed over it: its directory
   * must take new files. */
  dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
              : strdup(".");
  if (!dir)
    return out_of_memory();
  if (stat(dir, &st) != 0)
    rc = cannot_write(path,
                      errno == ENOENT ? "no such directory"
                                      : "cannot reach the directory",
                      dir);
  else if (!S_ISDIR(st.st_mode))
    rc = cannot_write(path, "not a directory:", dir);
  else if (access(dir, W_OK | X_OK) != 0)
    rc = cannot_write(path, "no permission to create files in", dir);
  free(dir);
  return rc;
}
