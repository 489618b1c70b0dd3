//===- TextCommon.h - what the Gemma text configs share ---------*- C++ -*-===//
//
// Part of sgc. Gemma3TextConfig and Gemma4TextConfig share most of their
// keys (with different defaults); these read them into a TextSpec.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_TEXTCOMMON_H
#define SGC_COMPILER_IMPORT_HF_TEXTCOMMON_H

#include "compiler/Import/HF/ConfigReader.h"

namespace mlir::sgc::import::hf {

/// The defaults of one family's text config class.
struct TextDefaults {
  int64_t vocabSize, hiddenSize, intermediateSize, numLayers, numHeads,
      numKvHeads, headDim, maxPositions, slidingWindow;
};

/// The keys both families read the same way: sizes, heads, norms, the
/// activation, the head (vocab, tied, softcap), the context length, and
/// the refusals they share (attention bias, another activation, untied
/// head). Fills `out` except the layers; `window` gets sliding_window.
LogicalResult readCommonText(ConfigReader &r, const JsonNode &t,
                             const TextDefaults &defaults, TextSpec &out,
                             int64_t &window);

/// `layer_types` (validated: one per layer, each 'sliding_attention' or
/// 'full_attention'), else every `pattern`-th layer full.
FailureOr<std::vector<Span>> readLayerTypes(ConfigReader &r,
                                            const JsonNode &t,
                                            int64_t numLayers,
                                            int64_t pattern);

/// One `rope_parameters` entry: `default`, `linear` (factor) or, where
/// `proportionalOk`, `proportional` (partial_rotary_factor). `theta` is
/// its rope_theta, or `thetaFallback` when absent.
struct Rope {
  PositionKind kind = PositionKind::Rope;
  double theta = 0, factor = 1.0, fraction = 1.0;
};
FailureOr<Rope> readRope(ConfigReader &r, const JsonNode &entry,
                         double thetaFallback, bool proportionalOk);

/// f32(x) widened: the value the reference's fp32 tensors hold (eps, the
/// embed scale), as the seeds write it.
double asF32(double x);

} // namespace mlir::sgc::import::hf

#endif // SGC_COMPILER_IMPORT_HF_TEXTCOMMON_H
