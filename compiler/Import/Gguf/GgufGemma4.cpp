//===- GgufGemma4.cpp - a `gemma4` GGUF's metadata -> its HF config -------===//
//
// Part of sgc. What llama.cpp's converter writes for a dense Gemma 4 and
// what its gemma4 loader assumes (design/QUANT.md §2): the sliding pattern
// as one flag per layer; per-layer KV heads; the full layers' head size in
// key_length and the sliding ones' in key_length_swa; the proportional
// partial RoPE of full layers as `rope_freqs.weight` (1 for a rotated pair,
// 1e30 for one left alone); K=V full layers as layers without `attn_v`;
// the layer scalar as `blk.N.layer_output_scale.weight`; norms stored as
// they are (no 1 + w); the attention scale 1, never stored. Per-layer
// inputs, KV sharing and experts are refused by name.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Gguf/GgufMetadata.h"

#include <cstring>

using namespace mlir;
using namespace mlir::sgc::gguf_import;
using mlir::sgc::import::SourcePos;
namespace gguf = ::sgc::gguf;

namespace {

const char kArch[] = "gemma4.";

/// Refuses the Gemma 4 variants sgc does not compile, naming the key.
LogicalResult refuseVariants(Metadata &m, int64_t layers) {
  const std::string a = kArch;
  if (m.h.find(a + "expert_count"))
    return m.error() << "metadata key '" << a << "expert_count': mixture-"
                        "of-experts Gemma 4 models are not supported",
           failure();
  FailureOr<int64_t> shared =
      m.integer(a + "attention.shared_kv_layers", 0, layers, 0);
  if (failed(shared))
    return failure();
  if (*shared != 0)
    return m.error() << "metadata key '" << a << "attention.shared_kv_layers' "
                     << "is " << *shared << ": layers that share another "
                     << "layer's KV cache are not supported",
           failure();
  FailureOr<int64_t> perLayerInput =
      m.integer(a + "embedding_length_per_layer_input", 0, 1 << 20, 0);
  if (failed(perLayerInput))
    return failure();
  if (*perLayerInput != 0)
    return m.error() << "metadata key '" << a
                     << "embedding_length_per_layer_input' is "
                     << *perLayerInput << ": per-layer inputs (Gemma 4 E2B, "
                     << "E4B) are not supported",
           failure();
  if (std::optional<std::string> scaling = m.string(a + "rope.scaling.type"))
    if (*scaling != "none")
      return m.error() << "metadata key '" << a << "rope.scaling.type' is '"
                       << *scaling << "', expected none (Gemma 4 scales "
                       << "RoPE through rope_freqs.weight)",
             failure();
  return success();
}

/// The rotated share of a full layer's head from `rope_freqs.weight`:
/// `headDim / 2` factors, 1 for each rotated pair, then 1e30 for the pairs
/// proportional RoPE leaves alone.
FailureOr<double> rotaryFraction(Metadata &m, int64_t headDim) {
  const char *name = "rope_freqs.weight";
  const gguf::tensor_info *t = m.h.find_tensor(name);
  if (!t)
    return m.error() << "missing tensor '" << name << "' (a gemma4 file's "
                     << "full layers take their RoPE factors from it)",
           failure();
  const gguf::type_traits *traits = gguf::find_type(t->type);
  if (!traits || std::strcmp(traits->name, "F32") != 0 ||
      t->dims.size() != 1 || static_cast<int64_t>(t->dims[0]) != headDim / 2)
    return m.error() << "tensor '" << name << "' is "
                     << (traits ? traits->name : "?") << " of "
                     << t->elements() << " elements, expected F32 ["
                     << headDim / 2 << "] (half the full layers' head size)",
           failure();
  const uint8_t *data = m.file.data(*t);
  int64_t rotated = 0;
  bool tail = false;
  for (int64_t i = 0; i < headDim / 2; ++i) {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    if (f == 1.0f && !tail) {
      ++rotated;
      continue;
    }
    if (f >= 1e30f) {
      tail = true;
      continue;
    }
    return m.error() << "tensor '" << name << "' entry " << i << " is " << f
                     << ": sgc reads proportional RoPE (1 for a rotated "
                     << "pair, then 1e30 for the pairs left alone)",
           failure();
  }
  if (rotated == 0)
    return m.error() << "tensor '" << name << "' rotates no pair", failure();
  return double(2 * rotated) / double(headDim);
}

} // namespace

FailureOr<ModelConfig> mlir::sgc::gguf_import::gemma4Config(Metadata &m) {
  const std::string a = kArch;
  FailureOr<int64_t> layers = m.integer(a + "block_count", 1, 1024);
  if (failed(layers) || failed(refuseVariants(m, *layers)))
    return failure();
  FailureOr<int64_t> context = m.integer(a + "context_length", 1, 1 << 24);
  FailureOr<int64_t> hidden = m.integer(a + "embedding_length", 1, 1 << 20);
  FailureOr<int64_t> ffn =
      m.uniform(a + "feed_forward_length", *layers, 1, 1 << 22);
  FailureOr<int64_t> heads =
      m.uniform(a + "attention.head_count", *layers, 1, 4096);
  if (failed(context) || failed(hidden) || failed(ffn) || failed(heads))
    return failure();
  FailureOr<std::vector<int64_t>> kvHeads =
      m.perLayer(a + "attention.head_count_kv", *layers, 1, *heads, *heads);
  FailureOr<std::vector<bool>> swa =
      m.flags(a + "attention.sliding_window_pattern", *layers);
  FailureOr<int64_t> fullDim = m.integer(a + "attention.key_length", 1, 4096);
  FailureOr<int64_t> swaDim =
      m.integer(a + "attention.key_length_swa", 1, 4096);
  FailureOr<int64_t> window =
      m.integer(a + "attention.sliding_window", 1, 1 << 24);
  FailureOr<double> eps = m.number(a + "attention.layer_norm_rms_epsilon");
  if (failed(kvHeads) || failed(swa) || failed(fullDim) || failed(swaDim) ||
      failed(window) || failed(eps))
    return failure();
  for (auto [key, dim] : {std::pair<const char *, int64_t>{
                              "attention.value_length", *fullDim},
                          {"attention.value_length_swa", *swaDim}}) {
    FailureOr<int64_t> v = m.integer(a + key, 1, 4096, dim);
    if (failed(v))
      return failure();
    if (*v != dim)
      return m.error() << "metadata key '" << a << key << "' is " << *v
                       << ", but the key length is " << dim
                       << " (gemma4's K and V heads are one size)",
             failure();
  }
  if (swa->back())
    return m.error() << "metadata key '" << a
                     << "attention.sliding_window_pattern': the last layer "
                     << "is sliding; Gemma 4 ends with a full layer",
           failure();
  FailureOr<int64_t> rotFull = m.integer(a + "rope.dimension_count", 1, 4096);
  FailureOr<int64_t> rotSwa =
      m.integer(a + "rope.dimension_count_swa", 1, 4096, *swaDim);
  FailureOr<double> thetaFull = m.number(a + "rope.freq_base");
  FailureOr<double> thetaSwa = m.number(a + "rope.freq_base_swa", 10000.0);
  if (failed(rotFull) || failed(rotSwa) || failed(thetaFull) ||
      failed(thetaSwa))
    return failure();
  if (*rotFull != *fullDim || *rotSwa != *swaDim)
    return m.error() << "metadata key '" << a << "rope.dimension_count"
                     << (*rotFull != *fullDim ? "" : "_swa") << "' is "
                     << (*rotFull != *fullDim ? *rotFull : *rotSwa)
                     << ", expected the head size "
                     << (*rotFull != *fullDim ? *fullDim : *swaDim)
                     << " (full layers rotate through rope_freqs.weight, "
                        "sliding ones whole)",
           failure();
  FailureOr<double> fraction = rotaryFraction(m, *fullDim);
  if (failed(fraction))
    return failure();

  // K=V full layers are the ones without attn_v; every full layer agrees.
  std::optional<bool> kEqV;
  int64_t swaKv = -1, fullKv = -1;
  nlohmann::json types = nlohmann::json::array();
  nlohmann::json perLayer = nlohmann::json::object();
  for (int64_t l = 0; l < *layers; ++l) {
    std::string v = "blk." + std::to_string(l) + ".attn_v.weight";
    bool hasV = m.h.find_tensor(v) != nullptr;
    types.push_back((*swa)[l] ? "sliding_attention" : "full_attention");
    if ((*swa)[l]) {
      if (!hasV)
        return m.error() << "missing tensor '" << v << "' (a sliding layer "
                         << "has its own V projection)",
               failure();
      if (swaKv < 0)
        swaKv = (*kvHeads)[l];
    } else {
      if (kEqV && *kEqV == hasV)
        return m.error() << "tensor '" << v << "' is "
                         << (hasV ? "present" : "missing")
                         << ", but an earlier full layer's is "
                         << (hasV ? "missing" : "present")
                         << " (all full layers or none take V from K)",
               failure();
      kEqV = !hasV;
      if (fullKv < 0)
        fullKv = (*kvHeads)[l];
      perLayer[std::to_string(l)] = {{"head_dim", *fullDim},
                                     {"num_key_value_heads", (*kvHeads)[l]}};
    }
  }
  if (swaKv < 0)
    swaKv = fullKv;
  for (int64_t l = 0; l < *layers; ++l)
    if ((*swa)[l] && (*kvHeads)[l] != swaKv)
      perLayer[std::to_string(l)] = {{"head_dim", *swaDim},
                                     {"num_key_value_heads", (*kvHeads)[l]}};

  ModelConfig out;
  out.artifactPrefix = "gemma-4";
  out.factTensors.insert("rope_freqs.weight");
  out.config = {
      {"model_type", "gemma4_text"},
      {"hidden_size", *hidden},
      {"intermediate_size", *ffn},
      {"num_hidden_layers", *layers},
      {"num_attention_heads", *heads},
      {"num_key_value_heads", swaKv},
      {"head_dim", *swaDim},
      {"per_layer_config", perLayer},
      {"attention_k_eq_v", kEqV.value_or(false)},
      {"sliding_window", *window},
      {"max_position_embeddings", *context},
      {"rms_norm_eps", *eps},
      {"layer_types", types},
      {"hidden_size_per_layer_input", 0},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"tie_word_embeddings", true},
      {"final_logit_softcapping", nullptr},
      {"rope_parameters",
       {{"sliding_attention",
         {{"rope_type", "default"}, {"rope_theta", *thetaSwa}}},
        {"full_attention",
         {{"rope_type", "proportional"},
          {"rope_theta", *thetaFull},
          {"partial_rotary_factor", *fraction}}}}},
  };
  if (m.h.find(a + "final_logit_softcapping")) {
    FailureOr<double> cap = m.number(a + "final_logit_softcapping");
    if (failed(cap))
      return failure();
    out.config["final_logit_softcapping"] = *cap;
  }

  SourcePos top{"$", 1, 1};
  out.completions.push_back(
      {top, "attention scale 1: a GGUF does not store it (llama.cpp's "
            "gemma4 loader: 1, the q/k norms scale the scores)"});
  if (!m.h.find(a + "rope.freq_base_swa"))
    out.completions.push_back(
        {top, "sliding layers' RoPE base 10000 (the file has no " + a +
                  "rope.freq_base_swa; llama.cpp's default)"});
  if (!m.h.find(a + "final_logit_softcapping"))
    out.completions.push_back(
        {top, "no final logit softcap (the file has no " + a +
                  "final_logit_softcapping; llama.cpp then applies none)"});
  out.completions.push_back(
      {top, "full layers: proportional RoPE over " +
                std::to_string(int64_t(*fraction * double(*fullDim) + 0.5)) +
                " of " + std::to_string(*fullDim) +
                " dimensions (rope_freqs.weight: 1e30 leaves a pair "
                "unrotated)"});
  out.completions.push_back(
      {top, "activation gelu (tanh approximation): llama.cpp's gemma4 "
            "feed-forward, not stored"});
  return out;
}
