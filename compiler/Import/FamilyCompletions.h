//===- FamilyCompletions.h - completing a graph from its family -*- C++ -*-===//
//
// Part of sgc. What a family's facts (FamilyFacts.h) add to a validated
// component: defaults the graph leaves out and properties schema 6 cannot
// express (SCHEMA6.md, "Completions"). Each completion changes the spec and
// records one message, located at the JSON path it concerns; `sgc explain`
// lists them and `--remarks` prints them. Not applied under --strict-graph.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_FAMILYCOMPLETIONS_H
#define SGC_COMPILER_IMPORT_FAMILYCOMPLETIONS_H

#include "compiler/Import/ComputeDtype.h"
#include "compiler/Import/GraphSpec.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::sgc::import {

/// Records a completion at JSON path `path`, located at `parent` when the
/// file has no `path` (a value the graph leaves out).
using CompleteFn = llvm::function_ref<void(
    const std::string &path, const std::string &parent, std::string message)>;

/// What the text completions need of the graph as written, and where it is.
struct TextAsWritten {
  /// $.components[c].attention (one entry per layer).
  std::string layersPath;
  /// The execution block, its attention, attention's
  /// parameter_free_qk_norm.v and the head's embed_scale.
  std::string executionPath, attentionPath, freeVPath, embedScalePath;
  bool hasContextLength = false;
  /// execution.attention's geometry.
  int64_t numKvHeads = 0, headDim = 0;
  /// parameter_free_qk_norm.v
  bool freeV = false;
  /// Layers with their own `geometry`.
  int64_t layersWithGeometry = 0;
};

/// Completes the primary_text component `t` of family `t.family`: context
/// length, the geometry note, layer scalars, V norms and the embed scale
/// cast to `computeDtype`. `t.layers` hold the graph's V norm flags.
void completeText(TextSpec &t, const TextAsWritten &graph,
                  ComputeDtype computeDtype, CompleteFn complete);

/// What the perception completions need of the graph as written.
struct PerceptionAsWritten {
  /// $.components[c] and its attention list.
  std::string componentPath, layersPath;
  /// The component's `execution` block, when it has one.
  struct Execution {
    /// attention.score_scale, attention.parameter_free_qk_norm.v, norm.
    std::string scoreScalePath, freeVPath, normPath;
    double scoreScale = 1.0;
    bool freeV = false;
    /// Sandwich norms (`placement: pre_post`); a final encoder norm.
    bool postNorms = false, hasFinal = false;
  };
  std::optional<Execution> execution;
};

/// Completes the perception component `spec` of family `spec.family`: where
/// the graph's execution block contradicts the family (the four known seed
/// errors: gemma4's score scale, V norm, placement, final norm) the family
/// wins; an absent block is the family's; 2-D RoPE and V norms.
void completePerception(VisionSpec &spec,
                        const PerceptionAsWritten &graph, CompleteFn complete);

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_FAMILYCOMPLETIONS_H
