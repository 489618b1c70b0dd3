//===- fuzz_import.cpp - libFuzzer target for the JSON front end ----------===//
//
// Part of sgc. Feeds arbitrary bytes to parseSystemGraph (and, for graphs it
// accepts, the tensor tables) under ASan and UBSan. Besides "no crash, no
// hang, no sanitizer report" it checks the importer's diagnostic contract:
// a rejected input produced exactly one error, an accepted one none.
// The input's length picks --strict-graph and the compute dtype, so both
// modes are covered; the input is the whole buffer either way.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/GraphSpec.h"
#include "compiler/Import/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static MLIRContext *ctx = [] {
    auto *c = new MLIRContext(MLIRContext::Threading::DISABLED);
    c->allowUnregisteredDialects();
    return c;
  }();
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    // Render it, so message building runs under the sanitizers too.
    (void)diag.str();
    return success();
  });
  sgc::ImportOptions options;
  // The input's length picks the mode, so both see every kind of input.
  options.strictGraph = size % 2;
  options.computeDtype =
      (size / 2) % 2 ? sgc::ComputeDtype::F32 : sgc::ComputeDtype::BF16;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  FailureOr<sgc::import::GraphSpec> graph =
      sgc::parseSystemGraph(ctx, "fuzz.json", text, options);
  if (failed(graph)) {
    if (errors != 1) {
      std::fprintf(stderr, "rejected with %u errors (expected exactly 1)\n",
                   errors);
      std::abort();
    }
    return 0;
  }
  if (errors != 0) {
    std::fprintf(stderr, "accepted with %u errors\n", errors);
    std::abort();
  }
  // The tables must be computable for anything the parser accepts.
  size_t tensors = sgc::import::textTensors(graph->text).size();
  for (const auto &component : graph->opaqueComponents)
    tensors += sgc::import::perceptionTensors(component, graph->text.hiddenSize)
                   .size();
  if (tensors == 0)
    std::abort();
  return 0;
}
