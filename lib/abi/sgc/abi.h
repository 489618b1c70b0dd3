/*
 * sgc/abi.h - the versioned contract between a compiled model (.so) and the
 * sgc runtime. ABI version 2.3.
 *
 * Dependency-free C (C99/C11 and C++ can include it). The compiler emits a
 * generated C file that defines the tables below as static constant data and
 * the one exported function, sgc_model_query; that file is compiled and
 * linked into the model .so. The runtime dlopens the .so, calls the query
 * function, checks the header (magic, then major version) before reading
 * anything else, validates the table and binds the weights the manifest
 * names.
 *
 * What a model computes is data, the same for every target: per entry point
 * (a phase: prefill, decode) a range of steps, each naming a function of
 * the chosen variant and its operands (weights, KV caches, workspace
 * buffers, the tokens, the position). The runtime replays the steps; on the
 * CPU a step calls a compiled function (a layer body), on CUDA a step is one
 * kernel launch (grid, block, shared memory).
 *
 * Versioning (treat a change here like a schema change, STYLE.md habit 10):
 *  - magic and major/minor come first in every version, so a runtime can
 *    check them without knowing the rest of the layout;
 *  - a new MINOR version may only append fields at the end of
 *    sgc_model_v2_t (struct_size tells the runtime how much is there) or give
 *    meaning to fields documented as reserved (reserved fields are zero);
 *    array element structs never grow within a major version;
 *  - anything else is a new MAJOR version, which older runtimes refuse with
 *    a message naming both versions.
 *
 * Lifetime and ownership: every pointer in the tables points at static
 * constant data inside the .so; it stays valid until the runtime dlcloses
 * the library and is never written or freed by the runtime.
 *
 * Units: sizes are bytes unless named otherwise; shapes and counts are
 * elements; token ids are int32; positions are 0-based token indices.
 */
#ifndef SGC_ABI_H
#define SGC_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Version and the query symbol
 *===----------------------------------------------------------------------===*/

/** "SGC\x01" read as a little-endian uint32. */
#define SGC_ABI_MAGIC 0x01434753u
#define SGC_ABI_VERSION_MAJOR 2u
#define SGC_ABI_VERSION_MINOR 9u

/** The symbol every compiled model exports (dlsym name). A CPU model may also
 *  export int64_t knobs the runtime sets for its host before any call: bytes
 *  its bf16 rows prefetch ahead (0: none), and, nonzero, bf16 prefill tiles
 *  on FMAs in vdpbf16ps's order of adds (Intel's bits, subnormals kept). */
#define SGC_ABI_QUERY_SYMBOL "sgc_model_query"
#define SGC_ABI_ROW_PREFETCH_SYMBOL "sgc_cpu_row_prefetch_bytes"
#define SGC_ABI_BF16_ON_FMA_SYMBOL "sgc_cpu_bf16_on_fma"

/** Largest tensor rank the manifest can describe. */
#define SGC_ABI_MAX_RANK 8

/**
 * First member of every model table, whatever the version. The runtime reads
 * these 16 bytes first and trusts nothing else until they check out.
 */
typedef struct sgc_abi_header_t {
  uint32_t magic;         /**< SGC_ABI_MAGIC */
  uint32_t version_major; /**< SGC_ABI_VERSION_MAJOR the table was built for */
  uint32_t version_minor; /**< SGC_ABI_VERSION_MINOR the table was built for */
  uint32_t struct_size;   /**< sizeof the whole table (e.g. sgc_model_v2_t) */
} sgc_abi_header_t;

/**
 * Signature of the exported query function. |runtime_major| and
 * |runtime_minor| are the ABI version of the calling runtime; a library that
 * carries tables for several majors may use them to pick one. Returns a
 * pointer to a table that begins with sgc_abi_header_t (for major 2: a
 * sgc_model_v2_t), or NULL when the library has no table the runtime can
 * use. The table is static data owned by the library; calling the function
 * more than once returns the same pointer. Must not allocate, lock or print.
 */
typedef const sgc_abi_header_t *(*sgc_abi_query_fn_t)(uint32_t runtime_major,
                                                      uint32_t runtime_minor);

/*===----------------------------------------------------------------------===*
 * Enumerations (stored as uint32_t in the tables)
 *===----------------------------------------------------------------------===*/

/**
 * Element types and weight encodings, one row each:
 * X(NAME, code, block bytes, block elements). NAME is the safetensors
 * spelling ("BF16", "F8_E4M3", ...) or ggml's ("Q4_0"), the code what the
 * tables store (equal to the runtime's SGC_DTYPE_*). A plain type is a block
 * of one element; a block encoding packs `block elements` weights of a row
 * into `block bytes` (a tensor's last dimension is a whole number of blocks):
 * ggml's Q8_0, Q4_0, Q6_K, Q4_K from GGUF files (design/QUANT.md §3; new in
 * 2.6, Q4_K in 2.8), and FP8_CH, INT4_G32, INT4_G128 (2.9), the runtime's
 * packing of compressed-tensors FP8 / INT4 weights (runtime/src/
 * compressed_tensors.h). The enumerators, the compiler's type and serializer
 * and lib/support/dtype.cc come from these rows.
 */
#define SGC_ABI_DTYPES(X) \
  X(INVALID, 0, 0, 1)     \
  X(BOOL, 1, 1, 1)        \
  X(U8, 2, 1, 1)          \
  X(I8, 3, 1, 1)          \
  X(I16, 4, 2, 1)         \
  X(U16, 5, 2, 1)         \
  X(F16, 6, 2, 1)         \
  X(BF16, 7, 2, 1)        \
  X(I32, 8, 4, 1)         \
  X(U32, 9, 4, 1)         \
  X(F32, 10, 4, 1)        \
  X(F64, 11, 8, 1)        \
  X(I64, 12, 8, 1)        \
  X(U64, 13, 8, 1)        \
  X(F8_E4M3, 14, 1, 1)    \
  X(F8_E5M2, 15, 1, 1)    \
  X(F8_E8M0, 16, 1, 1)    \
  X(Q8_0, 17, 34, 32)     \
  X(Q4_0, 18, 18, 32)     \
  X(Q6_K, 19, 210, 256)   \
  X(Q4_K, 20, 144, 256)   \
  X(FP8_CH, 21, 36, 32)   \
  X(INT4_G32, 22, 20, 32) \
  X(INT4_G128, 23, 68, 128)

enum {
#define SGC_ABI_DTYPE_ENUMERATOR(name, code, block_bytes, block_elements)     \
  SGC_ABI_DTYPE_##name = code,
  SGC_ABI_DTYPES(SGC_ABI_DTYPE_ENUMERATOR)
#undef SGC_ABI_DTYPE_ENUMERATOR
  SGC_ABI_DTYPE_COUNT = 24
};

/** What --load-format=dummy writes into a tensor. */
enum {
  /** Uniform in [-0.02, 0.02), seeded from the tensor name (runtime.h). */
  SGC_ABI_FILL_RANDOM = 0,
  /** Every element 1 (norm weights used as x * w). */
  SGC_ABI_FILL_ONES = 1,
  /** Every element 0 (norm weights used as x * (1 + w), biases). */
  SGC_ABI_FILL_ZEROS = 2
};

/** The kind of one layer's KV cache. */
enum {
  /** One slot per position: slot = pos, slots = the context length. */
  SGC_ABI_KV_FULL = 0,
  /** A ring of exactly `window` slots: slot = pos mod slots. */
  SGC_ABI_KV_RING = 1
};

/** The device a model was compiled for (sgc_model_v2_t.device). */
enum { SGC_ABI_DEVICE_CPU = 0, SGC_ABI_DEVICE_CUDA = 1 };

/**
 * CPU feature bits (sgc_abi_variant_t.required_cpu_features and
 * sgc_abi_cpu_exec_t.cpu_features). x86-64 bits mean the CPU reports the
 * feature AND the OS enabled its register state (XCR0); AMX bits also mean
 * the runtime obtained tile-data permission from the kernel.
 */
#define SGC_ABI_CPU_SSE42 (UINT64_C(1) << 0)
#define SGC_ABI_CPU_AVX (UINT64_C(1) << 1)
#define SGC_ABI_CPU_AVX2 (UINT64_C(1) << 2)
#define SGC_ABI_CPU_FMA (UINT64_C(1) << 3)
#define SGC_ABI_CPU_F16C (UINT64_C(1) << 4)
#define SGC_ABI_CPU_BMI2 (UINT64_C(1) << 5)
#define SGC_ABI_CPU_AVX_VNNI (UINT64_C(1) << 6)
#define SGC_ABI_CPU_AVX512F (UINT64_C(1) << 8)
#define SGC_ABI_CPU_AVX512BW (UINT64_C(1) << 9)
#define SGC_ABI_CPU_AVX512VL (UINT64_C(1) << 10)
#define SGC_ABI_CPU_AVX512DQ (UINT64_C(1) << 11)
#define SGC_ABI_CPU_AVX512CD (UINT64_C(1) << 12)
#define SGC_ABI_CPU_AVX512BF16 (UINT64_C(1) << 13)
#define SGC_ABI_CPU_AVX512VNNI (UINT64_C(1) << 14)
#define SGC_ABI_CPU_AVX512FP16 (UINT64_C(1) << 15)
#define SGC_ABI_CPU_AMX_TILE (UINT64_C(1) << 16)
#define SGC_ABI_CPU_AMX_BF16 (UINT64_C(1) << 17)
#define SGC_ABI_CPU_AMX_INT8 (UINT64_C(1) << 18)
/* AArch64 (reserved for later targets). */
#define SGC_ABI_CPU_NEON (UINT64_C(1) << 32)
#define SGC_ABI_CPU_SVE (UINT64_C(1) << 33)
#define SGC_ABI_CPU_ARM_BF16 (UINT64_C(1) << 34)
#define SGC_ABI_CPU_ARM_I8MM (UINT64_C(1) << 35)

/** x86-64-v3 as the compiler's baseline variant requires it. */
#define SGC_ABI_CPU_X86_64_V3                                                  \
  (SGC_ABI_CPU_SSE42 | SGC_ABI_CPU_AVX | SGC_ABI_CPU_AVX2 | SGC_ABI_CPU_FMA |  \
   SGC_ABI_CPU_F16C | SGC_ABI_CPU_BMI2)

/*===----------------------------------------------------------------------===*
 * The manifest: tensors the model binds
 *===----------------------------------------------------------------------===*/

/** One checkpoint tensor the model reads (an entry of the weight table). */
typedef struct sgc_abi_tensor_t {
  /**
   * The tensor's name in the checkpoint, e.g.
   * "language_model.model.layers.0.self_attn.q_proj.weight".
   */
  const char *name;
  /**
   * Other names the tensor may have in a checkpoint of this model family
   * (e.g. "model.language_model." for "language_model.model."), tried in
   * order when |name| is absent; NULL when num_alt_names is 0.
   */
  const char *const *alt_names;
  uint32_t num_alt_names;
  /** SGC_ABI_DTYPE_*; the checkpoint's dtype must be exactly this. */
  uint32_t dtype;
  /** Number of dimensions, 0..SGC_ABI_MAX_RANK (0 = scalar). */
  uint32_t rank;
  /** Dimensions, outermost first; entries at index >= rank are 0. */
  int64_t shape[SGC_ABI_MAX_RANK];
  /**
   * product(shape) / block elements x block bytes (the dtype row's); the
   * runtime checks this.
   */
  uint64_t bytes;
  /**
   * The schema-6 graph object this tensor belongs to ("target.embedding",
   * "target.decoder_stack", ...), for diagnostics; may be NULL.
   */
  const char *graph_object;
  /** SGC_ABI_FILL_*: what --load-format=dummy puts here. */
  uint32_t fill;
  /** Zero in 2.0. */
  uint64_t reserved;
} sgc_abi_tensor_t;

/*===----------------------------------------------------------------------===*
 * The KV-cache plan
 *===----------------------------------------------------------------------===*/

/**
 * One decoder layer's cache. The runtime allocates a K buffer and, when
 * has_v_cache is set, a V buffer, each of slots x kv_heads x head_dim
 * elements of dtype, 64-byte aligned and zero-filled at session creation.
 * The element layout inside a buffer is the compiled code's choice; the
 * runtime never reads or writes cache contents.
 */
typedef struct sgc_abi_kv_layer_t {
  /** SGC_ABI_KV_FULL or SGC_ABI_KV_RING. */
  uint32_t kind;
  /** SGC_ABI_DTYPE_* of the cached elements. */
  uint32_t dtype;
  /**
   * Positions held: FULL layers hold the context length; RING layers hold
   * the attention window (slot = position mod slots).
   */
  int64_t slots;
  /** Key/value heads stored per position. */
  int64_t kv_heads;
  /** Elements per head. */
  int64_t head_dim;
  /** 1 when V is derived from the K projection (gemma-4 full layers). */
  uint32_t v_from_k;
  /**
   * 1 when the layer has its own V buffer; 0 when the compiled code keeps V
   * in (or recomputes it from) the K buffer, and no step names the V buffer.
   */
  uint32_t has_v_cache;
  /**
   * Cache bytes per slot, K and V together:
   * kv_heads x head_dim x dtype size x (1 + has_v_cache). The runtime checks
   * this and reports slots x bytes_per_token as the layer's cache size.
   */
  uint64_t bytes_per_token;
  /** Zero in 2.0. */
  uint64_t reserved;
} sgc_abi_kv_layer_t;

/*===----------------------------------------------------------------------===*
 * The plan: phases, steps and their operands
 *===----------------------------------------------------------------------===*/

/** What a step operand refers to (sgc_abi_operand_t.kind). */
enum {
  /** The call's token ids: int32 [n_tokens]. */
  SGC_ABI_OPERAND_TOKENS = 0,
  /** The call's start position, an int64 passed by value; in a
      DECODE_BATCH phase (2.7), the position of the sequence on row
      |offset| of the call. */
  SGC_ABI_OPERAND_POSITION = 1,
  /** Manifest tensor |index|, with the manifest's shape. */
  SGC_ABI_OPERAND_WEIGHT = 2,
  /** Layer |index|'s K buffer: [slots, kv_heads, head_dim]; in a
      DECODE_BATCH phase (2.7), that of the sequence on row |offset| of the
      call (V_CACHE the same). */
  SGC_ABI_OPERAND_K_CACHE = 3,
  /** Layer |index|'s V buffer: [slots, kv_heads, head_dim]. */
  SGC_ABI_OPERAND_V_CACHE = 4,
  /** Workspace bytes at |offset| with |dtype|, |rank| and |shape|. */
  SGC_ABI_OPERAND_WORKSPACE = 5,
  /** (2.3, ENCODE_IMAGE) the image's patches, F32 [patches, values per
      patch] as |dtype|, |rank| and |shape| say (the phase's max_tokens is
      the patch count). */
  SGC_ABI_OPERAND_PIXELS = 6,
  /** (2.3, ENCODE_IMAGE) each patch's (column, row), I32 [patches, 2];
      (-1, -1) marks a padding patch. */
  SGC_ABI_OPERAND_PATCH_POSITIONS = 7,
  /** (2.3, PREFILL of a model with an image component) per prompt row of
      the call, the soft token that replaces it: F32 [n_tokens, hidden]
      (rows of text rows are ignored). */
  SGC_ABI_OPERAND_IMAGE_EMBEDS = 8,
  /** (2.3, PREFILL) per prompt row, its image block (0, 1, ...: one per
      image), -1 on text rows: I32 [n_tokens]. A call never splits a
      block. */
  SGC_ABI_OPERAND_IMAGE_BLOCKS = 9,
  SGC_ABI_OPERAND_KIND_COUNT = 10
};

/** A dimension of a workspace operand that is the call's token count. */
#define SGC_ABI_DIM_TOKENS (-1)

/** Largest rank of a workspace operand. */
#define SGC_ABI_MAX_OPERAND_RANK 4

/** One operand of a step. */
typedef struct sgc_abi_operand_t {
  /** SGC_ABI_OPERAND_*. */
  uint32_t kind;
  /** WEIGHT: manifest index; K_CACHE / V_CACHE: layer; else 0. */
  uint32_t index;
  /** WORKSPACE: byte offset into the workspace (64-byte aligned); the row
      of a DECODE_BATCH phase's POSITION / K_CACHE / V_CACHE (2.7); else
      0. */
  uint64_t offset;
  /** WORKSPACE: SGC_ABI_DTYPE_* of the elements; else 0. */
  uint32_t dtype;
  /** WORKSPACE: number of dimensions (1..SGC_ABI_MAX_OPERAND_RANK). */
  uint32_t rank;
  /** WORKSPACE: dimensions, SGC_ABI_DIM_TOKENS for the token count. */
  int64_t shape[SGC_ABI_MAX_OPERAND_RANK];
} sgc_abi_operand_t;

/** One step: a function of the variant applied to operands. */
typedef struct sgc_abi_step_t {
  /** CPU: index into the variant's functions; CUDA: into its kernels. */
  uint32_t function;
  /** The step's operands: operands[first_operand, +num_operands). */
  uint32_t first_operand;
  uint32_t num_operands;
  /** The decoder layer the step belongs to, or -1 (for messages). */
  int32_t layer;
  /** CUDA launch geometry; zero on the CPU. */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dynamic_shared_bytes;
  /** SGC_ABI_STEP_* bits (2.1; zero in 2.0 tables, where the field was
      reserved). A runtime ignores the bits it does not know. */
  uint32_t flags;
} sgc_abi_step_t;

/** sgc_abi_step_t.flags: each row of the step's token-dimension outputs
    depends only on the same row of its inputs, so a runtime may run it on
    the last row alone (a view of one row at the same offset) when only the
    last position's logits are asked for. */
#define SGC_ABI_STEP_ROWWISE 1u

/** sgc_abi_step_t.flags (2.2), CUDA steps: grid[0] (GRID_TOKENS_X) or
    grid[1] (GRID_TOKENS_Y) is one block per token of the most a call takes;
    a runtime may launch the call's token count instead (the blocks past it
    do nothing). */
#define SGC_ABI_STEP_GRID_TOKENS_X 2u
#define SGC_ABI_STEP_GRID_TOKENS_Y 4u

/** Entry points (sgc_abi_phase_t.kind). */
enum {
  /** Prompt tokens [1, max_tokens] at positions pos0.. (reads the caches of
     positions < pos0, writes the new K/V). */
  SGC_ABI_PHASE_PREFILL = 0,
  /** One token at position pos. */
  SGC_ABI_PHASE_DECODE = 1,
  /** (2.3) The vision tower on one image's patches (PIXELS and
      PATCH_POSITIONS operands); its |logits| operand holds the image's
      soft tokens instead, [soft tokens, text hidden size]. */
  SGC_ABI_PHASE_ENCODE_IMAGE = 2,
  /** (2.7) One token for each of max_tokens sequences at once (a batched
      decode step), each at its own position and with its own caches
      (POSITION, K_CACHE and V_CACHE operands name their row in |offset|).
      Each row's logits are bit-identical to a DECODE call's for the same
      sequence. Appears once per compiled batch size. */
  SGC_ABI_PHASE_DECODE_BATCH = 3
};

/** One entry point: the steps that compute it and where its logits are. */
typedef struct sgc_abi_phase_t {
  /** SGC_ABI_PHASE_*; each kind appears at most once, but DECODE_BATCH
      once per max_tokens. */
  uint32_t kind;
  /** The phase's steps: steps[first_step, +num_steps), run in order. */
  uint32_t first_step;
  uint32_t num_steps;
  uint32_t reserved;
  /** Most tokens one call takes (1 for decode). */
  int64_t max_tokens;
  /**
   * The WORKSPACE operand that holds the logits after the last step:
   * [n_tokens, vocab_size] of dtype BF16 or F32, one row per position.
   */
  sgc_abi_operand_t logits;
} sgc_abi_phase_t;

/*===----------------------------------------------------------------------===*
 * Variants: the compiled code
 *===----------------------------------------------------------------------===*/

/**
 * A memref descriptor as MLIR's C interface reads it, for rank r: allocated
 * and aligned pointer, offset (elements), then sizes[r] and strides[r]
 * packed into sizes_strides (sizes at [0, r), strides at [r, 2r)).
 */
typedef struct sgc_abi_memref_t {
  const void *allocated;
  const void *aligned;
  int64_t offset;
  int64_t sizes_strides[2 * SGC_ABI_MAX_RANK];
} sgc_abi_memref_t;

/** Work function handed to parallel_for: processes indices [begin, end). */
typedef void (*sgc_abi_range_fn_t)(void *fn_ctx, int64_t begin, int64_t end);

/**
 * The runtime's thread pool, as seen by compiled code. Splits [0, n) into
 * disjoint contiguous ranges, calls fn(fn_ctx, begin, end) for each, on the
 * runtime's threads including the calling one, and returns when every range
 * is done (all writes made by fn are then visible to the caller). n <= 0
 * returns at once. fn must be safe to run concurrently on disjoint ranges.
 * A nested call (from inside fn) runs its whole range on the calling thread.
 * |runtime_state| must be the exec context's runtime_state.
 */
typedef void (*sgc_abi_parallel_for_fn_t)(void *runtime_state, int64_t n,
                                          sgc_abi_range_fn_t fn, void *fn_ctx);

/**
 * What a CPU function sees of the runtime while it runs a step. Built by the
 * runtime once per session, read-only for compiled code.
 */
typedef struct sgc_abi_cpu_exec_t {
  /** sizeof(sgc_abi_cpu_exec_t) as the runtime knows it. */
  uint32_t struct_size;
  /** Threads parallel_for may use (>= 1), including the caller. */
  int32_t num_threads;
  /** The CPU feature bits (SGC_ABI_CPU_*) the runtime detected. */
  uint64_t cpu_features;
  /** Opaque runtime pointer; pass it to parallel_for. */
  void *runtime_state;
  /** The runtime's thread pool (never NULL). */
  sgc_abi_parallel_for_fn_t parallel_for;
} sgc_abi_cpu_exec_t;

/**
 * A compiled CPU function: runs one step. operands[i] is the step's operand
 * i: a pointer to an sgc_abi_memref_t for tokens, weights, caches and
 * workspace buffers, a pointer to an int64_t for the position.
 */
typedef void (*sgc_abi_cpu_fn_t)(const sgc_abi_cpu_exec_t *exec,
                                 void *const *operands);

/**
 * The per-call scalars of a CUDA phase (2.2), in device memory. The runtime
 * writes it before each call of a phase (one host-to-device copy), so the
 * launches, and a CUDA graph captured from them, are the same for every
 * token. Kernels only read it.
 */
typedef struct sgc_abi_step_state_t {
  /** The call's start position (pos0). */
  int64_t position;
  /** Tokens in this call: 1 for decode, 1..max_tokens for prefill. */
  int64_t num_tokens;
  /**
   * Slots of a FULL layer's cache as the session allocated it (the session's
   * context, <= the model's context_length); RING layers keep their plan's
   * slots. Informational: no kernel reads it. The kernels' full-cache
   * parameters are typed at the model's context_length; they touch only the
   * slots of positions below position + num_tokens, which the session keeps
   * within its context (it refuses a call past it), so the allocation holds
   * them without a bound in the kernels (the emulator checks each access
   * against the allocated bytes).
   */
  int64_t full_slots;
  /**
   * (2.4; zero before) The first of the call's rows whose logits the
   * runtime reads: 0 when it reads every row, num_tokens - 1 when only the
   * last. A chunk's LM head skips the blocks of rows below it (their logits
   * are then not written).
   */
  int64_t first_logits_row;
} sgc_abi_step_state_t;

/**
 * A kernel of a CUDA variant's fatbin. Its parameters are the step's
 * operands, in order, each a 64-bit device address: TOKENS the call's int32
 * token ids, POSITION the phase's sgc_abi_step_state_t, WEIGHT / K_CACHE /
 * V_CACHE the buffer, WORKSPACE the workspace base plus the offset. So
 * num_params equals the step's num_operands and every parameter is 8 bytes.
 */
typedef struct sgc_abi_cuda_kernel_t {
  /** The kernel's symbol in the fatbin. */
  const char *name;
  /** Parameters it takes, one per step operand. */
  uint32_t num_params;
  /** SGC_ABI_CUDA_KERNEL_* bits (2.5; zero in older tables, where the
      field was reserved). A runtime ignores the bits it does not know. */
  uint32_t flags;
} sgc_abi_cuda_kernel_t;

/** sgc_abi_cuda_kernel_t.flags (2.5): every thread of the kernel executes
    griddepcontrol.wait before anything else (no read of what an earlier
    kernel wrote comes before the earlier kernels have finished), so a
    runtime may launch it with programmatic stream serialization: its
    blocks may become resident while the previous kernel finishes. */
#define SGC_ABI_CUDA_KERNEL_WAITS 1u

/** Shared memory of one block on the chips sgc builds for (sm_90, CUDA C
    Programming Guide, compute capability 9.0): what a kernel may declare
    statically, which is also all a block has without an opt-in; and the
    most static plus dynamic bytes with the opt-in, which the runtime makes
    for every kernel launched with dynamic shared memory. The compiler keeps
    each kernel within them (compiler/Conversion/SGToGPU/CudaChip.h), the
    emulator refuses a launch over the second. */
#define SGC_ABI_CUDA_STATIC_SHARED_BYTES (48u * 1024u)
#define SGC_ABI_CUDA_MAX_SHARED_BYTES (227u * 1024u)

/*===----------------------------------------------------------------------===*
 * The CUDA emulator's view of a kernel (2.2, CUDA.md section 0.5)
 *===----------------------------------------------------------------------===*/

/** sgc_abi_emu_ops_t.shuffle modes (gpu.shuffle). */
enum {
  SGC_ABI_SHUFFLE_XOR = 0,
  SGC_ABI_SHUFFLE_UP = 1,
  SGC_ABI_SHUFFLE_DOWN = 2,
  SGC_ABI_SHUFFLE_IDX = 3
};

/**
 * What a CUDA kernel compiled for the host calls to be one GPU thread. The
 * runtime's emulator implements it; the calling thread (a fiber) is
 * implicit. `site` numbers the operation in the kernel (an index into
 * sgc_abi_cuda_emu_t.sites) for messages and for matching collective calls:
 * every thread that takes part in a barrier, shuffle, mma or ldmatrix must
 * reach the same site. Calls that find a bug (a divergent barrier, an access
 * out of bounds) end the launch with an error and do not return.
 */
typedef struct sgc_abi_emu_ops_t {
  /** sizeof(sgc_abi_emu_ops_t) as the runtime knows it. */
  uint32_t struct_size;
  uint32_t reserved;
  /** gpu.thread_id, gpu.block_id, gpu.block_dim, gpu.grid_dim; dim 0..2. */
  uint32_t (*thread_id)(uint32_t dim);
  uint32_t (*block_id)(uint32_t dim);
  uint32_t (*block_dim)(uint32_t dim);
  uint32_t (*grid_dim)(uint32_t dim);
  /** gpu.barrier: every live thread of the block must reach this site. */
  void (*barrier)(uint32_t site);
  /**
   * gpu.shuffle of 32 bits, |width| a power of two <= 32, SGC_ABI_SHUFFLE_*,
   * as MLIR's gpu-to-nvvm lowers it: shfl.sync with member mask lanes
   * 0..width-1 (no segments) and clamp width - 1 (up: 32 - width); every
   * member lane calls it at the same site, and only they do. Returns the
   * source lane's value, or the caller's own with *valid = 0 when the source
   * is out of range (PTX shfl.sync).
   */
  uint32_t (*shuffle)(uint32_t value, uint32_t offset, uint32_t width,
                      uint32_t mode, uint32_t site, uint8_t *valid);
  /** The block's shared memory: the static part, then the dynamic bytes. */
  void *(*shared_memory)(void);
  /** An index outside the memref it indexes: |index| along a dimension of
      |size| elements. Does not return. */
  void (*out_of_bounds)(uint32_t site, int64_t index, int64_t size);
  /**
   * mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 for the whole warp:
   * each lane passes its own fragments in PTX's lane mapping (a: 4 registers
   * of bf16x2, b: 2, c and d: 4 floats) and gets its own d.
   */
  void (*mma_m16n8k16_bf16)(const uint32_t *a, const uint32_t *b,
                            const float *c, float *d, uint32_t site);
  /** ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16: lane i passes
      the row address it supplies; out receives its num registers. */
  void (*ldmatrix)(const void *row_address, uint32_t num, uint32_t trans,
                   uint32_t *out, uint32_t site);
  /** Atomics on global or shared memory; return the old value. */
  float (*atomic_add_f32)(float *address, float value, uint32_t site);
  uint32_t (*atomic_cas_u32)(uint32_t *address, uint32_t compare,
                             uint32_t value, uint32_t site);
  /** [address, address + bytes) must lie inside one buffer of the launch
      (an operand or the block's shared memory). Does not return if not. */
  void (*check_access)(const void *address, uint64_t bytes,
                       uint32_t is_write, uint32_t site);
} sgc_abi_emu_ops_t;

/**
 * One kernel of the CUDA variant compiled for the host: runs ONE GPU thread
 * (the emulator calls it once per thread, each on its own fiber). |params|
 * is laid out as for cuLaunchKernel: params[i] points at parameter i's
 * 8-byte value (a host address standing for a device one).
 */
typedef void (*sgc_abi_emu_kernel_fn_t)(const sgc_abi_emu_ops_t *ops,
                                        void *const *params);

/** The CUDA variant's kernels compiled for the host (sgc_model_v2_t). */
typedef struct sgc_abi_cuda_emu_t {
  /** sizeof(sgc_abi_cuda_emu_t) as the compiler knew it. */
  uint32_t struct_size;
  /** Entries in kernels: the emulated variant's num_functions. */
  uint32_t num_kernels;
  /** Name of the CUDA variant these kernels are (e.g. "sm_90a"). */
  const char *variant;
  /** kernels[i] is that variant's kernels[i]. */
  const sgc_abi_emu_kernel_fn_t *kernels;
  /** Bytes of static shared memory kernels[i] takes from the front of
      shared_memory() (the launch's dynamic bytes come after). */
  const uint32_t *static_shared_bytes;
  /** One line per site: "kernel: op at file:line". */
  uint32_t num_sites;
  uint32_t reserved;
  const char *const *sites;
  /* 2.4 */
  /** Bytes of dynamic shared memory kernels[i] uses (after its static
      bytes, on the GPU as in the emulator): every step launching it must
      ask for at least as many. NULL in older tables. */
  const uint32_t *dynamic_shared_bytes;
} sgc_abi_cuda_emu_t;

/** sizeof(sgc_abi_cuda_emu_t) in ABI 2.2 and 2.3 (no dynamic_shared_bytes). */
#define SGC_ABI_CUDA_EMU_V2_2_SIZE \
  offsetof(sgc_abi_cuda_emu_t, dynamic_shared_bytes)

/**
 * One compiled variant: CPU code for a feature set (e.g. "znver4" and the
 * "x86-64-v3" baseline), or a CUDA fatbin. Variants are listed best first;
 * the runtime takes the first of the device's kind whose requirements are
 * met, unless the user names one.
 */
typedef struct sgc_abi_variant_t {
  /** Short name shown to users, e.g. "x86-64-v3" or "sm_90a". */
  const char *name;
  /** SGC_ABI_DEVICE_*. */
  uint32_t device;
  /** CPU: number of entries in functions; CUDA: in kernels. */
  uint32_t num_functions;
  /** CPU: SGC_ABI_CPU_* bits the code needs; CUDA: 0. */
  uint64_t required_cpu_features;
  /** CPU: the functions steps name (never NULL entries); CUDA: NULL. */
  const sgc_abi_cpu_fn_t *functions;
  /** CUDA: the kernels steps name, and the fatbin that holds them. */
  const sgc_abi_cuda_kernel_t *kernels;
  const void *fatbin;
  uint64_t fatbin_bytes;
} sgc_abi_variant_t;

/*===----------------------------------------------------------------------===*
 * The image component (2.3)
 *===----------------------------------------------------------------------===*/

/**
 * What the runtime needs to feed the ENCODE_IMAGE phase and to merge its
 * soft tokens into a prompt. The phase's PIXELS operand gives the patch
 * count and the values per patch; its output [soft_tokens, hidden] the
 * rest.
 */
typedef struct sgc_abi_image_t {
  /** The placeholder token each soft token replaces, and the tokens that
      open and close an image block in the prompt. */
  int32_t image_token_id;
  int32_t boi_token_id;
  int32_t eoi_token_id;
  /** Side of a square patch, in pixels. */
  int32_t patch_size;
  /** Gemma 3: the square side every image is resized to; 0 for an
      aspect-preserving family (Gemma 4). */
  int32_t image_size;
  /** Patches pooled into one soft token, per side. */
  int32_t pooling_kernel;
  /** Soft tokens per image: exact (Gemma 3) or the budget (Gemma 4). */
  int64_t soft_tokens;
  /** Zero in 2.3. */
  uint64_t reserved;
} sgc_abi_image_t;

/*===----------------------------------------------------------------------===*
 * The model table, ABI major 2
 *===----------------------------------------------------------------------===*/

typedef struct sgc_model_v2_t {
  /** magic SGC_ABI_MAGIC, major 2, minor, sizeof(sgc_model_v2_t). */
  sgc_abi_header_t header;

  /** Model name from the graph, e.g. "gemma-3-12b-it". Never NULL. */
  const char *model_id;
  /** Target the compiler was given: "cpu", "cuda:sm_90a", ... */
  const char *target;
  /** Model family: "gemma3", "gemma4", or another name. Never NULL. */
  const char *family;
  /** Who built this, e.g. "sgc 0.1.0 (LLVM 22.1.8)"; may be NULL. */
  const char *producer;
  /** SGC_ABI_DEVICE_* of the variants. */
  uint32_t device;
  uint32_t reserved0;

  /** Logits per position. */
  int64_t vocab_size;
  /** Most positions a sequence may use (prompt + generated). */
  int64_t context_length;
  /** Largest n_tokens a prefill call accepts (>= 1). */
  int64_t max_prefill_chunk;
  /** Special tokens; -1 where unknown. */
  int32_t bos_token_id;
  int32_t eos_token_id;
  int32_t pad_token_id;
  /** Further tokens that end generation (e.g. <end_of_turn>); may be 0. */
  uint32_t num_stop_tokens;
  const int32_t *stop_tokens;

  /** The manifest: every tensor the model binds, in weight-table order. */
  uint32_t num_tensors;
  uint32_t reserved1;
  const sgc_abi_tensor_t *tensors;

  /** The KV-cache plan, one entry per decoder layer, in layer order. */
  uint32_t num_layers;
  uint32_t reserved2;
  const sgc_abi_kv_layer_t *kv_layers;

  /** Scratch bytes the phases need (the largest over all of them). The
      runtime zeroes the workspace when it allocates it: CUDA plans keep
      counters there that their kernels leave at zero (the split-K
      attention's, past every phase's buffers). */
  uint64_t workspace_bytes;

  /** The plan, shared by every variant. */
  uint32_t num_phases;
  uint32_t num_steps;
  uint32_t num_operands;
  uint32_t reserved3;
  const sgc_abi_phase_t *phases;
  const sgc_abi_step_t *steps;
  const sgc_abi_operand_t *operands;

  /** The code, best variant first (at least one). */
  uint32_t num_variants;
  uint32_t reserved4;
  const sgc_abi_variant_t *variants;

  /* 2.2 */
  /** A CUDA model's kernels for the host emulator (--device cuda-emu), or
      NULL. */
  const sgc_abi_cuda_emu_t *cuda_emu;

  /* 2.3 */
  /** The image component when the plan has an ENCODE_IMAGE phase, else
      NULL. */
  const sgc_abi_image_t *image;

  /* 2.4 */
  /**
   * Per phase (parallel to |phases|), the WORKSPACE operand that holds the
   * argmax of the phase's last logits row after its last step: I32 [1], the
   * id of the largest logit, where NaN never wins and ties go to the lowest
   * id (0 for a row of NaN only). A phase without one has an operand of
   * rank 0. NULL when no phase has one. Lets a greedy decode copy back one
   * token instead of the row (a CUDA plan's LM head computes it).
   */
  const sgc_abi_operand_t *phase_argmax;
} sgc_model_v2_t;

/** sizeof(sgc_model_v2_t) in ABI 2.0 and 2.1, which a runtime still reads
    (the 2.2 fields are then absent: treat them as zero). */
#define SGC_ABI_MODEL_V2_1_SIZE offsetof(sgc_model_v2_t, cuda_emu)
/** sizeof(sgc_model_v2_t) in ABI 2.2, then in 2.3 (later fields: zero). */
#define SGC_ABI_MODEL_V2_2_SIZE offsetof(sgc_model_v2_t, image)
#define SGC_ABI_MODEL_V2_3_SIZE offsetof(sgc_model_v2_t, phase_argmax)

/**
 * What the compiler emits, in the generated C file:
 *   static const sgc_model_v2_t model = {
 *       {SGC_ABI_MAGIC, SGC_ABI_VERSION_MAJOR, SGC_ABI_VERSION_MINOR,
 *        sizeof(sgc_model_v2_t)}, ...};
 *   SGC_ABI_EXPORT const sgc_abi_header_t *sgc_model_query(uint32_t major,
 *       uint32_t minor) { (void)major; (void)minor; return &model.header; }
 */
#if defined(_WIN32)
#define SGC_ABI_EXPORT __declspec(dllexport)
#else
#define SGC_ABI_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SGC_ABI_H */
