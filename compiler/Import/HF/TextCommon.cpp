//===- TextCommon.cpp - what the Gemma text configs share -----------------===//
//
// Part of sgc. Defaults from transformers' Gemma3TextConfig and
// Gemma4TextConfig (both: rms_norm_eps 1e-6, gelu_pytorch_tanh, tied
// embeddings, no attention bias).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/HF/TextCommon.h"
#include "compiler/Import/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;

namespace {
// Sanity bounds, as the schema-6 parser has (GraphParser.h).
constexpr int64_t kMaxLayers = 4096, kMaxWidth = 1 << 20, kMaxHeads = 4096,
                  kMaxVocab = 1 << 24, kMaxContext = 1 << 24;
} // namespace

double mlir::sgc::import::hf::asF32(double x) {
  return static_cast<double>(static_cast<float>(x));
}

LogicalResult mlir::sgc::import::hf::readCommonText(
    ConfigReader &r, const JsonNode &t, const TextDefaults &d, TextSpec &out,
    int64_t &window) {
  FailureOr<int64_t> vocab, hidden, ffn, layers, heads, context, win;
  if (failed(vocab = r.intOr(t, "vocab_size", d.vocabSize, 1, kMaxVocab)) ||
      failed(hidden = r.intOr(t, "hidden_size", d.hiddenSize, 1, kMaxWidth)) ||
      failed(ffn = r.intOr(t, "intermediate_size", d.intermediateSize, 1,
                           kMaxWidth)) ||
      failed(layers = r.intOr(t, "num_hidden_layers", d.numLayers, 1,
                              kMaxLayers)) ||
      failed(heads = r.intOr(t, "num_attention_heads", d.numHeads, 1,
                             kMaxHeads)) ||
      failed(context = r.intOr(t, "max_position_embeddings", d.maxPositions, 1,
                               kMaxContext)) ||
      failed(win = r.intOr(t, "sliding_window", d.slidingWindow, 1,
                           kMaxContext)))
    return failure();
  FailureOr<double> eps = r.numberOr(t, "rms_norm_eps", 1e-6, 0, 1);
  if (failed(eps))
    return failure();
  FailureOr<std::string> act =
      r.stringOr(t, "hidden_activation", "gelu_pytorch_tanh");
  if (failed(act))
    return failure();
  if (*act != "gelu_pytorch_tanh")
    return r.unsupported(t, "hidden_activation",
                         "hidden_activation '" + printable(*act) +
                             "' (sgc implements gelu_pytorch_tanh)");
  FailureOr<bool> bias = r.boolOr(t, "attention_bias", false);
  if (failed(bias))
    return failure();
  if (*bias)
    return r.unsupported(t, "attention_bias",
                         "attention_bias true (projection biases)");
  FailureOr<bool> tied = r.boolOr(t, "tie_word_embeddings", true);
  if (failed(tied))
    return failure();
  if (!*tied)
    return r.unsupported(t, "tie_word_embeddings",
                         "tie_word_embeddings false (an untied LM head)");
  if (ConfigReader::given(t, "final_logit_softcapping")) {
    FailureOr<double> cap = r.getNumber(t, "final_logit_softcapping", 0,
                                        std::numeric_limits<double>::max());
    if (failed(cap))
      return failure();
    out.finalSoftcap = *cap;
  }

  out.vocabSize = *vocab;
  out.hiddenSize = *hidden;
  out.intermediateSize = *ffn;
  out.numLayers = *layers;
  out.numQHeads = *heads;
  out.contextLength = *context;
  double e = asF32(*eps);
  out.preNorm = out.postNorm = out.finalNorm = NormSpec{e, 0};
  out.postNorms = true;
  // sqrt(hidden) in f32, the reference's buffer.
  out.embedScale = asF32(std::sqrt(static_cast<float>(*hidden)));
  out.tiedHead = true;
  window = *win;
  return success();
}

FailureOr<std::vector<Span>>
mlir::sgc::import::hf::readLayerTypes(ConfigReader &r, const JsonNode &t,
                                      int64_t numLayers, int64_t pattern) {
  std::vector<Span> spans;
  if (!ConfigReader::given(t, "layer_types")) {
    for (int64_t i = 0; i < numLayers; ++i)
      spans.push_back((i + 1) % pattern ? Span::Sliding : Span::Full);
    return spans;
  }
  JsonNode types = JsonReader::child(t, "layer_types");
  if (failed(r.checkArray(types, "layer_types", 0, kMaxLayers)))
    return failure();
  if (static_cast<int64_t>(types->size()) != numLayers) {
    r.error(types.path) << "layer_types has " << types->size()
                        << " entries, but num_hidden_layers is " << numLayers;
    return failure();
  }
  for (size_t i = 0; i < types->size(); ++i) {
    JsonNode e = JsonReader::element(types, i);
    if (!e->is_string()) {
      r.error(e.path) << "expected a string for a layer type, got "
                      << describe(*e);
      return failure();
    }
    const std::string &s = e->get_ref<const std::string &>();
    if (s == "sliding_attention")
      spans.push_back(Span::Sliding);
    else if (s == "full_attention")
      spans.push_back(Span::Full);
    else {
      r.error(e.path) << "unsupported: layer type '" << printable(s)
                      << "' (expected sliding_attention or full_attention)";
      return failure();
    }
  }
  return spans;
}

FailureOr<Rope> mlir::sgc::import::hf::readRope(ConfigReader &r,
                                                const JsonNode &entry,
                                                double thetaFallback,
                                                bool proportionalOk) {
  Rope rope;
  // Older configs spell rope_type as `type`.
  StringRef typeKey = JsonReader::has(entry, "rope_type") ? "rope_type"
                      : JsonReader::has(entry, "type") ? "type"
                                                        : "rope_type";
  FailureOr<std::string> type = r.stringOr(entry, typeKey, "default");
  FailureOr<double> theta, factor, fraction;
  if (failed(type) ||
      failed(theta = r.numberOr(entry, "rope_theta", thetaFallback, 0,
                                std::numeric_limits<double>::max())) ||
      failed(factor = r.numberOr(entry, "factor", 1.0, 0, 1e9)) ||
      failed(fraction = r.numberOr(entry, "partial_rotary_factor", 1.0, 0, 1)))
    return failure();
  rope.theta = *theta;
  if (*type == "default") {
    if (*factor != 1.0) {
      r.unsupported(entry, "factor", "a 'default' rope with a factor");
      return failure();
    }
    rope.kind = PositionKind::Rope;
  } else if (*type == "linear") {
    rope.kind = PositionKind::Linear;
    rope.factor = *factor;
  } else if (*type == "proportional" && proportionalOk) {
    if (*factor != 1.0) {
      r.unsupported(entry, "factor",
                    "a 'proportional' rope with a factor other than 1");
      return failure();
    }
    rope.kind = PositionKind::PartialRope;
    rope.fraction = *fraction;
    return rope;
  } else {
    r.unsupported(entry, typeKey,
                  "rope_type '" + printable(*type) + "' (sgc implements " +
                      (proportionalOk ? "default, linear and proportional"
                                      : "default and linear") +
                      ")");
    return failure();
  }
  if (*fraction != 1.0) {
    r.unsupported(entry, "partial_rotary_factor",
                  "partial_rotary_factor with rope_type '" + *type + "'");
    return failure();
  }
  return rope;
}
