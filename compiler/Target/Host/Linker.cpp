//===- Linker.cpp - glue + variant objects -> the model library -----------===//
//
// Part of sgc. Writes the glue and one object per CPU variant to a scratch
// directory and links them with the system C compiler into a shared library
// that needs only libc and libm and exports only sgc_model_query and the
// runtime's tuning knob (sgc/abi.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/HostLibrary.h"
#include "lib/abi/sgc/abi.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::sgc;

/// SGC_ABI_CPU_* bits of LLVM's x86 feature names (lib/abi/sgc/abi.h).
static uint64_t abiFeatureBit(StringRef feature) {
  static const llvm::StringMap<uint64_t> bits = {
      {"sse4.2", 1ull << 0},      {"avx", 1ull << 1},
      {"avx2", 1ull << 2},        {"fma", 1ull << 3},
      {"f16c", 1ull << 4},        {"bmi2", 1ull << 5},
      {"avxvnni", 1ull << 6},     {"avx512f", 1ull << 8},
      {"avx512bw", 1ull << 9},    {"avx512vl", 1ull << 10},
      {"avx512dq", 1ull << 11},   {"avx512cd", 1ull << 12},
      {"avx512bf16", 1ull << 13}, {"avx512vnni", 1ull << 14},
      {"avx512fp16", 1ull << 15}};
  auto it = bits.find(feature);
  return it == bits.end() ? 0 : it->second;
}

std::vector<CPUVariant> mlir::sgc::defaultCPUVariants() {
  std::vector<CPUVariant> variants;
  llvm::Triple host(llvm::sys::getDefaultTargetTriple());
  CPUVariant native{llvm::sys::getHostCPUName().str(),
                    llvm::sys::getHostCPUName().str(), "", 0, "sgc_v0_"};
  std::string features;
  for (const auto &entry : llvm::sys::getHostCPUFeatures()) {
    // AMX needs a permission the runtime does not ask for: keep it off.
    bool on = entry.getValue() && !entry.getKey().starts_with("amx");
    features += (features.empty() ? "" : ",") +
                std::string(on ? "+" : "-") + entry.getKey().str();
    if (on)
      native.requiredFeatures |= abiFeatureBit(entry.getKey());
  }
  // LLVM splits vpdpwssd into vpmaddwd + vpaddd on CPUs without this tuning
  // (Intel's, where the pair has the shorter latency): twice the
  // instructions, and the split vpmaddwd cannot take an embedded broadcast.
  // The int8 rows and the i16 tiles are limited by issue, not latency (12
  // independent sums): on Emerald Rapids B8's 256-token Q4_0 prefill took
  // 5.7-7.4 s with it, 7.4-8.1 s without (3 alternating runs, 2 threads).
  if (native.requiredFeatures & abiFeatureBit("avx512vnni"))
    features += ",+fast-dpwssd";
  native.features = features;
  variants.push_back(native);
  if (host.getArch() == llvm::Triple::x86_64) {
    // The baseline every x86-64 machine of the last decade has (CPU.md: never
    // SSE2 only, it halves the bandwidth).
    uint64_t v3 = 0;
    for (StringRef f : {"sse4.2", "avx", "avx2", "fma", "f16c", "bmi2"})
      v3 |= abiFeatureBit(f);
    variants.push_back(CPUVariant{"x86-64-v3", "x86-64-v3", "", v3, "sgc_v1_"});
  }
  return variants;
}

std::string mlir::sgc::writeFileIn(Location loc, StringRef dir,
                                   StringRef name, StringRef contents) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  if (llvm::Error error =
          llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
            os << contents;
            return llvm::Error::success();
          })) {
    // A FileError reads "'PATH': why".
    emitError(loc, "cannot write ") << llvm::toString(std::move(error));
    return "";
  }
  return std::string(path);
}

EmitResult mlir::sgc::linkModelLibrary(ModuleOp module, StringRef glueName,
                                       StringRef glue,
                                       ArrayRef<LinkObject> objects,
                                       const EmitOptions &options) {
  Location loc = module.getLoc();
  if (!options.dumpDir.empty() &&
      writeFileIn(loc, options.dumpDir, glueName, glue).empty())
    return EmitResult::OutputError;

  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("sgc-link", dir))
  {
    emitError(loc, "cannot create a scratch directory: ") << ec.message();
    return EmitResult::OutputError;
  }
  // SGC_KEEP_LINK_DIR=1 keeps the glue and objects for inspection.
  bool keep = getenv("SGC_KEEP_LINK_DIR") != nullptr;
  if (keep)
    llvm::errs() << "sgc: link inputs kept in " << dir << "\n";
  llvm::scope_exit cleanup([&] {
    if (!keep)
      llvm::sys::fs::remove_directories(dir);
  });

  std::vector<std::string> inputs;
  inputs.push_back(writeFileIn(loc, dir, "glue.c", glue));
  for (const LinkObject &object : objects)
    inputs.push_back(writeFileIn(loc, dir, object.name, object.bytes));
  std::string script = writeFileIn(
      loc, dir, "exports.map",
      "{ global: " SGC_ABI_QUERY_SYMBOL "; " SGC_ABI_ROW_PREFETCH_SYMBOL
      "; " SGC_ABI_BF16_ON_FMA_SYMBOL "; local: *; };\n");
  for (const std::string &input : inputs)
    if (input.empty())
      return EmitResult::OutputError;
  if (script.empty())
    return EmitResult::OutputError;

  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  // Not a fault of the input: no location.
  Location nowhere = UnknownLoc::get(module.getContext());
  if (!cc) {
    emitError(nowhere, "no C compiler ('cc') on PATH to link the model")
            .attachNote()
        << "install gcc or clang (scripts/setup does)";
    return EmitResult::ToolUnavailable;
  }
  // cc links into a temporary next to the output, renamed over it once the
  // link succeeded: a failed or interrupted link leaves the old library (or
  // none) and no partial file. An existing non-regular output (/dev/null) is
  // linked in place.
  std::string out = options.outputPath;
  llvm::sys::fs::file_status outStatus;
  bool inPlace = !llvm::sys::fs::status(out, outStatus) &&
                 !llvm::sys::fs::is_regular_file(outStatus);
  llvm::SmallString<256> tmp;
  if (!inPlace) {
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(
            out + ".tmp-%%%%%%", fd, tmp)) {
      emitError(nowhere, "cannot write '") << out << "': " << ec.message();
      return EmitResult::OutputError;
    }
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    llvm::sys::RemoveFileOnSignal(tmp);
  }
  llvm::scope_exit removeTmp([&] {
    if (!tmp.empty()) {
      llvm::sys::fs::remove(tmp);
      llvm::sys::DontRemoveFileOnSignal(tmp);
    }
  });
  std::string linkOut = inPlace ? out : std::string(tmp);
  std::string versionScript = "-Wl,--version-script=" + script;
  SmallVector<StringRef> args = {*cc, "-shared", "-fPIC", "-O2", "-std=gnu11",
                                 "-fvisibility=hidden", "-o", linkOut};
  for (const std::string &input : inputs)
    args.push_back(input);
  args.append({versionScript, "-Wl,-z,defs", "-Wl,-z,noexecstack", "-lm"});
  std::string error;
  llvm::SmallString<128> log(dir);
  llvm::sys::path::append(log, "link.log");
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, redirects, 0, 0,
                                     &error);
  if (rc != 0) {
    auto buffer = llvm::MemoryBuffer::getFile(log);
    InFlightDiagnostic diag = emitError(nowhere, "linking the model failed (")
                              << *cc << " exited with " << rc << ")";
    if (buffer)
      diag.attachNote() << (*buffer)->getBuffer();
    return EmitResult::ToolUnavailable;
  }
  if (!inPlace) {
    if (std::error_code ec = llvm::sys::fs::rename(tmp, out)) {
      emitError(nowhere, "cannot write '") << out << "': " << ec.message();
      return EmitResult::OutputError;
    }
    llvm::sys::DontRemoveFileOnSignal(tmp);
    tmp.clear();
  }
  return EmitResult::Ok;
}
