/*
 * cuda_driver.h - the CUDA driver API, loaded with dlopen at run time so
 * the runtime builds and runs on machines without CUDA (STYLE.md habit 11).
 *
 * The driver types and entry points the runtime uses are declared here
 * (values and layouts from the driver API), so no CUDA header is needed at
 * build time. A library is opened and its entry points resolved once per
 * process; a library that lacks one of them is refused naming it.
 */
#ifndef SGC_RUNTIME_SRC_CUDA_CUDA_DRIVER_H
#define SGC_RUNTIME_SRC_CUDA_CUDA_DRIVER_H

#include "lib/support/status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace sgc {
namespace runtime {

/// The default driver library name.
constexpr const char *cuda_driver_library = "libcuda.so.1";

namespace cu {

using result = int;
constexpr result success = 0;
constexpr result error_out_of_memory = 2;
constexpr result error_invalid_value = 1;
constexpr result error_no_device = 100;
constexpr result error_not_supported = 801;

using device = int;
using deviceptr = unsigned long long;
struct ctx_st;
using context = ctx_st *;
struct mod_st;
using module = mod_st *;
struct func_st;
using function = func_st *;
struct stream_st;
using stream = stream_st *;
struct graph_st;
using graph = graph_st *;
struct graph_exec_st;
using graph_exec = graph_exec_st *;
struct event_st;
using event = event_st *;

constexpr int func_attribute_max_dynamic_shared_size_bytes = 8;
constexpr unsigned stream_non_blocking = 1;
constexpr int stream_capture_mode_thread_local = 1;
/// CU_EVENT_DEFAULT: an event that records time.
constexpr unsigned event_default = 0;

/// CUlaunchAttribute (cuda.h): the id, padding to 8 bytes, a 64-byte value.
struct alignas(8) launch_attribute {
  unsigned id;
  unsigned pad;
  union {
    int programmatic_stream_serialization_allowed;
    char bytes[64];
  } value;
};
static_assert(sizeof(launch_attribute) == 72 &&
                  offsetof(launch_attribute, value) == 8,
              "CUlaunchAttribute");
/// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (CUDA 12+).
constexpr unsigned launch_attribute_programmatic_stream_serialization = 6;

/// CUlaunchConfig (cuda.h, CUDA 12+).
struct launch_config {
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
  unsigned shared_mem_bytes;
  stream h_stream;
  launch_attribute *attrs;
  unsigned num_attrs;
};

} // namespace cu

/// The driver's entry points, each resolved once. Symbol names are the
/// versioned exports (cuMemAlloc_v2, ...) that cuda.h maps the API names to.
struct cuda_api {
  cu::result (*cuInit)(unsigned);
  cu::result (*cuDriverGetVersion)(int *);
  cu::result (*cuGetErrorName)(cu::result, const char **);
  cu::result (*cuDeviceGetCount)(int *);
  cu::result (*cuDeviceGet)(cu::device *, int);
  cu::result (*cuDeviceGetName)(char *, int, cu::device);
  cu::result (*cuDevicePrimaryCtxRetain)(cu::context *, cu::device);
  cu::result (*cuDevicePrimaryCtxRelease)(cu::device);
  cu::result (*cuCtxSetCurrent)(cu::context);
  cu::result (*cuMemGetInfo)(size_t *, size_t *);
  cu::result (*cuModuleLoadData)(cu::module *, const void *);
  cu::result (*cuModuleUnload)(cu::module);
  cu::result (*cuModuleGetFunction)(cu::function *, cu::module, const char *);
  cu::result (*cuFuncSetAttribute)(cu::function, int, int);
  cu::result (*cuMemAlloc)(cu::deviceptr *, size_t);
  cu::result (*cuMemFree)(cu::deviceptr);
  cu::result (*cuMemAllocHost)(void **, size_t);
  cu::result (*cuMemFreeHost)(void *);
  cu::result (*cuMemsetD8Async)(cu::deviceptr, unsigned char, size_t,
                                cu::stream);
  cu::result (*cuMemcpyHtoDAsync)(cu::deviceptr, const void *, size_t,
                                  cu::stream);
  cu::result (*cuMemcpyDtoHAsync)(void *, cu::deviceptr, size_t, cu::stream);
  cu::result (*cuStreamCreate)(cu::stream *, unsigned);
  cu::result (*cuStreamDestroy)(cu::stream);
  cu::result (*cuStreamSynchronize)(cu::stream);
  cu::result (*cuStreamBeginCapture)(cu::stream, int);
  cu::result (*cuStreamEndCapture)(cu::stream, cu::graph *);
  cu::result (*cuGraphInstantiateWithFlags)(cu::graph_exec *, cu::graph,
                                            unsigned long long);
  cu::result (*cuGraphLaunch)(cu::graph_exec, cu::stream);
  cu::result (*cuGraphExecDestroy)(cu::graph_exec);
  cu::result (*cuGraphDestroy)(cu::graph);
  cu::result (*cuLaunchKernelEx)(const cu::launch_config *, cu::function,
                                 void **, void **);
  /// Events: the per-launch times of SGC_CUDA_PROFILE.
  cu::result (*cuEventCreate)(cu::event *, unsigned);
  cu::result (*cuEventRecord)(cu::event, cu::stream);
  cu::result (*cuEventSynchronize)(cu::event);
  cu::result (*cuEventElapsedTime)(float *, cu::event, cu::event);
  cu::result (*cuEventDestroy)(cu::event);
  /// Optional (driver 12.4+; null when absent): a kernel's parameter list.
  cu::result (*cuFuncGetParamInfo)(cu::function, size_t, size_t *, size_t *);

  /// "CUDA_ERROR_OUT_OF_MEMORY (2)", or "CUDA error 2" without a name.
  std::string error_name(cu::result r) const;
};

/// Opens |library| and resolves every entry point, once per library name
/// for the process (the driver is never unloaded). device_unavailable with
/// "no CUDA driver found" when the library cannot be loaded or lacks an
/// entry point (the note names it). Does not call cuInit.
status load_cuda_api(const std::string &library, const cuda_api **out);

/// Turns a failing driver call into |make_error|(|message|) with a note
/// naming the call, the CUresult and the source line.
status cuda_call_error(const cuda_api &api, cu::result r, const char *call,
                       const char *file, int line, std::string message);

/// Evaluates |call| (an expression over |api|, e.g. api.cuMemAlloc(&p, n));
/// on failure returns a status from the enclosing function: out of memory
/// and missing devices are device_unavailable, anything else internal.
#define SGC_CU_TRY(api, call, message)                                         \
  do {                                                                         \
    const ::sgc::runtime::cu::result sgc_cu_result_ = (call);                  \
    if (sgc_cu_result_ != ::sgc::runtime::cu::success)                         \
      return ::sgc::runtime::cuda_call_error((api), sgc_cu_result_, #call,     \
                                             __FILE__, __LINE__, (message));   \
  } while (0)

/// Loads |library| (normally libcuda.so.1), initializes the driver and
/// checks that device |ordinal| exists. Returns device_unavailable with
/// "no CUDA driver found" when the library cannot be loaded or lacks the
/// entry points, and "no CUDA device" when cuInit/cuDeviceGetCount fail or
/// report fewer devices than needed. Every driver call error carries the
/// source location and the CUDA error name. On success stores the device
/// count in |out_count| (may be null).
status probe_cuda(const std::string &library, int ordinal, int *out_count);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_CUDA_DRIVER_H
