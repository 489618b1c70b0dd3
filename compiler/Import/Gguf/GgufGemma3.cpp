//===- GgufGemma3.cpp - a `gemma3` GGUF's metadata -> its HF config -------===//
//
// Part of sgc. What llama.cpp's loader takes from a `gemma3` file and what
// it assumes (design/QUANT.md §2; llama.cpp's gemma3 loader and
// converter): the sliding pattern from `gemma3.attention.
// sliding_window_pattern`, else every 6th layer full; the attention scale
// 1/√head_dim (1/√(hidden/heads) at 62 layers), never stored; the sliding
// layers' RoPE base 10000; norm weights stored as 1 + w; the embedding's
// rows the vocabulary. Each assumption is a completion `sgc explain` lists.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Gguf/GgufMetadata.h"

using namespace mlir;
using namespace mlir::sgc::gguf_import;
using mlir::sgc::import::SourcePos;

FailureOr<ModelConfig> mlir::sgc::gguf_import::gemma3Config(Metadata &m) {
  if (m.h.find("gemma3.expert_count"))
    return m.error() << "metadata key 'gemma3.expert_count': mixture-of-"
                        "experts Gemma models are not supported",
           failure();

  const std::string a = "gemma3.";
  FailureOr<int64_t> layers = m.integer(a + "block_count", 1, 1024);
  FailureOr<int64_t> context = m.integer(a + "context_length", 1, 1 << 24);
  FailureOr<int64_t> hidden = m.integer(a + "embedding_length", 1, 1 << 20);
  FailureOr<int64_t> ffn = m.integer(a + "feed_forward_length", 1, 1 << 22);
  FailureOr<int64_t> heads = m.integer(a + "attention.head_count", 1, 4096);
  if (failed(layers) || failed(context) || failed(hidden) || failed(ffn) ||
      failed(heads))
    return failure();
  FailureOr<int64_t> kvHeads =
      m.integer(a + "attention.head_count_kv", 1, *heads, *heads);
  FailureOr<int64_t> headDim = m.integer(a + "attention.key_length", 1, 4096,
                                         *hidden / *heads);
  FailureOr<int64_t> window =
      m.integer(a + "attention.sliding_window", 1, 1 << 24);
  FailureOr<double> eps = m.number(a + "attention.layer_norm_rms_epsilon");
  FailureOr<double> theta = m.number(a + "rope.freq_base", 10000.0);
  if (failed(kvHeads) || failed(headDim) || failed(window) || failed(eps) ||
      failed(theta))
    return failure();
  FailureOr<int64_t> valueDim =
      m.integer(a + "attention.value_length", 1, 4096, *headDim);
  if (failed(valueDim))
    return failure();
  if (*valueDim != *headDim)
    return m.error() << "metadata key '" << a << "attention.value_length' is "
                     << *valueDim << ", but key_length is " << *headDim
                     << " (gemma3 has one head size)",
           failure();
  FailureOr<int64_t> pattern =
      m.integer(a + "attention.sliding_window_pattern", 1, 1024, 6);
  if (failed(pattern))
    return failure();

  ModelConfig out;
  out.normsStoredPlusOne = true;
  out.artifactPrefix = "gemma-3";
  SourcePos top{"$", 1, 1};
  if (!m.h.find(a + "attention.sliding_window_pattern"))
    out.completions.push_back(
        {top, "sliding pattern: every 6th layer full (the file has no "
              "gemma3.attention.sliding_window_pattern; llama.cpp's rule)"});
  double queryScalar =
      *layers == 62 ? double(*hidden) / double(*heads) : double(*headDim);
  out.completions.push_back(
      {top, "attention scale 1/sqrt(" + std::to_string(int64_t(queryScalar)) +
                "): a GGUF does not store query_pre_attn_scalar (llama.cpp: "
                "head_dim, hidden/heads at 62 layers)"});
  out.completions.push_back(
      {top, "sliding layers' RoPE base 10000 (llama.cpp's constant for "
            "gemma3)"});
  out.completions.push_back(
      {top, "norm weights are stored as 1 + w (the converter folds Gemma 3's "
            "offset in): every norm multiplies by the stored weight"});

  out.config = {
      {"model_type", "gemma3_text"},
      {"hidden_size", *hidden},
      {"intermediate_size", *ffn},
      {"num_hidden_layers", *layers},
      {"num_attention_heads", *heads},
      {"num_key_value_heads", *kvHeads},
      {"head_dim", *headDim},
      {"sliding_window", *window},
      {"max_position_embeddings", *context},
      {"rms_norm_eps", *eps},
      {"query_pre_attn_scalar", queryScalar},
      {"rope_theta", *theta},
      {"rope_local_base_freq", 10000.0},
      {"tie_word_embeddings", true},
  };
  nlohmann::json types = nlohmann::json::array();
  for (int64_t l = 0; l < *layers; ++l)
    types.push_back(l % *pattern < *pattern - 1 ? "sliding_attention"
                                                : "full_attention");
  out.config["layer_types"] = types;
  if (std::optional<std::string> scaling = m.string(a + "rope.scaling.type")) {
    if (*scaling != "linear" && *scaling != "none")
      return m.error() << "metadata key '" << a << "rope.scaling.type' is '"
                       << *scaling << "', expected linear or none",
             failure();
    if (*scaling == "linear") {
      FailureOr<double> factor = m.number(a + "rope.scaling.factor");
      if (failed(factor))
        return failure();
      out.config["rope_scaling"] = {{"rope_type", "linear"},
                                    {"factor", *factor}};
    }
  }
  return out;
}
