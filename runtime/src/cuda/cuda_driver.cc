/*
 * cuda_driver.cc - a dynamic symbol table for the CUDA driver API.
 */
#include "runtime/src/cuda/cuda_driver.h"

#include <dlfcn.h>

namespace sgc {
namespace runtime {

namespace {

// The few driver types and entry points we use, declared here so that no
// CUDA header is needed at build time (values from the driver API).
using CUresult = int;
constexpr CUresult CUDA_SUCCESS = 0;
using cu_init_fn = CUresult (*)(unsigned int);
using cu_device_get_count_fn = CUresult (*)(int *);
using cu_get_error_name_fn = CUresult (*)(CUresult, const char **);
using cu_driver_get_version_fn = CUresult (*)(int *);

/// The loaded library and its entry points.
struct cuda_symbols {
  void *handle = nullptr;
  cu_init_fn cuInit = nullptr;
  cu_device_get_count_fn cuDeviceGetCount = nullptr;
  cu_get_error_name_fn cuGetErrorName = nullptr;
  cu_driver_get_version_fn cuDriverGetVersion = nullptr;

  ~cuda_symbols() {
    // The driver is never unloaded once initialized (it does not support
    // being unloaded); only an unusable library is closed.
    if (handle && !cuInit)
      dlclose(handle);
  }

  std::string error_name(CUresult r) const {
    const char *name = nullptr;
    if (cuGetErrorName && cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
      return std::string(name) + " (" + std::to_string(r) + ")";
    return "CUDA error " + std::to_string(r);
  }
};

/// Turns a failing driver call into a status naming the call site and the
/// CUDA error (llm.c cudaCheck, IREE cuda_status_util).
#define SGC_CU_CHECK(syms, call, message)                                      \
  do {                                                                         \
    const CUresult sgc_cu_result_ = (call);                                    \
    if (sgc_cu_result_ != CUDA_SUCCESS)                                        \
      return device_error(message).note(                                       \
          std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " +      \
          #call + " failed: " + (syms).error_name(sgc_cu_result_));            \
  } while (0)

} // namespace

status probe_cuda(const std::string &library, int ordinal, int *out_count) {
  cuda_symbols s;
  dlerror();
  s.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!s.handle) {
    const char *why = dlerror();
    return device_error("no CUDA driver found")
        .note("cannot load " + quote(library) + ": " +
              (why ? why : "unknown dlopen error"))
        .note("the CUDA device needs the NVIDIA driver (libcuda.so.1); use "
              "--device cpu on this machine");
  }
  s.cuInit = reinterpret_cast<cu_init_fn>(dlsym(s.handle, "cuInit"));
  s.cuDeviceGetCount = reinterpret_cast<cu_device_get_count_fn>(
      dlsym(s.handle, "cuDeviceGetCount"));
  s.cuGetErrorName =
      reinterpret_cast<cu_get_error_name_fn>(dlsym(s.handle, "cuGetErrorName"));
  s.cuDriverGetVersion = reinterpret_cast<cu_driver_get_version_fn>(
      dlsym(s.handle, "cuDriverGetVersion"));
  if (!s.cuInit || !s.cuDeviceGetCount) {
    s.cuInit = nullptr; // lets the destructor close the library
    return device_error("no CUDA driver found")
        .note(quote(library) + " lacks cuInit or cuDeviceGetCount");
  }
  SGC_CU_CHECK(s, s.cuInit(0), "no CUDA device");
  int count = 0;
  SGC_CU_CHECK(s, s.cuDeviceGetCount(&count), "no CUDA device");
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
