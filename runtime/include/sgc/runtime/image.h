/*
 * sgc/runtime/image.h - Images, prompts with images, the vision tower.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>, which includes
 * every part; its conventions hold here.
 */
#ifndef SGC_RUNTIME_IMAGE_H
#define SGC_RUNTIME_IMAGE_H

#include "sgc/runtime/session.h"
#include "sgc/runtime/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Images (the vision models' preprocessing)
 *===----------------------------------------------------------------------===*/

/**
 * Turns a PNG or JPEG file into a vision model's input tensors, as the
 * image processor Hugging Face transformers 5.24 picks by default for the
 * family (the torchvision-backed Gemma3ImageProcessor / Gemma4ImageProcessor)
 * does for the image transformers' load_image returns: decoded by libpng /
 * libjpeg, EXIF orientation applied, converted to RGB as PIL's
 * convert("RGB") (alpha dropped), resized with torch's antialiased uint8
 * filter. runtime/README.md ("Images") has the rules and the limits.
 */
typedef enum sgc_image_family_e {
  /** Bilinear to image_size x image_size, (x - 127.5) / 127.5. Tensor
   *  "pixel_values" F32 [1, 3, image_size, image_size]. */
  SGC_IMAGE_FAMILY_GEMMA3 = 3,
  /** Bicubic to multiples of pooling_kernel_size x patch_size within the
   *  budget, x / 255, patched. Tensors "pixel_values" F32 [1, max_patches,
   *  patch_size^2 x 3] ((py, px, channel) per patch, row-major patches),
   *  "image_position_ids" I64 [1, max_patches, 2] ((x, y) of each patch;
   *  (-1, -1) marks padding, as HF returns it) and
   *  "num_soft_tokens_per_image" I64 [1]; max_patches = max_soft_tokens x
   *  pooling_kernel_size^2. */
  SGC_IMAGE_FAMILY_GEMMA4 = 4
} sgc_image_family_t;

typedef struct sgc_image_options_t {
  sgc_image_family_t family;
  /** Gemma 3: the side of the square output (896). */
  int32_t image_size;
  /** Gemma 4: the patch side (16) and pooling kernel (3). */
  int32_t patch_size;
  int32_t pooling_kernel_size;
  /** Gemma 4: the soft-token budget, one of 70, 140, 280 (default), 560,
   *  1120. */
  int32_t max_soft_tokens;
} sgc_image_options_t;

/** The family's defaults (gemma-3-12b-it / gemma-4-31B-it). */
void sgc_image_options_default(sgc_image_family_t family,
                               sgc_image_options_t *out_options);

/** A preprocessed image: its tensors, immutable. */
typedef struct sgc_image_t sgc_image_t;

/**
 * Reads, decodes and preprocesses |path|. Errors name the file and what is
 * wrong with it (truncated, empty, not PNG/JPEG, larger than the pixel
 * limit, corrupt) with SGC_STATUS_BAD_INPUT; bad options are
 * SGC_STATUS_USAGE. Nothing is allocated for the pixels before the
 * header's dimensions pass the limit.
 */
sgc_status_t *sgc_image_load(const char *path,
                             const sgc_image_options_t *options,
                             sgc_image_t **out_image);
/**
 * sgc_image_load for an image in memory (a server's upload): |label| names
 * it in errors (e.g. "messages[0].content[1]"); |max_pixels| bounds width x
 * height below the runtime's own limit (0: that limit, 89,478,485), checked
 * from the header before the pixels are allocated.
 */
sgc_status_t *sgc_image_load_memory(const void *data, size_t size,
                                    const char *label, uint64_t max_pixels,
                                    const sgc_image_options_t *options,
                                    sgc_image_t **out_image);
void sgc_image_release(sgc_image_t *image);
/** The decoded size (after EXIF orientation) and the size after the resize;
 *  any out pointer may be NULL. */
void sgc_image_size(const sgc_image_t *image, int32_t *out_source_width,
                    int32_t *out_source_height, int32_t *out_width,
                    int32_t *out_height);
/** Gemma 4: the image's soft tokens (patches / kernel^2); Gemma 3: 0 (the
 *  model fixes the count). */
int64_t sgc_image_soft_token_count(const sgc_image_t *image);
size_t sgc_image_tensor_count(const sgc_image_t *image);
/** The |index|-th tensor (data owned by |image|); 0 when out of range. */
int sgc_image_tensor(const sgc_image_t *image, size_t index,
                     sgc_tensor_view_t *out_view);

/**
 * Reads a preprocessed image from a safetensors file, e.g. a golden's or
 * sgc-image's output: "pixel_values" F32 in the family's shape for
 * |options| (Gemma 3 [1, 3, image_size, image_size]; Gemma 4 [1,
 * max_soft_tokens x pooling_kernel_size^2, patch_size^2 x 3]) and, for
 * Gemma 4, "image_position_ids" I64 [1, max_patches, 2] (the valid patches
 * first, then (-1, -1) padding) and optionally "num_soft_tokens" or
 * "num_soft_tokens_per_image" I64 [1], which must equal the valid patches /
 * pooling_kernel_size^2. Other tensors are ignored. The image then is what
 * sgc_image_load gives (its source and resized sizes are 0). Errors name the
 * file and the tensor: SGC_STATUS_BAD_INPUT.
 */
sgc_status_t *sgc_image_load_tensors(const char *path,
                                     const sgc_image_options_t *options,
                                     sgc_image_t **out_image);

/*===----------------------------------------------------------------------===*
 * Prompts with images (runtime/src/image/prompt_layout.h)
 *===----------------------------------------------------------------------===*/

/** A vision model's image token ids. */
typedef struct sgc_image_tokens_t {
  int32_t image_token_id; /**< the soft-token placeholder */
  int32_t boi_token_id;   /**< begin of image */
  int32_t eoi_token_id;   /**< end of image */
} sgc_image_tokens_t;

/** Where each image goes in a prompt of token ids. */
typedef struct sgc_prompt_layout_t sgc_prompt_layout_t;

/**
 * Lays out |count| prompt ids for |num_images| images, image i having
 * soft_tokens[i] >= 1 soft tokens (Gemma 4: sgc_image_soft_token_count;
 * Gemma 3: the model's fixed count). Each BOI takes the next image in
 * order: a BOI followed by exactly soft_tokens[i] image tokens and an EOI
 * is kept as is, a BOI followed by no image token becomes BOI + N x image +
 * EOI (the ids form: Gemma 3's "\n\n" around the block is text, see
 * sgc_prompt_expand_images). SGC_STATUS_USAGE, naming the token index and
 * both counts, for a block of the wrong length or without its EOI, an image
 * token outside a block, or a BOI count other than |num_images|.
 */
sgc_status_t *sgc_prompt_layout_create(const int32_t *ids, size_t count,
                                       const sgc_image_tokens_t *tokens,
                                       const int64_t *soft_tokens,
                                       size_t num_images,
                                       sgc_prompt_layout_t **out_layout);
void sgc_prompt_layout_release(sgc_prompt_layout_t *layout);
/** Rows of the laid-out prompt. */
size_t sgc_prompt_layout_length(const sgc_prompt_layout_t *layout);
/** The laid-out ids (length rows). */
const int32_t *sgc_prompt_layout_ids(const sgc_prompt_layout_t *layout);
/** Per row: the index into the images' soft tokens concatenated in image
 *  order, -1 on text rows (BOI and EOI are text). */
const int64_t *sgc_prompt_layout_soft_slots(const sgc_prompt_layout_t *layout);
/** Per row: the image block (0, 1, ...: one per maximal run of image
 *  tokens, as HF's token_type_ids / mm_token_type_ids blocks), -1 on text. */
const int32_t *sgc_prompt_layout_blocks(const sgc_prompt_layout_t *layout);
size_t sgc_prompt_layout_num_images(const sgc_prompt_layout_t *layout);
/** Sum of the images' soft tokens. */
int64_t sgc_prompt_layout_soft_tokens(const sgc_prompt_layout_t *layout);

/**
 * The end of the prefill chunk starting at row |start| with at most
 * |max_chunk| rows: min(start + max_chunk, rows), moved back to the start
 * of an image block it would split. SGC_STATUS_USAGE when that block is
 * longer than |max_chunk| (naming its rows, length and |max_chunk|) or
 * |start| is inside a block.
 */
sgc_status_t *sgc_prompt_layout_chunk_end(const sgc_prompt_layout_t *layout,
                                          int64_t start, int64_t max_chunk,
                                          int64_t *out_end);

/**
 * The text expansion the family's Hugging Face processor (transformers
 * 5.24) applies to a prompt before tokenizing, one image per placeholder in
 * order. Gemma 3: each |boi| string becomes "\n\n" + boi + N x |image| +
 * |eoi| + "\n\n"; Gemma 4: each |image| string becomes boi + N x image +
 * eoi. The strings are the tokenizer's pieces of the model's ids.
 * SGC_STATUS_USAGE when the placeholders and |num_images| differ (naming
 * both). |*out_text| is malloc'ed and NUL-terminated (free with free()).
 */
sgc_status_t *sgc_prompt_expand_images(sgc_image_family_t family,
                                       const char *text, size_t len,
                                       const char *image, const char *boi,
                                       const char *eoi,
                                       const int64_t *soft_tokens,
                                       size_t num_images, char **out_text,
                                       size_t *out_len);

/*===----------------------------------------------------------------------===*
 * The vision tower (the model's encode_image phase)
 *===----------------------------------------------------------------------===*/

/** A vision model's image component. */
typedef struct sgc_model_image_info_t {
  sgc_image_tokens_t tokens;
  /** What sgc_image_load / sgc_image_load_tensors need for this model. */
  sgc_image_options_t options;
  /** Soft tokens the tower writes per image (Gemma 4: the budget; an
   *  image's own count, sgc_image_soft_token_count, may be fewer). */
  int64_t soft_tokens;
  /** Floats per soft token (the text hidden size). */
  int64_t hidden_size;
  /** The tower's input: patches and values per patch. */
  int64_t patches;
  int64_t patch_values;
} sgc_model_image_info_t;

/** 1 and |*out_info| when the model was compiled with its vision tower,
 *  else 0. */
int sgc_model_image_info(const sgc_model_t *model,
                         sgc_model_image_info_t *out_info);

/**
 * Runs the vision tower on |image|, preprocessed for this model (the
 * options of sgc_model_image_info). |out_soft_tokens| receives soft_tokens x
 * hidden_size floats, in the order they replace the image's placeholder
 * tokens; |*out_count| (may be NULL) the image's own soft tokens (Gemma 4:
 * the rows after them are padding). SGC_STATUS_USAGE for a model without a
 * tower or an image made for another one (naming both shapes).
 */
sgc_status_t *sgc_session_encode_image(sgc_session_t *session,
                                       const sgc_image_t *image,
                                       float *out_soft_tokens,
                                       int64_t *out_count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_IMAGE_H */
