//===- ExecutionParser.cpp - a component's execution block and layers -----===//
//
// Part of sgc. The schema-6 rules of `execution` (attention, ffn, norm,
// head, residual topology) and of the per-layer `attention` entries (span,
// window, geometry, position encoding), for text and perception components
// alike.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/GraphParser.h"

#include "llvm/ADT/SmallVector.h"

#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

FailureOr<int64_t> GraphParser::getWeightOffset(const Node &obj,
                                                StringRef key) {
  Node n = child(obj, key);
  if (!n->is_number() || (n->get<double>() != 0 && n->get<double>() != 1)) {
    error(n.path) << "expected 0 or 1 for " << key << ", got " << describe(*n);
    return failure();
  }
  return n->get<double>() == 1 ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Execution and layers
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::parseNorm(const Node &obj, StringRef key, bool text,
                                     NormSpec &out) {
  Node n = child(obj, key);
  // A LayerNorm has no weight offset (vision towers only: gemma decoders
  // use RMSNorm).
  bool layerNorm = !text && n->is_object() && n->contains("kind") &&
                   (*n)["kind"] == "layer_norm";
  SmallVector<StringRef> required = {"kind", "eps"}, optional;
  (layerNorm ? optional : required).push_back("weight_offset");
  if (failed(checkObject(n, required, optional, "a norm")))
    return failure();
  SmallVector<StringRef, 2> kinds = {"rms_norm"};
  if (!text)
    kinds.push_back("layer_norm");
  FailureOr<std::string> kind = getEnum(n, "kind", kinds, "norm kind");
  FailureOr<double> eps;
  if (failed(kind) || failed(eps = getNumber(n, "eps", 0, 1)))
    return failure();
  out.eps = *eps;
  out.kind = layerNorm ? NormKind::LayerNorm : NormKind::RMSNorm;
  out.weightOffset = 0;
  if (has(n, "weight_offset")) {
    FailureOr<int64_t> offset = getWeightOffset(n, "weight_offset");
    if (failed(offset))
      return failure();
    if (layerNorm && *offset != 0)
      return error(child(n, "weight_offset").path)
             << "weight_offset " << *offset
             << " on a layer_norm (a LayerNorm scales by its weight as is)";
    out.weightOffset = *offset;
  }
  return success();
}

LogicalResult GraphParser::parseExecution(const Node &exec, bool text,
                                          ExecSpec &out) {
  out.node = exec;
  SmallVector<StringRef> required = {"attention", "ffn", "norm",
                                     "residual_topology"};
  SmallVector<StringRef> optional;
  if (text) {
    required.push_back("head");
    optional.push_back("context_length");
  } else {
    optional.push_back("head");
  }
  if (failed(checkObject(exec, required, optional, "execution")))
    return failure();
  if (has(exec, "context_length")) {
    FailureOr<int64_t> context = getInt(exec, "context_length", 1, kMaxContext);
    if (failed(context))
      return failure();
    out.contextLength = *context;
  }

  // attention
  // A vision tower may leave out its q/k norms (gemma3 has none: no
  // qk_norm_scope) and the keys the family supplies (VISION_KEYS.md).
  Node attn = child(exec, "attention");
  SmallVector<StringRef> attnRequired = {"num_q_heads", "num_kv_heads",
                                         "head_dim"};
  SmallVector<StringRef> attnOptional = {"attention_bias"};
  SmallVector<StringRef> qkKeys = {"score_scale", "qk_norm_scope",
                                   "qk_norm_weight_offset",
                                   "parameter_free_qk_norm"};
  (text ? attnRequired : attnOptional).append(qkKeys);
  if (failed(
          checkObject(attn, attnRequired, attnOptional, "execution.attention")))
    return failure();
  FailureOr<int64_t> q, kv, d;
  if (failed(q = getInt(attn, "num_q_heads", 1, kMaxHeads)) ||
      failed(kv = getInt(attn, "num_kv_heads", 1, kMaxHeads)) ||
      failed(d = getInt(attn, "head_dim", 1, kMaxWidth)))
    return failure();
  out.numQHeads = *q;
  out.numKvHeads = *kv;
  out.headDim = *d;
  if (has(attn, "score_scale")) {
    FailureOr<double> scale =
        getNumber(attn, "score_scale", 0, std::numeric_limits<double>::max());
    if (failed(scale))
      return failure();
    out.scoreScale = *scale;
    out.hasScoreScale = true;
  }
  if (has(attn, "qk_norm_scope")) {
    if (failed(getEnum(attn, "qk_norm_scope", {"per_head"}, "qk_norm_scope")))
      return failure();
    out.qkNorms = true;
    if (!has(attn, "qk_norm_weight_offset"))
      return error(attn.path) << "missing required key "
                                 "'qk_norm_weight_offset' (qk_norm_scope "
                                 "names q and k norms)";
  } else if (has(attn, "qk_norm_weight_offset")) {
    return error(child(attn, "qk_norm_weight_offset").path)
           << "qk_norm_weight_offset without qk_norm_scope (no q/k norms)";
  }
  if (out.qkNorms) {
    FailureOr<int64_t> offset = getWeightOffset(attn, "qk_norm_weight_offset");
    if (failed(offset))
      return failure();
    out.qkNormOffset = *offset;
  }
  if (has(attn, "parameter_free_qk_norm")) {
    Node freeNorm = child(attn, "parameter_free_qk_norm");
    if (failed(checkObject(freeNorm, {"q", "k", "v"}, {},
                           "parameter_free_qk_norm")))
      return failure();
    FailureOr<bool> fq, fk, fv;
    if (failed(fq = getBool(freeNorm, "q")) ||
        failed(fk = getBool(freeNorm, "k")) ||
        failed(fv = getBool(freeNorm, "v")))
      return failure();
    out.freeQ = *fq;
    out.freeK = *fk;
    out.freeV = *fv;
    out.hasFreeNorm = true;
    if (out.freeQ || out.freeK)
      return error(child(freeNorm, out.freeQ ? "q" : "k").path)
             << "a parameter-free " << (out.freeQ ? "q" : "k")
             << " norm is not supported (gemma q and k norms have weights)";
  }
  if (has(attn, "attention_bias")) {
    FailureOr<bool> bias = getBool(attn, "attention_bias");
    if (failed(bias))
      return failure();
    if (*bias && text)
      return error(child(attn, "attention_bias").path)
             << "attention biases are not supported (gemma decoders have "
                "none)";
    out.attentionBias = *bias;
  }
  if (out.numQHeads % out.numKvHeads != 0)
    return error(child(attn, "num_kv_heads").path)
           << "num_kv_heads " << out.numKvHeads
           << " does not divide num_q_heads " << out.numQHeads;
  if (out.numQHeads * out.headDim > kMaxWidth)
    return error(child(attn, "head_dim").path)
           << "num_q_heads x head_dim = " << out.numQHeads * out.headDim
           << " exceeds the limit of " << kMaxWidth;

  // ffn
  Node ffn = child(exec, "ffn");
  SmallVector<StringRef> ffnOptional = {"gate_policy"};
  if (!text)
    ffnOptional.push_back("bias");
  if (failed(checkObject(ffn, {"intermediate_size", "activation", "ffn_type"},
                         ffnOptional, "execution.ffn")))
    return failure();
  SmallVector<StringRef, 2> ffnTypes = {"gated"};
  if (!text)
    ffnTypes.push_back("plain");
  FailureOr<int64_t> inter = getInt(ffn, "intermediate_size", 1, kMaxWidth);
  FailureOr<std::string> ffnType;
  if (failed(inter) ||
      failed(getEnum(ffn, "activation", {"gelu_tanh"}, "activation")) ||
      failed(ffnType = getEnum(ffn, "ffn_type", ffnTypes, "ffn_type")))
    return failure();
  out.intermediateSize = *inter;
  out.ffnKind = *ffnType == "plain" ? FfnKind::Plain : FfnKind::Gated;
  if (has(ffn, "bias")) {
    FailureOr<bool> bias = getBool(ffn, "bias");
    if (failed(bias))
      return failure();
    out.ffnBias = *bias;
  }
  if (has(ffn, "gate_policy")) {
    if (out.ffnKind == FfnKind::Plain)
      return error(child(ffn, "gate_policy").path)
             << "gate_policy on a plain FFN (it has no gate)";
    Node gate = child(ffn, "gate_policy");
    if (failed(checkObject(gate, {"kind"}, {}, "gate_policy")) ||
        failed(getEnum(gate, "kind", {"gated"}, "gate_policy kind")))
      return failure();
  }

  // norm
  Node norm = child(exec, "norm");
  SmallVector<StringRef> normRequired = {"pre"};
  SmallVector<StringRef> normOptional = {"post", "placement"};
  (text ? normRequired : normOptional).push_back("final_norm");
  if (failed(checkObject(norm, normRequired, normOptional, "execution.norm")) ||
      failed(parseNorm(norm, "pre", text, out.pre)))
    return failure();
  out.hasPost = has(norm, "post");
  out.hasFinal = has(norm, "final_norm");
  if ((out.hasPost && failed(parseNorm(norm, "post", text, out.post))) ||
      (out.hasFinal &&
       failed(parseNorm(norm, "final_norm", text, out.finalNorm))))
    return failure();
  if (has(norm, "placement")) {
    if (failed(getEnum(norm, "placement", {"pre_post"}, "norm placement")))
      return failure();
    if (!out.hasPost)
      return error(child(norm, "placement").path)
             << "placement 'pre_post' needs a 'post' norm";
    out.postNorms = true;
  } else if (out.hasPost) {
    return error(child(norm, "post").path)
           << "a 'post' norm needs placement 'pre_post'";
  }

  // head
  if (has(exec, "head")) {
    Node head = child(exec, "head");
    if (failed(checkObject(
            head, {"vocab_size", "embed_scale", "head_reuses_embedding"},
            {"final_logit_softcapping"}, "execution.head")))
      return failure();
    FailureOr<int64_t> vocab = getInt(head, "vocab_size", 1, kMaxVocab);
    FailureOr<double> embedScale;
    FailureOr<bool> tied;
    if (failed(vocab) ||
        failed(embedScale = getNumber(head, "embed_scale", 0,
                                      std::numeric_limits<double>::max())) ||
        failed(tied = getBool(head, "head_reuses_embedding")))
      return failure();
    if (!*tied)
      return error(child(head, "head_reuses_embedding").path)
             << "an untied LM head is not supported (gemma3 and gemma4 reuse "
                "the embedding table)";
    if (has(head, "final_logit_softcapping")) {
      FailureOr<double> cap = getNumber(head, "final_logit_softcapping", 0,
                                        std::numeric_limits<double>::max());
      if (failed(cap))
        return failure();
      out.softcap = *cap;
    }
    out.hasHead = true;
    out.vocabSize = *vocab;
    out.embedScale = *embedScale;
    out.tied = *tied;
  }

  Node residual = child(exec, "residual_topology");
  if (failed(checkObject(residual, {"kind"}, {}, "residual_topology")) ||
      failed(getEnum(residual, "kind", {"single_stream"}, "residual topology")))
    return failure();
  return success();
}

LogicalResult GraphParser::parseLayers(const Node &c, int64_t numLayers,
                                       const LayerDefaults &defaults,
                                       std::vector<LayerSpec> &out) {
  Node attention = child(c, "attention");
  if (!attention->is_array())
    return error(attention.path)
           << "expected an array for attention, got " << describe(*attention);
  if (static_cast<int64_t>(attention->size()) != numLayers)
    return error(attention.path) << "attention has " << attention->size()
                                 << " entries but num_layers is " << numLayers
                                 << " (one entry per layer)";
  out.resize(numLayers);
  for (int64_t i = 0; i < numLayers; ++i)
    if (failed(parseLayer(element(attention, i), i, defaults, out[i])))
      return failure();
  return success();
}

LogicalResult GraphParser::parseLayer(const Node &a, unsigned index,
                                      const LayerDefaults &defaults,
                                      LayerSpec &out) {
  out.index = index;
  out.pos = posOf(a.path);
  if (failed(checkObject(a, {"operator", "span", "position"},
                         {"window", "geometry", "v_from_k", "declared_span"},
                         "a layer's attention")))
    return failure();
  FailureOr<std::string> span;
  if (failed(getEnum(a, "operator", {"softmax"}, "operator")) ||
      failed(span = getEnum(a, "span", {"sliding", "full"}, "span")))
    return failure();
  out.span = *span == "sliding" ? Span::Sliding : Span::Full;
  if (has(a, "declared_span")) {
    FailureOr<std::string> declared = getString(a, "declared_span");
    if (failed(declared))
      return failure();
    StringRef d = *declared;
    if (d != "sliding_attention" && d != "full_attention")
      return error(child(a, "declared_span").path)
             << "unknown declared_span '" << printable(d)
             << "' (expected 'sliding_attention' or 'full_attention')";
    if (d != *span + "_attention")
      return error(child(a, "declared_span").path)
             << "declared_span '" << d << "' disagrees with span '" << *span
             << "'";
  }
  if (out.span == Span::Sliding) {
    if (!has(a, "window"))
      return error(a.path) << "missing required key 'window' (a sliding "
                              "layer needs its window)";
    FailureOr<int64_t> window = getInt(a, "window", 1, kMaxContext);
    if (failed(window))
      return failure();
    out.window = *window;
  } else if (has(a, "window")) {
    return error(child(a, "window").path)
           << "'window' on a full layer (only sliding layers have one)";
  }

  // Geometry: the layer's own, else the execution.attention defaults.
  std::string kvPath = defaults.kvHeadsPath, dimPath = defaults.headDimPath;
  if (has(a, "geometry")) {
    Node g = child(a, "geometry");
    if (failed(checkObject(g, {"head_dim", "num_kv_heads"}, {}, "geometry")))
      return failure();
    FailureOr<int64_t> d = getInt(g, "head_dim", 1, kMaxWidth);
    FailureOr<int64_t> kv;
    if (failed(d) || failed(kv = getInt(g, "num_kv_heads", 1, kMaxHeads)))
      return failure();
    out.headDim = *d;
    out.numKvHeads = *kv;
    kvPath = child(g, "num_kv_heads").path;
    dimPath = child(g, "head_dim").path;
  } else {
    if (out.span == Span::Full && defaults.fullNeedsGeometry)
      return error(a.path)
             << "missing 'geometry': gemma4 full layers have their own "
                "head_dim and num_kv_heads (execution.attention describes "
                "the sliding layers)";
    out.headDim = defaults.headDim;
    out.numKvHeads = defaults.numKvHeads;
  }
  if (defaults.numQHeads % out.numKvHeads != 0)
    return error(kvPath, a.path)
           << "num_kv_heads " << out.numKvHeads
           << " does not divide num_q_heads " << defaults.numQHeads;
  if (defaults.numQHeads * out.headDim > kMaxWidth)
    return error(dimPath, a.path)
           << "num_q_heads x head_dim = " << defaults.numQHeads * out.headDim
           << " exceeds the limit of " << kMaxWidth;

  // Position.
  Node p = child(a, "position");
  if (!p->is_object())
    return error(p.path) << "expected an object for position, got "
                         << describe(*p);
  if (!has(p, "kind"))
    return error(p.path) << "missing required key 'kind' in position";
  FailureOr<std::string> kind = getEnum(
      p, "kind", {"rope", "linear", "partial_rope", "none"}, "position kind");
  if (failed(kind))
    return failure();
  if (*kind == "none") {
    out.position = PositionKind::None;
    return checkObject(p, {"kind"}, {}, "position");
  }
  SmallVector<StringRef> keys = {"kind", "theta"};
  if (*kind == "linear")
    keys.push_back("factor");
  if (*kind == "partial_rope")
    keys.append({"rotary_fraction", "basis"});
  if (failed(checkObject(p, keys, {}, "position")))
    return failure();
  FailureOr<double> theta =
      getNumber(p, "theta", 0, std::numeric_limits<double>::max());
  if (failed(theta))
    return failure();
  out.theta = *theta;
  if (*kind == "rope") {
    out.position = PositionKind::Rope;
  } else if (*kind == "linear") {
    FailureOr<double> factor =
        getNumber(p, "factor", 0, std::numeric_limits<double>::max());
    if (failed(factor))
      return failure();
    out.position = PositionKind::Linear;
    out.factor = *factor;
  } else {
    FailureOr<double> fraction = getNumber(p, "rotary_fraction", 0, 1);
    FailureOr<std::string> basis;
    if (failed(fraction) ||
        failed(basis = getEnum(p, "basis", {"head_width"}, "rope basis")))
      return failure();
    out.position = PositionKind::PartialRope;
    out.rotaryFraction = *fraction;
    out.basis = *basis;
  }
  if (out.headDim % 2 != 0)
    return error(dimPath, a.path)
           << "head_dim " << out.headDim << " is odd; '" << *kind
           << "' rotates pairs of channels and needs an even head_dim";

  if (has(a, "v_from_k")) {
    FailureOr<bool> vFromK = getBool(a, "v_from_k");
    if (failed(vFromK))
      return failure();
    // The IR marks V-from-K on full attention only (gemma-text.md §5.5).
    if (*vFromK && out.span == Span::Sliding)
      return error(child(a, "v_from_k").path)
             << "v_from_k on a sliding layer is not supported (V from K is "
                "a property of full layers)";
    out.vFromK = *vFromK;
  }
  return success();
}
