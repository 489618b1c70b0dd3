/*
 * emu_executor_none.cc - create_emu_executor in a runtime built without the
 * CUDA emulator (runtime/src/cuda_emu): --device cuda-emu is refused.
 */
#include "runtime/src/cuda/emu_executor.h"

namespace sgc {
namespace runtime {

status create_emu_executor(std::shared_ptr<model_library> model,
                           const char *variant, std::unique_ptr<executor> *out) {
  (void)model;
  (void)variant;
  (void)out;
  return device_error("this runtime was built without the CUDA emulator");
}

} // namespace runtime
} // namespace sgc
