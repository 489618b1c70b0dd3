/*
 * images.h - sgc-run's images (--image, --pixel-values): loaded with the
 * model's preprocessing options and laid out in the prompt, checked in
 * full before anything runs. The result (image_inputs) is what the
 * generate path takes; running the tower and the merge is not here.
 */
#ifndef SGC_TOOLS_SGC_RUN_IMAGES_H
#define SGC_TOOLS_SGC_RUN_IMAGES_H

#include "tools/sgc-run/options.h"

#include <sgc/runtime.h>

/* What sgc-run needs to know about a model's vision component. */
typedef struct vision_facts {
  sgc_image_options_t options; /* family and sizes for sgc_image_load */
  sgc_image_tokens_t tokens;
  /* Gemma 3: soft tokens per image (the model's fixed count); Gemma 4: 0
   * (each image's own count). */
  int64_t soft_tokens_per_image;
  /* The tower's output: soft tokens it writes per image (Gemma 4: the
   * budget) and floats per soft token. */
  int64_t tower_soft_tokens;
  int64_t hidden_size;
} vision_facts;

/* A run's images, in command-line order, and the laid-out prompt. */
typedef struct image_inputs {
  vision_facts facts;
  sgc_image_t **images;
  int64_t *soft_tokens; /* per image */
  size_t count;
  sgc_prompt_layout_t *layout; /* ids, soft-token slots, blocks; or NULL */
  /* After images_encode: every image's own soft tokens, in order
   * ([sgc_prompt_layout_soft_tokens, hidden_size]). */
  float *embeds;
} image_inputs;

/* 1 and |out| filled when |model| has a vision component, else 0. */
int model_vision_facts(const sgc_model_t *model, vision_facts *out);

/* The image files given (--image or --pixel-values). */
const string_list *image_files(const options *o);

/* Before the model opens: every file exists and is readable. 0 or the exit
 * code (printed). */
int images_check_files(const options *o);

/* Loads every image with the options of |model|'s vision component (its
 * facts kept in |out|): "MODEL: this model has no vision component" without
 * one. 0 or the exit code (printed). */
int images_load(const options *o, const sgc_model_t *model, image_inputs *out);
/* The same with the facts given (NULL: no vision component). */
int images_load_with(const options *o, const char *model_path,
                     const vision_facts *f, image_inputs *out);

/* Loads one more image (a chat turn's /image FILE; |pixel_values|: a
 * safetensors file) with in->facts. 0, or the exit code (printed) and |in|
 * as it was. */
int images_add(image_inputs *in, const char *path, int pixel_values);

/* Lays out |n| prompt ids with the images (each BOI takes the next one) and
 * checks that prefill chunks of |max_chunk| rows never split a block. The
 * prompt to run is then sgc_prompt_layout_ids(in->layout). 0 or the exit
 * code (printed). */
int images_layout(image_inputs *in, const int32_t *prompt, size_t n,
                  int64_t max_chunk);

/* The prompt text with the family's processor expansion applied (the
 * tokenizer's pieces of the image ids). Text without a placeholder gets one
 * per image in front, as the chat templates render a turn whose images come
 * before its text. |*out| is malloc'ed. 0 or the exit code (printed). */
int images_expand_text(const image_inputs *in,
                       const sgc_tokenizer_t *tokenizer, const char *text,
                       char **out);

/* How many images a chat turn with |text| renders before its text: all of
 * them, unless the text places them itself (holds a placeholder). */
size_t images_before_text(const image_inputs *in,
                          const sgc_tokenizer_t *tokenizer, const char *text);

/* The same for a rendered chat turn, whose template wrote one placeholder
 * per image already: a count that differs is an error. */
int images_expand_rendered(const image_inputs *in,
                           const sgc_tokenizer_t *tokenizer, const char *text,
                           char **out);

/* Runs the vision tower on every image and gathers their soft tokens into
 * in->embeds; points |gopts| at them and at the layout's slots and blocks.
 * 0 or the exit code (printed). */
int images_encode(image_inputs *in, sgc_session_t *session,
                  sgc_generate_options_t *gopts);

/* Drops the images, their layout and soft tokens; the facts stay. */
void images_clear(image_inputs *in);
void images_free(image_inputs *in);

#endif /* SGC_TOOLS_SGC_RUN_IMAGES_H */
