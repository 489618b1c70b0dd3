//===- FamilyFacts.h - what a model family adds to its graph ----*- C++ -*-===//
//
// Part of sgc. Schema 6 is lossy (SCHEMA6.md, "Completions"); the importer
// completes a graph from one small table per model family, keyed by the
// family its `source_artifact` names. Every fact here is sourced in
// gemma-text.md or gemma-vision.md.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_FAMILYFACTS_H
#define SGC_COMPILER_IMPORT_FAMILYFACTS_H

#include "compiler/Import/GraphSpec.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::sgc::import {

/// "gemma3" / "gemma4".
llvm::StringRef familyName(Family family);

/// The family a `source_artifact` names: "gemma-3…" -> Gemma3, "gemma-4…"
/// -> Gemma4 (case-insensitive), else none. There is no family-less mode,
/// not even under --strict-graph: without a family there is no tensor table
/// to name the checkpoint's tensors.
std::optional<Family> familyFromArtifact(llvm::StringRef artifact);

/// Facts of a family's text decoder (gemma-text.md §1, §2, §9, §11).
struct TextFacts {
  /// max_position_embeddings: the context length when the graph has none.
  int64_t contextLength;
  /// A trained shape-[1] `layer_scalar` multiplies the residual stream at
  /// the end of every layer (gemma-text.md §9.2).
  bool layerScalar;
  /// A weightless RMSNorm on V on every layer (gemma-text.md §5.2).
  bool vNormEveryLayer;
  /// Full layers have the sliding layers' geometry (gemma3); otherwise
  /// they have their own and need `geometry` (gemma4: 512 / 4).
  bool fullLayersShareGeometry;
};
const TextFacts &textFacts(Family family);

/// Other names a checkpoint of `family` may store tensor `name` under: the
/// Gemma 3 and 4 snapshots spell their prefixes two ways
/// (language_model.model. <-> model.language_model., vision_tower. <->
/// model.vision_tower., multi_modal_projector. <->
/// model.multi_modal_projector.). The runtime tries them in order.
llvm::SmallVector<std::string, 1> alternativeTensorNames(Family family,
                                                         llvm::StringRef name);

/// Facts of a family's vision tower (gemma-vision.md §G3.7, §G4).
struct VisionFacts {
  /// Default checkpoint prefixes of the tower and of the adapter.
  llvm::StringRef towerPrefix, adapterPrefix;
  /// The adapter's tensors all sit under this child of the adapter prefix
  /// ("" if they don't share one): a binding ending in it names the adapter
  /// prefix plus it.
  llvm::StringRef adapterChild;
  int64_t intermediateSize;
  /// Score scale and V norm the encoder really uses.
  double scoreScale;
  bool vNorm;
  /// Pre and post RMSNorms around attention and FFN; no final encoder norm.
  bool sandwichNorms;
  /// 2-D axial RoPE over patch (x, y).
  bool rope2d;
  /// What the family supplies when the graph has no vision `execution`.
  llvm::StringRef executionSummary;
};
const VisionFacts &visionFacts(Family family);

/// Bytes per element of the only encoding schema 6 graphs use (BF16).
constexpr int64_t kBF16Bytes = 2;

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_FAMILYFACTS_H
