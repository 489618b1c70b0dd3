//===- Gemma4Config.cpp - Gemma4Config / Gemma4TextConfig -----------------===//
//
// Part of sgc. Defaults of transformers' Gemma4TextConfig and
// Gemma4VisionConfig. Full layers take their geometry from
// `per_layer_config` (what newer transformers write) or from
// `global_head_dim` / `num_global_key_value_heads` (what the released
// checkpoints carry); attention_k_eq_v makes V come from K on full layers
// (gemma-text.md §5.5). Per-layer inputs, KV sharing, MoE and audio are
// refused by name.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"
#include "compiler/Import/HF/Families.h"
#include "compiler/Import/HF/TextCommon.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;

namespace {
const TextDefaults kGemma4Text{/*vocabSize=*/262144, /*hiddenSize=*/2304,
                               /*intermediateSize=*/9216, /*numLayers=*/30,
                               /*numHeads=*/8, /*numKvHeads=*/4,
                               /*headDim=*/256, /*maxPositions=*/131072,
                               /*slidingWindow=*/512};

/// Features of the Gemma 4 code that the dense checkpoints leave off.
LogicalResult refuseFeatures(ConfigReader &r, const JsonNode &t) {
  FailureOr<int64_t> ple =
      r.intOr(t, "hidden_size_per_layer_input", 256, 0, 1 << 20);
  if (failed(ple))
    return failure();
  if (*ple != 0)
    return r.unsupported(
        t, "hidden_size_per_layer_input",
        "per-layer inputs (hidden_size_per_layer_input " +
            std::to_string(*ple) +
            (JsonReader::has(t, "hidden_size_per_layer_input")
                 ? std::string()
                 : std::string(", Gemma4TextConfig's default when absent")) +
            "; the dense models set 0)");
  FailureOr<bool> moe = r.boolOr(t, "enable_moe_block", false);
  if (failed(moe))
    return failure();
  if (*moe)
    return r.unsupported(t, "enable_moe_block", "a mixture-of-experts block");
  if (ConfigReader::given(t, "num_experts"))
    return r.unsupported(t, "num_experts", "mixture of experts (num_experts)");
  FailureOr<int64_t> shared = r.intOr(t, "num_kv_shared_layers", 0, 0, 4096);
  if (failed(shared))
    return failure();
  if (*shared != 0)
    return r.unsupported(t, "num_kv_shared_layers",
                         "KV sharing across layers (num_kv_shared_layers " +
                             std::to_string(*shared) + ")");
  FailureOr<std::string> bidi =
      r.stringOr(t, "use_bidirectional_attention", "");
  if (failed(bidi))
    return failure();
  if (*bidi == "all")
    return r.unsupported(t, "use_bidirectional_attention",
                         "bidirectional attention over text ('all')");
  if (!bidi->empty() && *bidi != "vision")
    return r.error(JsonReader::child(t, "use_bidirectional_attention").path)
           << "unknown use_bidirectional_attention '" << printable(*bidi)
           << "' (expected null, 'vision' or 'all')";
  return success();
}

/// Head dim and KV heads of every full layer: layer index -> (head_dim,
/// kv heads), from per_layer_config or the global_* keys.
LogicalResult fullGeometry(ConfigReader &r, const JsonNode &t,
                           const std::vector<Span> &spans, bool kEqV,
                           int64_t headDim, int64_t kvHeads,
                           std::vector<std::pair<int64_t, int64_t>> &out) {
  out.assign(spans.size(), {headDim, kvHeads});
  if (ConfigReader::given(t, "per_layer_config")) {
    FailureOr<JsonNode> plc = r.objectOr(t, "per_layer_config");
    if (failed(plc))
      return failure();
    for (auto it = (*plc)->begin(); it != (*plc)->end(); ++it) {
      JsonNode entry = JsonReader::child(*plc, it.key());
      StringRef key = it.key();
      unsigned index;
      if (key.empty() || key.getAsInteger(10, index) || index >= spans.size())
        return r.error(entry.path)
               << "per_layer_config key '" << printable(key)
               << "' is not a layer index below " << spans.size();
      if (!entry->is_object())
        return r.error(entry.path)
               << "expected an object for a per_layer_config entry, got "
               << describe(*entry);
      for (auto f = entry->begin(); f != entry->end(); ++f)
        if (f.key() != "head_dim" && f.key() != "num_key_value_heads")
          return r.unsupported(entry, f.key(),
                               "per_layer_config key '" +
                                   printable(f.key()) + "'");
      FailureOr<int64_t> d, kv;
      if (failed(d = r.intOr(entry, "head_dim", headDim, 1, 1 << 20)) ||
          failed(kv = r.intOr(entry, "num_key_value_heads", kvHeads, 1, 4096)))
        return failure();
      out[index] = {*d, *kv};
    }
    return success();
  }
  FailureOr<int64_t> globalDim =
      r.intOr(t, "global_head_dim", 512, 1, 1 << 20);
  FailureOr<int64_t> globalKv;
  if (failed(globalDim) ||
      failed(globalKv = r.intOr(t, "num_global_key_value_heads", kvHeads, 1,
                                4096)))
    return failure();
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i] == Span::Full)
      // The KV-head override is gated on attention_k_eq_v, as in
      // Gemma4TextConfig.
      out[i] = {*globalDim, kEqV ? *globalKv : kvHeads};
  return success();
}

FailureOr<TextSpec> readText(ConfigReader &r, const JsonNode &t,
                             bool multimodal) {
  if (failed(checkNestedType(r, t, "gemma4_text")) ||
      failed(refuseFeatures(r, t)))
    return failure();
  TextSpec out;
  out.family = Family::Gemma4;
  int64_t window = 0;
  if (failed(readCommonText(r, t, kGemma4Text, out, window)))
    return failure();
  FailureOr<int64_t> headDim, kvHeads;
  FailureOr<bool> kEqV;
  if (failed(headDim = r.intOr(t, "head_dim", kGemma4Text.headDim, 1,
                               1 << 20)) ||
      failed(kvHeads = r.intOr(t, "num_key_value_heads",
                               kGemma4Text.numKvHeads, 1, 4096)) ||
      failed(kEqV = r.boolOr(t, "attention_k_eq_v", false)))
    return failure();
  FailureOr<std::vector<Span>> spans =
      readLayerTypes(r, t, out.numLayers, /*pattern=*/6);
  if (failed(spans))
    return failure();
  if (spans->back() != Span::Full) {
    // Gemma4TextConfig forces it (with a warning); so do we.
    r.warning(JsonReader::child(t, "layer_types").path)
        << "the last layer is full_attention in gemma4 (transformers forces "
           "it)";
    spans->back() = Span::Full;
  }
  std::vector<std::pair<int64_t, int64_t>> geometry;
  if (failed(fullGeometry(r, t, *spans, *kEqV, *headDim, *kvHeads, geometry)))
    return failure();

  // rope_parameters keyed by layer type; absent: the class's default.
  Rope sliding{PositionKind::Rope, 10000.0, 1.0, 1.0};
  Rope full{PositionKind::PartialRope, 1000000.0, 1.0, 0.25};
  if (ConfigReader::given(t, "rope_parameters")) {
    FailureOr<JsonNode> params = r.objectOr(t, "rope_parameters");
    if (failed(params))
      return failure();
    for (auto [type, rope] : {std::pair<StringRef, Rope *>{"sliding_attention",
                                                           &sliding},
                              {"full_attention", &full}}) {
      if (!ConfigReader::given(*params, type))
        return r.error(params->path)
               << "missing required key '" << type << "' in rope_parameters";
      FailureOr<JsonNode> entry = r.objectOr(*params, type);
      FailureOr<Rope> parsed;
      if (failed(entry) ||
          failed(parsed = readRope(r, *entry, type == "full_attention"
                                                  ? 1000000.0
                                                  : 10000.0,
                                   /*proportionalOk=*/true)))
        return failure();
      *rope = *parsed;
    }
  }

  out.scoreScale = 1.0;
  out.qkNormOffset = 0;
  for (int64_t i = 0; i < out.numLayers; ++i) {
    LayerSpec layer;
    layer.index = static_cast<unsigned>(i);
    layer.span = (*spans)[i];
    const Rope &rope = layer.span == Span::Sliding ? sliding : full;
    layer.window = layer.span == Span::Sliding ? window : 0;
    layer.position = rope.kind;
    layer.theta = rope.theta;
    layer.factor = rope.factor;
    layer.rotaryFraction = rope.fraction;
    if (rope.kind == PositionKind::PartialRope)
      // Proportional RoPE: the exponent's denominator is the full head
      // width (gemma-text.md §6.4).
      layer.basis = "head_width";
    layer.headDim = geometry[i].first;
    layer.numKvHeads = geometry[i].second;
    layer.vFromK = *kEqV && layer.span == Span::Full;
    layer.layerScalar = true;
    layer.vNorm = true;
    out.layers.push_back(layer);
  }
  std::string prefix = multimodal ? "model.language_model." : "model.";
  out.layersPrefix = prefix + "layers";
  out.embedPrefix = prefix + "embed_tokens";
  out.finalNormPrefix = prefix + "norm";
  return out;
}

/// The Gemma 4 vision encoder (defaults of Gemma4VisionConfig). The family
/// tensor table knows patch 16 and 10240 positions, standardized output.
FailureOr<HfVision> readVision(ConfigReader &r, const JsonNode &v) {
  if (failed(checkNestedType(r, v, "gemma4_vision")))
    return failure();
  FailureOr<int64_t> hidden, ffn, layers, heads, kv, headDim, patch, positions;
  if (failed(hidden = r.intOr(v, "hidden_size", 768, 1, 1 << 20)) ||
      failed(ffn = r.intOr(v, "intermediate_size", 3072, 1, 1 << 20)) ||
      failed(layers = r.intOr(v, "num_hidden_layers", 16, 1, 4096)) ||
      failed(heads = r.intOr(v, "num_attention_heads", 12, 1, 4096)) ||
      failed(kv = r.intOr(v, "num_key_value_heads", 12, 1, 4096)) ||
      failed(headDim = r.intOr(v, "head_dim", 64, 1, 1 << 20)) ||
      failed(patch = r.intOr(v, "patch_size", 16, 1, 1 << 20)) ||
      failed(positions =
                 r.intOr(v, "position_embedding_size", 10240, 1, 1 << 24)))
    return failure();
  FailureOr<double> eps = r.numberOr(v, "rms_norm_eps", 1e-6, 0, 1);
  FailureOr<bool> clipped, standardize, bias;
  FailureOr<std::string> act;
  if (failed(eps) || failed(clipped = r.boolOr(v, "use_clipped_linears", false)) ||
      failed(standardize = r.boolOr(v, "standardize", false)) ||
      failed(bias = r.boolOr(v, "attention_bias", false)) ||
      failed(act = r.stringOr(v, "hidden_activation", "gelu_pytorch_tanh")))
    return failure();
  if (*clipped)
    return r.unsupported(v, "use_clipped_linears", "clipped vision linears");
  if (*bias)
    return r.unsupported(v, "attention_bias", "vision attention biases");
  if (*act != "gelu_pytorch_tanh")
    return r.unsupported(v, "hidden_activation",
                         "hidden_activation '" + printable(*act) + "'");
  if (!*standardize)
    return r.unsupported(v, "standardize",
                         "standardize false (absent: the default): the "
                         "family tensor table has std_bias and std_scale");
  if (*patch != 16 || *positions != 10240)
    return r.unsupported(v, *patch != 16 ? "patch_size"
                                         : "position_embedding_size",
                         "a vision tower other than gemma4's (patch 16, "
                         "10240 positions): the family tensor table knows "
                         "that one only");
  if (*heads * *headDim != *hidden)
    return r.error(JsonReader::child(v, "head_dim").path, v.path)
           << "num_attention_heads x head_dim = " << *heads << " x "
           << *headDim << " disagrees with hidden_size " << *hidden;
  if (*heads % *kv != 0)
    return r.error(JsonReader::child(v, "num_key_value_heads").path, v.path)
           << "num_key_value_heads " << *kv
           << " does not divide num_attention_heads " << *heads;
  double theta = 100.0;
  if (ConfigReader::given(v, "rope_parameters")) {
    FailureOr<JsonNode> rope = r.objectOr(v, "rope_parameters");
    FailureOr<std::string> type;
    FailureOr<double> t;
    if (failed(rope) || failed(type = r.stringOr(*rope, "rope_type", "axial")) ||
        failed(t = r.numberOr(*rope, "rope_theta", 100.0, 0,
                              std::numeric_limits<double>::max())))
      return failure();
    if (*type != "axial" && *type != "default")
      return r.unsupported(*rope, "rope_type",
                           "vision rope_type '" + printable(*type) + "'");
    theta = *t;
  }
  const VisionFacts &facts = visionFacts(Family::Gemma4);
  HfVision out;
  OpaqueComponentSpec &s = out.spec;
  s.id = "vision";
  s.role = "perception";
  s.family = Family::Gemma4;
  s.modality = "image";
  s.numLayers = *layers;
  s.hiddenSize = *hidden;
  s.numHeads = *heads;
  s.numKvHeads = *kv;
  s.headDim = *headDim;
  s.intermediateSize = *ffn;
  s.towerPrefix = facts.towerPrefix.str();
  s.adapterPrefix = facts.adapterPrefix.str();
  for (int64_t i = 0; i < *layers; ++i) {
    LayerSpec l;
    l.index = static_cast<unsigned>(i);
    l.span = Span::Full;
    l.position = PositionKind::Rope;
    l.theta = theta;
    l.headDim = s.headDim;
    l.numKvHeads = s.numKvHeads;
    l.vNorm = true;
    s.layers.push_back(l);
  }
  // The image keys, norms and adapter the family has (the graph writer
  // states none of them).
  applyVisionFamily(s);
  out.eps = *eps;
  return out;
}
} // namespace

FailureOr<HfModel> mlir::sgc::import::hf::readGemma4(ConfigReader &r,
                                                     const JsonNode &root,
                                                     StringRef modelType) {
  HfModel model;
  model.vNorm = true;
  if (modelType == "gemma4_text") {
    FailureOr<TextSpec> text = readText(r, root, /*multimodal=*/false);
    if (failed(text))
      return failure();
    model.text = std::move(*text);
    return model;
  }
  if (ConfigReader::given(root, "audio_config"))
    return r.unsupported(root, "audio_config", "an audio tower");
  FailureOr<bool> tied = r.boolOr(root, "tie_word_embeddings", true);
  if (failed(tied))
    return failure();
  if (!*tied)
    return r.unsupported(root, "tie_word_embeddings",
                         "tie_word_embeddings false (an untied LM head)");
  FailureOr<JsonNode> textNode = r.objectOr(root, "text_config");
  if (failed(textNode))
    return failure();
  FailureOr<TextSpec> text = readText(r, *textNode, /*multimodal=*/true);
  if (failed(text))
    return failure();
  model.text = std::move(*text);
  // The vision tower is optional in Gemma4Config.
  if (ConfigReader::given(root, "vision_config")) {
    FailureOr<JsonNode> visionNode = r.objectOr(root, "vision_config");
    FailureOr<HfVision> vision;
    if (failed(visionNode) || failed(vision = readVision(r, *visionNode)))
      return failure();
    model.vision = std::move(*vision);
  }
  return model;
}
