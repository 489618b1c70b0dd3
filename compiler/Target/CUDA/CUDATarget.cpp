//===- CUDATarget.cpp - the CUDA target's pipelines -----------------------===//
//
// Part of sgc. The device pipeline is CUDA.md §2.8's; PTX comes out of
// `gpu-module-to-binary{format=isa}` and the emitter assembles it with the
// toolkit's ptxas, so a missing toolkit is a clear error at emit time and
// `--compile-to=codegen` works without one.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/CUDATarget.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Target/CUDA/EmulatorKernels.h"
#include "compiler/Target/Host/HostPipeline.h"
#include "compiler/Target/Passes.h"
#include "compiler/Target/CUDA/ProgrammaticLaunch.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::sgc;

namespace {

class CUDATarget final : public Target {
public:
  StringRef getName() const override { return "cuda:sm_90a"; }
  StringRef getDescription() const override {
    return "a model .so with an sm_90a fatbin (H100/H200) and the same "
           "kernels for the host emulator";
  }

  void buildLowerPipeline(OpPassManager &pm) const override {
    pm.addPass(createSelectKernelsPass());
    pm.addPass(createConvertSGToGPUPass());
    // Again, launch by launch: the buffers between a step's launches.
    pm.addPass(createPlanMemoryPass());
  }

  void buildCodegenPipeline(OpPassManager &pm,
                            bool perFunction) const override {
    // The emulator's copies first, from the same kernel IR.
    pm.addPass(createGPUToEmulatorPass());
    // After the copies: the emulator runs launches one after another.
    pm.addPass(createProgrammaticLaunchPass());
    GpuNVVMAttachTargetOptions attach;
    attach.chip = "sm_90a";
    attach.features = "+ptx86";
    attach.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(attach));
    OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
    device.addPass(createConvertNVGPUToNVVMPass());
    device.addPass(createConvertVectorToSCFPass());
    device.addPass(createSCFToControlFlowPass());
    ConvertGpuOpsToNVVMOpsOptions nvvm;
    nvvm.indexBitwidth = 64;
    nvvm.useBarePtrCallConv = true;
    device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
    device.addPass(createExternDynamicSharedPass());
    device.addPass(createConvertNVVMToLLVMPass());
    device.addPass(createCanonicalizerPass());
    device.addPass(createCSEPass());
    device.addPass(createReconcileUnrealizedCastsPass());
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "isa";
    // libdevice (expf, rsqrtf, ...) is linked from the toolkit.
    binary.toolkitPath = findCUDAToolkit();
    pm.addPass(createGpuModuleToBinaryPass(binary));
    buildHostCodegenPipeline(pm, /*barePointers=*/true, perFunction);
  }

  bool addKernelSpecsWriter(OpPassManager &pm,
                            StringRef file) const override {
    pm.addPass(createWriteKernelSpecsPass({file.str()}));
    return true;
  }

  EmitResult emit(ModuleOp module, const EmitOptions &options) const override {
    return emitCUDALibrary(module, options);
  }
};

} // namespace

std::string mlir::sgc::findCUDAToolkit() {
  for (const char *name : {"CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *dir = std::getenv(name); dir && *dir)
      return dir;
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
        .str();
  return "/usr/local/cuda";
}

const Target &mlir::sgc::getCUDATarget() {
  static const CUDATarget target;
  return target;
}
