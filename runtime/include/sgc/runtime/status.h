/*
 * sgc/runtime/status.h - Statuses, versions, dtypes and devices.
 *
 * A part of the sgc runtime's C API, <sgc/runtime.h>, which includes
 * every part; its conventions hold here.
 */
#ifndef SGC_RUNTIME_STATUS_H
#define SGC_RUNTIME_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

/** Status codes; each is also the exit code of sgc and sgc-run. */
typedef enum sgc_status_code_e {
  SGC_STATUS_OK = 0,
  /** A bad input file: a checkpoint, a .so that is not an sgc model, ... */
  SGC_STATUS_BAD_INPUT = 1,
  /** Invalid arguments or options. */
  SGC_STATUS_USAGE = 2,
  /** Model, checkpoint and ABI do not fit: missing or misshapen tensors,
   *  another ABI major version, a model compiled for another device. */
  SGC_STATUS_MISMATCH = 3,
  /** The device is absent or unusable (no CUDA driver, no CUDA device,
   *  a CPU without the features a forced variant needs). */
  SGC_STATUS_DEVICE_UNAVAILABLE = 4,
  /** An internal error or an unexpected system failure. */
  SGC_STATUS_INTERNAL = 5
} sgc_status_code_t;

/** An error: a code, a one-line message and note lines. */
typedef struct sgc_status_t sgc_status_t;

/** SGC_STATUS_OK for NULL. */
sgc_status_code_t sgc_status_code(const sgc_status_t *status);
/** One line, no "error: " prefix, no newline; "" for NULL. */
const char *sgc_status_message(const sgc_status_t *status);
/** Number of detail lines (printed by tools as "note: ..."). */
size_t sgc_status_note_count(const sgc_status_t *status);
/** The |index|-th note; "" when out of range. */
const char *sgc_status_note(const sgc_status_t *status, size_t index);
/** Frees |status| (NULL is fine). */
void sgc_status_free(sgc_status_t *status);
/** A short name for |code|: "ok", "bad input", "usage", ... (static). */
const char *sgc_status_code_name(sgc_status_code_t code);

/*===----------------------------------------------------------------------===*
 * Versions, dtypes, devices
 *===----------------------------------------------------------------------===*/

/** Runtime version string, e.g. "0.1.0" (static). */
const char *sgc_runtime_version(void);
/** The model ABI version this runtime implements (sgc/abi.h). */
void sgc_runtime_abi_version(uint32_t *out_major, uint32_t *out_minor);

/** Element types (the same codes as the ABI's SGC_ABI_DTYPE_*). */
typedef enum sgc_dtype_e {
  SGC_DTYPE_INVALID = 0,
  SGC_DTYPE_BOOL = 1,
  SGC_DTYPE_U8 = 2,
  SGC_DTYPE_I8 = 3,
  SGC_DTYPE_I16 = 4,
  SGC_DTYPE_U16 = 5,
  SGC_DTYPE_F16 = 6,
  SGC_DTYPE_BF16 = 7,
  SGC_DTYPE_I32 = 8,
  SGC_DTYPE_U32 = 9,
  SGC_DTYPE_F32 = 10,
  SGC_DTYPE_F64 = 11,
  SGC_DTYPE_I64 = 12,
  SGC_DTYPE_U64 = 13,
  SGC_DTYPE_F8_E4M3 = 14,
  SGC_DTYPE_F8_E5M2 = 15,
  SGC_DTYPE_F8_E8M0 = 16,
  /* Block encodings of GGUF files (design/QUANT.md §3). */
  SGC_DTYPE_Q8_0 = 17,
  SGC_DTYPE_Q4_0 = 18,
  SGC_DTYPE_Q6_K = 19,
  SGC_DTYPE_Q4_K = 20,
  /* Compressed-tensors FP8 and INT4 weights as the runtime packs them
   * (<sgc/abi.h>). */
  SGC_DTYPE_FP8_CH = 21,
  SGC_DTYPE_INT4_G32 = 22,
  SGC_DTYPE_INT4_G128 = 23
} sgc_dtype_t;

/** Safetensors spelling ("BF16"); "INVALID" otherwise (static). */
const char *sgc_dtype_name(sgc_dtype_t dtype);
/** Bytes per element; 0 for SGC_DTYPE_INVALID and the block encodings. */
size_t sgc_dtype_size(sgc_dtype_t dtype);

typedef enum sgc_device_kind_e {
  SGC_DEVICE_CPU = 0,
  SGC_DEVICE_CUDA = 1,
  /** A CUDA model's kernels compiled for the host (the model's cuda_emu
   *  table), each GPU thread a fiber, every launch checked for divergent
   *  barriers, out-of-bounds accesses and races (runtime/src/cuda_emu).
   *  For tests; slow. SGC_EMU_SCHEDULES (environment, default 3) is the
   *  number of schedules each launch runs under. */
  SGC_DEVICE_CUDA_EMU = 2
} sgc_device_kind_t;

/**
 * Checks that a device can be used, without creating a session. For CUDA:
 * loads libcuda.so.1 with dlopen ("no CUDA driver found" when that fails),
 * calls cuInit and cuDeviceGetCount ("no CUDA device" when they fail or
 * find none, or when |ordinal| is past the count). Code
 * SGC_STATUS_DEVICE_UNAVAILABLE on failure. CPU and CUDA_EMU always succeed.
 */
sgc_status_t *sgc_device_probe(sgc_device_kind_t kind, int32_t ordinal);

/** The CPU's features as SGC_ABI_CPU_* bits (sgc/abi.h). */
uint64_t sgc_cpu_features(void);
/** Writes the names of the bits in |features| ("avx2 fma f16c") into |buf|
 *  (NUL-terminated, truncated to |size|). Returns the length needed. */
size_t sgc_cpu_features_string(uint64_t features, char *buf, size_t size);

/** Physical cores this process may run on (at least 1). */
int32_t sgc_default_thread_count(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_RUNTIME_STATUS_H */
