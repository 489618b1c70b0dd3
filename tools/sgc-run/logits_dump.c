/*
 * logits_dump.c - --dump-logits (logits_dump.h).
 */
#include "tools/sgc-run/logits_dump.h"

#include "tools/sgc-run/errors.h"

#include <stdlib.h>
#include <string.h>

void dump_on_logits(void *user, sgc_logits_kind_t kind, int64_t index,
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

static sgc_tensor_view_t view(const char *name, sgc_dtype_t dtype,
                              uint32_t rank, const int64_t *shape,
                              const void *data) {
  sgc_tensor_view_t v;
  v.name = name;
  v.dtype = dtype;
  v.rank = rank;
  v.shape = shape;
  v.data = data;
  return v;
}

int write_logits(const char *path, const run_state *s,
                        const int32_t *prompt) {
  const int64_t prefill_shape[2] = {s->n_prompt, s->vocab};
  const int64_t decode_shape[2] = {s->decode_rows, s->vocab};
  const int64_t prompt_shape[1] = {s->n_prompt};
  const int64_t gen_shape[1] = {s->n_generated};
  const int64_t soft_shape[2] = {s->soft_rows, s->hidden};
  sgc_tensor_view_t views[5];
  sgc_status_t *st;
  views[0] = view("prefill_logits", SGC_DTYPE_F32, 2, prefill_shape, s->prefill);
  views[1] = view("decode_logits", SGC_DTYPE_F32, 2, decode_shape, s->decode);
  views[2] = view("prompt_ids", SGC_DTYPE_I32, 1, prompt_shape, prompt);
  views[3] = view("generated_ids", SGC_DTYPE_I32, 1, gen_shape, s->generated);
  /* A prompt with images: the tower's output too. */
  views[4] = view("image_soft_tokens", SGC_DTYPE_F32, 2, soft_shape,
                  s->soft_tokens);
  st = sgc_safetensors_write(path, views, s->soft_tokens ? 5 : 4);
  return st ? report(st) : 0;
}
