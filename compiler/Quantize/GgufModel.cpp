//===- GgufModel.cpp - a Gemma 3 graph as a GGUF's keys and tensors -------===//
//
// Part of sgc. The keys in the converter's order (TextModel's, then
// Gemma3Model's: a key set twice keeps its first place), and the inverse of
// what compiler/Import/Gguf/GgufGemma3.cpp reads: a file this writes reads
// back as the model it came from, or is refused here.
//
//===----------------------------------------------------------------------===//

#include "compiler/Quantize/GgufModel.h"

#include "compiler/Import/Gguf/GgufNames.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;
using ::sgc::gguf::ggml_type;

namespace {

/// The layer index of "blk.N.*", or -1: llama.cpp's loader orders tensors
/// by it, then by name.
int64_t layerOf(StringRef name) {
  int64_t layer;
  if (!name.consume_front("blk.") || name.split('.').first.getAsInteger(10, layer))
    return -1;
  return layer;
}

/// gguf-py's Metadata.id_to_title: words split at '-', each all-lowercase
/// word title-cased unless it is a version or starts with a digit.
std::string idToTitle(StringRef id) {
  SmallVector<StringRef> words;
  id.split(words, '-', -1, /*KeepEmpty=*/false);
  std::string out;
  for (StringRef word : words) {
    if (!out.empty())
      out += ' ';
    bool lower = word.lower() == word && word.upper() != word;
    bool numeric = !word.empty() && (isdigit(word[0]) ||
                                     (word[0] == 'v' && word.size() > 1 &&
                                      isdigit(word[1])));
    for (size_t i = 0; i < word.size(); ++i)
      out += lower && !numeric && (i == 0 || !isalpha(word[i - 1]))
                 ? char(toupper(word[i]))
                 : word[i];
  }
  return out;
}

/// gguf-py's size label of a parameter count: "2.5M", "12B".
std::string sizeLabel(uint64_t params) {
  double n = double(params);
  auto [scaled, suffix] = n > 1e12  ? std::pair(n * 1e-12, 'T')
                          : n > 1e9 ? std::pair(n * 1e-9, 'B')
                          : n > 1e6 ? std::pair(n * 1e-6, 'M')
                                    : std::pair(n * 1e-3, 'K');
  // Two significant digits at least: the digits of the rounded value
  // (ties to even, leading zeros dropped) decide the decimals.
  std::string whole = std::to_string(int64_t(std::nearbyint(scaled)));
  size_t digits = whole == "0" ? 0 : whole.size();
  int fix = digits >= 2 ? 0 : int(2 - digits);
  char text[64];
  std::snprintf(text, sizeof text, "%.*f%c", fix, scaled, suffix);
  return text;
}

bool close(double a, double b) {
  return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b));
}

} // namespace

ggml_type mlir::sgc::ggmlTypeOf(StringRef encoding) {
  return llvm::StringSwitch<ggml_type>(encoding)
      .Case("Q8_0", ggml_type::q8_0)
      .Case("Q4_0", ggml_type::q4_0)
      .Case("Q4_K", ggml_type::q4_k)
      .Case("Q6_K", ggml_type::q6_k)
      .Case("F16", ggml_type::f16)
      .Case("BF16", ggml_type::bf16)
      .Default(ggml_type::f32);
}

namespace {
/// The first full and the first sliding layer (null where none).
std::pair<const LayerSpec *, const LayerSpec *> firstLayers(const TextSpec &text) {
  const LayerSpec *full = nullptr, *sliding = nullptr;
  for (const LayerSpec &layer : text.layers) {
    const LayerSpec *&first = layer.span == Span::Full ? full : sliding;
    if (!first)
      first = &layer;
  }
  return {full, sliding};
}

/// The keys TextModel.set_gguf_parameters writes first, in its order.
void writeCommonKeys(const TextSpec &text, const std::string &a,
                     const LayerSpec &full, const LayerSpec *sliding,
                     ::sgc::gguf::writer &out) {
  out.set_u32(a + "block_count", static_cast<uint32_t>(text.numLayers));
  out.set_u32(a + "context_length", static_cast<uint32_t>(text.contextLength));
  out.set_u32(a + "embedding_length", static_cast<uint32_t>(text.hiddenSize));
  out.set_u32(a + "feed_forward_length",
              static_cast<uint32_t>(text.intermediateSize));
  out.set_u32(a + "attention.head_count", static_cast<uint32_t>(text.numQHeads));
  out.set_u32(a + "attention.head_count_kv",
              static_cast<uint32_t>((sliding ? sliding : &full)->numKvHeads));
  if (full.position == PositionKind::Linear && full.factor != 1.0) {
    out.set_string(a + "rope.scaling.type", "linear");
    out.set_f32(a + "rope.scaling.factor", static_cast<float>(full.factor));
  }
  out.set_f32(a + "rope.freq_base", static_cast<float>(full.theta));
  if (sliding)
    out.set_f32(a + "rope.freq_base_swa", static_cast<float>(sliding->theta));
  out.set_f32(a + "attention.layer_norm_rms_epsilon",
              static_cast<float>(text.preNorm.eps));
}

/// Gemma4Model.set_gguf_parameters' keys after Gemma3Model's.
void writeGemma4Keys(const TextSpec &text, const nlohmann::json &config,
                     const LayerSpec &full, const LayerSpec *sliding,
                     ::sgc::gguf::writer &out) {
  const std::string a = "gemma4.";
  nlohmann::json hparams = config;
  if (config.contains("text_config") && config["text_config"].is_object())
    for (auto &[key, val] : config["text_config"].items())
      hparams[key] = val;
  auto integer = [&](const char *key) -> int64_t {
    return hparams.contains(key) && hparams[key].is_number_integer()
               ? hparams[key].get<int64_t>()
               : 0;
  };
  out.set_u32(a + "attention.shared_kv_layers",
              static_cast<uint32_t>(integer("num_kv_shared_layers")));
  out.set_u32(a + "embedding_length_per_layer_input",
              static_cast<uint32_t>(integer("hidden_size_per_layer_input")));
  std::vector<bool> pattern;
  for (const LayerSpec &layer : text.layers)
    pattern.push_back(layer.span == Span::Sliding);
  out.set_bools(a + "attention.sliding_window_pattern", pattern);
  int64_t swaDim = sliding ? sliding->headDim : full.headDim;
  out.set_u32(a + "attention.key_length_swa", static_cast<uint32_t>(swaDim));
  out.set_u32(a + "attention.value_length_swa", static_cast<uint32_t>(swaDim));
  // Per-layer KV heads where the config names the full layers' own
  // (num_global_key_value_heads, or a full layer's per_layer_config entry).
  bool fullKvHeads = integer("num_global_key_value_heads") > 0;
  if (hparams.contains("per_layer_config") && hparams["per_layer_config"].is_object())
    for (auto &[key, entry] : hparams["per_layer_config"].items()) {
      int64_t index; // keys may be zero-padded ("05")
      if (!StringRef(key).getAsInteger(10, index) && index >= 0 &&
          index < int64_t(text.layers.size()) &&
          text.layers[index].span == Span::Full && entry.is_object() &&
          entry.contains("num_key_value_heads"))
        fullKvHeads = true;
    }
  if (fullKvHeads) {
    std::vector<uint32_t> heads;
    for (const LayerSpec &layer : text.layers)
      heads.push_back(static_cast<uint32_t>(layer.numKvHeads));
    ::sgc::gguf::value v;
    v.type = ::sgc::gguf::value_type::array;
    v.element_type = ::sgc::gguf::value_type::u32;
    v.numbers.assign(heads.begin(), heads.end());
    out.set(a + "attention.head_count_kv", std::move(v));
  }
  out.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(full.headDim));
  out.set_u32(a + "rope.dimension_count_swa",
              static_cast<uint32_t>(sliding ? int64_t(sliding->headDim *
                                                      sliding->rotaryFraction)
                                            : full.headDim));
}
} // namespace

/// What a gemma3 GGUF cannot say: a layer pattern other than every 6th
/// layer full, an attention scale other than llama.cpp's, a sliding RoPE
/// base other than 10000.
static LogicalResult checkGemma3(Location loc, const TextSpec &text,
                          const LayerSpec &full, const LayerSpec *sliding) {
  for (const LayerSpec &layer : text.layers) {
    bool wantFull = layer.index % 6 == 5;
    if ((layer.span == Span::Full) != wantFull)
      return emitError(loc)
             << "layer_types[" << layer.index << "] is "
             << (wantFull ? "sliding_attention" : "full_attention")
             << ": a gemma3 GGUF cannot say so (llama.cpp makes every 6th "
                "layer full)";
  }
  double impliedScalar = text.numLayers == 62
                             ? double(text.hiddenSize) / double(text.numQHeads)
                             : double(full.headDim);
  if (!close(text.scoreScale, 1.0 / std::sqrt(impliedScalar)))
    return emitError(loc) << "query_pre_attn_scalar "
                          << std::lround(1.0 / (text.scoreScale * text.scoreScale))
                          << ": a gemma3 GGUF does not store it and llama.cpp "
                             "takes "
                          << int64_t(impliedScalar);
  if (sliding && !close(sliding->theta, 10000.0))
    return emitError(loc)
           << "rope_parameters.sliding_attention.rope_theta " << sliding->theta
           << ": sgc and llama.cpp read a gemma3 GGUF's as 10000";
  return success();
}

LogicalResult mlir::sgc::writeModelMetadata(MLIRContext *ctx,
                                            const GraphSpec &graph,
                                            const nlohmann::json &config,
                                            StringRef folder, uint64_t params,
                                            ::sgc::gguf::writer &out) {
  const TextSpec &text = graph.text;
  // The graph was made from config.json: name its keys, the file as a whole.
  Location loc = FileLineColLoc::get(ctx, graph.fileName, 0, 0);
  auto [full, sliding] = firstLayers(text);
  if (!full)
    return emitError(loc) << "the model has no full-attention layer: a "
                             "GGUF's Gemma takes its RoPE base from one";
  bool gemma4 = text.family == Family::Gemma4;
  if (!gemma4 && failed(checkGemma3(loc, text, *full, sliding)))
    return failure();
  if (gemma4 && full->position != PositionKind::PartialRope &&
      full->position != PositionKind::Rope)
    return emitError(loc) << "rope_parameters.full_attention: llama.cpp's "
                             "gemma4 rotates with proportional or default "
                             "RoPE only";
  const std::string arch = gemma4 ? "gemma4" : "gemma3";
  out.set_string("general.architecture", arch);
  out.set_string("general.type", "model");
  out.set_string("general.name", idToTitle(folder));
  out.set_string("general.size_label", sizeLabel(params));
  const std::string a = arch + ".";
  writeCommonKeys(text, a, *full, sliding, out);
  // Gemma3Model's (Gemma 4 replaces the key and value lengths in place).
  out.set_u32(a + "attention.key_length", static_cast<uint32_t>(full->headDim));
  out.set_u32(a + "attention.value_length", static_cast<uint32_t>(full->headDim));
  if (text.finalSoftcap)
    out.set_f32(a + "final_logit_softcapping",
                static_cast<float>(*text.finalSoftcap));
  if (sliding)
    out.set_u32(a + "attention.sliding_window",
                static_cast<uint32_t>(sliding->window));
  if (gemma4)
    writeGemma4Keys(text, config, *full, sliding, out);
  return success();
}

std::vector<GgufTensor> mlir::sgc::planTensors(const GraphSpec &graph,
                                               int64_t vocabRows) {
  bool gemma4 = graph.text.family == Family::Gemma4;
  std::vector<GgufTensor> out;
  // Gemma 4's full layers rotate a fraction of their dimensions
  // ("proportional"): llama.cpp rotates all of them through frequency
  // factors, 1 for the rotated pairs and 1e30 (no rotation) for the rest.
  if (const LayerSpec *full = firstLayers(graph.text).first; gemma4 && full) {
    GgufTensor g;
    g.name = "rope_freqs.weight";
    g.columns = full->headDim / 2;
    int64_t rotated = int64_t(double(full->headDim) * full->rotaryFraction / 2);
    for (int64_t i = 0; i < g.columns; ++i)
      g.values.push_back(i < rotated ? 1.0f : 1e30f);
    out.push_back(std::move(g));
  }
  for (const TensorSpec &t : textTensors(graph.text)) {
    auto file = graph.fileTensors.find(t.name);
    if (file == graph.fileTensors.end())
      continue;
    GgufTensor g;
    g.name = file->second.name;
    g.source = t.name;
    g.type = ggmlTypeOf(file->second.encoding);
    g.matrix = t.shape.size() == 2;
    g.rows = g.matrix ? t.shape[0] : 1;
    g.columns = t.shape.back();
    // Gemma 3's converter keeps the tokenizer's rows of the embedding
    // (Gemma 4's keeps the vocabulary's and every added token's: all of
    // them for Gemma 4's checkpoints).
    if (g.name == "token_embd.weight" && !gemma4)
      g.rows = std::min(g.rows, vocabRows);
    // The converter's norm_shift: Gemma 3's norms are stored as 1 + w.
    if (!gemma4 && StringRef(t.name).ends_with("norm.weight"))
      g.add = 1.0f;
    out.push_back(std::move(g));
  }
  llvm::stable_sort(out, [](const GgufTensor &x, const GgufTensor &y) {
    return std::make_pair(layerOf(x.name), StringRef(x.name)) <
           std::make_pair(layerOf(y.name), StringRef(y.name));
  });
  return out;
}
