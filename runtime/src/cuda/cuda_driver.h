/*
 * cuda_driver.h - the CUDA driver API, loaded with dlopen at run time so
 * the runtime builds and runs on machines without CUDA (STYLE.md habit 11).
 *
 * Only what the runtime needs so far: presence checks. Kernel launching
 * comes with the CUDA launch table in a later ABI minor version.
 */
#ifndef SGC_RUNTIME_SRC_CUDA_CUDA_DRIVER_H
#define SGC_RUNTIME_SRC_CUDA_CUDA_DRIVER_H

#include "lib/support/status.h"

#include <string>

namespace sgc {
namespace runtime {

/// The default driver library name.
constexpr const char *cuda_driver_library = "libcuda.so.1";

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
