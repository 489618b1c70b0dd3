/*
 * fake_cuda.c - a stand-in for libcuda.so.1 that records what the runtime
 * asks of the driver, so the CUDA executor is tested on machines without a
 * GPU. It implements the entry points runtime/src/cuda/cuda_driver.cc
 * resolves, with "device memory" in host memory (a device address is the
 * host address), and checks what a real driver would refuse: copies and
 * launches naming memory outside an allocation, static + dynamic shared
 * memory over 48 KiB without the opt-in, copies or synchronization inside a
 * stream capture, kernels and parameters the module does not have,
 * launch attributes other than programmatic stream serialization (each
 * cuLaunchKernelEx line says pdl=1 when a launch asks for it).
 *
 * Build-time macros: FAKE_CUDA_INIT_RESULT is what cuInit returns (100 =
 * CUDA_ERROR_NO_DEVICE); FAKE_CUDA_COUNT the device count.
 *
 * Environment:
 *   FAKE_CUDA_LOG=PATH        append one line per call to PATH:
 *                             "NAME key=value ..." (see each function)
 *   FAKE_CUDA_FAIL=NAME=CODE  the first call of NAME (the exported symbol,
 *                             e.g. cuMemAlloc_v2) returns CODE;
 *                             NAME#K=CODE: the K-th call (1-based)
 *   FAKE_CUDA_FREE_BYTES=N    device memory free and total (default 1 GiB)
 *   FAKE_CUDA_DRIVER_VERSION=V  what cuDriverGetVersion says (default 12080)
 *   FAKE_CUDA_ANY_IMAGE=1     take any other image too (a real fatbin of a
 *                             compiled model): every kernel name resolves,
 *                             its parameters unknown (cuFuncGetParamInfo:
 *                             CUDA_ERROR_NOT_SUPPORTED), launches logged
 *                             without their values, nothing run
 *   FAKE_CUDA_LAUNCH_US=T     every launch run (directly or in a graph
 *                             replay) takes T microseconds of the fake's
 *                             clock (default 10); events record that clock,
 *                             so cuEventElapsedTime between the events
 *                             around one launch gives T ms / 1000
 *
 * Modules are the fake fatbins of test/unit/fake_cuda_model.c: text
 * starting "sgc-fake-fatbin", then one line per kernel:
 *   kernel NAME NUM_PARAMS [static BYTES] [write OUT DTYPE COLS STATE]
 * "static": the kernel's static shared memory (default 0). As a real
 * driver, a launch may bring at most 48 KiB less that of dynamic shared
 * memory, or what cuFuncSetAttribute opted in to.
 * With "write", running the kernel fills parameter OUT's buffer: rows
 * r < num_tokens of the step state at parameter STATE, COLS columns, f32
 * c + 100 (position + r) or bf16 0.5 c + 16 r. Every parameter is taken to
 * be an 8-byte device address (the ABI's convention) and checked.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_CUDA_INIT_RESULT
#define FAKE_CUDA_INIT_RESULT 0
#endif
#ifndef FAKE_CUDA_COUNT
#define FAKE_CUDA_COUNT 0
#endif

#define EXPORT __attribute__((visibility("default")))

enum {
  OK = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NO_DEVICE = 100,
  INVALID_DEVICE = 101,
  INVALID_IMAGE = 200,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
  ILLEGAL_ADDRESS = 700,
  NOT_SUPPORTED = 801,
  CAPTURE_UNSUPPORTED = 900,
  UNKNOWN = 999
};

/*===--- the log and injected failures ----------------------------------===*/

static void say(const char *fmt, ...) {
  const char *path = getenv("FAKE_CUDA_LOG");
  FILE *f;
  va_list ap;
  if (!path || !*path)
    return;
  f = fopen(path, "a");
  if (!f)
    return;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

#define MAX_NAMES 64
static const char *call_names[MAX_NAMES];
static int call_counts[MAX_NAMES];

/* Counts a call of |name|; returns the code FAKE_CUDA_FAIL injects for this
   call, or 0. */
static int injected(const char *name) {
  const char *spec = getenv("FAKE_CUDA_FAIL");
  size_t len = strlen(name);
  int i, count = 0, nth = 1;
  for (i = 0; i < MAX_NAMES; ++i) {
    if (!call_names[i])
      call_names[i] = name;
    if (strcmp(call_names[i], name) == 0) {
      count = ++call_counts[i];
      break;
    }
  }
  if (!spec || strncmp(spec, name, len) != 0)
    return 0;
  spec += len;
  if (*spec == '#')
    nth = (int)strtol(spec + 1, (char **)&spec, 10);
  if (*spec != '=' || count != nth)
    return 0;
  return (int)strtol(spec + 1, NULL, 10);
}

#define ENTER(name)                                                            \
  do {                                                                         \
    int inj_ = injected(name);                                                 \
    if (inj_) {                                                                \
      say("%s -> %d (injected)", name, inj_);                                  \
      return inj_;                                                             \
    }                                                                          \
  } while (0)

/* Logs a refusal and returns |code|. */
static int refuse(const char *name, int code, const char *why) {
  say("%s -> %d (%s)", name, code, why);
  return code;
}

/*===--- memory ----------------------------------------------------------===*/

typedef struct allocation {
  unsigned char *p;
  size_t n;
  int pinned;
} allocation;

#define MAX_ALLOCATIONS 256
static allocation allocations[MAX_ALLOCATIONS];
static size_t device_used;

static size_t free_bytes(void) {
  const char *v = getenv("FAKE_CUDA_FREE_BYTES");
  return v && *v ? (size_t)strtoull(v, NULL, 10) : (size_t)1 << 30;
}

/* The allocation [p, p + n) lies in, or NULL. */
static allocation *find(uintptr_t p, size_t n, int pinned) {
  int i;
  for (i = 0; i < MAX_ALLOCATIONS; ++i) {
    allocation *a = &allocations[i];
    uintptr_t b = (uintptr_t)a->p;
    if (a->p && a->pinned == pinned && p >= b && p - b <= a->n &&
        n <= a->n - (p - b))
      return a;
  }
  return NULL;
}

static allocation *add(size_t n, int pinned) {
  int i;
  for (i = 0; i < MAX_ALLOCATIONS; ++i)
    if (!allocations[i].p) {
      allocations[i].p = (unsigned char *)malloc(n ? n : 1);
      allocations[i].n = n;
      allocations[i].pinned = pinned;
      /* Device memory is not zeroed by cuMemAlloc. */
      memset(allocations[i].p, 0xAB, n);
      return &allocations[i];
    }
  return NULL;
}

static int release(uintptr_t p, int pinned) {
  int i;
  for (i = 0; i < MAX_ALLOCATIONS; ++i)
    if (allocations[i].p && (uintptr_t)allocations[i].p == p &&
        allocations[i].pinned == pinned) {
      if (!pinned)
        device_used -= allocations[i].n;
      free(allocations[i].p);
      allocations[i].p = NULL;
      return OK;
    }
  return INVALID_VALUE;
}

/*===--- modules, functions, launches, graphs ----------------------------===*/

typedef struct function {
  char name[128];
  unsigned params;
  int unknown; /* from an image the fake cannot read: no parameter list */
  int write; /* has a write pattern */
  unsigned out, cols, state;
  int bf16;
  unsigned static_shared;
  int max_dynamic_shared; /* -1: not opted in */
} function;

#define MAX_FUNCTIONS 128
typedef struct module {
  function functions[MAX_FUNCTIONS];
  int count;
  int any; /* FAKE_CUDA_ANY_IMAGE: names resolve on demand */
} module;

#define MAX_PARAMS 32
typedef struct launch {
  function *fn;
  uint64_t values[MAX_PARAMS];
} launch;

#define MAX_LAUNCHES 64
typedef struct graph {
  launch launches[MAX_LAUNCHES];
  int count;
} graph;

static int capturing;
static graph *captured;
/* The fake GPU's clock in microseconds: each launch run advances it. */
static double clock_us;

static double launch_us(void) {
  const char *v = getenv("FAKE_CUDA_LAUNCH_US");
  return v && *v ? strtod(v, NULL) : 10.0;
}
static int sticky_error; /* what the next synchronization reports */
static int context_token, stream_token;

/* Runs |l|: its write pattern, if any. */
static void run(const launch *l) {
  const function *f = l->fn;
  int64_t state[2];
  int64_t r;
  unsigned c;
  size_t elem, bytes;
  unsigned char *out;
  clock_us += launch_us();
  if (!f->write)
    return;
  memcpy(state, (const void *)(uintptr_t)l->values[f->state], sizeof state);
  elem = f->bf16 ? 2 : 4;
  bytes = (size_t)state[1] * f->cols * elem;
  out = (unsigned char *)(uintptr_t)l->values[f->out];
  if (!find((uintptr_t)out, bytes, 0)) {
    say("kernel %s -> %d (writes outside its buffer)", f->name,
        ILLEGAL_ADDRESS);
    sticky_error = ILLEGAL_ADDRESS;
    return;
  }
  for (r = 0; r < state[1]; ++r)
    for (c = 0; c < f->cols; ++c) {
      if (f->bf16) {
        float v = 0.5f * (float)c + 16.0f * (float)r;
        uint32_t u;
        uint16_t h;
        memcpy(&u, &v, sizeof u);
        h = (uint16_t)(u >> 16); /* exact: v has few significant bits */
        memcpy(out + ((size_t)r * f->cols + c) * 2, &h, 2);
      } else {
        float v = (float)c + 100.0f * (float)(state[0] + r);
        memcpy(out + ((size_t)r * f->cols + c) * 4, &v, 4);
      }
    }
}

/* CUlaunchAttribute and CUlaunchConfig (cuda.h). */
typedef struct launch_attribute {
  unsigned id;
  unsigned pad;
  union {
    int programmatic; /* PROGRAMMATIC_STREAM_SERIALIZATION's value */
    char bytes[64];
  } value;
} launch_attribute;
typedef struct launch_config {
  unsigned grid[3], block[3];
  unsigned shared;
  void *stream;
  launch_attribute *attrs;
  unsigned num_attrs;
} launch_config;

/*===--- the entry points ------------------------------------------------===*/

EXPORT int cuInit(unsigned int flags) {
  (void)flags;
  ENTER("cuInit");
  say("cuInit -> %d", FAKE_CUDA_INIT_RESULT);
  return FAKE_CUDA_INIT_RESULT;
}

EXPORT int cuDriverGetVersion(int *version) {
  const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");
  *version = v ? atoi(v) : 12080;
  return OK;
}

EXPORT int cuGetErrorName(int error, const char **name) {
  switch (error) {
  case OK: *name = "CUDA_SUCCESS"; break;
  case INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
  case OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
  case NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
  case INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
  case INVALID_IMAGE: *name = "CUDA_ERROR_INVALID_IMAGE"; break;
  case INVALID_HANDLE: *name = "CUDA_ERROR_INVALID_HANDLE"; break;
  case NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; break;
  case ILLEGAL_ADDRESS: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
  case NOT_SUPPORTED: *name = "CUDA_ERROR_NOT_SUPPORTED"; break;
  case CAPTURE_UNSUPPORTED:
    *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    break;
  default: *name = "CUDA_ERROR_UNKNOWN"; break;
  }
  return OK;
}

EXPORT int cuDeviceGetCount(int *count) {
  ENTER("cuDeviceGetCount");
  *count = FAKE_CUDA_COUNT;
  return OK;
}

EXPORT int cuDeviceGet(int *device, int ordinal) {
  ENTER("cuDeviceGet");
  if (ordinal < 0 || ordinal >= FAKE_CUDA_COUNT)
    return refuse("cuDeviceGet", INVALID_DEVICE, "no such ordinal");
  *device = ordinal;
  return OK;
}

EXPORT int cuDeviceGetName(char *name, int len, int device) {
  (void)device;
  snprintf(name, (size_t)len, "fake H200");
  return OK;
}

EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int device) {
  ENTER("cuDevicePrimaryCtxRetain");
  say("cuDevicePrimaryCtxRetain device=%d", device);
  *ctx = &context_token;
  return OK;
}

EXPORT int cuDevicePrimaryCtxRelease_v2(int device) {
  say("cuDevicePrimaryCtxRelease_v2 device=%d", device);
  return OK;
}

EXPORT int cuCtxSetCurrent(void *ctx) {
  ENTER("cuCtxSetCurrent");
  return ctx == &context_token ? OK
                               : refuse("cuCtxSetCurrent", INVALID_VALUE,
                                        "not the primary context");
}

EXPORT int cuMemGetInfo_v2(size_t *free_out, size_t *total) {
  ENTER("cuMemGetInfo_v2");
  *total = free_bytes();
  *free_out = *total - device_used;
  return OK;
}

EXPORT int cuModuleLoadData(void **mod, const void *image) {
  const char *text = (const char *)image;
  const char *magic = "sgc-fake-fatbin\n";
  module *m;
  ENTER("cuModuleLoadData");
  if (strncmp(text, magic, strlen(magic)) != 0) {
    const char *any = getenv("FAKE_CUDA_ANY_IMAGE");
    if (!any || strcmp(any, "1") != 0)
      return refuse("cuModuleLoadData", INVALID_IMAGE, "not a fake fatbin");
    m = (module *)calloc(1, sizeof *m);
    m->any = 1;
    say("cuModuleLoadData kernels=any");
    *mod = m;
    return OK;
  }
  m = (module *)calloc(1, sizeof *m);
  text += strlen(magic);
  while (*text && m->count < MAX_FUNCTIONS) {
    function *f = &m->functions[m->count];
    char dtype[8] = "";
    int used = 0;
    const char *eol = strchr(text, '\n');
    if (sscanf(text, "kernel %127s %u%n", f->name, &f->params, &used) < 2) {
      free(m);
      return refuse("cuModuleLoadData", INVALID_IMAGE, "bad kernel line");
    }
    int more = 0;
    f->max_dynamic_shared = -1;
    if (sscanf(text + used, " static %u%n", &f->static_shared, &more) == 1)
      used += more;
    if (sscanf(text + used, " write %u %7s %u %u", &f->out, dtype, &f->cols,
               &f->state) == 4) {
      f->write = 1;
      f->bf16 = strcmp(dtype, "bf16") == 0;
    }
    ++m->count;
    if (!eol)
      break;
    text = eol + 1;
  }
  say("cuModuleLoadData kernels=%d", m->count);
  *mod = m;
  return OK;
}

EXPORT int cuModuleUnload(void *mod) {
  say("cuModuleUnload");
  free(mod);
  return OK;
}

EXPORT int cuModuleGetFunction(void **fn, void *mod, const char *name) {
  module *m = (module *)mod;
  int i;
  ENTER("cuModuleGetFunction");
  for (i = 0; i < m->count; ++i)
    if (strcmp(m->functions[i].name, name) == 0) {
      say("cuModuleGetFunction name=%s", name);
      *fn = &m->functions[i];
      return OK;
    }
  if (m->any && m->count < MAX_FUNCTIONS && strlen(name) < 128) {
    function *f = &m->functions[m->count++];
    strcpy(f->name, name);
    f->unknown = 1;
    f->max_dynamic_shared = -1;
    say("cuModuleGetFunction name=%s", name);
    *fn = f;
    return OK;
  }
  say("cuModuleGetFunction name=%s -> %d", name, NOT_FOUND);
  return NOT_FOUND;
}

EXPORT int cuFuncSetAttribute(void *fn, int attribute, int value) {
  function *f = (function *)fn;
  ENTER("cuFuncSetAttribute");
  say("cuFuncSetAttribute name=%s attribute=%d value=%d", f->name, attribute,
      value);
  if (attribute != 8) /* MAX_DYNAMIC_SHARED_SIZE_BYTES */
    return refuse("cuFuncSetAttribute", INVALID_VALUE, "unexpected attribute");
  if (value < 0 || (long)value + f->static_shared > 227 * 1024)
    return refuse("cuFuncSetAttribute", INVALID_VALUE,
                  "static + dynamic over 227 KiB");
  f->max_dynamic_shared = value;
  return OK;
}

EXPORT int cuFuncGetParamInfo(void *fn, size_t index, size_t *offset,
                              size_t *size) {
  function *f = (function *)fn;
  if (f->unknown)
    return NOT_SUPPORTED;
  if (index >= f->params)
    return INVALID_VALUE;
  *offset = index * 8;
  *size = 8;
  return OK;
}

EXPORT int cuMemAlloc_v2(uint64_t *dptr, size_t bytes) {
  allocation *a;
  ENTER("cuMemAlloc_v2");
  if (bytes == 0)
    return refuse("cuMemAlloc_v2", INVALID_VALUE, "0 bytes");
  if (bytes > free_bytes() - device_used || !(a = add(bytes, 0)))
    return refuse("cuMemAlloc_v2", OUT_OF_MEMORY, "out of fake memory");
  device_used += bytes;
  *dptr = (uint64_t)(uintptr_t)a->p;
  say("cuMemAlloc_v2 bytes=%zu -> 0x%llx", bytes, (unsigned long long)*dptr);
  return OK;
}

EXPORT int cuMemFree_v2(uint64_t dptr) {
  say("cuMemFree_v2 ptr=0x%llx", (unsigned long long)dptr);
  return release((uintptr_t)dptr, 0);
}

EXPORT int cuMemAllocHost_v2(void **p, size_t bytes) {
  allocation *a;
  ENTER("cuMemAllocHost_v2");
  if (!(a = add(bytes, 1)))
    return refuse("cuMemAllocHost_v2", OUT_OF_MEMORY, "out of fake memory");
  say("cuMemAllocHost_v2 bytes=%zu", bytes);
  *p = a->p;
  return OK;
}

EXPORT int cuMemFreeHost(void *p) { return release((uintptr_t)p, 1); }

EXPORT int cuMemsetD8Async(uint64_t dptr, unsigned char value, size_t n,
                           void *stream) {
  (void)stream;
  ENTER("cuMemsetD8Async");
  if (capturing)
    return refuse("cuMemsetD8Async", CAPTURE_UNSUPPORTED, "in a capture");
  if (!find((uintptr_t)dptr, n, 0))
    return refuse("cuMemsetD8Async", INVALID_VALUE, "outside an allocation");
  memset((void *)(uintptr_t)dptr, value, n);
  say("cuMemsetD8Async ptr=0x%llx value=%u bytes=%zu",
      (unsigned long long)dptr, value, n);
  return OK;
}

EXPORT int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n,
                                void *stream) {
  (void)stream;
  ENTER("cuMemcpyHtoDAsync_v2");
  if (capturing)
    return refuse("cuMemcpyHtoDAsync_v2", CAPTURE_UNSUPPORTED, "in a capture");
  if (!find((uintptr_t)dst, n, 0))
    return refuse("cuMemcpyHtoDAsync_v2", INVALID_VALUE,
                  "outside an allocation");
  memcpy((void *)(uintptr_t)dst, src, n);
  say("cuMemcpyHtoDAsync_v2 dst=0x%llx bytes=%zu pinned=%d",
      (unsigned long long)dst, n, find((uintptr_t)src, n, 1) != NULL);
  return OK;
}

EXPORT int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n,
                                void *stream) {
  (void)stream;
  ENTER("cuMemcpyDtoHAsync_v2");
  if (capturing)
    return refuse("cuMemcpyDtoHAsync_v2", CAPTURE_UNSUPPORTED, "in a capture");
  if (!find((uintptr_t)src, n, 0))
    return refuse("cuMemcpyDtoHAsync_v2", INVALID_VALUE,
                  "outside an allocation");
  memcpy(dst, (const void *)(uintptr_t)src, n);
  say("cuMemcpyDtoHAsync_v2 src=0x%llx bytes=%zu pinned=%d",
      (unsigned long long)src, n, find((uintptr_t)dst, n, 1) != NULL);
  return OK;
}

EXPORT int cuStreamCreate(void **stream, unsigned flags) {
  ENTER("cuStreamCreate");
  say("cuStreamCreate flags=%u", flags);
  *stream = &stream_token;
  return OK;
}

EXPORT int cuStreamDestroy_v2(void *stream) {
  (void)stream;
  say("cuStreamDestroy_v2");
  return OK;
}

EXPORT int cuStreamSynchronize(void *stream) {
  int e = sticky_error;
  (void)stream;
  ENTER("cuStreamSynchronize");
  if (capturing)
    return refuse("cuStreamSynchronize", CAPTURE_UNSUPPORTED, "in a capture");
  sticky_error = OK;
  return e;
}

EXPORT int cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)stream;
  ENTER("cuStreamBeginCapture_v2");
  if (capturing)
    return refuse("cuStreamBeginCapture_v2", INVALID_VALUE, "capturing");
  say("cuStreamBeginCapture_v2 mode=%d", mode);
  capturing = 1;
  captured = (graph *)calloc(1, sizeof *captured);
  return OK;
}

EXPORT int cuStreamEndCapture(void *stream, void **out) {
  (void)stream;
  if (!capturing)
    return refuse("cuStreamEndCapture", INVALID_VALUE, "not capturing");
  capturing = 0;
  say("cuStreamEndCapture launches=%d", captured->count);
  *out = captured;
  captured = NULL;
  return OK;
}

EXPORT int cuGraphInstantiateWithFlags(void **exec, void *g,
                                       unsigned long long flags) {
  graph *copy;
  (void)flags;
  ENTER("cuGraphInstantiateWithFlags");
  copy = (graph *)malloc(sizeof *copy);
  memcpy(copy, g, sizeof *copy);
  say("cuGraphInstantiateWithFlags launches=%d", copy->count);
  *exec = copy;
  return OK;
}

EXPORT int cuGraphLaunch(void *exec, void *stream) {
  graph *g = (graph *)exec;
  int i;
  (void)stream;
  ENTER("cuGraphLaunch");
  if (capturing)
    return refuse("cuGraphLaunch", CAPTURE_UNSUPPORTED, "in a capture");
  say("cuGraphLaunch launches=%d", g->count);
  for (i = 0; i < g->count; ++i)
    run(&g->launches[i]);
  return OK;
}

EXPORT int cuGraphExecDestroy(void *exec) {
  say("cuGraphExecDestroy");
  free(exec);
  return OK;
}

EXPORT int cuGraphDestroy(void *g) {
  say("cuGraphDestroy");
  free(g);
  return OK;
}

static const char *count_text(unsigned n) {
  static char buf[16];
  snprintf(buf, sizeof buf, "%u", n);
  return buf;
}

/* The dynamic shared memory a launch of |f| may bring: what it opted in
   to, else what its static bytes leave of 48 KiB. */
static long dynamic_shared_allowed(const function *f) {
  if (f->max_dynamic_shared >= 0)
    return f->max_dynamic_shared;
  return 48 * 1024 - (long)f->static_shared;
}

EXPORT int cuLaunchKernelEx(const launch_config *c, void *fn, void **params,
                            void **extra) {
  function *f = (function *)fn;
  launch l;
  char text[MAX_PARAMS * 20 + 1] = "";
  size_t used = 0;
  unsigned i;
  int pdl = 0;
  ENTER("cuLaunchKernelEx");
  if (extra)
    return refuse("cuLaunchKernelEx", INVALID_VALUE, "extra is not used");
  if (c->block[0] * c->block[1] * c->block[2] > 1024)
    return refuse("cuLaunchKernelEx", INVALID_VALUE, "over 1024 threads");
  if (c->shared > dynamic_shared_allowed(f))
    return refuse("cuLaunchKernelEx", INVALID_VALUE,
                  f->max_dynamic_shared < 0
                      ? "static + dynamic shared memory over 48 KiB without "
                        "the opt-in"
                      : "more dynamic shared memory than the opt-in");
  if (c->stream != &stream_token)
    return refuse("cuLaunchKernelEx", INVALID_HANDLE, "unknown stream");
  for (i = 0; i < c->num_attrs; ++i) {
    if (c->attrs[i].id != 6) /* PROGRAMMATIC_STREAM_SERIALIZATION */
      return refuse("cuLaunchKernelEx", INVALID_VALUE,
                    "an unexpected launch attribute");
    pdl = c->attrs[i].value.programmatic != 0;
  }
  if (f->params > MAX_PARAMS)
    return refuse("cuLaunchKernelEx", INVALID_VALUE, "too many parameters");
  l.fn = f;
  for (i = 0; i < f->params && !f->unknown; ++i) {
    memcpy(&l.values[i], params[i], 8);
    if (!find((uintptr_t)l.values[i], 0, 0))
      return refuse("cuLaunchKernelEx", INVALID_VALUE,
                    "a parameter is not a device address");
    used += (size_t)snprintf(text + used, sizeof text - used, "%s0x%llx",
                             i ? "," : "", (unsigned long long)l.values[i]);
  }
  say("cuLaunchKernelEx name=%s grid=%u,%u,%u block=%u,%u,%u smem=%u "
      "pdl=%d params=%s values=%s%s",
      f->name, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
      c->block[2], c->shared, pdl, f->unknown ? "?" : count_text(f->params),
      f->unknown ? "-" : text, capturing ? " captured" : "");
  if (capturing) {
    if (captured->count == MAX_LAUNCHES)
      return refuse("cuLaunchKernelEx", INVALID_VALUE, "graph full");
    captured->launches[captured->count++] = l;
  } else {
    run(&l);
  }
  return OK;
}

/* Events: the fake clock when recorded. */
typedef struct event {
  int recorded;
  double at_us;
} event;

EXPORT int cuEventCreate(void **out, unsigned flags) {
  event *e;
  ENTER("cuEventCreate");
  if (flags != 0)
    return refuse("cuEventCreate", INVALID_VALUE, "only CU_EVENT_DEFAULT");
  e = (event *)calloc(1, sizeof *e);
  say("cuEventCreate");
  *out = e;
  return OK;
}

EXPORT int cuEventRecord(void *ev, void *stream) {
  event *e = (event *)ev;
  ENTER("cuEventRecord");
  if (stream != &stream_token)
    return refuse("cuEventRecord", INVALID_HANDLE, "unknown stream");
  if (capturing)
    return refuse("cuEventRecord", CAPTURE_UNSUPPORTED, "in a capture");
  e->recorded = 1;
  e->at_us = clock_us;
  say("cuEventRecord at=%.3f", clock_us);
  return OK;
}

EXPORT int cuEventSynchronize(void *ev) {
  event *e = (event *)ev;
  ENTER("cuEventSynchronize");
  if (capturing)
    return refuse("cuEventSynchronize", CAPTURE_UNSUPPORTED, "in a capture");
  return e->recorded ? OK
                     : refuse("cuEventSynchronize", INVALID_HANDLE,
                              "never recorded");
}

EXPORT int cuEventElapsedTime(float *ms, void *start, void *end) {
  const event *a = (const event *)start, *b = (const event *)end;
  ENTER("cuEventElapsedTime");
  if (!a->recorded || !b->recorded)
    return refuse("cuEventElapsedTime", INVALID_HANDLE, "never recorded");
  *ms = (float)((b->at_us - a->at_us) / 1000.0);
  say("cuEventElapsedTime ms=%.6f", (double)*ms);
  return OK;
}

EXPORT int cuEventDestroy_v2(void *ev) {
  say("cuEventDestroy_v2");
  free(ev);
  return OK;
}

/* For tests in one process: forgets the calls counted for FAKE_CUDA_FAIL. */
EXPORT void fake_cuda_reset(void) {
  memset(call_names, 0, sizeof call_names);
  memset(call_counts, 0, sizeof call_counts);
  clock_us = 0;
}
