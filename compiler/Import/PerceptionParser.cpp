//===- PerceptionParser.cpp - a perception component's keys ---------------===//
//
// Part of sgc. The rules of VISION_KEYS.md: a perception component's
// `perception` block (encoder geometry, `image`), its optional `execution`
// and its layers, resolved into a VisionSpec. An absent key takes the
// family's value (a completion; an error under --strict-graph); a present
// size or number wins, with a remark when it differs from the family; a
// structural key (norm kind, placement, biases, FFN kind, q/k norms) must
// be the family's, since the family's tensor table names the checkpoint's
// tensors. The four known seed errors keep the family winning
// (FamilyCompletions.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyCompletions.h"
#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"
#include "compiler/Import/GraphParser.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

namespace {
/// Limits of the image keys (they keep the tensor table's arithmetic in
/// range).
constexpr int64_t kMaxPatch = 1024;
constexpr int64_t kMaxImage = 65536;
constexpr int64_t kMaxSoftTokens = 1 << 20;
constexpr int64_t kMaxPositions = 1 << 24;

std::string normKindName(NormKind kind) {
  return kind == NormKind::LayerNorm ? "layer_norm" : "rms_norm";
}

std::string ffnKindName(FfnKind kind) {
  return kind == FfnKind::Plain ? "plain" : "gated";
}

std::string boolName(bool b) { return b ? "true" : "false"; }

/// The integer square root of `n` when n is a perfect square, else -1.
int64_t exactSqrt(int64_t n) {
  auto r =
      static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  for (int64_t c = std::max<int64_t>(r - 1, 0); c <= r + 1; ++c)
    if (c * c == n)
      return c;
  return -1;
}
} // namespace

LogicalResult GraphParser::absentKey(const std::string &path,
                                     const std::string &parent, StringRef key,
                                     Family family, const std::string &value) {
  if (options.strictGraph)
    return error(path, parent)
           << "missing key '" << key << "' (--strict-graph: no family default)";
  complete(path, parent,
           key.str() + ": absent; the " + familyName(family).str() +
               " family value " + value + " applies");
  return success();
}

void GraphParser::differs(const std::string &path, StringRef key, Family family,
                          const std::string &graphValue,
                          const std::string &familyValue) {
  if (options.strictGraph || graphValue == familyValue)
    return;
  complete(path, "",
           key.str() + " " + graphValue + ": the graph's value applies (the " +
               familyName(family).str() + " family's is " + familyValue + ")");
}

//===----------------------------------------------------------------------===//
// perception.image
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::parseImage(const Node &p, VisionSpec &spec) {
  const VisionFacts &facts = visionFacts(spec.family);
  std::string family = familyName(spec.family).str();
  bool g3 = spec.family == Family::Gemma3;
  Node img = child(p, "image");
  VisionPaths &paths = visionPaths.emplace_back();
  paths.tokens = img.path + ".token_ids";
  paths.tokensParent = has(p, "image") ? img.path : p.path;

  if (!has(p, "image")) {
    if (options.strictGraph)
      return error(img.path, p.path)
             << "missing key 'image' (--strict-graph: no family default)";
    std::string values =
        "patch_size " + std::to_string(spec.patchSize) +
        (g3 ? ", image_size " + std::to_string(spec.imageSize) : "") +
        ", soft_tokens_per_image " + std::to_string(spec.softTokensPerImage) +
        ", pooling_kernel " + std::to_string(spec.poolingKernel) +
        ", position_embedding_size " + std::to_string(spec.positionTableSize) +
        (g3 ? "" : ", standardize true") + ", token_ids image " +
        std::to_string(spec.tokens.image) + ", boi " +
        std::to_string(spec.tokens.boi) + ", eoi " +
        std::to_string(spec.tokens.eoi);
    complete(img.path, p.path,
             "perception.image: absent; the " + family +
                 " family values apply: " + values);
    return success();
  }
  if (!img->is_object())
    return error(img.path) << "expected an object for perception.image, got "
                           << describe(*img);
  // Keys the family cannot have are errors, not unknown-key warnings.
  if (!g3 && has(img, "image_size"))
    return error(child(img, "image_size").path)
           << "image_size on a gemma4 tower: gemma4 resizes each image "
              "keeping its aspect ratio within the patch budget "
              "(soft_tokens_per_image); there is no fixed image size";
  if (g3 && has(img, "standardize"))
    return error(child(img, "standardize").path)
           << "standardize on a gemma3 tower: only gemma4 standardizes its "
              "pooled tokens (std_bias, std_scale)";
  SmallVector<StringRef> keys = {"patch_size", "soft_tokens_per_image",
                                 "pooling_kernel", "position_embedding_size",
                                 "token_ids"};
  keys.push_back(g3 ? "image_size" : "standardize");
  if (failed(checkObject(img, {}, keys, "perception.image")))
    return failure();

  // One integer key: the graph's (a remark when it differs from
  // `familyValue`), else `familyValue` (a completion). `familyValue` < 0:
  // derived; the caller checks it.
  auto intKey = [&](StringRef key, int64_t hi, int64_t familyValue,
                    int64_t &out, bool &given) -> LogicalResult {
    Node n = child(img, key);
    given = has(img, key);
    if (!given) {
      if (familyValue < 0)
        return success();
      out = familyValue;
      return absentKey(n.path, img.path, key, spec.family,
                       std::to_string(familyValue));
    }
    FailureOr<int64_t> v = getInt(img, key, 1, hi);
    if (failed(v))
      return failure();
    out = *v;
    if (familyValue >= 0)
      differs(n.path, key, spec.family, std::to_string(*v),
              std::to_string(familyValue));
    return success();
  };
  bool given = false;
  if (failed(intKey("patch_size", kMaxPatch, facts.patchSize, spec.patchSize,
                    given)) ||
      failed(intKey("soft_tokens_per_image", kMaxSoftTokens,
                    facts.softTokensPerImage, spec.softTokensPerImage, given)))
    return failure();

  if (g3) {
    bool imageGiven = false;
    if (failed(intKey("image_size", kMaxImage, facts.imageSize, spec.imageSize,
                      imageGiven)))
      return failure();
    std::string at = imageGiven ? child(img, "image_size").path
                                : child(img, "patch_size").path;
    if (spec.imageSize % spec.patchSize != 0)
      return error(at, img.path)
             << "image_size " << spec.imageSize
             << " is not a multiple of patch_size " << spec.patchSize;
    int64_t side = spec.imageSize / spec.patchSize;
    std::string softPath = child(img, "soft_tokens_per_image").path;
    int64_t pooledSide = exactSqrt(spec.softTokensPerImage);
    if (pooledSide < 0)
      return error(softPath, img.path)
             << "soft_tokens_per_image " << spec.softTokensPerImage
             << " is not a square (gemma3 pools the square patch grid into a "
                "square grid)";
    if (side % pooledSide != 0)
      return error(softPath, img.path)
             << "soft_tokens_per_image " << spec.softTokensPerImage
             << " does not divide the " << side << " x " << side
             << " patch grid into equal squares ((image_size / patch_size)^2 "
                "= "
             << side * side << ")";
    // Pooling kernel and position table follow from the sizes.
    int64_t kernel = side / pooledSide;
    std::string derivation = "(image_size / patch_size) / "
                             "sqrt(soft_tokens_per_image) = (" +
                             std::to_string(spec.imageSize) + " / " +
                             std::to_string(spec.patchSize) + ") / " +
                             std::to_string(pooledSide) + " = " +
                             std::to_string(kernel);
    struct Derived {
      StringRef key;
      int64_t value;
      std::string how;
      int64_t *out;
    } derived[] = {{"pooling_kernel", kernel, derivation, &spec.poolingKernel},
                   {"position_embedding_size", side * side,
                    "(image_size / patch_size)^2 = " + std::to_string(side) +
                        "^2 = " + std::to_string(side * side),
                    &spec.positionTableSize}};
    for (const Derived &d : derived) {
      bool present = false;
      int64_t value = 0;
      if (failed(intKey(d.key,
                        d.key == "pooling_kernel" ? kMaxPatch : kMaxPositions,
                        -1, value, present)))
        return failure();
      std::string path = child(img, d.key).path;
      if (!present) {
        if (options.strictGraph)
          return error(path, img.path)
                 << "missing key '" << d.key
                 << "' (--strict-graph: no derived default)";
        complete(path, img.path, d.key.str() + ": absent; derived " + d.how);
        *d.out = d.value;
        continue;
      }
      if (value != d.value)
        return error(path) << d.key << " " << value << " disagrees with "
                           << d.how;
      *d.out = value;
    }
  } else {
    if (failed(intKey("pooling_kernel", kMaxPatch, facts.poolingKernel,
                      spec.poolingKernel, given)) ||
        failed(intKey("position_embedding_size", kMaxPositions,
                      facts.positionTableSize, spec.positionTableSize, given)))
      return failure();
    Node n = child(img, "standardize");
    if (!has(img, "standardize")) {
      spec.standardize = true;
      if (failed(
              absentKey(n.path, img.path, "standardize", spec.family, "true")))
        return failure();
    } else {
      FailureOr<bool> standardize = getBool(img, "standardize");
      if (failed(standardize))
        return failure();
      spec.standardize = *standardize;
      differs(n.path, "standardize", spec.family, boolName(*standardize),
              "true");
    }
  }

  // The image, BOI and EOI token ids; checked against the text vocabulary
  // once every component is read (checkVisionTokens).
  Node tok = child(img, "token_ids");
  std::string familyIds = std::to_string(facts.tokens.image) + ", " +
                          std::to_string(facts.tokens.boi) + ", " +
                          std::to_string(facts.tokens.eoi);
  if (!has(img, "token_ids"))
    return absentKey(tok.path, img.path, "token_ids", spec.family,
                     "(image, boi, eoi) " + familyIds);
  if (failed(checkObject(tok, {"image", "boi", "eoi"}, {}, "token_ids")))
    return failure();
  paths.tokensGiven = true;
  FailureOr<int64_t> image = getInt(tok, "image", 0, kMaxVocab);
  FailureOr<int64_t> boi, eoi;
  if (failed(image) || failed(boi = getInt(tok, "boi", 0, kMaxVocab)) ||
      failed(eoi = getInt(tok, "eoi", 0, kMaxVocab)))
    return failure();
  if (*boi == *image || *eoi == *image || *eoi == *boi)
    return error(child(tok, *boi == *image ? "boi" : "eoi").path)
           << "token id " << (*boi == *image ? *boi : *eoi)
           << " is used twice (image " << *image << ", boi " << *boi << ", eoi "
           << *eoi << "; each needs its own id)";
  spec.tokens = {*image, *boi, *eoi};
  differs(tok.path, "token_ids (image, boi, eoi)", spec.family,
          std::to_string(*image) + ", " + std::to_string(*boi) + ", " +
              std::to_string(*eoi),
          familyIds);
  return success();
}

LogicalResult GraphParser::checkVisionTokens() {
  for (size_t i = 0; i < graph.opaqueComponents.size(); ++i) {
    const VisionSpec &v = graph.opaqueComponents[i];
    const VisionPaths &paths = visionPaths[i];
    std::pair<StringRef, int64_t> ids[] = {{"image", v.tokens.image},
                                           {"boi", v.tokens.boi},
                                           {"eoi", v.tokens.eoi}};
    for (const auto &[key, id] : ids) {
      if (id < graph.text.vocabSize)
        continue;
      std::string path =
          paths.tokensGiven ? paths.tokens + "." + key.str() : paths.tokens;
      return error(path, paths.tokensParent)
             << "token id " << key << " " << id
             << (paths.tokensGiven ? "" : " (the family's)")
             << " is not below the text vocab_size " << graph.text.vocabSize;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The encoder's layers and execution block
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::checkVisionLayers(const Node &c, VisionSpec &spec) {
  bool rope = visionFacts(spec.family).rope2d;
  Node attention = child(c, "attention");
  for (const LayerSpec &l : spec.layers) {
    Node a = element(attention, l.index);
    if (l.span != Span::Full)
      return error(child(a, "span").path)
             << "span 'sliding' on a vision encoder layer (every patch "
                "attends to every patch of its image: 'full')";
    if (rope && l.position != PositionKind::Rope)
      return error(child(child(a, "position"), "kind").path)
             << "position kind on a gemma4 vision layer must be 'rope' (the "
                "2-D axial RoPE over patch x and y)";
    if (!rope && l.position != PositionKind::None)
      return error(child(child(a, "position"), "kind").path)
             << "position kind on a gemma3 vision layer must be 'none' "
                "(SigLIP adds a learned absolute position table once; no "
                "RoPE)";
    if (rope && l.theta != spec.layers.front().theta)
      return error(child(child(a, "position"), "theta").path)
             << "theta " << formatDouble(l.theta) << " differs from layer 0's "
             << formatDouble(spec.layers.front().theta)
             << " (the tower has one RoPE table)";
    if (rope && l.headDim % 4 != 0)
      return error(a.path) << "head_dim " << l.headDim
                           << " is not a multiple of 4 (the 2-D RoPE "
                              "rotates pairs in an x half and a y half)";
  }
  return success();
}

LogicalResult GraphParser::applyVisionExecution(const Node &execNode,
                                                const ExecSpec &exec,
                                                VisionSpec &spec,
                                                PerceptionAsWritten &written) {
  const VisionFacts &facts = visionFacts(spec.family);
  std::string family = familyName(spec.family).str();
  bool g3 = spec.family == Family::Gemma3;
  bool strict = options.strictGraph;
  Node attn = child(execNode, "attention");
  Node ffn = child(execNode, "ffn");
  Node norm = child(execNode, "norm");
  std::string tower =
      g3 ? "a gemma3 vision tower (SigLIP)" : "a gemma4 vision tower";

  // Norms: the family's kind; sizes and offsets may differ.
  struct NormAt {
    StringRef key;
    bool present;
    const NormSpec *spec;
  } norms[] = {{"pre", true, &exec.pre},
               {"post", exec.hasPost, &exec.post},
               {"final_norm", exec.hasFinal, &exec.finalNorm}};
  for (const NormAt &n : norms) {
    if (!n.present)
      continue;
    Node at = child(norm, n.key);
    if (n.spec->kind != facts.normKind)
      return error(child(at, "kind").path)
             << "norm kind '" << normKindName(n.spec->kind) << "' on " << tower
             << ": its norms are "
             << (g3 ? "LayerNorms with a bias (layer_norm)"
                    : "RMSNorms without a bias (rms_norm)");
    differs(child(at, "eps").path, "eps", spec.family,
            formatDouble(n.spec->eps), formatDouble(facts.eps));
    if (n.spec->kind == NormKind::RMSNorm)
      differs(child(at, "weight_offset").path, "weight_offset", spec.family,
              std::to_string(n.spec->weightOffset), "0");
  }
  if (g3 && exec.postNorms)
    return error(child(norm, "placement").path)
           << "placement 'pre_post' on " << tower
           << ": SigLIP has pre norms only (layer_norm1, layer_norm2)";
  if (g3 && !exec.hasFinal)
    return error(norm.path) << "missing key 'final_norm': " << tower
                            << " ends with a LayerNorm (post_layernorm)";
  if (!g3 && exec.hasFinal && strict)
    return error(child(norm, "final_norm").path)
           << "a final norm on " << tower
           << ": there is none after its last layer (no tensor names one)";
  spec.preNorm = exec.pre;
  spec.postNorm = exec.hasPost ? exec.post : exec.pre;
  spec.postNorms = exec.postNorms;
  spec.hasFinalNorm = exec.hasFinal;
  spec.finalNorm = exec.hasFinal ? exec.finalNorm : exec.pre;
  spec.adapterNorm.eps = exec.pre.eps;

  // Attention.
  if (exec.attentionBias) {
    if (*exec.attentionBias != facts.attentionBias)
      return error(child(attn, "attention_bias").path)
             << "attention_bias " << boolName(*exec.attentionBias) << " on "
             << tower << ": its q/k/v/o projections "
             << (g3 ? "have biases" : "have none");
  } else if (failed(absentKey(child(attn, "attention_bias").path, attn.path,
                              "attention_bias", spec.family,
                              boolName(facts.attentionBias)))) {
    return failure();
  }
  spec.attentionBias = facts.attentionBias;
  double familyScale = facts.scoreScaleFor(spec.headDim);
  if (!exec.hasScoreScale) {
    spec.scoreScale = familyScale;
    if (failed(absentKey(child(attn, "score_scale").path, attn.path,
                         "score_scale", spec.family,
                         formatDouble(familyScale))))
      return failure();
  } else {
    spec.scoreScale = exec.scoreScale;
    // gemma4's seed value is a known error: the family wins there
    // (completePerception).
    if (g3)
      differs(child(attn, "score_scale").path, "score_scale", spec.family,
              formatDouble(exec.scoreScale), formatDouble(familyScale));
  }
  if (exec.qkNorms != facts.qkNorms)
    return error(exec.qkNorms ? child(attn, "qk_norm_scope").path : attn.path)
           << (g3 ? "qk_norm_scope on " : "missing key 'qk_norm_scope': ")
           << tower
           << (g3 ? " has no q/k norms (leave out qk_norm_scope)"
                  : " has per-head q and k RMSNorms (q_norm, k_norm)");
  spec.qkNorms = exec.qkNorms;
  spec.qkNormOffset = exec.qkNormOffset;
  if (exec.qkNorms)
    differs(child(attn, "qk_norm_weight_offset").path, "qk_norm_weight_offset",
            spec.family, std::to_string(exec.qkNormOffset), "0");
  Node freeV = child(child(attn, "parameter_free_qk_norm"), "v");
  if (!exec.hasFreeNorm) {
    spec.vNorm = facts.vNorm;
    if (failed(absentKey(freeV.path, attn.path, "parameter_free_qk_norm.v",
                         spec.family, boolName(facts.vNorm))))
      return failure();
  } else {
    if (g3 && exec.freeV)
      return error(freeV.path) << "parameter_free_qk_norm.v true on " << tower
                               << ": SigLIP has no V norm";
    spec.vNorm = exec.freeV;
  }

  // FFN.
  if (exec.ffnKind != facts.ffnKind)
    return error(child(ffn, "ffn_type").path)
           << "ffn_type '" << ffnKindName(exec.ffnKind) << "' on " << tower
           << ": its FFN is "
           << (g3 ? "plain (fc2(act(fc1(x))))"
                  : "gated (down(act(gate(x)) * up(x)))");
  spec.ffnKind = exec.ffnKind;
  if (exec.ffnBias) {
    if (*exec.ffnBias != facts.ffnBias)
      return error(child(ffn, "bias").path)
             << "ffn.bias " << boolName(*exec.ffnBias) << " on " << tower
             << (g3 ? ": fc1 and fc2 have biases"
                    : ": its gate, up and down projections have none");
  } else if (failed(absentKey(child(ffn, "bias").path, ffn.path, "ffn.bias",
                              spec.family, boolName(facts.ffnBias)))) {
    return failure();
  }
  spec.ffnBias = facts.ffnBias;
  differs(child(ffn, "intermediate_size").path, "intermediate_size",
          spec.family, std::to_string(spec.intermediateSize),
          std::to_string(facts.intermediateSize));

  PerceptionAsWritten::Execution &e = written.execution.emplace();
  e.scoreScalePath = child(attn, "score_scale").path;
  e.freeVPath = freeV.path;
  e.normPath = norm.path;
  e.scoreScale = spec.scoreScale;
  e.freeV = spec.vNorm;
  e.postNorms = exec.postNorms;
  e.hasFinal = exec.hasFinal;
  return success();
}

//===----------------------------------------------------------------------===//
// The component
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::parsePerception(const Node &c, Family family) {
  VisionSpec &spec = graph.opaqueComponents.back();
  const VisionFacts &facts = visionFacts(family);
  if (!has(c, "perception"))
    return error(c.path) << "missing required key 'perception' (a "
                            "perception component needs one)";
  FailureOr<int64_t> numLayers = getInt(c, "num_layers", 1, kMaxLayers);
  FailureOr<int64_t> hidden;
  if (failed(numLayers) ||
      failed(hidden = getInt(c, "hidden_size", 1, kMaxWidth)))
    return failure();
  spec.numLayers = *numLayers;
  spec.hiddenSize = *hidden;

  Node p = child(c, "perception");
  if (failed(
          checkObject(p, {"modality", "transform"}, {"image"}, "perception")))
    return failure();
  FailureOr<std::string> modality =
      getEnum(p, "modality", {"image"}, "modality");
  if (failed(modality))
    return failure();
  spec.modality = *modality;
  Node transform = child(p, "transform");
  if (failed(checkObject(transform, {"encoder"}, {}, "perception.transform")))
    return failure();
  Node encoder = child(transform, "encoder");
  if (failed(checkObject(encoder, {"depth", "width", "num_heads"}, {},
                         "perception.transform.encoder")))
    return failure();
  FailureOr<int64_t> depth = getInt(encoder, "depth", 1, kMaxLayers);
  FailureOr<int64_t> width, heads;
  if (failed(depth) || failed(width = getInt(encoder, "width", 1, kMaxWidth)) ||
      failed(heads = getInt(encoder, "num_heads", 1, kMaxHeads)))
    return failure();
  if (*depth != spec.numLayers)
    return error(child(encoder, "depth").path)
           << "encoder depth " << *depth << " disagrees with num_layers "
           << spec.numLayers;
  if (*width != spec.hiddenSize)
    return error(child(encoder, "width").path)
           << "encoder width " << *width << " disagrees with hidden_size "
           << spec.hiddenSize;
  spec.numHeads = *heads;

  PerceptionAsWritten written;
  written.componentPath = c.path;
  written.layersPath = child(c, "attention").path;
  LayerDefaults defaults;
  defaults.numQHeads = spec.numHeads;
  ExecSpec exec;
  Node execNode = child(c, "execution");
  bool haveExec = has(c, "execution");
  if (haveExec) {
    if (failed(parseExecution(execNode, /*text=*/false, exec)))
      return failure();
    Node attn = child(execNode, "attention");
    if (exec.numQHeads != spec.numHeads)
      return error(child(attn, "num_q_heads").path)
             << "num_q_heads " << exec.numQHeads
             << " disagrees with the encoder's num_heads " << spec.numHeads;
    if (exec.numQHeads * exec.headDim != spec.hiddenSize)
      return error(child(attn, "head_dim").path)
             << "num_q_heads x head_dim = " << exec.numQHeads << " x "
             << exec.headDim << " = " << exec.numQHeads * exec.headDim
             << " disagrees with hidden_size " << spec.hiddenSize;
    spec.numKvHeads = exec.numKvHeads;
    spec.headDim = exec.headDim;
    spec.intermediateSize = exec.intermediateSize;
    defaults.kvHeadsPath = child(attn, "num_kv_heads").path;
    defaults.headDimPath = child(attn, "head_dim").path;
  } else {
    if (options.strictGraph)
      return error(execNode.path, c.path)
             << "missing key 'execution' (--strict-graph: no family default)";
    if (spec.hiddenSize % spec.numHeads != 0)
      return error(child(encoder, "num_heads").path)
             << "hidden_size " << spec.hiddenSize
             << " is not a multiple of num_heads " << spec.numHeads;
    // The encoder's geometry; the FFN width only the family knows.
    spec.numKvHeads = spec.numHeads;
    spec.headDim = spec.hiddenSize / spec.numHeads;
    spec.intermediateSize = facts.intermediateSize;
    defaults.kvHeadsPath = child(encoder, "num_heads").path;
    defaults.headDimPath = child(encoder, "num_heads").path;
  }
  defaults.numKvHeads = spec.numKvHeads;
  defaults.headDim = spec.headDim;
  if (failed(parseLayers(c, spec.numLayers, defaults, spec.layers)) ||
      failed(checkVisionLayers(c, spec)))
    return failure();

  // The family's values first; the graph's keys then replace them.
  applyVisionFamily(spec);
  if (failed(parseImage(p, spec)))
    return failure();
  if (haveExec && failed(applyVisionExecution(execNode, exec, spec, written)))
    return failure();
  for (LayerSpec &layer : spec.layers)
    layer.vNorm = spec.vNorm;
  if (!options.strictGraph)
    completePerception(spec, written,
                       [&](const std::string &path, const std::string &parent,
                           std::string message) {
                         complete(path, parent, std::move(message));
                       });
  return success();
}
