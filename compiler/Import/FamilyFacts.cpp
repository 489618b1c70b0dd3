//===- FamilyFacts.cpp - what a model family adds to its graph ------------===//
//
// Part of sgc. One row per family; the sources are the sections named next
// to each field.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyFacts.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>

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
  // gemma-vision.md §G3.5-§G3.7: SigLIP-So400m at 896 px, patch 14,
  // LayerNorm with bias, MHA with biases, score scale head_dim^-0.5, ungated
  // FFN with biases; adapter: 4x4 average pool, RMSNorm (1+w), projection.
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
      "pool, RMSNorm (1+w), projection",
      /*patchSize=*/14,
      /*imageSize=*/896,
      /*softTokensPerImage=*/256,
      /*poolingKernel=*/0,
      /*positionTableSize=*/0,
      /*hasStandardize=*/false,
      /*tokens=*/{262144, 255999, 256000},
      /*normKind=*/NormKind::LayerNorm,
      /*eps=*/1e-6,
      /*finalNorm=*/true,
      /*attentionBias=*/true,
      /*qkNorms=*/false,
      /*ffnKind=*/FfnKind::Plain,
      /*ffnBias=*/true,
      /*adapterNormOffset=*/1,
      /*adapterNormWeight=*/true,
      /*poolScaleSqrtHidden=*/false};
  // gemma-vision.md §G4.1-§G4.7 and "Discrepancies" 1-4.
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
      "theta 100, score scale 1.0, gated gelu_tanh FFN 4304, no final norm",
      /*patchSize=*/16,
      /*imageSize=*/0,
      /*softTokensPerImage=*/280,
      /*poolingKernel=*/3,
      /*positionTableSize=*/10240,
      /*hasStandardize=*/true,
      /*tokens=*/{258880, 255999, 258882},
      /*normKind=*/NormKind::RMSNorm,
      /*eps=*/1e-6,
      /*finalNorm=*/false,
      /*attentionBias=*/false,
      /*qkNorms=*/true,
      /*ffnKind=*/FfnKind::Gated,
      /*ffnBias=*/false,
      /*adapterNormOffset=*/0,
      /*adapterNormWeight=*/false,
      /*poolScaleSqrtHidden=*/true};
  return family == Family::Gemma3 ? gemma3 : gemma4;
}

double VisionFacts::scoreScaleFor(int64_t headDim) const {
  // SigLIP scales by head_dim^-0.5; gemma4 normalizes q and k instead.
  if (rope2d)
    return scoreScale;
  return std::pow(static_cast<double>(headDim), -0.5);
}

void mlir::sgc::import::applyVisionFamily(VisionSpec &s) {
  const VisionFacts &f = visionFacts(s.family);
  s.patchSize = f.patchSize;
  s.imageSize = f.imageSize;
  s.softTokensPerImage = f.softTokensPerImage;
  s.poolingKernel = f.poolingKernel;
  s.positionTableSize = f.positionTableSize;
  if (s.family == Family::Gemma3) {
    // 896 / 14 = 64 patches a side; 64 / sqrt(256) = 4.
    int64_t side = f.imageSize / f.patchSize;
    s.positionTableSize = side * side;
    s.poolingKernel = side / static_cast<int64_t>(
                                 std::lround(std::sqrt(f.softTokensPerImage)));
  }
  s.standardize = f.hasStandardize;
  s.tokens = f.tokens;
  s.preNorm = NormSpec{f.eps, 0, f.normKind};
  s.postNorm = s.preNorm;
  s.postNorms = f.sandwichNorms;
  s.hasFinalNorm = f.finalNorm;
  s.finalNorm = s.preNorm;
  s.attentionBias = f.attentionBias;
  s.scoreScale = f.scoreScaleFor(s.headDim);
  s.qkNorms = f.qkNorms;
  s.qkNormOffset = 0;
  s.vNorm = f.vNorm;
  s.position = f.rope2d ? PositionKind::Rope : PositionKind::None;
  s.ropeTheta = 0;
  for (LayerSpec &l : s.layers)
    if (l.position == PositionKind::Rope)
      s.ropeTheta = l.theta;
  s.ffnKind = f.ffnKind;
  s.ffnBias = f.ffnBias;
  s.poolScale = f.poolScaleSqrtHidden
                    ? std::sqrt(static_cast<double>(s.hiddenSize))
                    : 1.0;
  s.adapterNorm = NormSpec{f.eps, f.adapterNormOffset, NormKind::RMSNorm};
  s.adapterNormWeight = f.adapterNormWeight;
}

llvm::SmallVector<std::string, 1>
mlir::sgc::import::alternativeTensorNames(Family family, llvm::StringRef name) {
  // Both families use the same two spellings.
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
  if (family != Family::Gemma3)
    return out;
  // The SigLIP tower's `vision_model.` level: released checkpoints and the
  // seed have it, transformers 5 (module and save_pretrained) drops it
  // (gemma-vision.md §G.9).
  llvm::StringRef rest = name;
  bool withModel = rest.consume_front("model.");
  if (!rest.consume_front("vision_tower."))
    return out;
  std::string lead = withModel ? "model.vision_tower." : "vision_tower.";
  if (rest.consume_front("vision_model.")) {
    out.push_back(lead + rest.str());
    if (!withModel)
      out.push_back("model.vision_tower." + rest.str());
  } else {
    out.push_back(lead + "vision_model." + rest.str());
    if (withModel)
      out.push_back("vision_tower.vision_model." + rest.str());
  }
  return out;
}
