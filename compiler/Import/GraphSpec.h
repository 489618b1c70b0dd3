//===- GraphSpec.h - a validated system_graph.json --------------*- C++ -*-===//
//
// Part of sgc. What the importer understood of a schema-6 graph after
// validation and family completions, before any IR exists. GraphParser.cpp
// fills it from the JSON text; BuildIR.cpp turns it into sg IR;
// compiler/Driver/Explain.cpp prints it.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_GRAPHSPEC_H
#define SGC_COMPILER_IMPORT_GRAPHSPEC_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::sgc::import {

/// Where a value sits in the user's file: the JSON path (`$.a[0].b`) and,
/// when known, the 1-based line and column of the value.
struct SourcePos {
  std::string jsonPath;
  unsigned line = 0;
  unsigned column = 0;
};

/// The location an op or diagnostic gets for `pos` in `fileName`:
/// NameLoc(jsonPath) around a FileLineColLoc.
Location makeLoc(MLIRContext *ctx, llvm::StringRef fileName,
                 const SourcePos &pos);

enum class Family { Gemma3, Gemma4 };
enum class Span { Sliding, Full };
enum class PositionKind { Rope, Linear, PartialRope, None };

/// RMSNorm (x / rms(x) · w) or LayerNorm ((x - mean) / std · w + b; vision
/// towers only).
enum class NormKind { RMSNorm, LayerNorm };

/// One norm instance's parameters.
struct NormSpec {
  double eps = 0;
  /// 0: x̂·w, 1: x̂·(1+w).
  int64_t weightOffset = 0;
  NormKind kind = NormKind::RMSNorm;
};

/// `gated`: down(act(gate(x)) · up(x)); `plain`: fc2(act(fc1(x))).
enum class FfnKind { Gated, Plain };

/// One decoder layer's attention, geometry resolved.
struct LayerSpec {
  unsigned index = 0;
  Span span = Span::Full;
  /// Sliding layers only: key j visible to query i iff 0 <= i-j < window.
  int64_t window = 0;
  PositionKind position = PositionKind::None;
  double theta = 0;
  /// `linear`: positions are divided by factor.
  double factor = 1.0;
  /// `partial_rope`.
  double rotaryFraction = 1.0;
  std::string basis;
  /// From `geometry`, else the execution.attention defaults.
  int64_t headDim = 0;
  int64_t numKvHeads = 0;
  /// No v_proj; V is the raw k projection.
  bool vFromK = false;
  /// Gemma 4: the trained per-layer scalar (a completion).
  bool layerScalar = false;
  /// A weightless RMSNorm on V (Gemma 4, every layer).
  bool vNorm = false;
  /// $.components[c].attention[l]
  SourcePos pos;
};

/// The `primary_text` component with every default and completion applied.
struct TextSpec {
  std::string id;
  std::string sourceArtifact;
  Family family = Family::Gemma3;
  int64_t numLayers = 0;
  int64_t hiddenSize = 0;
  int64_t numQHeads = 0;
  int64_t contextLength = 0;
  int64_t vocabSize = 0;
  int64_t intermediateSize = 0;
  /// Multiplies q·k.
  double scoreScale = 1.0;
  /// q_norm / k_norm weight offset.
  int64_t qkNormOffset = 0;
  NormSpec preNorm, postNorm, finalNorm;
  /// Sandwich norms (`placement: pre_post`).
  bool postNorms = false;
  /// The embed scale as written (√H in f32); the IR uses it rounded to the
  /// compute dtype.
  double embedScale = 1.0;
  /// Round embedScale to the compute dtype (a family completion: the
  /// reference casts √H to its weight dtype); false under --strict-graph.
  bool castEmbedScale = true;
  std::optional<double> finalSoftcap;
  /// The LM head is the (unscaled) embedding table.
  bool tiedHead = true;
  /// Checkpoint tensor-name prefixes from the objects' source_bindings, in
  /// full: "model.language_model.layers" (layer l's tensors are
  /// "<layersPrefix>.<l>.self_attn.q_proj.weight"),
  /// "model.language_model.embed_tokens" and "model.language_model.norm"
  /// (each + ".weight").
  std::string layersPrefix, embedPrefix, finalNormPrefix;
  std::vector<LayerSpec> layers;
  /// $.components[c]
  SourcePos pos;
};

/// The checkpoint tensors of one vision encoder layer; "" where the layer
/// has none (gemma3: LayerNorms with biases, fc1/fc2; gemma4: four RMSNorms,
/// q/k norms, gate/up/down).
struct VisionLayerTensors {
  std::string preAttnNorm, preAttnNormBias, postAttnNorm;
  std::string preFfnNorm, preFfnNormBias, postFfnNorm;
  std::string q, qBias, k, kBias, v, vBias, o, oBias, qNorm, kNorm;
  /// gate (gated) or fc1 (plain); up (gated only); down or fc2.
  std::string ffnIn, ffnInBias, ffnUp, ffnOut, ffnOutBias;
};

/// Every checkpoint tensor a vision tower and its adapter bind, by role.
struct VisionTensorNames {
  /// gemma3: the conv [D, 3, p, p] and its bias; gemma4: input_proj
  /// [D, 3·p·p] (no bias).
  std::string patchWeight, patchBias;
  /// gemma3: [P, D]; gemma4: [2, P, D] (x table, y table).
  std::string positionTable;
  std::string finalNorm, finalNormBias;
  /// gemma4 standardization buffers.
  std::string stdBias, stdScale;
  /// gemma3 mm_soft_emb_norm (gemma4's pre-projection norm has no weight).
  std::string adapterNorm;
  /// gemma3: [D, textHidden] (stored [in, out]); gemma4: [textHidden, D].
  std::string projection;
  std::vector<VisionLayerTensors> layers;
};

/// A perception component (a vision tower and its adapter into the text
/// stream), every key resolved: the graph's (VISION_KEYS.md), else the
/// family's. Validated, not lowered yet.
struct VisionSpec {
  std::string id;
  std::string role;
  std::string sourceArtifact;
  Family family = Family::Gemma3;
  /// perception.modality ("image").
  std::string modality;
  int64_t numLayers = 0;
  int64_t hiddenSize = 0;
  /// Encoder geometry (perception.transform.encoder, execution.attention or
  /// the family facts).
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0;
  int64_t intermediateSize = 0;

  //===--- perception.image
  //------------------------------------------------===//
  int64_t patchSize = 0;
  /// gemma3: the square side every image is resized to; 0 for gemma4 (its
  /// resize keeps the aspect ratio).
  int64_t imageSize = 0;
  /// gemma3: the pooled tokens of every image; gemma4: the default patch
  /// budget in soft tokens (`--max-soft-tokens`).
  int64_t softTokensPerImage = 0;
  /// Average pool of pooling_kernel² patches into one soft token.
  int64_t poolingKernel = 0;
  /// Rows of the learned position table (gemma4: of each of its two).
  int64_t positionTableSize = 0;
  /// gemma4: (h - std_bias) · std_scale after pooling.
  bool standardize = false;
  struct TokenIds {
    int64_t image = 0, boi = 0, eoi = 0;
  } tokens;

  //===--- the encoder
  //-----------------------------------------------------===//
  /// Pre norms; post norms around attention and FFN only with `postNorms`.
  NormSpec preNorm, postNorm;
  bool postNorms = false;
  /// A norm after the last encoder layer (gemma3 post_layernorm).
  bool hasFinalNorm = false;
  NormSpec finalNorm;
  /// q/k/v/o biases.
  bool attentionBias = false;
  double scoreScale = 1.0;
  /// Per-head q and k norms with weights, and their weight offset.
  bool qkNorms = false;
  int64_t qkNormOffset = 0;
  /// A weightless RMSNorm on V (also set on every layer).
  bool vNorm = false;
  /// None: the learned table is added once (gemma3); Rope: the 2-D axial
  /// RoPE over patch (x, y), headDim / 4 frequencies per axis (gemma4).
  PositionKind position = PositionKind::None;
  double ropeTheta = 0;
  FfnKind ffnKind = FfnKind::Gated;
  /// fc1/fc2 biases (plain only).
  bool ffnBias = false;

  //===--- pooling and adapter
  //---------------------------------------------===//
  /// Multiplies the pooled tokens (gemma4: sqrt(hidden), gemma3: 1).
  double poolScale = 1.0;
  /// The RMSNorm before the projection: gemma3 (1+w), gemma4 weightless.
  NormSpec adapterNorm;
  bool adapterNormWeight = false;

  /// Checkpoint prefixes of the tower (its layers are
  /// "<towerPrefix>.encoder.layers.<i>.…") and of the adapter into the text
  /// stream, from the objects' source_bindings or the family defaults.
  std::string towerPrefix, adapterPrefix;
  /// Filled once the prefixes are known (visionTensorNames).
  VisionTensorNames tensors;
  /// The encoder's layers (validated like the text layers).
  std::vector<LayerSpec> layers;
  SourcePos pos;

  /// Patches the tower sees per image: gemma3 (imageSize / patchSize)²,
  /// gemma4 the budget softTokensPerImage · poolingKernel².
  int64_t patchesPerImage() const {
    if (family == Family::Gemma3)
      return (imageSize / patchSize) * (imageSize / patchSize);
    return softTokensPerImage * poolingKernel * poolingKernel;
  }
  /// Values per patch: 3 channels of patchSize².
  int64_t patchInputs() const { return 3 * patchSize * patchSize; }
};

/// The older name (a component that is validated but not lowered).
using OpaqueComponentSpec = VisionSpec;

/// One `objects[].source_bindings[]` entry with the figures derived from the
/// family tensor table next to the declared ones.
struct BindingSpec {
  std::string artifact;
  std::string tensorPrefix;
  int64_t declaredTensors = 0, declaredBytes = 0;
  int64_t derivedTensors = 0, derivedBytes = 0;
  SourcePos pos;
};

struct ObjectSpec {
  std::string id, component, kind;
  std::vector<BindingSpec> bindings;
  /// The storage of the object's matrices (2-D tensors): "BF16" or "F16";
  /// its vectors (norm weights, scalars) are BF16 in either. "Q8_0" /
  /// "Q4_0" on a decoder stack name the weights recipe (GraphSpec::
  /// fileTensors then holds every tensor's storage).
  std::string encoding = "BF16";
  SourcePos pos;
};

/// A fact the graph could not express, supplied by the family table.
struct Completion {
  SourcePos pos;
  /// What was completed and why, e.g. "layer_scalar: gemma4 multiplies the
  /// residual stream by a trained per-layer scalar".
  std::string message;
};

/// A checkpoint tensor the text component binds.
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// A tensor as the weights file stores it, where the graph came from one
/// (sgc compile model.gguf): its name there and its encoding ("F32", "F16",
/// "BF16", "Q8_0", "Q4_0", "Q6_K").
struct FileTensor {
  std::string name, encoding;
};

struct GraphSpec {
  std::string fileName;
  TextSpec text;
  std::vector<OpaqueComponentSpec> opaqueComponents;
  std::vector<ObjectSpec> objects;
  std::vector<Completion> completions;
  /// By the graph's tensor name; empty unless the graph came from a
  /// weights file. Each tensor then has the file's encoding and name.
  std::map<std::string, FileTensor> fileTensors;
  /// Where fileTensors came from, for messages: "'model.gguf'" or
  /// "--weights=q4_0".
  std::string fileTensorsSource;
  /// "q8_0" / "q4_0" / "q4_k_m" once a weights recipe is applied
  /// (applyWeightsRecipe).
  std::string weightsRecipe;
};

/// Every checkpoint tensor the text component binds, in a stable order,
/// derived from the family tensor table (gemma-text.md §12).
std::vector<TensorSpec> textTensors(const TextSpec &text);

/// Every checkpoint tensor a perception component (tower and adapter) binds,
/// from the family tensor table (gemma-vision.md §G3.6, §G4.6) and the
/// component's keys. The adapter projects into the text stream of width
/// `textHiddenSize`.
std::vector<TensorSpec> perceptionTensors(const VisionSpec &component,
                                          int64_t textHiddenSize);

/// The same tensors by role (their names only).
VisionTensorNames visionTensorNames(const VisionSpec &component);

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_GRAPHSPEC_H
