//===- HfModel.h - what an HF config.json describes -------------*- C++ -*-===//
//
// Part of sgc. The result of reading a Hugging Face `config.json` with the
// defaults transformers fills in (Gemma3Config.cpp, Gemma4Config.cpp): the
// same GraphSpec structures the schema-6 parser fills, plus the few values
// a schema-6 graph states that GraphSpec keeps elsewhere. GraphWriter.cpp
// turns it into a system_graph.json.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_HFMODEL_H
#define SGC_COMPILER_IMPORT_HF_HFMODEL_H

#include "compiler/Import/GraphSpec.h"

#include <map>
#include <optional>

namespace mlir::sgc::import::hf {

/// A vision tower as the config describes it.
struct HfVision {
  OpaqueComponentSpec spec;
  /// The encoder's norm epsilon (layer_norm_eps / rms_norm_eps).
  double eps = 1e-6;
};

/// A compressed-tensors checkpoint's scheme (CompressedTensors.h).
struct CompressedScheme {
  /// FP8_CH, INT4_G32 or INT4_G128.
  std::string encoding;
  /// The group's targets and the ignore list: "Linear", module names, or
  /// "re:" and a regular expression matched from the name's start.
  std::vector<std::string> targets, ignore;
  /// For messages: "FP8 e4m3, channel scales".
  std::string summary;
};

struct HfModel {
  /// The text decoder: geometry, norms, head and every layer resolved.
  /// `layersPrefix`, `embedPrefix` and `finalNormPrefix` hold the family's
  /// default names until a tensor index says otherwise.
  TextSpec text;
  /// A weightless V norm on every layer (gemma4).
  bool vNorm = false;
  /// The checkpoint's storage of the text objects' matrices, by object kind
  /// ("embedding", "decoder_stack"), where it is not BF16 ("F16").
  std::map<std::string, std::string> matrixEncodings;
  std::optional<HfVision> vision;
  /// The config's quantization_config, when it has one.
  std::optional<CompressedScheme> quantization;
  /// The decoder matrices it stores quantized: tensor name -> encoding.
  std::map<std::string, std::string> tensorEncodings;
};

} // namespace mlir::sgc::import::hf

#endif // SGC_COMPILER_IMPORT_HF_HFMODEL_H
