/*
 * sgc-image - a thin command line over the runtime's image preprocessing,
 * for tests and for looking at what a vision model will be fed:
 *
 *   sgc-image FILE --family gemma3|gemma4 [--max-soft-tokens N]
 *             [--image-size N] [--patch-size N] [--pooling-kernel N]
 *             -o OUT.safetensors
 *
 * writes the model's input tensors (pixel_values, and for Gemma 4
 * image_position_ids and num_soft_tokens_per_image) and prints one line:
 * the decoded size, the resized size and, for Gemma 4, the soft tokens.
 * C, and sees nothing but <sgc/runtime.h>.
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

static int usage(const char *why) {
  if (why)
    fprintf(stderr, "error: %s\n", why);
  fputs("usage: sgc-image FILE --family gemma3|gemma4 [--max-soft-tokens N]\n"
        "                 [--image-size N] [--patch-size N] "
        "[--pooling-kernel N]\n"
        "                 -o OUT.safetensors\n"
        "  --max-soft-tokens N  Gemma 4's budget: 70, 140, 280 (default), "
        "560, 1120\n"
        "  --image-size N       Gemma 3's square side (default 896)\n"
        "  --patch-size N       Gemma 4's patch side (default 16)\n"
        "  --pooling-kernel N   Gemma 4's pooling kernel (default 3)\n",
        stderr);
  return SGC_STATUS_USAGE;
}

/* Parses a positive decimal int32; 0 when |text| is not one. */
static int parse_int(const char *text, int32_t *out) {
  char *end = NULL;
  long v;
  errno = 0;
  v = strtol(text, &end, 10);
  if (errno || !end || *end || end == text || v < 1 || v > 1000000)
    return 0;
  *out = (int32_t)v;
  return 1;
}

int main(int argc, char **argv) {
  const char *file = NULL, *out = NULL, *family = NULL;
  int32_t max_soft = 0, image_size = 0, patch = 0, kernel = 0;
  sgc_image_options_t options;
  sgc_image_t *image = NULL;
  sgc_tensor_view_t views[8];
  sgc_status_t *st;
  size_t i, n;
  int32_t sw, sh, w, h;
  int a;

  for (a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    int32_t *slot = NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
      return usage(NULL), 0;
    if (!strcmp(arg, "--family") || !strcmp(arg, "-o") ||
        !strcmp(arg, "--max-soft-tokens") || !strcmp(arg, "--image-size") ||
        !strcmp(arg, "--patch-size") || !strcmp(arg, "--pooling-kernel")) {
      if (a + 1 >= argc) {
        fprintf(stderr, "error: %s needs a value\n", arg);
        return usage(NULL);
      }
      if (!strcmp(arg, "--family"))
        family = argv[++a];
      else if (!strcmp(arg, "-o"))
        out = argv[++a];
      else {
        slot = !strcmp(arg, "--max-soft-tokens") ? &max_soft
               : !strcmp(arg, "--image-size")    ? &image_size
               : !strcmp(arg, "--patch-size")    ? &patch
                                                 : &kernel;
        if (!parse_int(argv[++a], slot)) {
          fprintf(stderr, "error: %s: '%s' is not a positive integer\n", arg,
                  argv[a]);
          return SGC_STATUS_USAGE;
        }
      }
    } else if (arg[0] == '-' && arg[1]) {
      fprintf(stderr, "error: unknown option '%s'\n", arg);
      return usage(NULL);
    } else if (file) {
      return usage("one image file at a time");
    } else {
      file = arg;
    }
  }
  if (!file)
    return usage("no image file given");
  if (!family)
    return usage("--family is required");
  if (!out)
    return usage("-o OUT.safetensors is required");
  if (strcmp(family, "gemma3") && strcmp(family, "gemma4")) {
    fprintf(stderr, "error: --family: '%s' is not gemma3 or gemma4\n", family);
    return SGC_STATUS_USAGE;
  }
  sgc_image_options_default(!strcmp(family, "gemma3") ? SGC_IMAGE_FAMILY_GEMMA3
                                                      : SGC_IMAGE_FAMILY_GEMMA4,
                            &options);
  if (options.family == SGC_IMAGE_FAMILY_GEMMA3 &&
      (max_soft || patch || kernel))
    return usage("--max-soft-tokens, --patch-size and --pooling-kernel are "
                 "Gemma 4 options");
  if (options.family == SGC_IMAGE_FAMILY_GEMMA4 && image_size)
    return usage("--image-size is a Gemma 3 option");
  if (max_soft)
    options.max_soft_tokens = max_soft;
  if (image_size)
    options.image_size = image_size;
  if (patch)
    options.patch_size = patch;
  if (kernel)
    options.pooling_kernel_size = kernel;

  if ((st = sgc_image_load(file, &options, &image)))
    return report(st);
  n = sgc_image_tensor_count(image);
  for (i = 0; i < n && i < 8; ++i)
    sgc_image_tensor(image, i, &views[i]);
  if ((st = sgc_safetensors_write(out, views, n))) {
    sgc_image_release(image);
    return report(st);
  }
  sgc_image_size(image, &sw, &sh, &w, &h);
  if (options.family == SGC_IMAGE_FAMILY_GEMMA4)
    printf("%s: %dx%d -> %dx%d, %lld soft tokens (budget %d)\n", file, sw, sh,
           w, h, (long long)sgc_image_soft_token_count(image),
           options.max_soft_tokens);
  else
    printf("%s: %dx%d -> %dx%d\n", file, sw, sh, w, h);
  sgc_image_release(image);
  return 0;
}
