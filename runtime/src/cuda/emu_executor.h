/*
 * emu_executor.h - a CUDA model's plan on the CUDA emulator (--device
 * cuda-emu): the model's kernels compiled for the host (its cuda_emu
 * table) run as GPU threads on fibers, launch by launch as the CUDA
 * executor would launch them, with the same parameter values (host
 * addresses standing for device ones). Caches, workspace and step state
 * are host memory; weights are used in place in the mapped checkpoint.
 * Every launch is checked for divergent barriers, out-of-bounds accesses
 * and races (runtime/src/cuda_emu/emulator.h).
 */
#ifndef SGC_RUNTIME_SRC_CUDA_EMU_EXECUTOR_H
#define SGC_RUNTIME_SRC_CUDA_EMU_EXECUTOR_H

#include "runtime/src/executor.h"
#include "runtime/src/model.h"

#include <memory>

namespace sgc {
namespace runtime {

/// The environment variable that sets the schedules per launch.
constexpr const char *emu_schedules_variable = "SGC_EMU_SCHEDULES";

/// An executor for |model|'s CUDA variant |variant| (null: the one the
/// emulator table was compiled from). Mismatch when the model has no
/// emulator kernels; usage error for a bad SGC_EMU_SCHEDULES.
status create_emu_executor(std::shared_ptr<model_library> model,
                           const char *variant, std::unique_ptr<executor> *out);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_CUDA_EMU_EXECUTOR_H
