//===- Gemma3Config.cpp - Gemma3Config / Gemma3TextConfig -----------------===//
//
// Part of sgc. The defaults are those of transformers' Gemma3TextConfig
// (v5) and SiglipVisionConfig; the RoPE keys of older configs (rope_theta,
// rope_local_base_freq, rope_scaling) are merged into the per-layer-type
// parameters as that class does (gemma-text.md §0).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"
#include "compiler/Import/HF/Families.h"
#include "compiler/Import/HF/TextCommon.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;

namespace {
const TextDefaults kGemma3Text{/*vocabSize=*/262208, /*hiddenSize=*/2304,
                               /*intermediateSize=*/9216, /*numLayers=*/26,
                               /*numHeads=*/8, /*numKvHeads=*/4,
                               /*headDim=*/256, /*maxPositions=*/131072,
                               /*slidingWindow=*/4096};

/// The rope of one layer type: `rope_parameters[type]` (absent: default),
/// with rope_scaling merged into the full layers' entry, and the legacy
/// theta key as the fallback.
FailureOr<Rope> layerTypeRope(ConfigReader &r, const JsonNode &t,
                              StringRef type, StringRef legacyThetaKey,
                              double thetaDefault) {
  FailureOr<double> legacyTheta = r.numberOr(
      t, legacyThetaKey, thetaDefault, 0, std::numeric_limits<double>::max());
  if (failed(legacyTheta))
    return failure();
  json merged = json::object();
  std::string path;
  if (ConfigReader::given(t, "rope_parameters")) {
    FailureOr<JsonNode> params = r.objectOr(t, "rope_parameters");
    if (failed(params))
      return failure();
    if (JsonReader::has(*params, "rope_type") ||
        JsonReader::has(*params, "rope_theta")) {
      r.unsupported(*params, "rope_type",
                    "a single rope_parameters entry for all layers (gemma3 "
                    "keys it by layer type: sliding_attention, "
                    "full_attention)");
      return failure();
    }
    FailureOr<JsonNode> entry = r.objectOr(*params, type);
    if (failed(entry))
      return failure();
    merged = **entry;
    path = entry->path;
  } else {
    path = JsonReader::child(t, "rope_parameters").path;
  }
  if (type == "full_attention" && ConfigReader::given(t, "rope_scaling")) {
    FailureOr<JsonNode> scaling = r.objectOr(t, "rope_scaling");
    if (failed(scaling))
      return failure();
    merged.update(**scaling);
    path = scaling->path;
  }
  // Messages about the merged entry point at the entry it mostly came from.
  JsonNode node{&merged, path};
  return readRope(r, node, *legacyTheta, /*proportionalOk=*/false);
}

FailureOr<TextSpec> readText(ConfigReader &r, const JsonNode &t,
                             bool multimodal) {
  if (failed(checkNestedType(r, t, "gemma3_text")))
    return failure();
  TextSpec out;
  out.family = Family::Gemma3;
  int64_t window = 0;
  if (failed(readCommonText(r, t, kGemma3Text, out, window)))
    return failure();
  FailureOr<int64_t> headDim, kvHeads, pattern;
  FailureOr<double> qScalar;
  if (failed(headDim = r.intOr(t, "head_dim", kGemma3Text.headDim, 1,
                               1 << 20)) ||
      failed(kvHeads = r.intOr(t, "num_key_value_heads",
                               kGemma3Text.numKvHeads, 1, 4096)) ||
      failed(pattern = r.intOr(t, "sliding_window_pattern", 6, 1, 4096)) ||
      failed(qScalar = r.numberOr(t, "query_pre_attn_scalar", 256, 0,
                                  std::numeric_limits<double>::max())))
    return failure();
  if (ConfigReader::given(t, "attn_logit_softcapping"))
    return r.unsupported(t, "attn_logit_softcapping",
                         "attention-logit softcapping");
  FailureOr<bool> bidirectional =
      r.boolOr(t, "use_bidirectional_attention", false);
  if (failed(bidirectional))
    return failure();
  if (*bidirectional)
    return r.unsupported(t, "use_bidirectional_attention",
                         "bidirectional attention over text");
  FailureOr<std::vector<Span>> spans =
      readLayerTypes(r, t, out.numLayers, *pattern);
  if (failed(spans))
    return failure();
  FailureOr<Rope> sliding = layerTypeRope(r, t, "sliding_attention",
                                          "rope_local_base_freq", 10000.0);
  if (failed(sliding))
    return failure();
  FailureOr<Rope> full =
      layerTypeRope(r, t, "full_attention", "rope_theta", 1000000.0);
  if (failed(full))
    return failure();

  // query_pre_attn_scalar^-0.5 (27b: 168, not the head dim).
  out.scoreScale = 1.0 / std::sqrt(*qScalar);
  out.qkNormOffset = 1;
  for (NormSpec *n : {&out.preNorm, &out.postNorm, &out.finalNorm})
    n->weightOffset = 1;
  for (int64_t i = 0; i < out.numLayers; ++i) {
    LayerSpec layer;
    layer.index = static_cast<unsigned>(i);
    layer.span = (*spans)[i];
    const Rope &rope = layer.span == Span::Sliding ? *sliding : *full;
    layer.window = layer.span == Span::Sliding ? window : 0;
    layer.position = rope.kind;
    layer.theta = rope.theta;
    layer.factor = rope.factor;
    layer.headDim = *headDim;
    layer.numKvHeads = *kvHeads;
    out.layers.push_back(layer);
  }
  // Gemma3ForCausalLM names its tensors model.*; the multimodal checkpoints
  // on the Hub use the legacy language_model.model.* (the seed's).
  std::string prefix = multimodal ? "language_model.model." : "model.";
  out.layersPrefix = prefix + "layers";
  out.embedPrefix = prefix + "embed_tokens";
  out.finalNormPrefix = prefix + "norm";
  return out;
}

/// SigLIP as Gemma 3 uses it (defaults of SiglipVisionConfig), with the
/// image keys of the multimodal config `root` (mm_tokens_per_image and the
/// image token ids). A tower of other sizes than the So400m one at 896 px,
/// patch 14 (a test model's) is read too: the graph then states its image
/// keys and execution (GraphWriter).
FailureOr<HfVision> readVision(ConfigReader &r, const JsonNode &v,
                               const JsonNode &root) {
  if (failed(checkNestedType(r, v, "siglip_vision_model")))
    return failure();
  FailureOr<int64_t> hidden, ffn, layers, heads, channels, image, patch;
  if (failed(hidden = r.intOr(v, "hidden_size", 768, 1, 1 << 20)) ||
      failed(ffn = r.intOr(v, "intermediate_size", 3072, 1, 1 << 20)) ||
      failed(layers = r.intOr(v, "num_hidden_layers", 12, 1, 4096)) ||
      failed(heads = r.intOr(v, "num_attention_heads", 12, 1, 4096)) ||
      failed(channels = r.intOr(v, "num_channels", 3, 1, 64)) ||
      failed(image = r.intOr(v, "image_size", 224, 1, 1 << 20)) ||
      failed(patch = r.intOr(v, "patch_size", 16, 1, 1 << 20)))
    return failure();
  FailureOr<double> eps = r.numberOr(v, "layer_norm_eps", 1e-6, 0, 1);
  FailureOr<bool> head = r.boolOr(v, "vision_use_head", true);
  FailureOr<std::string> act;
  if (failed(eps) || failed(head) ||
      failed(act = r.stringOr(v, "hidden_act", "gelu_pytorch_tanh")))
    return failure();
  const VisionFacts &facts = visionFacts(Family::Gemma3);
  if (*head)
    return r.unsupported(v, "vision_use_head",
                         "vision_use_head true (absent: SiglipVisionConfig's "
                         "default): Gemma 3 checkpoints have no pooling head");
  if (*act != "gelu_pytorch_tanh")
    return r.unsupported(v, "hidden_act",
                         "hidden_act '" + printable(*act) + "'");
  if (*channels != 3)
    return r.unsupported(v, "num_channels",
                         "a SigLIP tower of " + Twine(*channels) +
                             " channels (gemma3's has 3)");
  FailureOr<int64_t> soft, imageId, boi, eoi;
  if (failed(soft = r.intOr(root, "mm_tokens_per_image",
                            facts.softTokensPerImage, 1, 1 << 20)) ||
      failed(imageId = r.intOr(root, "image_token_index", facts.tokens.image,
                               0, INT32_MAX)) ||
      failed(boi = r.intOr(root, "boi_token_index", facts.tokens.boi, 0,
                           INT32_MAX)) ||
      failed(eoi = r.intOr(root, "eoi_token_index", facts.tokens.eoi, 0,
                           INT32_MAX)))
    return failure();
  if (*hidden % *heads != 0) {
    r.error(JsonReader::child(v, "num_attention_heads").path, v.path)
        << "hidden_size " << *hidden << " is not a multiple of "
        << "num_attention_heads " << *heads;
    return failure();
  }
  HfVision out;
  OpaqueComponentSpec &s = out.spec;
  s.id = "vision";
  s.role = "perception";
  s.family = Family::Gemma3;
  s.modality = "image";
  s.numLayers = *layers;
  s.hiddenSize = *hidden;
  s.numHeads = s.numKvHeads = *heads;
  s.headDim = *hidden / *heads;
  s.intermediateSize = *ffn;
  s.towerPrefix = facts.towerPrefix.str();
  s.adapterPrefix = facts.adapterPrefix.str();
  for (int64_t i = 0; i < *layers; ++i) {
    LayerSpec l;
    l.index = static_cast<unsigned>(i);
    l.span = Span::Full;
    l.position = PositionKind::None;
    l.headDim = s.headDim;
    l.numKvHeads = s.numKvHeads;
    s.layers.push_back(l);
  }
  // The image keys, norms and adapter the family has, then the config's
  // sizes (the graph writer states them where they differ).
  applyVisionFamily(s);
  s.imageSize = *image;
  s.patchSize = *patch;
  s.softTokensPerImage = *soft;
  s.tokens = {*imageId, *boi, *eoi};
  int64_t side = *image / *patch;
  s.positionTableSize = side * side;
  int64_t root2 = std::lround(std::sqrt(double(*soft)));
  s.poolingKernel = root2 > 0 ? side / root2 : 0;
  out.eps = *eps;
  return out;
}
} // namespace

FailureOr<HfModel> mlir::sgc::import::hf::readGemma3(ConfigReader &r,
                                                     const JsonNode &root,
                                                     StringRef modelType) {
  HfModel model;
  bool multimodal = modelType == "gemma3";
  if (!multimodal) {
    FailureOr<TextSpec> text = readText(r, root, /*multimodal=*/false);
    if (failed(text))
      return failure();
    model.text = std::move(*text);
    return model;
  }
  FailureOr<bool> tied = r.boolOr(root, "tie_word_embeddings", true);
  if (failed(tied))
    return failure();
  if (!*tied)
    return r.unsupported(root, "tie_word_embeddings",
                         "tie_word_embeddings false (an untied LM head)");
  FailureOr<JsonNode> textNode = r.objectOr(root, "text_config");
  FailureOr<JsonNode> visionNode;
  if (failed(textNode) || failed(visionNode = r.objectOr(root, "vision_config")))
    return failure();
  FailureOr<TextSpec> text = readText(r, *textNode, /*multimodal=*/true);
  if (failed(text))
    return failure();
  model.text = std::move(*text);
  // Gemma3Config always has a vision tower (an absent vision_config is
  // SiglipVisionConfig's defaults).
  FailureOr<HfVision> vision = readVision(r, *visionNode, root);
  if (failed(vision))
    return failure();
  model.vision = std::move(*vision);
  return model;
}

LogicalResult mlir::sgc::import::hf::checkNestedType(ConfigReader &r,
                                                     const JsonNode &node,
                                                     StringRef expected) {
  if (!ConfigReader::given(node, "model_type"))
    return success();
  FailureOr<std::string> type = r.getString(node, "model_type", false);
  if (failed(type))
    return failure();
  if (*type != expected)
    return r.error(JsonReader::child(node, "model_type").path)
           << "unsupported: model_type '" << printable(*type) << "' here ("
           << "expected '" << expected << "')";
  return success();
}
