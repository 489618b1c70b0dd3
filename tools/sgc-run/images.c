/*
 * images.c - sgc-run's images: files checked, loaded with the model's
 * options, counted against the prompt's placeholders and laid out.
 */
#include "tools/sgc-run/images.h"
#include "tools/sgc-run/errors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int model_vision_facts(const sgc_model_t *model, vision_facts *out) {
  sgc_model_image_info_t info;
  if (!sgc_model_image_info(model, &info))
    return 0;
  memset(out, 0, sizeof *out);
  out->options = info.options;
  out->tokens = info.tokens;
  out->soft_tokens_per_image =
      info.options.family == SGC_IMAGE_FAMILY_GEMMA3 ? info.soft_tokens : 0;
  out->tower_soft_tokens = info.soft_tokens;
  out->hidden_size = info.hidden_size;
  return 1;
}

const string_list *image_files(const options *o) {
  return o->pixel_values.count ? &o->pixel_values : &o->images;
}

int images_check_files(const options *o) {
  const string_list *files = image_files(o);
  size_t i;
  for (i = 0; i < files->count; ++i)
    if (access(files->items[i], R_OK) != 0) {
      end_progress_line();
      fprintf(stderr, "error: %s: cannot open: %s\n", files->items[i],
              strerror(errno));
      return SGC_STATUS_BAD_INPUT;
    }
  return 0;
}

int images_load(const options *o, const sgc_model_t *model,
                image_inputs *out) {
  vision_facts f;
  return images_load_with(o, o->model_path,
                          model_vision_facts(model, &f) ? &f : NULL, out);
}

int images_load_with(const options *o, const char *model_path,
                     const vision_facts *f, image_inputs *out) {
  const string_list *files = image_files(o);
  size_t i;
  int rc;
  memset(out, 0, sizeof *out);
  if (!f) {
    end_progress_line();
    fprintf(stderr,
            "error: %s: this model has no vision component (no encode_image "
            "entry point), so it takes no %s\n",
            model_path, o->pixel_values.count ? "--pixel-values" : "--image");
    return SGC_STATUS_BAD_INPUT;
  }
  out->facts = *f;
  for (i = 0; i < files->count; ++i)
    if ((rc = images_add(out, files->items[i], o->pixel_values.count > 0)))
      return rc;
  return 0;
}

int images_add(image_inputs *in, const char *path, int pixel_values) {
  const vision_facts *f = &in->facts;
  sgc_image_t *image = NULL, **images;
  int64_t *soft, n;
  sgc_status_t *st =
      pixel_values ? sgc_image_load_tensors(path, &f->options, &image)
                   : sgc_image_load(path, &f->options, &image);
  if (st)
    return report(st);
  images = (sgc_image_t **)realloc(in->images,
                                   (in->count + 1) * sizeof *in->images);
  if (images)
    in->images = images;
  soft = (int64_t *)realloc(in->soft_tokens,
                            (in->count + 1) * sizeof *in->soft_tokens);
  if (soft)
    in->soft_tokens = soft;
  if (!images || !soft) {
    sgc_image_release(image);
    return out_of_memory();
  }
  n = sgc_image_soft_token_count(image);
  in->images[in->count] = image;
  in->soft_tokens[in->count] = n > 0 ? n : f->soft_tokens_per_image;
  ++in->count;
  return 0;
}

int images_layout(image_inputs *in, const int32_t *prompt, size_t n,
                  int64_t max_chunk) {
  const vision_facts *f = &in->facts;
  sgc_status_t *st;
  int64_t start = 0, rows;
  st = sgc_prompt_layout_create(prompt, n, &f->tokens, in->soft_tokens,
                                in->count, &in->layout);
  if (st)
    return report(st);
  /* A block longer than the chunk is refused now, not after the prefill of
   * the rows before it. */
  rows = (int64_t)sgc_prompt_layout_length(in->layout);
  while (start < rows) {
    int64_t end = 0;
    st = sgc_prompt_layout_chunk_end(in->layout, start, max_chunk, &end);
    if (st)
      return report(st);
    start = end;
  }
  return 0;
}

/* Occurrences of |needle| in |text|, non-overlapping. */
static size_t count_of(const char *text, const char *needle) {
  size_t n = 0, len = strlen(needle);
  const char *p = text;
  if (len == 0)
    return 0;
  while ((p = strstr(p, needle)) != NULL) {
    ++n;
    p += len;
  }
  return n;
}

/* The text the processor expands: Gemma 3's BOI piece, Gemma 4's image
 * token; NULL when the tokenizer has no such piece. */
static const char *placeholder_piece(const image_inputs *in,
                                     const sgc_tokenizer_t *tokenizer) {
  const sgc_image_tokens_t *t = &in->facts.tokens;
  return sgc_tokenizer_piece(tokenizer,
                             in->facts.options.family == SGC_IMAGE_FAMILY_GEMMA3
                                 ? t->boi_token_id
                                 : t->image_token_id);
}

size_t images_before_text(const image_inputs *in,
                          const sgc_tokenizer_t *tokenizer, const char *text) {
  const char *placeholder = placeholder_piece(in, tokenizer);
  return placeholder && count_of(text, placeholder) > 0 ? 0 : in->count;
}

/* The expansion; |prepend|: text without a placeholder gets one per image
 * in front. */
static int expand(const image_inputs *in, const sgc_tokenizer_t *tokenizer,
                  const char *text, int prepend, char **out) {
  const vision_facts *f = &in->facts;
  const char *image, *boi, *eoi, *placeholder;
  char *with_placeholders = NULL;
  sgc_status_t *st;
  size_t len = 0;
  image = sgc_tokenizer_piece(tokenizer, f->tokens.image_token_id);
  boi = sgc_tokenizer_piece(tokenizer, f->tokens.boi_token_id);
  eoi = sgc_tokenizer_piece(tokenizer, f->tokens.eoi_token_id);
  if (!image || !boi || !eoi)
    return usage_error("the tokenizer has no piece for the model's image "
                       "token ids (image %d, BOI %d, EOI %d)",
                       (int)f->tokens.image_token_id,
                       (int)f->tokens.boi_token_id,
                       (int)f->tokens.eoi_token_id);
  placeholder = placeholder_piece(in, tokenizer);
  if (prepend && in->count > 0 && count_of(text, placeholder) == 0) {
    size_t i, p = strlen(placeholder), t = strlen(text);
    with_placeholders = (char *)malloc(in->count * p + t + 1);
    if (!with_placeholders)
      return out_of_memory();
    for (i = 0; i < in->count; ++i)
      memcpy(with_placeholders + i * p, placeholder, p);
    memcpy(with_placeholders + in->count * p, text, t + 1);
    text = with_placeholders;
  }
  st = sgc_prompt_expand_images(f->options.family, text, strlen(text), image,
                                boi, eoi, in->soft_tokens, in->count, out,
                                &len);
  free(with_placeholders);
  return st ? report(st) : 0;
}

int images_expand_text(const image_inputs *in,
                       const sgc_tokenizer_t *tokenizer, const char *text,
                       char **out) {
  return expand(in, tokenizer, text, 1, out);
}

int images_expand_rendered(const image_inputs *in,
                           const sgc_tokenizer_t *tokenizer, const char *text,
                           char **out) {
  return expand(in, tokenizer, text, 0, out);
}

int images_encode(image_inputs *in, sgc_session_t *session,
                  sgc_generate_options_t *gopts) {
  const int64_t hidden = in->facts.hidden_size;
  const int64_t total = sgc_prompt_layout_soft_tokens(in->layout);
  float *one = (float *)malloc(sizeof(float) *
                               (size_t)(in->facts.tower_soft_tokens * hidden));
  int64_t at = 0;
  size_t i;
  in->embeds = (float *)malloc(sizeof(float) * (size_t)(total * hidden));
  if (!one || !in->embeds) {
    free(one);
    return out_of_memory();
  }
  for (i = 0; i < in->count; ++i) {
    int64_t count = 0;
    sgc_status_t *st =
        sgc_session_encode_image(session, in->images[i], one, &count);
    if (st) {
      free(one);
      return report(st);
    }
    if (count != in->soft_tokens[i] || at + count > total) {
      free(one);
      fprintf(stderr, "error: image %zu gave %lld soft tokens, its prompt "
                      "block has %lld\n",
              i + 1, (long long)count, (long long)in->soft_tokens[i]);
      return SGC_STATUS_INTERNAL;
    }
    memcpy(in->embeds + at * hidden, one,
           sizeof(float) * (size_t)(count * hidden));
    at += count;
  }
  free(one);
  gopts->prompt_image_blocks = sgc_prompt_layout_blocks(in->layout);
  gopts->prompt_soft_slots = sgc_prompt_layout_soft_slots(in->layout);
  gopts->image_soft_tokens = in->embeds;
  return 0;
}

void images_clear(image_inputs *in) {
  size_t i;
  for (i = 0; i < in->count; ++i)
    sgc_image_release(in->images[i]);
  free(in->images);
  free(in->soft_tokens);
  sgc_prompt_layout_release(in->layout);
  free(in->embeds);
  in->images = NULL;
  in->soft_tokens = NULL;
  in->count = 0;
  in->layout = NULL;
  in->embeds = NULL;
}

void images_free(image_inputs *in) {
  images_clear(in);
  memset(in, 0, sizeof *in);
}
