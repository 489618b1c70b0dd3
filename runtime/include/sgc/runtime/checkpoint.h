/*
 * sgc/runtime/checkpoint.h - Tensors and checkpoints.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>, which includes
 * every part; its conventions hold here.
 */
#ifndef SGC_RUNTIME_CHECKPOINT_H
#define SGC_RUNTIME_CHECKPOINT_H

#include "sgc/runtime/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Tensors
 *===----------------------------------------------------------------------===*/

/** Describes one tensor of a checkpoint or of a model's manifest. */
typedef struct sgc_tensor_info_t {
  const char *name;
  sgc_dtype_t dtype;
  uint32_t rank;
  /** |rank| dimensions; owned by the handle. */
  const int64_t *shape;
  uint64_t bytes;
  /** Checkpoints: the shard file's path as opened. Models: the graph
   *  object ("target.decoder_stack"), or "" when unknown. */
  const char *location;
  /** Models: the dummy fill (0 random, 1 ones, 2 zeros); checkpoints: 0. */
  uint32_t fill;
} sgc_tensor_info_t;

/** A caller-owned tensor to write (sgc_safetensors_write). */
typedef struct sgc_tensor_view_t {
  const char *name;
  sgc_dtype_t dtype;
  uint32_t rank;
  const int64_t *shape;
  /** sgc_dtype_size(dtype) x product(shape) bytes, row-major. */
  const void *data;
} sgc_tensor_view_t;

/** Writes |count| tensors to |path| as a safetensors file (atomically:
 *  a temporary file is renamed over |path|). */
sgc_status_t *sgc_safetensors_write(const char *path,
                                    const sgc_tensor_view_t *tensors,
                                    size_t count);

/*===----------------------------------------------------------------------===*
 * Checkpoints (no model needed)
 *===----------------------------------------------------------------------===*/

typedef struct sgc_checkpoint_t sgc_checkpoint_t;

/**
 * Opens and validates a checkpoint: a .safetensors file, an
 * *.index.json, or a directory with model.safetensors or
 * model.safetensors.index.json; or a GGUF file (version 3, told by its
 * magic). Every shard is validated in full (header rules, exact tiling of
 * the data region) and must hold exactly the tensors the index gives it; a
 * GGUF's offsets, types, sizes and alignment are checked likewise. Data
 * stays on disk (mmap); nothing is read but the headers. Errors name the
 * file and the tensor; code SGC_STATUS_BAD_INPUT. A GGUF tensor's shape is
 * given outermost first (the file stores it innermost first); a ggml type
 * sgc has no dtype for has SGC_DTYPE_INVALID (its name:
 * sgc_checkpoint_tensor_encoding).
 */
sgc_status_t *sgc_checkpoint_open(const char *path,
                                  sgc_checkpoint_t **out_checkpoint);
void sgc_checkpoint_release(sgc_checkpoint_t *checkpoint);
/** The |index|-th tensor's encoding as the file names it ("BF16", "Q4_0",
 *  "Q4_K"); NULL when out of range. */
const char *sgc_checkpoint_tensor_encoding(const sgc_checkpoint_t *checkpoint,
                                           size_t index);
/** Number of tensors over all shards. */
size_t sgc_checkpoint_tensor_count(const sgc_checkpoint_t *checkpoint);
/** The |index|-th tensor in name order; returns 0 when out of range, else 1.
 *  location = the shard file. */
int sgc_checkpoint_tensor(const sgc_checkpoint_t *checkpoint, size_t index,
                          sgc_tensor_info_t *out_info);
size_t sgc_checkpoint_shard_count(const sgc_checkpoint_t *checkpoint);
/** Path of the |index|-th shard; NULL when out of range. */
const char *sgc_checkpoint_shard_path(const sgc_checkpoint_t *checkpoint,
                                      size_t index);
/** Sum of all tensor bytes. */
uint64_t sgc_checkpoint_tensor_bytes(const sgc_checkpoint_t *checkpoint);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_CHECKPOINT_H */
