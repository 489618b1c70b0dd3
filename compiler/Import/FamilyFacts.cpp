//===- FamilyFacts.cpp - what a model family adds to its graph ------------===//
//
// Part of sgc. One row per family; the sources are the sections named next
// to each field.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyFacts.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir::sgc::import;

llvm::StringRef mlir::sgc::import::familyName(Family family) {
  switch (family) {
  case Family::Gemma3:
    return "gemma3";
  case Family::Gemma4:
    return "gemma4";
  }
  llvm_unreachable("unknown family");
}

std::optional<Family>
mlir::sgc::import::familyFromArtifact(llvm::StringRef artifact) {
  if (artifact.starts_with_insensitive("gemma-3"))
    return Family::Gemma3;
  if (artifact.starts_with_insensitive("gemma-4"))
    return Family::Gemma4;
  return std::nullopt;
}

const TextFacts &mlir::sgc::import::textFacts(Family family) {
  // gemma-text.md §1 (max_position_embeddings), §9.2 (layer_scalar), §5.2
  // (v_norm on every layer), §5.1 (per-layer geometry).
  static const TextFacts gemma3{/*contextLength=*/131072,
                                /*layerScalar=*/false,
                                /*vNormEveryLayer=*/false,
                                /*fullLayersShareGeometry=*/true};
  static const TextFacts gemma4{/*contextLength=*/262144,
                                /*layerScalar=*/true,
                                /*vNormEveryLayer=*/true,
                                /*fullLayersShareGeometry=*/false};
  return family == Family::Gemma3 ? gemma3 : gemma4;
}

const VisionFacts &mlir::sgc::import::visionFacts(Family family) {
  // gemma-vision.md §G3.6/§G3.7: SigLIP-So400m, LayerNorm with bias, MHA with
  // biases, score scale 72^-0.5, ungated FFN.
  static const VisionFacts gemma3{
      /*towerPrefix=*/"vision_tower.vision_model",
      /*adapterPrefix=*/"multi_modal_projector",
      /*adapterChild=*/"",
      /*intermediateSize=*/4304,
      /*scoreScale=*/0.11785113019775792,
      /*vNorm=*/false,
      /*sandwichNorms=*/false,
      /*rope2d=*/false,
      /*executionSummary=*/
      "SigLIP encoder: pre-norm LayerNorm with bias (eps 1e-6), 16 heads x 72 "
      "with q/k/v/o biases, no RoPE, score scale 72^-0.5, ungated gelu_tanh "
      "FFN 4304 with biases, final post_layernorm; adapter: 4x4 average "
      "pool, RMSNorm (1+w), projection"};
  // gemma-vision.md §G4.3-§G4.6 and "Discrepancies" 1-4.
  static const VisionFacts gemma4{
      /*towerPrefix=*/"model.vision_tower",
      /*adapterPrefix=*/"model.embed_vision",
      /*adapterChild=*/"embedding_projection",
      /*intermediateSize=*/4304,
      /*scoreScale=*/1.0,
      /*vNorm=*/true,
      /*sandwichNorms=*/true,
      /*rope2d=*/true,
      /*executionSummary=*/
      "gemma4 vision encoder: RMSNorm sandwich (pre and post around "
      "attention and FFN), q/k RMSNorm and weightless V norm, 2-D RoPE "
      "theta 100, score scale 1.0, gated gelu_tanh FFN 4304, no final norm"};
  return family == Family::Gemma3 ? gemma3 : gemma4;
}

llvm::SmallVector<std::string, 1>
mlir::sgc::import::alternativeTensorNames(Family family, llvm::StringRef name) {
  // Both families use the same two spellings.
  (void)family;
  static const std::pair<llvm::StringRef, llvm::StringRef> spellings[] = {
      {"language_model.model.", "model.language_model."},
      {"vision_tower.", "model.vision_tower."},
      {"multi_modal_projector.", "model.multi_modal_projector."},
  };
  llvm::SmallVector<std::string, 1> out;
  for (const auto &[a, b] : spellings) {
    if (name.starts_with(a))
      out.push_back((b + name.drop_front(a.size())).str());
    else if (name.starts_with(b))
      out.push_back((a + name.drop_front(b.size())).str());
  }
  return out;
}
