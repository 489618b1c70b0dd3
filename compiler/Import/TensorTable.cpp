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

/// SigLIP-So400m at 896 px, patch 14 (gemma-vision.md §G3.6).
static void gemma3Vision(const OpaqueComponentSpec &c, int64_t textHidden,
                         std::vector<TensorSpec> &out) {
  int64_t d = c.hiddenSize, ffn = c.intermediateSize;
  int64_t q = c.numHeads * c.headDim, kv = c.numKvHeads * c.headDim;
  for (int64_t i = 0; i < c.numLayers; ++i) {
    TableWriter w{out, c.towerPrefix + ".encoder.layers." + std::to_string(i)};
    w.add("layer_norm1.weight", {d});
    w.add("layer_norm1.bias", {d});
    w.add("self_attn.q_proj.weight", {q, d});
    w.add("self_attn.q_proj.bias", {q});
    w.add("self_attn.k_proj.weight", {kv, d});
    w.add("self_attn.k_proj.bias", {kv});
    w.add("self_attn.v_proj.weight", {kv, d});
    w.add("self_attn.v_proj.bias", {kv});
    w.add("self_attn.out_proj.weight", {d, q});
    w.add("self_attn.out_proj.bias", {d});
    w.add("layer_norm2.weight", {d});
    w.add("layer_norm2.bias", {d});
    w.add("mlp.fc1.weight", {ffn, d});
    w.add("mlp.fc1.bias", {ffn});
    w.add("mlp.fc2.weight", {d, ffn});
    w.add("mlp.fc2.bias", {d});
  }
  TableWriter t{out, c.towerPrefix};
  // Conv 3 -> D, kernel 14; (896 / 14)^2 = 4096 learned positions.
  t.add("embeddings.patch_embedding.weight", {d, 3, 14, 14});
  t.add("embeddings.patch_embedding.bias", {d});
  t.add("embeddings.position_embedding.weight", {4096, d});
  t.add("post_layernorm.weight", {d});
  t.add("post_layernorm.bias", {d});
  TableWriter a{out, c.adapterPrefix};
  // Stored [in, out], unlike nn.Linear.
  a.add("mm_input_projection_weight", {d, textHidden});
  a.add("mm_soft_emb_norm.weight", {d});
}

/// The gemma4 ViT, patch 16 (gemma-vision.md §G4.6).
static void gemma4Vision(const OpaqueComponentSpec &c, int64_t textHidden,
                         std::vector<TensorSpec> &out) {
  int64_t d = c.hiddenSize, ffn = c.intermediateSize, hd = c.headDim;
  int64_t q = c.numHeads * hd, kv = c.numKvHeads * hd;
  for (int64_t i = 0; i < c.numLayers; ++i) {
    TableWriter w{out, c.towerPrefix + ".encoder.layers." + std::to_string(i)};
    w.add("self_attn.q_proj.linear.weight", {q, d});
    w.add("self_attn.k_proj.linear.weight", {kv, d});
    w.add("self_attn.v_proj.linear.weight", {kv, d});
    w.add("self_attn.o_proj.linear.weight", {d, q});
    w.add("self_attn.q_norm.weight", {hd});
    w.add("self_attn.k_norm.weight", {hd});
    w.add("mlp.gate_proj.linear.weight", {ffn, d});
    w.add("mlp.up_proj.linear.weight", {ffn, d});
    w.add("mlp.down_proj.linear.weight", {d, ffn});
    w.add("input_layernorm.weight", {d});
    w.add("post_attention_layernorm.weight", {d});
    w.add("pre_feedforward_layernorm.weight", {d});
    w.add("post_feedforward_layernorm.weight", {d});
  }
  TableWriter t{out, c.towerPrefix};
  // 16 x 16 x 3 = 768 inputs per patch; two stacked 1-D position tables.
  t.add("patch_embedder.input_proj.weight", {d, 768});
  t.add("patch_embedder.position_embedding_table", {2, 10240, d});
  t.add("std_bias", {d});
  t.add("std_scale", {d});
  TableWriter a{out, c.adapterPrefix};
  a.add("embedding_projection.weight", {textHidden, d});
}

std::vector<TensorSpec>
mlir::sgc::import::perceptionTensors(const OpaqueComponentSpec &component,
                                     int64_t textHiddenSize) {
  std::vector<TensorSpec> out;
  if (component.family == Family::Gemma3)
    gemma3Vision(component, textHiddenSize, out);
  else
    gemma4Vision(component, textHiddenSize, out);
  return out;
}
