/*
 * sgc-run - run a compiled sgc model on token ids.
 *
 * A thin main over <sgc/runtime.h> (and libc only): it proves the C API is
 * enough to use the runtime. Exit codes are the runtime's status codes:
 * 0 ok, 1 bad input file, 2 usage, 3 model/checkpoint/ABI mismatch,
 * 4 device unavailable, 5 internal, 130 interrupted (Ctrl-C). Every non-zero
 * exit prints one line "error: ..." first; details follow as "note: ..."
 * lines.
 */
#include "tools/sgc-run/errors.h"
#include "tools/sgc-run/generation.h"
#include "tools/sgc-run/images.h"
#include "tools/sgc-run/logits_dump.h"
#include "tools/sgc-run/parallel.h"
#include "tools/sgc-run/perplexity.h"
#include "tools/sgc-run/options.h"
#include "tools/sgc-run/repl.h"
#include "tools/sgc-run/settings.h"

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
 * Progress bar
 *===----------------------------------------------------------------------===*/

typedef struct progress_state {
  const char *label;
  double start;
  double last;
  int done;
} progress_state;

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
    printf("%s %s [", t.name, sgc_checkpoint_tensor_encoding(ckpt, i));
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

/*===----------------------------------------------------------------------===*
 * main
 *===----------------------------------------------------------------------===*/

/* The batched decode entries: "2, 4, 8, 16", or "none". */
static void print_decode_batches(FILE *out, const sgc_model_t *model) {
  int64_t rows[64];
  size_t n = sgc_model_decode_batches(model, rows, 64), i;
  fputs("decode batches: ", out);
  if (n == 0)
    fputs("none (sequences decode one at a time)", out);
  for (i = 0; i < n && i < 64; ++i)
    fprintf(out, i ? ", %lld" : "%lld", (long long)rows[i]);
  fputc('\n', out);
}

static void print_summary(FILE *out, sgc_model_t *model, sgc_weights_t *w,
                          sgc_session_t *session,
                          sgc_device_kind_t device) {
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
          "kv cache: %zu layers, %llu bytes (%s) for %lld positions; "
          "workspace %llu bytes (%s)\n",
          info.num_layers,
          (unsigned long long)sgc_session_kv_cache_bytes(session), kv_text,
          (long long)sgc_session_context(session),
          (unsigned long long)sgc_session_workspace_bytes(session), ws_text);
  fprintf(out, "sequences: %d slot%s; ", (int)sgc_session_num_sequences(session),
          sgc_session_num_sequences(session) == 1 ? "" : "s");
  print_decode_batches(out, model);
  if (device == SGC_DEVICE_CPU)
    fprintf(out, "cpu: variant '%s', %d threads%s%s\n",
            sgc_session_variant(session),
            (int)sgc_session_num_threads(session),
            *sgc_session_tuning(session) ? "; " : "",
            sgc_session_tuning(session));
  else
    fprintf(out, "%s: variant '%s'\n",
            device == SGC_DEVICE_CUDA ? "cuda" : "cuda-emu",
            sgc_session_variant(session));
}

/* Physical memory, or 0 when unknown. */
static uint64_t physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* A mapped checkpoint larger than physical memory works, but pages. */
static void warn_if_paging(const sgc_weights_t *w) {
  uint64_t bytes = sgc_weights_bytes(w), physical = physical_memory();
  if (sgc_weights_format(w) == SGC_LOAD_FORMAT_SAFETENSORS && physical &&
      bytes > physical) {
    end_progress_line();
    fprintf(stderr,
            "warning: the checkpoint's %llu bytes exceed the %llu bytes of "
            "physical memory: its pages will be read again and again\n",
            (unsigned long long)bytes, (unsigned long long)physical);
  }
}

/* --dry-run: what a run would take, without allocating it. A checkpoint is
   bound (mapped and checked, not read); dummy weights are only counted. */
static int dry_run(const options *o, sgc_model_t *model,
                   sgc_weights_options_t *wopts) {
  sgc_model_info_t info;
  sgc_weights_t *weights = NULL;
  uint64_t weight_bytes, kv, allocated;
  int64_t context;
  int dummy = o->load_format == SGC_LOAD_FORMAT_DUMMY;
  sgc_model_get_info(model, &info);
  context = o->max_context > 0 && o->max_context < info.context_length
                ? o->max_context
                : info.context_length;
  weight_bytes = info.weight_bytes;
  if (!dummy && o->weights_path) {
    sgc_status_t *st;
    wopts->populate = 0;
    wopts->progress = NULL;
    wopts->placement = SGC_WEIGHTS_MAP; /* nothing read, nothing copied */
    st = sgc_weights_bind(model, o->weights_path, wopts, &weights);
    if (st)
      return report(st);
    weight_bytes = sgc_weights_bytes(weights);
    warn_if_paging(weights);
    sgc_weights_release(weights);
  }
  kv = sgc_model_kv_cache_bytes_at(model, context) *
       (uint64_t)(o->parallel > 1 ? o->parallel : 1);
  allocated = kv + info.workspace_bytes + (dummy ? weight_bytes : 0);
  printf("dry run of '%s': nothing allocated\n", info.model_id);
  printf("  weights:   %zu tensors, %llu bytes (%s)\n", info.num_tensors,
         (unsigned long long)weight_bytes,
         dummy ? "dummy: allocated"
               : o->weights_path ? "safetensors: mapped, not allocated"
                                 : "no checkpoint given");
  printf("  kv cache:  %zu layers at context %lld", info.num_layers,
         (long long)context);
  if (o->parallel > 1)
    printf(", %d sequence slots", (int)o->parallel);
  printf(": %llu bytes\n", (unsigned long long)kv);
  printf("  workspace: %llu bytes\n", (unsigned long long)info.workspace_bytes);
  printf("  allocated by the runtime: %llu bytes\n",
         (unsigned long long)allocated);
  fputs("  ", stdout);
  print_decode_batches(stdout, model);
  return 0;
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
  settings set;
  generation gen;
  int show_progress = o->progress < 0 ? isatty(STDERR_FILENO) : o->progress;
  int generating = o->prompt.count > 0 || o->prompt_text || o->chat ||
                   o->prompt_ids_file || o->perplexity_path;
  int rc = 0;
  const int32_t *prompt = o->prompt.ids;
  int64_t n_prompt = (int64_t)o->prompt.count;
  int32_t *text_ids = NULL;
  size_t n_text_ids = 0;
  char *rendered = NULL;
  image_inputs images;
  char *image_text = NULL;

  memset(&images, 0, sizeof images);
  memset(&state, 0, sizeof state);
  memset(&progress, 0, sizeof progress);
  memset(&set, 0, sizeof set);
  memset(&gen, 0, sizeof gen);
  install_interrupt_handler();

  st = sgc_model_open(o->model_path, &model);
  if (st)
    return report(st);
  sgc_model_get_info(model, &info);
  /* Without --device a model runs where it was compiled for. */
  if (!o->device.chosen && info.device == SGC_DEVICE_CUDA)
    o->device.kind = SGC_DEVICE_CUDA;
  if (image_files(o)->count && (rc = images_load(o, model, &images)))
    goto done;

  /* The tokenizer, chat template and generation_config.json are checked
   * before the weights load. */
  sgc_generate_options_default(&gopts);
  if (generating && !o->dry_run && (rc = settings_load(o, &info, &set, &gopts)))
    goto done;

  /* The driver is probed before the weights load; --dry-run and writing
   * dummy weights create no session and need none. */
  if (o->device.kind == SGC_DEVICE_CUDA && !o->dry_run &&
      (generating || o->check || !o->write_dummy_path)) {
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
  wopts.placement = o->weights_memory;
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
    if (!generating && !o->check)
      goto done;
  }

  if (o->dry_run) {
    rc = dry_run(o, model, &wopts);
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
  warn_if_paging(weights);

  sgc_session_options_default(&sopts);
  sopts.device = o->device.kind;
  sopts.device_ordinal = o->device.ordinal;
  sopts.num_threads = o->threads;
  sopts.variant = o->cpu_variant;
  sopts.max_context = o->max_context;
  sopts.num_sequences = o->parallel;
  if (show_progress && o->device.kind == SGC_DEVICE_CUDA) {
    memset(&progress, 0, sizeof progress);
    progress.label = "copying weights to the GPU";
    progress.start = progress.last = now_seconds();
    sopts.progress = on_progress;
    sopts.progress_user = &progress;
  }
  st = sgc_session_create(model, weights, &sopts, &session);
  if (st) {
    rc = report(st);
    goto done;
  }
  if (o->verbose)
    print_summary(stderr, model, weights, session, o->device.kind);
  if (!generating) { /* --check */
    print_summary(stdout, model, weights, session, o->device.kind);
    goto done;
  }

  memset(&gen, 0, sizeof gen);
  gen.session = session;
  gen.tokenizer = set.tokenizer;
  gen.stop_strings = o->stop_strings.items;
  gen.num_stop_strings = o->stop_strings.count;
  gen.stop_ids = set.all_stops.ids;
  gen.num_stop_ids = set.all_stops.count;
  gopts.prefill_chunk = o->prefill_chunk;
  gopts.seed = o->seed;
  gopts.ignore_eos = o->ignore_eos;
  gopts.feed_tokens = o->feed.ids;
  gopts.num_feed_tokens = o->feed.count;
  if (o->prompt_ids_file) {
    rc = run_parallel(o, session, &gopts, info.vocab_size);
    goto done;
  }
  if (o->perplexity_path) {
    rc = run_perplexity(o, &set, session, info.vocab_size,
                        info.max_prefill_chunk);
    goto done;
  }
  if (o->chat) {
    /* --image files go with the first user turn; /image adds more. */
    vision_facts facts;
    int vision = model_vision_facts(model, &facts);
    if (vision && !images.count)
      images.facts = facts;
    rc = chat_repl(o, &set, session, &gopts, &gen, vision ? &images : NULL,
                   o->prefill_chunk ? o->prefill_chunk
                                    : info.max_prefill_chunk);
    goto done;
  }

  if (o->prompt_text) {
    sgc_chat_message_t m[2];
    size_t count = 0;
    if (o->system_prompt) {
      m[count].role = "system";
      m[count].images = 0;
      m[count++].content = o->system_prompt;
    }
    m[count].role = "user";
    m[count].images = 0;
    m[count++].content = o->prompt_text;
    if (images.count && set.format != SGC_CHAT_NONE) {
      /* As transformers' processor: the template writes the images'
       * markers (before the text unless it holds them), then each marker
       * expands. */
      m[count - 1].images =
          images_before_text(&images, set.tokenizer, o->prompt_text);
      if ((rc = settings_render(&set, m, count, &image_text)) ||
          (rc = images_expand_rendered(&images, set.tokenizer, image_text,
                                       &rendered)) ||
          (rc = settings_encode(&set, rendered, &text_ids, &n_text_ids)))
        goto done;
    } else {
      if (images.count &&
          (rc = images_expand_text(&images, set.tokenizer, o->prompt_text,
                                   &image_text)))
        goto done;
      if (image_text)
        m[count - 1].content = image_text;
      if ((rc = settings_tokenize(&set, m, count, &rendered, &text_ids,
                                  &n_text_ids)) != 0)
        goto done;
    }
    prompt = text_ids;
    n_prompt = (int64_t)n_text_ids;
    if (n_prompt == 0) {
      rc = usage_error("the prompt tokenizes to no tokens");
      goto done;
    }
    if (o->verbose) {
      size_t i;
      fputs("rendered prompt: ", stderr);
      if (rendered)
        print_json_string(stderr, rendered, strlen(rendered));
      else
        print_json_string(stderr, o->prompt_text, strlen(o->prompt_text));
      fputs("\nprompt ids:", stderr);
      for (i = 0; i < n_text_ids; ++i)
        fprintf(stderr, " %d", (int)text_ids[i]);
      fputc('\n', stderr);
    }
  }
  if (images.count) {
    if ((rc = images_layout(&images, prompt, (size_t)n_prompt,
                            o->prefill_chunk ? o->prefill_chunk
                                             : info.max_prefill_chunk)))
      goto done;
    prompt = sgc_prompt_layout_ids(images.layout);
    n_prompt = (int64_t)sgc_prompt_layout_length(images.layout);
    if ((rc = images_encode(&images, session, &gopts)))
      goto done;
    if (o->verbose) {
      size_t i;
      for (i = 0; i < images.count; ++i)
        fprintf(stderr, "image %zu: %lld soft tokens from the tower\n", i + 1,
                (long long)images.soft_tokens[i]);
    }
  }
  /* Text runs until the end of the turn unless told otherwise: at most
   * what the context holds. */
  gen.max_new_tokens = o->max_new_tokens;
  if (o->prompt_text && !option_given(o, "--max-new-tokens")) {
    int64_t room = sgc_session_context(session) - n_prompt;
    gen.max_new_tokens = room > 0 ? room : 0;
    gen.context_bound = 1;
  }
  gen.stream_text = o->prompt_text && !o->json;
  gen.print_ids = !o->prompt_text && !o->json;

  state.vocab = info.vocab_size;
  state.n_prompt = n_prompt;
  state.dump = o->dump_logits_path != NULL;
  if (images.embeds) {
    state.soft_tokens = images.embeds;
    state.soft_rows = sgc_prompt_layout_soft_tokens(images.layout);
    state.hidden = images.facts.hidden_size;
  }
  if (state.dump) {
    state.prefill = (float *)calloc(
        (size_t)state.n_prompt * (size_t)info.vocab_size, sizeof(float));
    if (!state.prefill) {
      rc = out_of_memory();
      goto done;
    }
    gen.on_logits = dump_on_logits;
    gen.logits_user = &state;
  }
  gopts.prefill_all_logits = state.dump;
  set_interrupt_graceful(1);
  st = generation_run(&gen, prompt, n_prompt, &gopts);
  set_interrupt_graceful(0);
  if (!o->json && (gen.printed_ids || gen.stream_text))
    fputc('\n', stdout);
  fflush(stdout);
  if (st) {
    rc = report(st);
    goto done;
  }
  if (state.failed || gen.failed) {
    rc = out_of_memory();
    goto done;
  }
  if (o->json)
    print_generation_json(stdout, &gen, o->prompt_text, rendered, prompt,
                          (size_t)n_prompt);
  else if (o->prompt_text || o->verbose)
    print_generation_summary(stderr, &gen);
  fflush(stdout);
  state.generated = gen.generated.ids;
  state.n_generated = (int64_t)gen.generated.count;
  if (state.dump)
    rc = write_logits(o->dump_logits_path, &state, prompt);
  if (rc == 0 && interrupt_requested())
    rc = interrupted_error();

done:
  free(state.prefill);
  free(state.decode);
  generation_clear(&gen);
  free(text_ids);
  free(rendered);
  free(image_text);
  images_free(&images);
  settings_free(&set);
  sgc_session_release(session);
  sgc_weights_release(weights);
  sgc_model_release(model);
  return rc;
}

/* What the options ask for, once they parsed. */
static int dispatch(options *o) {
  int rc;
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
  if ((o->prompt.count > 0) + (o->prompt_text != NULL) + o->chat +
          (o->prompt_ids_file != NULL) + (o->perplexity_path != NULL) >
      1)
    return usage_error("--prompt-ids, --prompt-ids-file, --prompt, --chat "
                       "and --perplexity exclude each other");
  if (o->kl_base_path && !o->perplexity_path)
    return usage_error("--kl-divergence-base applies to --perplexity");
  if (o->perplexity_path &&
      (image_files(o)->count || o->feed.count || o->dump_logits_path ||
       o->json || o->parallel > 1))
    return usage_error("--perplexity excludes --image, --pixel-values, "
                       "--feed-ids, --dump-logits, --json and --parallel");
  if (o->parallel > 1 && !o->prompt_ids_file && !o->check && !o->dry_run)
    return usage_error("--parallel applies to --prompt-ids-file");
  if (o->prompt_ids_file && (image_files(o)->count || o->feed.count))
    return usage_error("--prompt-ids-file excludes --image, --pixel-values "
                       "and --feed-ids");
  if (o->prompt.count == 0 && !o->prompt_text && !o->chat && !o->check &&
      !o->prompt_ids_file && !o->write_dummy_path && !o->dry_run &&
      !o->perplexity_path)
    return usage_error("nothing to do: give --prompt, --chat, --prompt-ids, "
                       "--perplexity, --check, --dry-run or "
                       "--write-dummy-weights");
  if (o->chat && (o->json || o->dump_logits_path || o->feed.count))
    return usage_error("--chat excludes --json, --dump-logits and "
                       "--feed-ids");
  if ((o->raw || o->system_prompt) && !o->prompt_text && !o->chat)
    return usage_error("%s applies to --prompt and --chat only",
                       o->raw ? "--raw" : "--system");
  if (o->raw && o->chat)
    return usage_error("--raw and --chat exclude each other");
  if (o->images.count && o->pixel_values.count)
    return usage_error("--image and --pixel-values exclude each other");
  if (image_files(o)->count && !o->prompt.count && !o->prompt_text &&
      !o->chat)
    return usage_error("%s applies to --prompt, --prompt-ids and --chat only",
                       o->images.count ? "--image" : "--pixel-values");
  if (o->load_format == SGC_LOAD_FORMAT_DUMMY && o->weights_path)
    return usage_error("--weights and --load-format=dummy exclude each other");
  if (o->load_format != SGC_LOAD_FORMAT_DUMMY && !o->weights_path &&
      (o->prompt.count > 0 || o->prompt_text || o->chat || o->check ||
       o->prompt_ids_file || o->perplexity_path))
    return usage_error("no weights given: use --weights PATH or "
                       "--load-format=dummy");
  /* An output that cannot be written is refused before any work. */
  if (o->dump_logits_path && (rc = check_output_path(o->dump_logits_path)))
    return rc;
  if (o->write_dummy_path && (rc = check_output_path(o->write_dummy_path)))
    return rc;
  if ((rc = images_check_files(o)))
    return rc;
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
