//===- GraphWriter.cpp - HfModel -> system_graph.json (schema 6) ----------===//
//
// Part of sgc. Writes what SCHEMA6.md describes, shaped like the seeds:
// per-layer attention with geometry, the execution block of the text
// decoder, the vision component (gemma3: no execution, the family supplies
// it; gemma4: the encoder as the model computes it), and objects whose
// bindings' figures come from the family tensor table by the longest
// prefix, as the importer derives them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/HF/GraphWriter.h"
#include "compiler/Import/FamilyFacts.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdlib>
#include <map>

using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;
using ojson = nlohmann::ordered_json;

namespace {
/// The shortest decimal that reads back as the same f32 (the seeds write
/// the embed scale so: 61.967735).
double shortestF32(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, static_cast<float>(x));
  *res.ptr = '\0';
  return std::strtod(buf, nullptr);
}

ojson norm(const NormSpec &n) {
  return {{"kind", "rms_norm"},
          {"eps", n.eps},
          {"weight_offset", static_cast<double>(n.weightOffset)}};
}

ojson position(const LayerSpec &l) {
  switch (l.position) {
  case PositionKind::Rope:
    return {{"kind", "rope"}, {"theta", l.theta}};
  case PositionKind::Linear:
    return {{"kind", "linear"}, {"theta", l.theta}, {"factor", l.factor}};
  case PositionKind::PartialRope:
    return {{"kind", "partial_rope"},
            {"theta", l.theta},
            {"rotary_fraction", l.rotaryFraction},
            {"basis", l.basis}};
  case PositionKind::None:
    break;
  }
  return {{"kind", "none"}};
}

ojson layer(const LayerSpec &l, bool geometry, bool declaredSpan) {
  ojson a = {{"operator", "softmax"},
             {"span", l.span == Span::Sliding ? "sliding" : "full"}};
  if (l.span == Span::Sliding)
    a["window"] = l.window;
  a["position"] = position(l);
  if (geometry)
    a["geometry"] = {{"head_dim", l.headDim}, {"num_kv_heads", l.numKvHeads}};
  if (l.vFromK)
    a["v_from_k"] = true;
  if (declaredSpan)
    a["declared_span"] =
        l.span == Span::Sliding ? "sliding_attention" : "full_attention";
  return a;
}

ojson gatedFfn(int64_t size) {
  return {{"intermediate_size", size},
          {"activation", "gelu_tanh"},
          {"ffn_type", "gated"},
          {"gate_policy", {{"kind", "gated"}}}};
}

ojson textComponent(const HfModel &m, const std::string &artifact) {
  const TextSpec &t = m.text;
  // execution.attention's defaults are the sliding layers' geometry
  // (SCHEMA6.md); every layer states its own as well, as the seeds do.
  const LayerSpec *ref = &t.layers.front();
  for (const LayerSpec &l : t.layers)
    if (l.span == Span::Sliding) {
      ref = &l;
      break;
    }
  ojson attention = {{"num_q_heads", t.numQHeads},
                     {"num_kv_heads", ref->numKvHeads},
                     {"head_dim", ref->headDim},
                     {"score_scale", t.scoreScale},
                     {"qk_norm_scope", "per_head"},
                     {"qk_norm_weight_offset",
                      static_cast<double>(t.qkNormOffset)},
                     {"parameter_free_qk_norm",
                      {{"q", false}, {"k", false}, {"v", m.vNorm}}},
                     {"attention_bias", false}};
  ojson head = {{"vocab_size", t.vocabSize},
                {"embed_scale", shortestF32(t.embedScale)}};
  if (t.finalSoftcap)
    head["final_logit_softcapping"] = *t.finalSoftcap;
  head["head_reuses_embedding"] = t.tiedHead;
  ojson exec = {
      {"context_length", t.contextLength},
      {"attention", attention},
      {"ffn", gatedFfn(t.intermediateSize)},
      {"norm",
       {{"pre", norm(t.preNorm)},
        {"post", norm(t.postNorm)},
        {"final_norm", norm(t.finalNorm)},
        {"placement", "pre_post"}}},
      {"head", head},
      {"residual_topology", {{"kind", "single_stream"}}}};
  bool declared = t.family == Family::Gemma4;
  ojson layers = ojson::array();
  for (const LayerSpec &l : t.layers)
    layers.push_back(layer(l, /*geometry=*/true, declared));
  return {{"id", "target"},
          {"role", "primary_text"},
          {"source_artifact", artifact},
          {"num_layers", t.numLayers},
          {"hidden_size", t.hiddenSize},
          {"attention", layers},
          {"execution", exec}};
}

ojson visionComponent(const HfVision &v, const std::string &artifact) {
  const OpaqueComponentSpec &s = v.spec;
  ojson layers = ojson::array();
  for (const LayerSpec &l : s.layers)
    layers.push_back(layer(l, /*geometry=*/false, /*declaredSpan=*/true));
  ojson c = {{"id", s.id},
             {"role", "perception"},
             {"source_artifact", artifact},
             {"num_layers", s.numLayers},
             {"hidden_size", s.hiddenSize},
             {"attention", layers}};
  if (s.family == Family::Gemma4) {
    // What the encoder computes (gemma-vision.md §G4): RMSNorm-ed q and k
    // with no score scale, a weightless V norm, sandwich norms and no final
    // encoder norm.
    NormSpec n{v.eps, 0};
    c["execution"] = {
        {"attention",
         {{"num_q_heads", s.numHeads},
          {"num_kv_heads", s.numKvHeads},
          {"head_dim", s.headDim},
          {"score_scale", 1.0},
          {"qk_norm_scope", "per_head"},
          {"qk_norm_weight_offset", 0.0},
          {"parameter_free_qk_norm", {{"q", false}, {"k", false}, {"v", true}}},
          {"attention_bias", false}}},
        {"ffn", gatedFfn(s.intermediateSize)},
        {"norm", {{"pre", norm(n)}, {"post", norm(n)}, {"placement", "pre_post"}}},
        {"residual_topology", {{"kind", "single_stream"}}}};
  }
  c["perception"] = {{"modality", s.modality},
                     {"transform",
                      {{"encoder",
                        {{"depth", s.numLayers},
                         {"width", s.hiddenSize},
                         {"num_heads", s.numHeads}}}}}};
  // A Gemma 3 tower of other sizes than the family's (a test model's):
  // its image keys and execution, which the family would otherwise supply.
  const VisionFacts &f = visionFacts(s.family);
  if (s.family == Family::Gemma3 &&
      (s.imageSize != f.imageSize || s.patchSize != f.patchSize ||
       s.softTokensPerImage != f.softTokensPerImage ||
       s.intermediateSize != f.intermediateSize ||
       s.tokens.image != f.tokens.image || s.tokens.boi != f.tokens.boi ||
       s.tokens.eoi != f.tokens.eoi)) {
    ojson layerNorm = {{"kind", "layer_norm"}, {"eps", v.eps}};
    c["execution"] = {
        {"attention",
         {{"num_q_heads", s.numHeads},
          {"num_kv_heads", s.numKvHeads},
          {"head_dim", s.headDim},
          {"score_scale", f.scoreScaleFor(s.headDim)},
          {"parameter_free_qk_norm", {{"q", false}, {"k", false}, {"v", false}}},
          {"attention_bias", true}}},
        {"ffn",
         {{"intermediate_size", s.intermediateSize},
          {"activation", "gelu_tanh"},
          {"ffn_type", "plain"},
          {"bias", true}}},
        {"norm", {{"pre", layerNorm}, {"final_norm", layerNorm}}},
        {"residual_topology", {{"kind", "single_stream"}}}};
    c["perception"]["image"] = {
        {"patch_size", s.patchSize},
        {"image_size", s.imageSize},
        {"soft_tokens_per_image", s.softTokensPerImage},
        {"pooling_kernel", s.poolingKernel},
        {"position_embedding_size", s.positionTableSize},
        {"token_ids",
         {{"image", s.tokens.image}, {"boi", s.tokens.boi}, {"eoi", s.tokens.eoi}}}};
  }
  return c;
}

/// One object: its bindings' prefixes, figures filled in later.
struct Object {
  std::string id, component, kind;
  std::vector<std::string> prefixes;
};

std::vector<Object> objects(const HfModel &m) {
  const TextSpec &t = m.text;
  std::vector<Object> out = {
      {"target.decoder_stack", "target", "decoder_stack", {t.layersPrefix}},
      {"target.embedding", "target", "embedding", {t.embedPrefix}},
      {"target.final_norm", "target", "final_norm", {t.finalNormPrefix}}};
  if (!m.vision)
    return out;
  const OpaqueComponentSpec &v = m.vision->spec;
  const std::string &tw = v.towerPrefix, &ad = v.adapterPrefix;
  // The bindings the seeds have; each tensor goes to its longest prefix.
  if (v.family == Family::Gemma3) {
    out.push_back({"vision.perception_adapter", "vision", "perception_adapter",
                   {ad, ad + ".mm_soft_emb_norm"}});
    out.push_back({"vision.perception_tower", "vision", "perception_tower",
                   {tw + ".embeddings.patch_embedding",
                    tw + ".embeddings.position_embedding",
                    tw + ".encoder.layers", tw + ".post_layernorm"}});
  } else {
    out.push_back({"vision.perception_adapter", "vision", "perception_adapter",
                   {ad + "." + visionFacts(Family::Gemma4).adapterChild.str()}});
    out.push_back({"vision.perception_tower", "vision", "perception_tower",
                   {tw, tw + ".encoder.layers", tw + ".patch_embedder",
                    tw + ".patch_embedder.input_proj"}});
  }
  return out;
}
} // namespace

std::string mlir::sgc::import::hf::writeGraph(const HfModel &m,
                                              const std::string &artifact) {
  ojson components = ojson::array({textComponent(m, artifact)});
  if (m.vision)
    components.push_back(visionComponent(*m.vision, artifact));

  std::vector<Object> objs = objects(m);
  std::map<std::string, std::pair<int64_t, int64_t>> figures;
  for (const Object &o : objs)
    for (const std::string &p : o.prefixes)
      figures[p] = {0, 0};
  std::vector<TensorSpec> table = textTensors(m.text);
  if (m.vision) {
    std::vector<TensorSpec> v = perceptionTensors(m.vision->spec,
                                                  m.text.hiddenSize);
    table.insert(table.end(), v.begin(), v.end());
  }
  for (const TensorSpec &tensor : table) {
    std::string name = tensor.name;
    while (true) {
      auto it = figures.find(name);
      if (it != figures.end()) {
        it->second.first += 1;
        it->second.second += tensor.numElements() * kBF16Bytes;
        break;
      }
      size_t dot = name.rfind('.');
      if (dot == std::string::npos)
        break;
      name.resize(dot);
    }
  }
  ojson objects = ojson::array();
  for (const Object &o : objs) {
    ojson bindings = ojson::array();
    for (const std::string &p : o.prefixes)
      bindings.push_back({{"artifact", artifact},
                          {"tensor_prefix", p},
                          {"tensors", figures[p].first},
                          {"bytes", figures[p].second}});
    objects.push_back(
        {{"id", o.id},
         {"component", o.component},
         {"kind", o.kind},
         {"source_bindings", bindings},
         {"representations",
          ojson::array({{{"encoding", m.matrixEncodings.count(o.kind)
                                          ? m.matrixEncodings.at(o.kind)
                                          : "BF16"},
                         {"fidelity", "canonical"}}})}});
  }
  ojson graph = {{"schema", 6},
                 {"components", components},
                 {"objects", objects},
                 {"edges", ojson::array()}};
  return graph.dump(2) + "\n";
}
