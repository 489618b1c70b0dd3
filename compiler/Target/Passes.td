//===- Passes.td - the targets' own passes -----------------*- tablegen -*-===//
//
// Part of sgc. The passes the CPU and CUDA targets add to their pipelines
// (compiler/Target/Host/HostPipeline.cpp, compiler/Target/CUDA/CUDATarget.cpp),
// declared here so that they have a summary in `sgc-opt --help` and the
// generated pass documentation, and can be replayed with sgc-opt.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_TARGET_PASSES_TD
#define SGC_COMPILER_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def ApproximateMathPass : Pass<"sgc-approximate-math"> {
  let summary = "Expand f32 math.tanh and math.exp into MLIR's approximations";
  let description = [{
    CPU target. Every f32 `math.tanh` and `math.exp`, scalar or vector,
    becomes MLIR's polynomial approximation (plain arithmetic), so GELU and
    the softmax stay in vector registers instead of calling libm once per
    lane (compiler/Target/Host/ApproximateMath.cpp says what it costs).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def ExpandBf16RoundingPass : Pass<"sgc-expand-bf16-rounding"> {
  let summary = "Round f32 to bf16 in integer code with the NaN chosen on "
                "the f32 lanes";
  let description = [{
    CPU target (and the CUDA target's host code). Every `arith.truncf` from
    a vector of f32 (round to nearest even) to bf16 becomes integer
    arithmetic on the f32 bits: a NaN is first replaced by the quiet NaN
    0x7fc00000, then 0x7fff plus bit 16 is added and the high half kept. The
    bits are arith-expand's; the select stays on f32 lanes, which AVX2
    vectorizes (compiler/Target/Host/ExpandBf16Rounding.cpp says what the i16
    select cost).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def GPUToEmulatorPass : Pass<"sgc-gpu-to-emu", "mlir::ModuleOp"> {
  let summary = "Copy every CUDA kernel as a host function of one emulated "
                "GPU thread";
  let description = [{
    CUDA target. For every kernel of `gpu.module @sgc_kernels`, a host
    function `@sgc_emu_k_<kernel>(ops, params...)` that runs one GPU thread
    (CUDA.md §0.5): thread and block ids, barriers and shuffles become calls
    of the emulator (`@sgc_emu_rt_*`, defined by the glue), workgroup memory
    becomes views of the block's shared memory, and every memref access is
    bounds-checked against its static shape. Each collective or check gets a
    site number, listed in the module attribute `sg.emu_sites`. The
    gpu.module is left for the device pipeline.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def ExternDynamicSharedPass
    : Pass<"sgc-extern-dynamic-shared", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give the zero-length shared arrays of "
                "gpu.dynamic_shared_memory external linkage";
  let description = [{
    CUDA target, on a gpu.module after convert-gpu-to-nvvm. MLIR 22 makes
    the zero-length shared arrays that `gpu.dynamic_shared_memory` lowers to
    internal, which the NVPTX backend prints as a static `.shared .b8 x;`
    (1 byte; ptxas places the static buffers after it, over the dynamic
    row). An external one prints as `.extern .shared .b8 x[];`, the launch's
    dynamic bytes, as CUDA C's `extern __shared__`.
  }];
}

def WriteKernelSpecsPass : Pass<"sgc-write-kernel-specs", "mlir::ModuleOp"> {
  let summary = "Write every GPU kernel's sg.kernel_spec to a JSON file";
  let description = [{
    CUDA target, after the lower phase (`sgc compile --kernel-specs=FILE`).
    Writes `{"kernels": [{"name": ..., "spec": {...}}, ...]}` with one entry
    per `gpu.func` that carries an `sg.kernel_spec`, in module order: the
    spec as JSON (integers and floats as numbers, booleans, unit entries as
    true, strings, arrays and dictionaries as they nest). Test tools read
    what each kernel computes from it instead of from printed IR. The IR
    is not changed.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"",
           "Where the JSON goes">,
  ];
}

#endif // SGC_COMPILER_TARGET_PASSES_TD
