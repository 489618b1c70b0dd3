//===- FamilyCompletions.cpp - completing a graph from its family ---------===//
//
// Part of sgc. The messages name the fact and its source; the facts
// themselves live in FamilyFacts.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyCompletions.h"
#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::sgc::import;
using llvm::StringRef;

void mlir::sgc::import::completeText(TextSpec &t, const TextAsWritten &graph,
                                     ComputeDtype computeDtype,
                                     CompleteFn complete) {
  const TextFacts &facts = textFacts(t.family);
  std::string family = familyName(t.family).str();
  if (!graph.hasContextLength) {
    t.contextLength = facts.contextLength;
    complete(graph.executionPath + ".context_length", graph.executionPath,
             "context_length: absent; the " + family + " family default " +
                 withCommas(facts.contextLength) +
                 " (max_position_embeddings) applies");
  }

  int64_t sliding = llvm::count_if(
      t.layers, [](const LayerSpec &l) { return l.span == Span::Sliding; });
  complete(
      graph.attentionPath, "",
      "execution.attention: num_kv_heads " + std::to_string(graph.numKvHeads) +
          " and head_dim " + std::to_string(graph.headDim) + " describe the " +
          std::to_string(sliding) +
          " sliding layers; full layers take their own geometry (" +
          std::to_string(graph.layersWithGeometry) + " of " +
          std::to_string(t.numLayers) + " layers give one)" +
          (facts.fullLayersShareGeometry ? ", else the same (" + family + ")"
                                         : ""));
  if (facts.layerScalar) {
    for (LayerSpec &layer : t.layers)
      layer.layerScalar = true;
    complete(graph.layersPath, "",
             "layer_scalar: " + family +
                 " multiplies the residual stream by a trained shape-[1] "
                 "scalar after every layer (tensor '<layer>.layer_scalar', " +
                 std::to_string(t.numLayers) + " layers)");
  }
  if (facts.vNormEveryLayer) {
    for (LayerSpec &layer : t.layers)
      layer.vNorm = true;
    complete(graph.freeVPath, "",
             "v norm: " + family +
                 " applies a weightless RMSNorm to V on every layer "
                 "(sliding and full)" +
                 (graph.freeV ? "" : "; the graph's 'false' is overridden"));
  }
  t.castEmbedScale = true;
  complete(graph.embedScalePath, "",
           "embed_scale " + formatDouble(t.embedScale) +
               " is applied cast to " + computeDtypeName(computeDtype).str() +
               ": " +
               formatFloat(roundToComputeDtype(t.embedScale, computeDtype)) +
               " (the reference casts sqrt(hidden_size) to its weight "
               "dtype)");
}

void mlir::sgc::import::completePerception(VisionSpec &spec,
                                           const PerceptionAsWritten &graph,
                                           CompleteFn complete) {
  const VisionFacts &facts = visionFacts(spec.family);
  if (graph.execution) {
    // Where the block contradicts the family (gemma-vision.md,
    // "Discrepancies"), the family fact wins.
    const PerceptionAsWritten::Execution &exec = *graph.execution;
    if (spec.family == Family::Gemma4) {
      if (exec.scoreScale != facts.scoreScale)
        complete(exec.scoreScalePath, "",
                 "score_scale " + formatDouble(exec.scoreScale) + " -> " +
                     formatDouble(facts.scoreScale) +
                     ": the gemma4 vision encoder RMS-normalizes q and k and "
                     "does not scale scores (72^-0.5 is SigLIP's)");
      if (exec.freeV != facts.vNorm)
        complete(exec.freeVPath, "",
                 "parameter_free_qk_norm.v false -> true: the gemma4 vision "
                 "encoder applies a weightless RMSNorm to V");
      if (!exec.postNorms || exec.hasFinal)
        complete(exec.normPath, "",
                 std::string("norm: ") +
                     (exec.postNorms ? "pre_post" : "pre only") +
                     (exec.hasFinal ? " with a final norm" : "") +
                     " -> pre_post (four RMSNorms per layer) and no "
                     "final encoder norm: the gemma4 vision tower pools, "
                     "scales, standardizes and projects after its last layer");
      spec.scoreScale = facts.scoreScale;
      spec.vNorm = facts.vNorm;
      spec.postNorms = facts.sandwichNorms;
      spec.hasFinalNorm = false;
    }
  } else {
    complete(graph.componentPath + ".execution", graph.componentPath,
             "execution: absent; the " + familyName(spec.family).str() +
                 " family supplies it: " + facts.executionSummary.str());
  }
  if (facts.rope2d && llvm::any_of(spec.layers, [](const LayerSpec &l) {
        return l.position == PositionKind::Rope;
      }))
    complete(graph.layersPath, "",
             "rope: 2-D axial over patch (x, y): each head's channels split "
             "in an x half and a y half, rotate-half within each, " +
                 std::to_string(spec.headDim / 4) + " frequencies per axis");
  for (LayerSpec &layer : spec.layers)
    layer.vNorm = spec.vNorm;
}
