//===- Driver.cpp - the library behind `sgc compile` and `sgc explain` ----===//
//
// Part of sgc. Parses the command line, loads the input (a system_graph.json
// or an .mlir file), runs the phases up to `--compile-to` and writes the
// result. Every failure prints one `error:` line first and maps to an exit
// code of ExitCodes.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/Explain.h"
#include "compiler/Driver/PlanExplain.h"
#include "compiler/Driver/ExitCodes.h"
#include "compiler/Import/Gguf/GgufImport.h"
#include "compiler/Import/HF/HfImport.h"
#include "compiler/Import/Importer.h"
#include "compiler/Pipelines/IRDump.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Pipelines/Registration.h"
#include "compiler/Quantize/QuantizeFp8.h"
#include "compiler/Quantize/QuantizeHf.h"
#include "compiler/Target/Target.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::sgc;
namespace cl = llvm::cl;

/// The decode batch sizes `sgc compile` builds unless told.
#define DEFAULT_DECODE_BATCH "1,2,4,8,16"

namespace {
/// `--target`'s help: the registered targets, then `mlir`.
const std::string &targetHelp() {
  static const std::string help = [] {
    std::string text = "Code generation target:";
    for (const Target *target : allTargets())
      text += " " + target->getName().str() + " (" +
              target->getDescription().str() + "),";
    return text + " or mlir (the IR after --compile-to, lowered as for " +
           allTargets().front()->getName().str() + ")";
  }();
  return help;
}

/// --weights of `sgc compile` and `sgc explain`.
constexpr const char *kWeightsRecipeHelp =
    "q8_0, q4_0, q4_k_m or q6_k: a gemma3 or gemma4 graph compiled for the GGUF "
    "that llama.cpp's "
    "converter and llama-quantize make of it at that type (their encoding "
    "per tensor; GGUF tensor names)";

/// Options of `sgc compile` and `sgc explain`. Built per run so that the
/// library can be driven more than once in one process (tests).
struct Options {
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<system_graph.json|.mlir|HF_DIR|.gguf>"),
                             cl::Required};
  cl::opt<std::string> output{"o", cl::desc("Output file ('-' for stdout)"),
                              cl::value_desc("file"), cl::init("-")};
  cl::opt<std::string> compileTo{
      "compile-to",
      cl::desc("Stop after this phase: import, graph-opt, fusion, plan, "
               "lower, codegen, emit"),
      cl::value_desc("phase"), cl::init("emit")};
  cl::opt<std::string> dumpDir{
      "dump-ir-after-each",
      cl::desc("Write the IR after every pass to DIR/NN-<pass>.mlir"),
      cl::value_desc("dir")};
  cl::opt<std::string> saveTemps{
      "save-temps",
      cl::desc("Keep what the emit phase generates in DIR: the C glue, each "
               "CPU variant's LLVM IR before optimization and, for CUDA, the "
               "PTX, the ptxas -v report and the cubin"),
      cl::value_desc("dir")};
  cl::opt<std::string> kernelSpecs{
      "kernel-specs",
      cl::desc("CUDA: write every kernel's spec (what it computes) to FILE "
               "as JSON, after the lower phase"),
      cl::value_desc("file")};
  cl::opt<std::string> target{"target", cl::desc(targetHelp()),
                              cl::init("mlir")};
  cl::opt<std::string> computeDtype{
      "compute-dtype", cl::desc("Activation dtype: bf16 (default) or f32"),
      cl::init("bf16")};
  cl::opt<bool> disableFusion{
      "disable-fusion",
      cl::desc("Skip the fusion phase (for checking that fusion changes no "
               "result bit)")};
  cl::opt<bool> remarks{"remarks",
                        cl::desc("Print remarks (completions the importer "
                                 "applied, fusions)")};
  cl::opt<bool> strictGraph{
      "strict-graph",
      cl::desc("Follow the graph literally: no family completions, unknown "
               "keys are errors")};
  cl::opt<int64_t> maxSoftTokens{
      "max-soft-tokens",
      cl::desc("Gemma 4: the vision tower's soft-token budget per image, one "
               "of 70, 140, 280, 560, 1120 (default: the graph's, 280 for "
               "the family); its shapes are static"),
      cl::init(0)};
  cl::opt<std::string> weightsRecipe{"weights", cl::desc(kWeightsRecipeHelp),
                                     cl::value_desc("recipe")};
  cl::opt<std::string> decodeBatch{
      "decode-batch",
      cl::desc("Batch sizes of the decode entries, e.g. 1,4,16: one batched "
               "decode step per size, each row a sequence of its own "
               "(default: $SGC_DECODE_BATCH, else " DEFAULT_DECODE_BATCH
               " where the target has the kernels; 1 elsewhere)"),
      cl::value_desc("sizes")};
  cl::opt<bool> kvKeepKeys{
      "kv-keep-keys",
      cl::desc("Cache K as well as V on layers where K = V (Gemma 4's full "
               "layers); by default they cache V only and rebuild the keys "
               "they read from it (half the bytes)")};
};

/// Options of `sgc explain`.
struct ExplainOptions {
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<system_graph.json|HF_DIR|.gguf>"),
                             cl::Required};
  cl::opt<std::string> output{"o", cl::desc("Output file ('-' for stdout)"),
                              cl::value_desc("file"), cl::init("-")};
  cl::opt<std::string> computeDtype{
      "compute-dtype", cl::desc("Activation dtype: bf16 (default) or f32"),
      cl::init("bf16")};
  cl::opt<bool> remarks{"remarks",
                        cl::desc("Also print the completions as remarks")};
  cl::opt<bool> plan{"plan", cl::desc("Print the plan instead: the entry "
                                      "points and their steps, buffers and "
                                      "workspace")};
  cl::opt<bool> strictGraph{
      "strict-graph",
      cl::desc("Follow the graph literally: no family completions, unknown "
               "keys are errors")};
  cl::opt<std::string> weightsRecipe{"weights", cl::desc(kWeightsRecipeHelp),
                                     cl::value_desc("recipe")};
  cl::opt<bool> kvKeepKeys{
      "kv-keep-keys",
      cl::desc("Cache K as well as V on layers where K = V (Gemma 4's full "
               "layers); by default they cache V only and rebuild the keys "
               "they read from it (half the bytes)")};
};

/// Options of `sgc import-hf`.
struct ImportHfOptions {
  cl::opt<std::string> input{cl::Positional, cl::desc("<config.json>"),
                             cl::Required};
  cl::opt<std::string> output{"o", cl::desc("Output file ('-' for stdout)"),
                              cl::value_desc("file"), cl::init("-")};
  cl::opt<std::string> tensors{
      "tensors",
      cl::desc("The checkpoint's model.safetensors.index.json or "
               ".safetensors: tensor names from it, checked against the "
               "config"),
      cl::value_desc("file")};
  cl::opt<std::string> artifact{
      "artifact",
      cl::desc("source_artifact of the graph (default: the config's "
               "directory name when it names a gemma-3/gemma-4 model)"),
      cl::value_desc("name")};
};

/// Options of `sgc quantize`.
struct QuantizeCommandOptions {
  cl::opt<std::string> input{cl::Positional, cl::desc("<HF_DIR>"),
                             cl::Required};
  cl::opt<std::string> output{cl::Positional, cl::desc("<OUT.gguf | OUT_DIR>"),
                              cl::Required};
  cl::opt<std::string> type{
      "type",
      cl::desc("q8_0, q4_0, q4_k_m or q6_k: a GGUF with the tensors' "
               "encodings as llama-quantize chooses them for that type; "
               "fp8: a compressed-tensors FP8 folder (channel scales)"),
      cl::value_desc("type")};
  cl::opt<unsigned> threads{
      "jobs", cl::desc("Threads that quantize (default: one per core)"),
      cl::init(0)};
  cl::opt<bool> dummyWeights{
      "dummy-weights",
      cl::desc("Seeded random weights instead of the checkpoint's (only "
               "config.json is read; a placeholder vocabulary without a "
               "tokenizer): a full-size file for benchmarks")};
};

/// Prints `error: message` and returns `code`.
int fail(int code, const Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return code;
}

/// The usage error of a --compute-dtype that parseComputeDtype refuses.
int failComputeDtype(StringRef value) {
  return fail(kExitUsage, "unknown --compute-dtype '" + value +
                              "' (expected bf16 or f32)");
}

bool isJsonInput(StringRef path) {
  return llvm::sys::path::extension(path).equals_insensitive(".json");
}

/// Hides from `--help` every option but the subcommand's own (the members
/// of `ours`), MLIR's `--mlir-*` (IR printing, timing) and the help
/// options: the LLVM backends register hundreds more. They stay accepted,
/// and `--help-hidden` lists them.
template <typename Ours>
void hideForeignOptions(const Ours &ours) {
  const char *begin = reinterpret_cast<const char *>(&ours);
  const char *end = begin + sizeof(Ours);
  for (auto &entry : cl::getRegisteredOptions()) {
    const char *at = reinterpret_cast<const char *>(entry.second);
    StringRef name = entry.first;
    if ((at >= begin && at < end) || name.starts_with("mlir-") ||
        name.starts_with("help") || name == "version")
      continue;
    entry.second->setHiddenFlag(cl::Hidden);
  }
}

/// Parses the command line after the subcommand. Returns an exit code on a
/// usage error.
template <typename Ours>
std::optional<int> parseCommandLine(int argc, char **argv, StringRef overview,
                                    const Ours &ours) {
  hideForeignOptions(ours);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (cl::ParseCommandLineOptions(argc, argv, overview, &errorStream))
    return std::nullopt;
  // Keep the one-error-line rule: the first line is the error, the rest are
  // notes. The parser prefixes lines with the program name; drop it.
  std::string prefix = (llvm::sys::path::filename(argv[0]) + ": ").str();
  llvm::SmallVector<StringRef> lines;
  StringRef(errors).trim().split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.empty())
    lines.push_back("invalid command line");
  for (auto [i, line] : llvm::enumerate(lines)) {
    line = line.trim();
    line.consume_front(prefix);
    llvm::errs() << (i == 0 ? "error: " : "note: ") << line << "\n";
  }
  return kExitUsage;
}

/// The schema-6 graph of an HF checkpoint directory (its config.json and
/// tensor index or .safetensors), through the same path as `sgc import-hf`.
/// Sets `fileName` to the config's path; fails with the diagnostics
/// emitted.
FailureOr<std::string> graphFromHfDir(MLIRContext &ctx, StringRef dir,
                                      std::string &fileName,
                                      HfStorage &storage) {
  HfDirectory files = findHfFiles(dir);
  fileName = files.config;
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(files.config, &errorMessage);
  if (!buffer)
    return emitError(UnknownLoc::get(&ctx))
           << "'" << dir << "' is a directory without a readable config.json ("
           << errorMessage << ")";
  HfImportOptions options;
  options.tensorsPath = files.tensors;
  return importHfConfig(&ctx, files.config, buffer->getBuffer(), options,
                        &storage);
}

void makeContext(MLIRContext &ctx) {
  DialectRegistry registry;
  registerSgcDialects(registry);
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();
}

/// Loads the input as an sg module; emits diagnostics and returns null on a
/// bad file.
/// The graph of `text` (the contents of `fileName`) with `--weights=RECIPE`
/// applied when given, and a compressed-tensors folder's `storage`.
FailureOr<import::GraphSpec>
parseWithRecipe(MLIRContext &ctx, StringRef fileName, StringRef text,
                const ImportOptions &options, StringRef recipe,
                const HfStorage &storage = {}) {
  if (!recipe.empty() && !storage.encodings.empty())
    return emitError(UnknownLoc::get(&ctx))
           << "--weights=" << recipe << ": the checkpoint of '" << fileName
           << "' is quantized already (compressed-tensors, "
           << storage.summary << ")";
  FailureOr<import::GraphSpec> graph =
      parseSystemGraph(&ctx, fileName, text, options);
  if (succeeded(graph) && !recipe.empty() &&
      failed(applyWeightsRecipe(&ctx, *graph, recipe)))
    return failure();
  if (succeeded(graph))
    applyHfStorage(*graph, storage,
                   llvm::sys::path::parent_path(fileName));
  return graph;
}

/// importSystemGraph, with `--weights=RECIPE` or a compressed-tensors
/// folder's `storage` applied when given.
OwningOpRef<ModuleOp> importWithRecipe(MLIRContext &ctx, StringRef fileName,
                                       StringRef text,
                                       const ImportOptions &options,
                                       StringRef recipe,
                                       const HfStorage &storage = {}) {
  if (recipe.empty() && storage.encodings.empty())
    return importSystemGraph(&ctx, fileName, text, options);
  FailureOr<import::GraphSpec> graph =
      parseWithRecipe(ctx, fileName, text, options, recipe, storage);
  if (failed(graph))
    return nullptr;
  return importGraphSpec(&ctx, *graph, options);
}

OwningOpRef<ModuleOp> loadInput(MLIRContext &ctx, const Options &opts,
                                ComputeDtype computeDtype, const Target &target,
                                llvm::SourceMgr &sourceMgr) {
  ImportOptions importOptions;
  importOptions.strictGraph = opts.strictGraph;
  importOptions.computeDtype = computeDtype;
  importOptions.buildVisionTower = target.lowersVisionTower();
  importOptions.keysFromValues = !opts.kvKeepKeys;
  importOptions.maxSoftTokens = opts.maxSoftTokens;
  if (llvm::sys::fs::is_directory(opts.input)) {
    std::string fileName;
    HfStorage storage;
    FailureOr<std::string> graph =
        graphFromHfDir(ctx, opts.input, fileName, storage);
    if (failed(graph))
      return nullptr;
    return importWithRecipe(ctx, fileName, *graph, importOptions,
                            opts.weightsRecipe, storage);
  }
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(opts.input, &errorMessage);
  if (!buffer) {
    emitError(UnknownLoc::get(&ctx))
        << "cannot read '" << opts.input << "': " << errorMessage;
    return nullptr;
  }
  bool gguf = isGgufContents(buffer->getBuffer());
  if (!opts.weightsRecipe.empty() && (gguf || !isJsonInput(opts.input))) {
    emitError(UnknownLoc::get(&ctx))
        << "--weights=" << opts.weightsRecipe << " applies to a "
        << "system_graph.json or an HF checkpoint directory ("
        << (gguf ? "a GGUF names its own encodings" : "an .mlir names its own types")
        << ")";
    return nullptr;
  }
  if (gguf) {
    FailureOr<import::GraphSpec> graph =
        graphFromGguf(&ctx, opts.input, importOptions);
    if (failed(graph))
      return nullptr;
    return importGraphSpec(&ctx, *graph, importOptions);
  }
  if (isJsonInput(opts.input)) {
    return importWithRecipe(ctx, opts.input, buffer->getBuffer(),
                            importOptions, opts.weightsRecipe);
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &ctx);
}

/// The batch sizes of `--decode-batch=LIST` (sorted, without repeats), or
/// the target's default; an error message on a bad list.
FailureOr<SmallVector<int64_t>> parseDecodeBatch(StringRef list,
                                                 const Target &target) {
  // SGC_DECODE_BATCH, when set, is the default for targets that have the
  // kernels (the test suite compiles its models with 1).
  const char *env = std::getenv("SGC_DECODE_BATCH");
  if (list.empty())
    list = !target.lowersDecodeBatch() ? "1"
           : env && *env             ? env
                                     : DEFAULT_DECODE_BATCH;
  SmallVector<int64_t> sizes;
  SmallVector<StringRef> items;
  list.split(items, ',');
  for (StringRef item : items) {
    int64_t size = 0;
    if (item.trim().getAsInteger(10, size) || size < 1 || size > 64) {
      fail(kExitUsage, "--decode-batch=" + list.str() + ": '" + item.str() +
                           "' is not a batch size in [1, 64]");
      return failure();
    }
    sizes.push_back(size);
  }
  llvm::sort(sizes);
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.back() > 1 && !target.lowersDecodeBatch()) {
    fail(kExitUsage, "--decode-batch=" + list.str() + ": target '" +
                         target.getName().str() +
                         "' has no batched decode kernels yet (use 1)");
    return failure();
  }
  return sizes;
}

int runCompile(int argc, char **argv) {
  Options opts;
  // Pass names must be registered before the options that list them
  // (--mlir-print-ir-before=<pass>).
  registerSgcPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  if (std::optional<int> code = parseCommandLine(
          argc, argv, "sgc compile: system_graph.json, .mlir, HF checkpoint or GGUF -> artifact\n",
          opts))
    return *code;

  std::optional<Phase> stopAfter = parsePhase(opts.compileTo);
  if (!stopAfter)
    return fail(kExitUsage, "unknown phase '" + opts.compileTo +
                                "' for --compile-to (expected import, "
                                "graph-opt, fusion, plan, lower, codegen, "
                                "emit)");
  const Target *target = opts.target == "mlir"
                             ? allTargets().front()
                             : lookupTarget(opts.target);
  if (!target) {
    std::string names;
    for (const Target *t : allTargets())
      names += t->getName().str() + ", ";
    return fail(kExitUsage, "--target=" + opts.target +
                                " is not available in this build (expected " +
                                names + "or mlir)");
  }
  bool emitLibrary = opts.target != "mlir" && *stopAfter == Phase::Emit;
  if (emitLibrary && opts.output == "-")
    return fail(kExitUsage, "--target=" + opts.target +
                                " writes a shared library: give it a file "
                                "name with -o");
  std::optional<ComputeDtype> computeDtype =
      parseComputeDtype(opts.computeDtype);
  if (!computeDtype)
    return failComputeDtype(opts.computeDtype);
  if (opts.maxSoftTokens != 0 &&
      !llvm::is_contained({70, 140, 280, 560, 1120}, opts.maxSoftTokens))
    return fail(kExitUsage, "--max-soft-tokens=" +
                                std::to_string(opts.maxSoftTokens) +
                                " is not a Gemma 4 budget (expected 70, 140, "
                                "280, 560 or 1120)");

  FailureOr<SmallVector<int64_t>> decodeBatch =
      parseDecodeBatch(opts.decodeBatch, *target);
  if (failed(decodeBatch))
    return kExitUsage;

  MLIRContext ctx;
  makeContext(ctx);
  if (!opts.dumpDir.empty())
    ctx.disableMultithreading();
  SgcDiagnosticHandler diagnostics(&ctx, llvm::errs(), opts.remarks);

  // Outputs that cannot be written are refused before any work.
  if (std::string error = checkOutputPath(opts.output); !error.empty())
    return fail(kExitBadInput, error);
  if (!opts.kernelSpecs.empty())
    if (std::string error = checkOutputPath(opts.kernelSpecs); !error.empty())
      return fail(kExitBadInput, error);
  if (!opts.dumpDir.empty())
    if (std::string error = prepareDumpDir(opts.dumpDir); !error.empty())
      return fail(kExitBadInput, error);
  if (!opts.saveTemps.empty())
    if (std::string error = prepareDumpDir(opts.saveTemps); !error.empty())
      return fail(kExitBadInput, error);

  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module =
      loadInput(ctx, opts, *computeDtype, *target, sourceMgr);
  if (!module)
    return kExitBadInput;
  sg::SGDialect::DecodeBatchAttrHelper(&ctx).setAttr(
      *module, DenseI64ArrayAttr::get(&ctx, *decodeBatch));

  PassManager pm(&ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return fail(kExitUsage, "invalid pass manager options");
  applyDefaultTimingPassManagerCLOptions(pm);
  IRDumpInstrumentation *dumper = nullptr;
  if (!opts.dumpDir.empty()) {
    auto instrumentation =
        std::make_unique<IRDumpInstrumentation>(opts.dumpDir, 0);
    dumper = instrumentation.get();
    // 00-input.mlir is what the later passes start from.
    if (!dumper->dump("input", *module))
      return fail(kExitBadInput, dumper->getError());
    pm.addInstrumentation(std::move(instrumentation));
  }
  bool specsWritten = opts.kernelSpecs.empty();
  for (Phase phase : allPhases()) {
    if (!(phase == Phase::Fusion && opts.disableFusion))
      // Dumps need each pass over the whole module (and one thread).
      buildPhasePipeline(phase, pm, *target,
                         /*perFunction=*/opts.dumpDir.empty());
    if (phase == Phase::Lower && !specsWritten) {
      if (!target->addKernelSpecsWriter(pm, opts.kernelSpecs))
        return fail(kExitUsage,
                    "--kernel-specs: the " + target->getName().str() +
                        " target's kernels have no specs (cuda's do)");
      specsWritten = true;
    }
    if (phase == *stopAfter)
      break;
  }
  if (!specsWritten)
    return fail(kExitUsage, "--kernel-specs: the kernels exist from the lower "
                            "phase on (--compile-to=lower or later)");
  LogicalResult result = pm.run(*module);
  if (dumper && !dumper->getError().empty())
    return fail(kExitBadInput, dumper->getError());
  if (failed(result))
    return diagnostics.getNumErrors() ? kExitBadInput
                                      : fail(kExitInternal, "compilation failed");

  if (emitLibrary) {
    EmitOptions emitOptions{opts.output, opts.saveTemps.empty()
                                             ? std::string(opts.dumpDir)
                                             : std::string(opts.saveTemps)};
    switch (target->emit(*module, emitOptions)) {
    case EmitResult::Ok:
      return kExitOk;
    case EmitResult::BadModule:
      return diagnostics.getNumErrors() ? kExitBadInput
                                        : fail(kExitInternal, "emit failed");
    case EmitResult::ToolUnavailable:
      return kExitDevice;
    case EmitResult::OutputError:
      return kExitBadInput;
    }
  }

  if (std::string error = writeOutputFile(opts.output,
                                         [&](llvm::raw_ostream &os) {
                                           module->print(os);
                                           os << "\n";
                                         });
      !error.empty())
    return fail(kExitBadInput, error);
  return kExitOk;
}

int runExplain(int argc, char **argv) {
  ExplainOptions opts;
  if (std::optional<int> code = parseCommandLine(
          argc, argv,
          "sgc explain: what the compiler understood of a system_graph.json "
          "(layers, attention kinds, KV cache plan, tensor bytes, "
          "completions)\n",
          opts))
    return *code;
  std::optional<ComputeDtype> computeDtype =
      parseComputeDtype(opts.computeDtype);
  if (!computeDtype)
    return failComputeDtype(opts.computeDtype);

  MLIRContext ctx;
  makeContext(ctx);
  SgcDiagnosticHandler diagnostics(&ctx, llvm::errs(), opts.remarks);
  if (std::string error = checkOutputPath(opts.output); !error.empty())
    return fail(kExitBadInput, error);
  std::string fileName = opts.input, graphText;
  bool isGguf = false;
  HfStorage storage;
  if (llvm::sys::fs::is_directory(opts.input)) {
    FailureOr<std::string> graph =
        graphFromHfDir(ctx, opts.input, fileName, storage);
    if (failed(graph))
      return kExitBadInput;
    graphText = std::move(*graph);
  } else {
    std::string errorMessage;
    std::unique_ptr<llvm::MemoryBuffer> buffer =
        openInputFile(opts.input, &errorMessage);
    if (!buffer)
      return fail(kExitBadInput,
                  "cannot read '" + opts.input + "': " + errorMessage);
    isGguf = isGgufContents(buffer->getBuffer());
    if (!isGguf)
      graphText = buffer->getBuffer().str();
  }

  ImportOptions importOptions;
  importOptions.strictGraph = opts.strictGraph;
  importOptions.computeDtype = *computeDtype;
  importOptions.keysFromValues = !opts.kvKeepKeys;
  // Print nothing unless the whole explanation succeeds.
  std::string text;
  llvm::raw_string_ostream os(text);
  LogicalResult explained = failure();
  if (isGguf && !opts.weightsRecipe.empty()) {
    return fail(kExitUsage, "--weights=" + opts.weightsRecipe +
                                " applies to a system_graph.json or an HF "
                                "checkpoint directory (a GGUF names its own "
                                "encodings)");
  } else if (!opts.weightsRecipe.empty() || !storage.encodings.empty()) {
    FailureOr<import::GraphSpec> graph =
        parseWithRecipe(ctx, fileName, graphText, importOptions,
                        opts.weightsRecipe, storage);
    if (succeeded(graph))
      explained = opts.plan ? explainPlan(&ctx, fileName, *graph,
                                          importOptions, os)
                            : explainGraph(&ctx, fileName, *graph,
                                           importOptions, os);
  } else if (isGguf) {
    FailureOr<import::GraphSpec> graph =
        graphFromGguf(&ctx, opts.input, importOptions);
    if (succeeded(graph))
      explained = opts.plan ? explainPlan(&ctx, fileName, *graph,
                                          importOptions, os)
                            : explainGraph(&ctx, fileName, *graph,
                                           importOptions, os);
  } else {
    explained = opts.plan ? explainPlan(&ctx, fileName, graphText,
                                        importOptions, os)
                          : explainSystemGraph(&ctx, fileName, graphText,
                                               importOptions, os);
  }
  if (failed(explained))
    return diagnostics.getNumErrors() ? kExitBadInput
                                      : fail(kExitInternal, "explain failed");

  if (std::string error = writeOutputFile(
          opts.output, [&](llvm::raw_ostream &out) { out << text; });
      !error.empty())
    return fail(kExitBadInput, error);
  return kExitOk;
}

int runImportHf(int argc, char **argv) {
  ImportHfOptions opts;
  if (std::optional<int> code = parseCommandLine(
          argc, argv,
          "sgc import-hf: a Hugging Face config.json (Gemma 3, Gemma 4 "
          "dense) -> system_graph.json (schema 6)\n",
          opts))
    return *code;
  MLIRContext ctx;
  makeContext(ctx);
  SgcDiagnosticHandler diagnostics(&ctx, llvm::errs(), /*remarks=*/false);
  if (std::string error = checkOutputPath(opts.output); !error.empty())
    return fail(kExitBadInput, error);
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(opts.input, &errorMessage);
  if (!buffer)
    return fail(kExitBadInput,
                "cannot read '" + opts.input + "': " + errorMessage);
  HfImportOptions options;
  options.tensorsPath = opts.tensors;
  options.artifact = opts.artifact;
  FailureOr<std::string> graph =
      importHfConfig(&ctx, opts.input, buffer->getBuffer(), options);
  if (failed(graph))
    return diagnostics.getNumErrors() ? kExitBadInput
                                      : fail(kExitInternal, "import-hf failed");
  if (std::string error = writeOutputFile(
          opts.output, [&](llvm::raw_ostream &out) { out << *graph; });
      !error.empty())
    return fail(kExitBadInput, error);
  return kExitOk;
}

int runQuantize(int argc, char **argv) {
  QuantizeCommandOptions opts;
  if (std::optional<int> code = parseCommandLine(
          argc, argv,
          "sgc quantize: a Hugging Face checkpoint folder (Gemma 3, bf16) -> "
          "the GGUF llama.cpp's converter and llama-quantize make of it\n",
          opts))
    return *code;
  if (!llvm::is_contained({"q8_0", "q4_0", "q4_k_m", "q6_k", "fp8"},
                          opts.type))
    return fail(kExitUsage,
                opts.type.empty()
                    ? Twine("--type is required (q8_0, q4_0, q4_k_m, q6_k or "
                            "fp8)")
                    : "unknown --type '" + opts.type +
                          "' (expected q8_0, q4_0, q4_k_m, q6_k or fp8)");
  MLIRContext ctx;
  makeContext(ctx);
  SgcDiagnosticHandler diagnostics(&ctx, llvm::errs(), /*remarks=*/false);
  if (!llvm::sys::fs::is_directory(opts.input))
    return fail(kExitBadInput, "'" + opts.input +
                                   "' is not a directory (sgc quantize reads "
                                   "an HF checkpoint folder)");
  QuantizeOptions options;
  options.type = opts.type;
  options.threads = opts.threads;
  options.dummyWeights = opts.dummyWeights;
  if (failed(opts.type == "fp8"
                 ? quantizeHfToFp8(&ctx, opts.input, opts.output, options,
                                   llvm::errs())
                 : quantizeHfCheckpoint(&ctx, opts.input, opts.output,
                                        options, llvm::errs())))
    return diagnostics.getNumErrors() ? kExitBadInput
                                      : fail(kExitInternal, "quantize failed");
  return kExitOk;
}

void printUsage(llvm::raw_ostream &os) {
  os << "usage: sgc <command> [options]\n\n"
        "commands:\n"
        "  compile GRAPH   compile a system_graph.json (or an sg .mlir file,\n"
        "                  or an HF checkpoint directory: its config.json)\n"
        "  explain GRAPH   print what the compiler understood of a graph\n"
        "  import-hf CONFIG  write the system_graph.json of an HF config.json\n"
        "  quantize HF_DIR OUT.gguf --type T\n"
        "                  write the GGUF llama-quantize makes of a checkpoint\n"
        "  quantize HF_DIR OUT_DIR --type fp8\n"
        "                  write its compressed-tensors FP8 folder\n\n"
        "run 'sgc <command> --help' for the options of a command\n";
}
} // namespace

int mlir::sgc::runSgcMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (argc < 2) {
    printUsage(llvm::errs());
    return fail(kExitUsage, "missing command");
  }
  StringRef command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    printUsage(llvm::outs());
    return kExitOk;
  }
  // The subcommand becomes part of the program name for the option parser.
  std::string programName = (StringRef(argv[0]) + " " + command).str();
  std::vector<char *> args;
  args.push_back(programName.data());
  for (int i = 2; i < argc; ++i)
    args.push_back(argv[i]);
  int subArgc = static_cast<int>(args.size());
  if (command == "compile")
    return runCompile(subArgc, args.data());
  if (command == "explain")
    return runExplain(subArgc, args.data());
  if (command == "import-hf")
    return runImportHf(subArgc, args.data());
  if (command == "quantize")
    return runQuantize(subArgc, args.data());
  printUsage(llvm::errs());
  return fail(kExitUsage, "unknown command '" + command + "'");
}
