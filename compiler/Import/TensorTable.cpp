//===- TensorTable.cpp - the checkpoint tensors of a family ---------------===//
//
// Part of sgc. Names and shapes of every tensor a component binds, derived
// from its resolved geometry: gemma-text.md §12 for the text decoders,
// gemma-vision.md §G3.6 / §G4.6 for the vision towers. The importer checks
// the declared counts and bytes of the graph's objects against these; the
// IR binds exactly the text tensors (Importer.cpp checks that too).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/GraphSpec.h"

using namespace mlir::sgc::import;

namespace {
/// Appends tensors under one prefix.
struct TableWriter {
  std::vector<TensorSpec> &out;
  std::string prefix;

  void add(llvm::StringRef name, std::vector<int64_t> shape) {
    out.push_back(TensorSpec{prefix + "." + name.str(), std::move(shape)});
  }
};
} // namespace

std::vector<TensorSpec> mlir::sgc::import::textTensors(const TextSpec &text) {
  std::vector<TensorSpec> out;
  int64_t h = text.hiddenSize, hq = text.numQHeads, ffn = text.intermediateSize;
  TableWriter{out, text.embedPrefix}.add("weight", {text.vocabSize, h});
  for (const LayerSpec &layer : text.layers) {
    TableWriter w{out, text.layersPrefix + "." + std::to_string(layer.index)};
    int64_t d = layer.headDim, hkv = layer.numKvHeads;
    w.add("input_layernorm.weight", {h});
    if (text.postNorms)
      w.add("post_attention_layernorm.weight", {h});
    w.add("pre_feedforward_layernorm.weight", {h});
    if (text.postNorms)
      w.add("post_feedforward_layernorm.weight", {h});
    w.add("self_attn.q_proj.weight", {hq * d, h});
    w.add("self_attn.k_proj.weight", {hkv * d, h});
    // V from K: no v_proj (gemma-text.md §5.5).
    if (!layer.vFromK)
      w.add("self_attn.v_proj.weight", {hkv * d, h});
    w.add("self_attn.o_proj.weight", {h, hq * d});
    w.add("self_attn.q_norm.weight", {d});
    w.add("self_attn.k_norm.weight", {d});
    // The weightless V norm has no tensor.
    w.add("mlp.gate_proj.weight", {ffn, h});
    w.add("mlp.up_proj.weight", {ffn, h});
    w.add("mlp.down_proj.weight", {h, ffn});
    // A persistent buffer without a `.weight` suffix (gemma-text.md §9.2).
    if (layer.layerScalar)
      w.add("layer_scalar", {1});
  }
  TableWriter{out, text.finalNormPrefix}.add("weight", {h});
  return out;
}

namespace {
/// Names each role of a vision tower and, when `out` is given, appends the
/// tensor with its shape.
struct VisionTable {
  const VisionSpec &c;
  int64_t textHidden;
  std::vector<TensorSpec> *out;
  VisionTensorNames names;

  void add(std::string &field, std::string name, std::vector<int64_t> shape) {
    field = std::move(name);
    if (out)
      out->push_back(TensorSpec{field, std::move(shape)});
  }

  /// SigLIP (gemma-vision.md §G3.6): LayerNorms with biases, q/k/v/out
  /// projections with biases, fc1/fc2 with biases.
  void gemma3() {
    int64_t d = c.hiddenSize, ffn = c.intermediateSize, p = c.patchSize;
    int64_t q = c.numHeads * c.headDim, kv = c.numKvHeads * c.headDim;
    for (int64_t i = 0; i < c.numLayers; ++i) {
      std::string l = c.towerPrefix + ".encoder.layers." + std::to_string(i);
      VisionLayerTensors &t = names.layers.emplace_back();
      add(t.preAttnNorm, l + ".layer_norm1.weight", {d});
      add(t.preAttnNormBias, l + ".layer_norm1.bias", {d});
      add(t.q, l + ".self_attn.q_proj.weight", {q, d});
      add(t.qBias, l + ".self_attn.q_proj.bias", {q});
      add(t.k, l + ".self_attn.k_proj.weight", {kv, d});
      add(t.kBias, l + ".self_attn.k_proj.bias", {kv});
      add(t.v, l + ".self_attn.v_proj.weight", {kv, d});
      add(t.vBias, l + ".self_attn.v_proj.bias", {kv});
      add(t.o, l + ".self_attn.out_proj.weight", {d, q});
      add(t.oBias, l + ".self_attn.out_proj.bias", {d});
      add(t.preFfnNorm, l + ".layer_norm2.weight", {d});
      add(t.preFfnNormBias, l + ".layer_norm2.bias", {d});
      add(t.ffnIn, l + ".mlp.fc1.weight", {ffn, d});
      add(t.ffnInBias, l + ".mlp.fc1.bias", {ffn});
      add(t.ffnOut, l + ".mlp.fc2.weight", {d, ffn});
      add(t.ffnOutBias, l + ".mlp.fc2.bias", {d});
    }
    const std::string &tw = c.towerPrefix, &ad = c.adapterPrefix;
    // A conv 3 -> D with kernel and stride p; one learned row per patch.
    add(names.patchWeight, tw + ".embeddings.patch_embedding.weight",
        {d, 3, p, p});
    add(names.patchBias, tw + ".embeddings.patch_embedding.bias", {d});
    add(names.positionTable, tw + ".embeddings.position_embedding.weight",
        {c.positionTableSize, d});
    add(names.finalNorm, tw + ".post_layernorm.weight", {d});
    add(names.finalNormBias, tw + ".post_layernorm.bias", {d});
    // Stored [in, out], unlike nn.Linear.
    add(names.projection, ad + ".mm_input_projection_weight", {d, textHidden});
    add(names.adapterNorm, ad + ".mm_soft_emb_norm.weight", {d});
  }

  /// The gemma4 ViT (gemma-vision.md §G4.6): four RMSNorms, q/k norms,
  /// bias-free projections behind the clippable-linear `.linear.` level.
  void gemma4() {
    int64_t d = c.hiddenSize, ffn = c.intermediateSize, hd = c.headDim;
    int64_t q = c.numHeads * hd, kv = c.numKvHeads * hd;
    for (int64_t i = 0; i < c.numLayers; ++i) {
      std::string l = c.towerPrefix + ".encoder.layers." + std::to_string(i);
      VisionLayerTensors &t = names.layers.emplace_back();
      add(t.q, l + ".self_attn.q_proj.linear.weight", {q, d});
      add(t.k, l + ".self_attn.k_proj.linear.weight", {kv, d});
      add(t.v, l + ".self_attn.v_proj.linear.weight", {kv, d});
      add(t.o, l + ".self_attn.o_proj.linear.weight", {d, q});
      if (c.qkNorms) {
        add(t.qNorm, l + ".self_attn.q_norm.weight", {hd});
        add(t.kNorm, l + ".self_attn.k_norm.weight", {hd});
      }
      add(t.ffnIn, l + ".mlp.gate_proj.linear.weight", {ffn, d});
      add(t.ffnUp, l + ".mlp.up_proj.linear.weight", {ffn, d});
      add(t.ffnOut, l + ".mlp.down_proj.linear.weight", {d, ffn});
      add(t.preAttnNorm, l + ".input_layernorm.weight", {d});
      if (c.postNorms)
        add(t.postAttnNorm, l + ".post_attention_layernorm.weight", {d});
      add(t.preFfnNorm, l + ".pre_feedforward_layernorm.weight", {d});
      if (c.postNorms)
        add(t.postFfnNorm, l + ".post_feedforward_layernorm.weight", {d});
    }
    const std::string &tw = c.towerPrefix, &ad = c.adapterPrefix;
    // 3·p² inputs per patch ((py, px, channel) order); two stacked 1-D
    // position tables.
    add(names.patchWeight, tw + ".patch_embedder.input_proj.weight",
        {d, c.patchInputs()});
    add(names.positionTable, tw + ".patch_embedder.position_embedding_table",
        {2, c.positionTableSize, d});
    if (c.standardize) {
      add(names.stdBias, tw + ".std_bias", {d});
      add(names.stdScale, tw + ".std_scale", {d});
    }
    add(names.projection, ad + ".embedding_projection.weight", {textHidden, d});
  }

  void build() {
    if (c.family == Family::Gemma3)
      gemma3();
    else
      gemma4();
  }
};
} // namespace

std::vector<TensorSpec>
mlir::sgc::import::perceptionTensors(const VisionSpec &component,
                                     int64_t textHiddenSize) {
  std::vector<TensorSpec> out;
  VisionTable{component, textHiddenSize, &out, {}}.build();
  return out;
}

VisionTensorNames
mlir::sgc::import::visionTensorNames(const VisionSpec &component) {
  VisionTable table{component, 0, nullptr, {}};
  table.build();
  return std::move(table.names);
}
