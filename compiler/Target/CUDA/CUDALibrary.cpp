//===- CUDALibrary.cpp - PTX -> fatbin, the launch table, the .so ---------===//
//
// Part of sgc. The emit phase of the CUDA target: assembles the kernels'
// PTX with the toolkit's ptxas for sm_90a and wraps the cubin in a fatbin
// (the runtime loads it with cuModuleLoadData), writes the C glue (the ABI
// tables of the plan, the CUDA variant naming each step's kernel, the
// emulator's table with a wrapper per kernel, and the ops the host copies
// call), compiles the host copies with the CPU back end and links it all.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/ABI/PlanSerializer.h"
#include "compiler/Target/Host/HostLibrary.h"
#include "compiler/Target/CUDA/CUDATarget.h"
#include "compiler/Target/CUDA/EmulatorKernels.h"
#include "compiler/Target/CUDA/ProgrammaticLaunch.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>

using namespace mlir;
using namespace mlir::sgc;

namespace {

const char *const kAbiHeader =
#include "compiler/Target/ABI/AbiHeader.inc"
    ;

/// What the host copies call: thin wrappers over the emulator's ops table
/// (plain C types, so the MLIR-side declarations stay simple).
const char *const kEmulatorOps = R"c(
#define SGC_EMU_RT __attribute__((visibility("hidden")))
SGC_EMU_RT uint32_t sgc_emu_rt_thread_id(const sgc_abi_emu_ops_t *o, uint32_t d) { return o->thread_id(d); }
SGC_EMU_RT uint32_t sgc_emu_rt_block_id(const sgc_abi_emu_ops_t *o, uint32_t d) { return o->block_id(d); }
SGC_EMU_RT uint32_t sgc_emu_rt_block_dim(const sgc_abi_emu_ops_t *o, uint32_t d) { return o->block_dim(d); }
SGC_EMU_RT uint32_t sgc_emu_rt_grid_dim(const sgc_abi_emu_ops_t *o, uint32_t d) { return o->grid_dim(d); }
SGC_EMU_RT void sgc_emu_rt_barrier(const sgc_abi_emu_ops_t *o, uint32_t site) { o->barrier(site); }
/* The value in the low 32 bits, the valid flag in bit 32. */
SGC_EMU_RT uint64_t sgc_emu_rt_shuffle(const sgc_abi_emu_ops_t *o, uint32_t v,
                                       uint32_t offset, uint32_t width,
                                       uint32_t mode, uint32_t site) {
  uint8_t valid = 0;
  uint32_t r = o->shuffle(v, offset, width, mode, site, &valid);
  return (uint64_t)r | ((uint64_t)(valid != 0) << 32);
}
SGC_EMU_RT void sgc_emu_rt_mma_bf16(const sgc_abi_emu_ops_t *o, const uint32_t *a,
                                    const uint32_t *b, const float *c, float *d,
                                    uint32_t site) {
  o->mma_m16n8k16_bf16(a, b, c, d, site);
}
SGC_EMU_RT void sgc_emu_rt_ldmatrix(const sgc_abi_emu_ops_t *o, uint64_t row_address,
                                   uint32_t num, uint32_t trans, uint32_t *out,
                                   uint32_t site) {
  o->ldmatrix((const void *)(uintptr_t)row_address, num, trans, out, site);
}
/* atomicAdd on a u32: a compare-and-swap loop on the ops table's CAS (the
   first CAS, 0 -> 0, reads the value through the emulator's checks). */
SGC_EMU_RT uint32_t sgc_emu_rt_atomic_add_u32(const sgc_abi_emu_ops_t *o, uint64_t base,
                                             int64_t index, uint32_t value,
                                             uint32_t site) {
  uint32_t *p = (uint32_t *)(uintptr_t)base + index;
  uint32_t old = o->atomic_cas_u32(p, 0, 0, site);
  for (;;) {
    uint32_t seen = o->atomic_cas_u32(p, old, old + value, site);
    if (seen == old)
      return old;
    old = seen;
  }
}
SGC_EMU_RT void *sgc_emu_rt_shared_memory(const sgc_abi_emu_ops_t *o) { return o->shared_memory(); }
/* A global-memory access of |bytes| at |base| + |offset|, checked against
   the launch's buffers. */
SGC_EMU_RT void sgc_emu_rt_check_access(const sgc_abi_emu_ops_t *o, uint32_t site,
                                        uint64_t base, int64_t offset,
                                        int64_t bytes, uint32_t is_write) {
  o->check_access((const void *)(uintptr_t)(base + (uint64_t)offset),
                  (uint64_t)bytes, is_write, site);
}
SGC_EMU_RT void sgc_emu_rt_out_of_bounds(const sgc_abi_emu_ops_t *o, uint32_t site,
                                         int64_t index, int64_t size) {
  o->out_of_bounds(site, index, size);
}
#if defined(__x86_64__)
/* x86 CPUs without AVX512-BF16 hold bf16 values in float registers; LLVM
   then rounds them back through this compiler-rt routine, which Debian's
   libgcc lacks. Round to nearest even, NaNs quiet; argument and result in
   xmm0 as compiler-rt's. */
__asm__(".text\n.p2align 4\n.globl __truncsfbf2\n.hidden __truncsfbf2\n"
        ".type __truncsfbf2,@function\n__truncsfbf2:\n"
        "  movd %xmm0, %eax\n  movl %eax, %ecx\n  andl $0x7fffffff, %ecx\n"
        "  cmpl $0x7f800000, %ecx\n  ja 1f\n"
        "  movl %eax, %ecx\n  shrl $16, %ecx\n  andl $1, %ecx\n"
        "  addl $0x7fff, %ecx\n  addl %ecx, %eax\n  shrl $16, %eax\n"
        "  movd %eax, %xmm0\n  ret\n"
        "1:\n  shrl $16, %eax\n  orl $0x40, %eax\n  movd %eax, %xmm0\n  ret\n"
        ".size __truncsfbf2, .-__truncsfbf2\n");
#endif
)c";

/// Runs `program args...`, its output into `log`; 0 on success.
int run(StringRef program, ArrayRef<StringRef> args, StringRef log,
        std::string &error) {
  std::optional<StringRef> redirects[] = {std::nullopt, log, log};
  return llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects, 0,
                                   0, &error);
}

std::string readFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

bool writeFile(StringRef path, StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return false;
  os << contents;
  return true;
}

/// The PTX of `gpu.binary @sgc_kernels` (format isa).
FailureOr<std::string> kernelPTX(ModuleOp module) {
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    if (binary.getName() != "sgc_kernels")
      continue;
    auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
      break;
    return object.getObject().str();
  }
  return emitError(module.getLoc(),
                   "emit: no PTX for the kernels (run the CUDA codegen phase)");
}

/// PTX -> sm_90a cubin -> fatbin, in `dir`; the ptxas -v report goes to
/// `report`.
FailureOr<std::string> assemble(ModuleOp module, StringRef dir, StringRef ptx,
                                std::string &report) {
  Location nowhere = UnknownLoc::get(module.getContext());
  auto tool = [&](StringRef name) -> llvm::ErrorOr<std::string> {
    llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name);
    if (!path) {
      llvm::SmallString<256> p(findCUDAToolkit());
      llvm::sys::path::append(p, "bin", name);
      if (llvm::sys::fs::can_execute(p))
        return std::string(p);
      InFlightDiagnostic diag =
          emitError(nowhere, "no '")
          << name << "' on PATH or in " << p
          << ": the CUDA target needs the CUDA toolkit to assemble its "
             "kernels";
      diag.attachNote()
          << "scripts/setup installs it; --compile-to=codegen stops before";
    }
    return path;
  };
  llvm::ErrorOr<std::string> ptxas = tool("ptxas");
  if (!ptxas)
    return failure();
  llvm::ErrorOr<std::string> fatbinary = tool("fatbinary");
  if (!fatbinary)
    return failure();
  auto path = [&](StringRef name) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  std::string ptxPath = path("kernels.ptx"), cubin = path("kernels.cubin");
  std::string fatbin = path("kernels.fatbin"), log = path("ptxas.log");
  if (!writeFile(ptxPath, ptx))
    return emitError(nowhere, "cannot write '") << ptxPath << "'";
  std::string error;
  int rc = run(*ptxas,
               {*ptxas, "-arch=sm_90a", "-O3", "-v", ptxPath, "-o", cubin},
               log, error);
  report = readFile(log);
  if (rc != 0)
    return emitError(nowhere, "ptxas rejected the kernels (exit ")
           << rc << ")" << (error.empty() ? "" : ": " + error)
           << "\n" << report;
  std::string image = "--image3=kind=elf,sm=90a,file=" + cubin;
  std::string create = "--create=" + fatbin;
  rc = run(*fatbinary, {*fatbinary, "-64", create, image}, path("fatbin.log"),
           error);
  if (rc != 0)
    return emitError(nowhere, "fatbinary failed (exit ")
           << rc << "): " << readFile(path("fatbin.log"));
  return readFile(fatbin);
}

/// A byte string as C string-literal lines (fast to compile).
void writeBytes(llvm::raw_ostream &os, StringRef bytes) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < bytes.size(); i += 64) {
    os << "  \"";
    for (size_t j = i; j < std::min(bytes.size(), i + 64); ++j) {
      auto c = static_cast<unsigned char>(bytes[j]);
      os << "\\x" << hex[c >> 4] << hex[c & 15];
    }
    os << "\"\n";
  }
}

LogicalResult writeGlue(ModuleOp module, const PlanSerializer &plan,
                        StringRef fatbin, llvm::raw_ostream &os) {
  os << "/* Generated by sgc: the ABI tables, CUDA kernels and emulator "
        "table of one compiled model. */\n"
     << kAbiHeader << "\n"
     << kEmulatorOps << "\n";
  plan.writeTables(os);

  // The emulator: a wrapper per kernel unpacking the parameter array.
  ArrayRef<PlanFunction> kernels = plan.functions();
  std::string sharedBytes, dynamicBytes;
  for (auto [i, fn] : llvm::enumerate(kernels)) {
    std::string host = kEmuKernelPrefix + fn.name;
    auto hostFn = module.lookupSymbol<LLVM::LLVMFuncOp>(host);
    if (!hostFn)
      return emitError(module.getLoc(), "emit: no host copy of kernel '")
             << fn.name << "'";
    unsigned params = hostFn.getFunctionType().getNumParams();
    if (params != 1 + fn.operandKinds.size())
      return emitError(module.getLoc(), "emit: kernel '")
             << fn.name << "' takes " << params - 1 << " parameters, the plan "
             << "passes " << fn.operandKinds.size();
    os << "extern void " << host << "(const sgc_abi_emu_ops_t *";
    for (unsigned p = 1; p < params; ++p)
      os << ", void *";
    os << ");\nstatic void sgc_emu_fn" << i
       << "(const sgc_abi_emu_ops_t *ops, void *const *p) {\n  " << host
       << "(ops";
    for (unsigned p = 1; p < params; ++p)
      os << ", *(void *const *)p[" << p - 1 << "]";
    os << ");\n}\n";
    auto bytes = hostFn->getAttrOfType<IntegerAttr>("sg.emu_shared_bytes");
    sharedBytes += (i ? ", " : "") + std::to_string(bytes ? bytes.getInt() : 0);
    auto dynamic =
        hostFn->getAttrOfType<IntegerAttr>("sg.emu_dynamic_shared_bytes");
    dynamicBytes +=
        (i ? ", " : "") + std::to_string(dynamic ? dynamic.getInt() : 0);
  }
  os << "static const sgc_abi_emu_kernel_fn_t sgc_emu_kernels[] = {";
  for (size_t i = 0; i < kernels.size(); ++i)
    os << (i ? ", " : "") << "sgc_emu_fn" << i;
  os << "};\nstatic const uint32_t sgc_emu_shared_bytes[] = {" << sharedBytes
     << "};\nstatic const uint32_t sgc_emu_dynamic_shared_bytes[] = {"
     << dynamicBytes << "};\nstatic const char *const sgc_emu_sites[] = {\n";
  auto sites = module->getAttrOfType<ArrayAttr>("sg.emu_sites");
  size_t numSites = sites ? sites.size() : 0;
  if (sites)
    for (Attribute site : sites)
      os << "  " << PlanSerializer::cString(cast<StringAttr>(site).getValue())
         << ",\n";
  if (!numSites)
    os << "  0,\n";
  os << "};\nstatic const sgc_abi_cuda_emu_t sgc_cuda_emu = {\n"
     << "  sizeof(sgc_abi_cuda_emu_t), " << kernels.size()
     << ", \"sm_90a\", sgc_emu_kernels, sgc_emu_shared_bytes, " << numSites
     << ", 0, sgc_emu_sites, sgc_emu_dynamic_shared_bytes};\n\n";

  // The device: the fatbin and the kernels the steps name.
  os << "static const char sgc_fatbin[] __attribute__((aligned(64))) =\n";
  writeBytes(os, fatbin);
  os << "  ;\nstatic const sgc_abi_cuda_kernel_t sgc_cuda_kernels[] = {\n";
  const char *flags = module->hasAttr(kProgrammaticLaunchAttr)
                          ? "SGC_ABI_CUDA_KERNEL_WAITS"
                          : "0";
  for (const PlanFunction &fn : kernels)
    os << "  {" << PlanSerializer::cString(fn.name) << ", "
       << fn.operandKinds.size() << ", " << flags << "},\n";
  os << "};\nstatic const sgc_abi_variant_t sgc_variants[] = {\n"
     << "  {\"sm_90a\", SGC_ABI_DEVICE_CUDA, " << kernels.size()
     << ", 0, 0, sgc_cuda_kernels, sgc_fatbin, " << fatbin.size()
     << "ull},\n};\n\n";
  plan.writeModel(os, "cuda:sm_90a", "SGC_ABI_DEVICE_CUDA", "sgc_variants", 1,
                  "sgc_cuda_emu");
  return success();
}

} // namespace

EmitResult mlir::sgc::emitCUDALibrary(ModuleOp module,
                                      const EmitOptions &options) {
  FailureOr<PlanSerializer> plan = PlanSerializer::read(module);
  if (failed(plan))
    return EmitResult::BadModule;
  FailureOr<std::string> ptx = kernelPTX(module);
  if (failed(ptx))
    return EmitResult::BadModule;

  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("sgc-cuda", dir)) {
    emitError(module.getLoc(), "cannot create a scratch directory: ")
        << ec.message();
    return EmitResult::OutputError;
  }
  llvm::scope_exit cleanup([&] {
    if (!getenv("SGC_KEEP_LINK_DIR"))
      llvm::sys::fs::remove_directories(dir);
  });
  // ptxas (a process of its own) assembles the kernels while this thread
  // compiles the emulator's host copies: on two cores the two overlap.
  std::string report;
  FailureOr<std::string> fatbin = failure();
  std::thread assembler(
      [&] { fatbin = assemble(module, dir, *ptx, report); });
  // The host copies: portable x86-64-v3 code, names unchanged.
  CPUVariant host{"emulator", "x86-64-v3", "", 0, ""};
  FailureOr<std::string> object = emitCPUObject(module, host);
  assembler.join();
  if (!options.dumpDir.empty()) {
    auto dump = [&](StringRef name, StringRef contents) {
      llvm::SmallString<256> p(options.dumpDir);
      llvm::sys::path::append(p, name);
      return writeFile(p, contents);
    };
    if (!dump("kernels.ptx", *ptx) || !dump("ptxas.log", report) ||
        (succeeded(fatbin) &&
         !dump("kernels.cubin", readFile((dir + "/kernels.cubin").str()))))
      return EmitResult::OutputError;
  }
  if (failed(fatbin))
    return EmitResult::ToolUnavailable;

  std::string glue;
  llvm::raw_string_ostream os(glue);
  if (failed(writeGlue(module, *plan, *fatbin, os)))
    return EmitResult::BadModule;
  if (failed(object))
    return EmitResult::BadModule;
  return linkModelLibrary(module, "cuda-glue.c", glue,
                          {LinkObject{"emulator.o", std::move(*object)}},
                          options);
}
