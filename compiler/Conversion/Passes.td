//===- Passes.td - sgc conversion passes -------------------*- tablegen -*-===//
//
// Part of sgc. Every convert-<src>-to-<dst> pass, in one list.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_PASSES_TD
#define SGC_COMPILER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSGToCPUPass : Pass<"convert-sg-to-cpu", "mlir::ModuleOp"> {
  let summary = "Lower sg bodies to CPU kernels on buffers: hand-tiled scf + "
                "vector (+ x86vector) loops behind dispatchers, linalg.generic "
                "for elementwise ops";
  let description = [{
    Rewrites every function that holds sg ops (the bodies sg-outline-layers
    made) from tensors to buffers: the new signature first, then the dialect
    conversion driver lowers the body's ops in program order, each sg op by
    a pattern running the CPU family `sg-select-kernels=target=cpu` recorded
    on it:

    - elementwise ops, RMSNorm and type casts become `linalg.generic` on
      memrefs (the norm as a reduction into an f32 buffer, then one
      elementwise op); every op computes in f32 and rounds once to the
      compute dtype, as the reference does;
    - `sg.embed`, `sg.rope`/`sg.partial_rope` (with the inverse frequencies
      computed here in f32 the way the reference computes them),
      `sg.kv_write` (ring slots `pos mod window`) and the attention ops become
      `scf` loops; attention reads the caches as they were before the chunk,
      then the chunk's own keys, and visits only the keys in view;
    - `sg.linear`, `sg.norm_linear` and `sg.gated_mlp` become a call to
      `@sgc_rows_<spec>` (the input rows widened, and normalized when fused,
      to f32 once) and one to a dispatcher `@sgc_dispatch_<kernel>` that the
      emitted runtime glue implements with the runtime's `parallel_for` over
      the kernel `@sgc_<kernel>(xs, w…, y…, row_begin, row_end)` in `scf` +
      `vector`: chunks of 6+ tokens go through 6-token x 16-row register
      tiles over an f32 panel of the widened weights, or, with bf16 rows and
      weights on a CPU variant with AVX512-BF16 (the per-variant global
      `@sgc_cpu_bf16_dot`), 12-token x 16-row tiles of
      `x86vector.avx512.dot` over panels of the weights' bf16 pairs; fewer
      tokens walk one row at a time with 4 independent `vector<16xf32>`
      accumulators along K (CPU.md §6); rows outside whole tiles sum as a
      tile lane does;
    - attention becomes a kernel `@sgc_attn_<spec>` the glue spreads over
      the query heads.

    Calling convention of a converted function: its first argument is the
    target's execution context (`!llvm.ptr`, an `sgc_abi_cpu_exec_t` on the
    CPU), passed on to every dispatcher; then tensor arguments become
    memrefs; a result that is an `sg.kv_write` (or the new cache of an
    `sg.norm_rope`) into an argument cache is updated in place and dropped; every other result becomes an output
    memref appended to the arguments. `sg.result_slots` records, per original
    result, the argument it updates in place or -1 for an appended output.
    Every converted function gets `llvm.emit_c_interface`.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect", "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
    "mlir::vector::VectorDialect", "mlir::LLVM::LLVMDialect",
    "mlir::x86vector::X86VectorDialect"
  ];
}

def SelectKernelsPass : Pass<"sg-select-kernels", "mlir::ModuleOp"> {
  let summary = "Choose the kernel family of every op of the plan's sg bodies";
  let description = [{
    With `target=cpu`: records on every sg op of a function body its CPU
    family (CpuFamilies.cpp), which convert-sg-to-cpu lowers it with.

    For a CUDA build: records on each op of every sg body a plan step calls
    what convert-sg-to-gpu will make of it, `sg.selected_kernel =
    #sg.kernel<"family", {options}>`: the applying family of the highest
    benefit in the target's registry (KernelFamilies.cpp), `lm_head` on the
    projection that writes the entry's logits. Ops that another op's launch
    computes name how: `fused` (a row chain's later ops, the later head
    jobs of a layer's q/k/v launch), `prologue` (decode: a row chain the next
    projection's prologue computes), `carried` (decode: the step's last row
    chain, which the next step computes; the call that takes it into its
    first projection gets `sg.carried_prologue`). The results are the same
    bits with or without the fusions.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cuda\"",
           "The target whose families are chosen: cuda or cpu">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The CUDA chip the kernels are built for">,
    Option<"fuseRowChains", "fuse-row-chains", "bool", /*default=*/"true",
           "Run decode's row chains in the next projection's prologue">,
    Option<"deviceArgmax", "device-argmax", "bool", /*default=*/"true",
           "End the decode LM head with the argmax of its logits row">
  ];
}

def ConvertSGToGPUPass : Pass<"convert-sg-to-gpu", "mlir::ModuleOp"> {
  let summary = "Replace the plan's sg-body steps by launches of specialized kernels";
  let description = [{
    For a GPU target: every `plan.call` of an sg body becomes one launch per
    kernel the body needs, in program order, each a `plan.launch` of a
    `gpu.func` in `gpu.module @sgc_kernels` with its grid and block. One
    kernel per distinct spec (family, static shapes, dtypes, fused prologue
    and epilogue, tuning knobs: `sg.kernel_spec` on the kernel), so layers
    of one signature share kernels. The families: `embed`, `gemv_rows`
    (projections with the RMSNorm prologue and the softcap or gated-GELU
    epilogue), `row_chain` (post-norm, residual add, layer scalar),
    `qknorm_rope_append`, `attention`, `attn_decode_splitk`, `attn_prefill`,
    `gemm_mma`, `kv_write`. `split_heads` and `merge_heads` launch nothing
    (they alias their input). Values between
    the launches of a step get workspace in a scratch region after the
    entry's planned workspace; the sg bodies are erased.

    Kernel parameters: the step state (the position operand, `memref<4xi64>`:
    position, token count, full-cache slots), then the launch's inputs, then
    its outputs that are not updated in place; token dimensions are static at
    the entry's max_tokens, and kernels read the live count from the state.

    Each op becomes what sg-select-kernels recorded on it (`sg.selected_kernel`,
    a `#sg.kernel<family, options>`); an op without a record is an error.
    A row chain recorded `prologue` runs in the next projection's prologue,
    one recorded `carried` in the next step's first projection where that
    call says `sg.carried_prologue` (else in a row_chain launch before it).
    The decode LM head (`lm_head`) also writes the argmax of its logits row
    to a buffer the entry returns, so a greedy decode copies one token back
    instead of the row.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The CUDA chip the kernels are built for">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::gpu::GPUDialect",
    "mlir::math::MathDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect",
    "mlir::nvgpu::NVGPUDialect"
  ];
}

#endif // SGC_COMPILER_CONVERSION_PASSES_TD
