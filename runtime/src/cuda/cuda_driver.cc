/*
 * cuda_driver.cc - the CUDA driver's entry points through dlopen, resolved
 * once per library, and driver errors as statuses.
 */
#include "runtime/src/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cctype>

#include <map>
#include <memory>
#include <mutex>

namespace sgc {
namespace runtime {

std::string cuda_api::error_name(cu::result r) const {
  const char *name = nullptr;
  if (cuGetErrorName && cuGetErrorName(r, &name) == cu::success && name)
    return std::string(name) + " (" + std::to_string(r) + ")";
  return "CUDA error " + std::to_string(r);
}

status cuda_call_error(const cuda_api &api, cu::result r, const char *call,
                       const char *file, int line, std::string message) {
  // What says the device cannot do it (too little memory, no such device,
  // no code for it) is the device's problem; anything else is ours.
  const bool device = r == cu::error_out_of_memory ||
                      r == cu::error_no_device || r == 101 /* invalid device */
                      || r == 209 /* no binary for GPU */ ||
                      r == 222 /* unsupported PTX version */;
  status st = device ? device_error(std::move(message))
                     : internal_error(std::move(message));
  // |call| is the expression ("api.cuMemAlloc(&p, n)"): name the entry
  // point, the identifier before the first parenthesis.
  const std::string expr = call;
  size_t end = expr.find('('), begin = end == std::string::npos ? 0 : end;
  while (begin > 0 &&
         (std::isalnum(static_cast<unsigned char>(expr[begin - 1])) ||
          expr[begin - 1] == '_'))
    --begin;
  const std::string name =
      end == std::string::npos ? expr : expr.substr(begin, end - begin);
  return std::move(st).note(std::string(file) + ":" + std::to_string(line) +
                            ": " + name + " failed: " + api.error_name(r));
}

namespace {

/// Resolves |name| into |slot|; false when the library lacks it.
template <typename Fn>
bool resolve(void *handle, const char *name, Fn *slot) {
  *slot = reinterpret_cast<Fn>(dlsym(handle, name));
  return *slot != nullptr;
}

status load(const std::string &library, cuda_api *api) {
  dlerror();
  void *h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return device_error("no CUDA driver found")
        .note("cannot load " + quote(library) + ": " +
              (why ? why : "unknown dlopen error"))
        .note("the CUDA device needs the NVIDIA driver (libcuda.so.1); "
              "without a GPU, --device cuda-emu runs a CUDA model's kernels "
              "on the CPU's emulator, and a model compiled with --target=cpu "
              "runs on --device cpu");
  }
  if (!resolve(h, "cuInit", &api->cuInit) ||
      !resolve(h, "cuDeviceGetCount", &api->cuDeviceGetCount)) {
    dlclose(h); // not a driver: nothing was initialized
    return device_error("no CUDA driver found")
        .note(quote(library) + " lacks cuInit or cuDeviceGetCount");
  }
  const char *missing = nullptr;
#define SGC_CU_RESOLVE(field, symbol)                                          \
  if (!missing && !resolve(h, symbol, &api->field))                            \
    missing = symbol;
  SGC_CU_RESOLVE(cuDriverGetVersion, "cuDriverGetVersion")
  SGC_CU_RESOLVE(cuGetErrorName, "cuGetErrorName")
  SGC_CU_RESOLVE(cuDeviceGet, "cuDeviceGet")
  SGC_CU_RESOLVE(cuDeviceGetName, "cuDeviceGetName")
  SGC_CU_RESOLVE(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  SGC_CU_RESOLVE(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
  SGC_CU_RESOLVE(cuCtxSetCurrent, "cuCtxSetCurrent")
  SGC_CU_RESOLVE(cuMemGetInfo, "cuMemGetInfo_v2")
  SGC_CU_RESOLVE(cuModuleLoadData, "cuModuleLoadData")
  SGC_CU_RESOLVE(cuModuleUnload, "cuModuleUnload")
  SGC_CU_RESOLVE(cuModuleGetFunction, "cuModuleGetFunction")
  SGC_CU_RESOLVE(cuFuncSetAttribute, "cuFuncSetAttribute")
  SGC_CU_RESOLVE(cuMemAlloc, "cuMemAlloc_v2")
  SGC_CU_RESOLVE(cuMemFree, "cuMemFree_v2")
  SGC_CU_RESOLVE(cuMemAllocHost, "cuMemAllocHost_v2")
  SGC_CU_RESOLVE(cuMemFreeHost, "cuMemFreeHost")
  SGC_CU_RESOLVE(cuMemsetD8Async, "cuMemsetD8Async")
  SGC_CU_RESOLVE(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")
  SGC_CU_RESOLVE(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
  SGC_CU_RESOLVE(cuStreamCreate, "cuStreamCreate")
  SGC_CU_RESOLVE(cuStreamDestroy, "cuStreamDestroy_v2")
  SGC_CU_RESOLVE(cuStreamSynchronize, "cuStreamSynchronize")
  SGC_CU_RESOLVE(cuStreamBeginCapture, "cuStreamBeginCapture_v2")
  SGC_CU_RESOLVE(cuStreamEndCapture, "cuStreamEndCapture")
  SGC_CU_RESOLVE(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags")
  SGC_CU_RESOLVE(cuGraphLaunch, "cuGraphLaunch")
  SGC_CU_RESOLVE(cuGraphExecDestroy, "cuGraphExecDestroy")
  SGC_CU_RESOLVE(cuGraphDestroy, "cuGraphDestroy")
  SGC_CU_RESOLVE(cuLaunchKernelEx, "cuLaunchKernelEx")
  SGC_CU_RESOLVE(cuEventCreate, "cuEventCreate")
  SGC_CU_RESOLVE(cuEventRecord, "cuEventRecord")
  SGC_CU_RESOLVE(cuEventSynchronize, "cuEventSynchronize")
  // CUDA 12.8 added cuEventElapsedTime_v2 (what cuda.h 13 maps the name
  // to); drivers keep the first for older binaries.
  if (!missing && !resolve(h, "cuEventElapsedTime", &api->cuEventElapsedTime))
    SGC_CU_RESOLVE(cuEventElapsedTime, "cuEventElapsedTime_v2")
  SGC_CU_RESOLVE(cuEventDestroy, "cuEventDestroy_v2")
#undef SGC_CU_RESOLVE
  resolve(h, "cuFuncGetParamInfo", &api->cuFuncGetParamInfo); // optional
  if (missing) {
    dlclose(h);
    return device_error("the CUDA driver is too old")
        .note(quote(library) + " lacks " + missing +
              "; sgc needs a CUDA 12 driver or newer");
  }
  return status(); // the handle stays open for the process
}

} // namespace

status load_cuda_api(const std::string &library, const cuda_api **out) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<cuda_api>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded.find(library);
  if (it == loaded.end()) {
    auto api = std::make_unique<cuda_api>();
    status st = load(library, api.get());
    if (!st.ok())
      return st;
    it = loaded.emplace(library, std::move(api)).first;
  }
  *out = it->second.get();
  return status();
}

status probe_cuda(const std::string &library, int ordinal, int *out_count) {
  const cuda_api *api = nullptr;
  status st = load_cuda_api(library, &api);
  if (!st.ok())
    return st;
  // Whatever cuInit or cuDeviceGetCount say, there is no usable device.
  auto no_device = [&](cu::result r, const char *call, int line) {
    status st = cuda_call_error(*api, r, call, __FILE__, line, "");
    return device_error("no CUDA device").note(st.notes().front());
  };
  cu::result r = api->cuInit(0);
  if (r != cu::success)
    return no_device(r, "cuInit(0)", __LINE__);
  int count = 0;
  r = api->cuDeviceGetCount(&count);
  if (r != cu::success)
    return no_device(r, "cuDeviceGetCount(&count)", __LINE__);
  if (count <= 0)
    return device_error("no CUDA device")
        .note("the CUDA driver reports 0 devices");
  if (ordinal < 0 || ordinal >= count)
    return device_error("no CUDA device " + std::to_string(ordinal))
        .note("the CUDA driver reports " + std::to_string(count) +
              " device(s)");
  if (out_count)
    *out_count = count;
  return status();
}

} // namespace runtime
} // namespace sgc
