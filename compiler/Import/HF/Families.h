//===- Families.h - config.json readers per model family --------*- C++ -*-===//
//
// Part of sgc. One reader per family of transformers config classes, each
// applying that class's defaults to absent keys and refusing what sgc does
// not implement, by JSON path.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_FAMILIES_H
#define SGC_COMPILER_IMPORT_HF_FAMILIES_H

#include "compiler/Import/HF/ConfigReader.h"
#include "compiler/Import/HF/HfModel.h"

namespace mlir::sgc::import::hf {

/// `gemma3_text` (Gemma3TextConfig at the top) or `gemma3` (Gemma3Config:
/// text_config + a SigLIP vision_config).
FailureOr<HfModel> readGemma3(ConfigReader &r, const JsonNode &root,
                              StringRef modelType);

/// `gemma4_text` (Gemma4TextConfig) or `gemma4` (Gemma4Config:
/// text_config, optional vision_config, no audio).
FailureOr<HfModel> readGemma4(ConfigReader &r, const JsonNode &root,
                              StringRef modelType);

/// A nested config's `model_type`, when given, must be `expected`.
LogicalResult checkNestedType(ConfigReader &r, const JsonNode &node,
                              StringRef expected);

} // namespace mlir::sgc::import::hf

#endif // SGC_COMPILER_IMPORT_HF_FAMILIES_H
