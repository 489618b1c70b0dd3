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

/// Facts of a family's vision tower (gemma-vision.md §G3.7, §G4): the
/// values of the optional perception keys (VISION_KEYS.md) and the
/// structure sgc's tensor table knows for the family.
struct VisionFacts {
  /// Default checkpoint prefixes of the tower and of the adapter.
  llvm::StringRef towerPrefix, adapterPrefix;
  /// The adapter's tensors all sit under this child of the adapter prefix
  /// ("" if they don't share one): a binding ending in it names the adapter
  /// prefix plus it.
  llvm::StringRef adapterChild;
  int64_t intermediateSize;
  /// Score scale and V norm the encoder really uses (gemma3: the score
  /// scale is head_dim^-0.5 of the graph's geometry, see scoreScaleFor).
  double scoreScale;
  bool vNorm;
  /// Pre and post RMSNorms around attention and FFN; no final encoder norm.
  bool sandwichNorms;
  /// 2-D axial RoPE over patch (x, y).
  bool rope2d;
  /// What the family supplies when the graph has no vision `execution`.
  llvm::StringRef executionSummary;

  //===--- perception.image --------------------------------------------===//
  int64_t patchSize;
  /// 0: the family has no fixed image size (gemma4).
  int64_t imageSize;
  int64_t softTokensPerImage;
  /// 0: derived from the image and patch sizes (gemma3).
  int64_t poolingKernel, positionTableSize;
  /// Whether the family standardizes at all (gemma3: the key is refused).
  bool hasStandardize;
  VisionSpec::TokenIds tokens;

  //===--- encoder structure (each must match: the tensor table) ---------===//
  NormKind normKind;
  double eps;
  bool finalNorm;
  bool attentionBias;
  /// Per-head q and k norms with weights.
  bool qkNorms;
  FfnKind ffnKind;
  bool ffnBias;
  /// The adapter's norm: offset and whether it has a weight; the pooled
  /// tokens are multiplied by sqrt(hidden) when `poolScaleSqrtHidden`.
  int64_t adapterNormOffset;
  bool adapterNormWeight;
  bool poolScaleSqrtHidden;

  /// The score scale the family's encoder uses at head_dim `headDim`.
  double scoreScaleFor(int64_t headDim) const;
};
const VisionFacts &visionFacts(Family family);

/// Sets every key-derived field of `spec` (image, norms, biases, FFN kind,
/// RoPE, adapter) to its family's value; the geometry (hidden size, heads,
/// head_dim, layers) must be set. gemma3's pooling kernel and position table
/// size are derived from the image and patch sizes.
void applyVisionFamily(VisionSpec &spec);

/// Bytes per element of the only encoding schema 6 graphs use (BF16).
constexpr int64_t kBF16Bytes = 2;

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_FAMILYFACTS_H
