//===- ConfigReader.h - typed access to an HF config.json -------*- C++ -*-===//
//
// Part of sgc. HF configs differ from schema-6 graphs in one way that
// matters here: almost every key may be absent (or null) and then takes
// the default of transformers' config class. These getters take that
// default; a present value of the wrong type or range is an error naming
// the file, the JSON path and line:col. Unknown keys are not reported: a
// config carries dozens that do not change the forward pass
// (`id2label`, `use_cache`, ...); the features that do are refused by name
// (`refuseIf`).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_HF_CONFIGREADER_H
#define SGC_COMPILER_IMPORT_HF_CONFIGREADER_H

#include "compiler/Import/JsonReader.h"

namespace mlir::sgc::import::hf {

class ConfigReader : public JsonReader {
public:
  ConfigReader(MLIRContext *ctx, StringRef fileName, StringRef text)
      : JsonReader(ctx, fileName, text, /*strictKeys=*/false) {}

  /// Present and not null.
  static bool given(const JsonNode &obj, StringRef key) {
    return has(obj, key) && !child(obj, key)->is_null();
  }

  /// The value at `key`, or `fallback` when absent or null.
  FailureOr<int64_t> intOr(const JsonNode &obj, StringRef key,
                           int64_t fallback, int64_t lo, int64_t hi);
  FailureOr<double> numberOr(const JsonNode &obj, StringRef key,
                             double fallback, double lo, double hi);
  FailureOr<bool> boolOr(const JsonNode &obj, StringRef key, bool fallback);
  FailureOr<std::string> stringOr(const JsonNode &obj, StringRef key,
                                  StringRef fallback);
  /// An object (null/absent: an empty one, path kept for messages).
  FailureOr<JsonNode> objectOr(const JsonNode &obj, StringRef key);

  /// "unsupported: <why>" at `key` of `obj` (or at `obj` when the key is
  /// absent); always fails.
  LogicalResult unsupported(const JsonNode &obj, StringRef key,
                            const Twine &why);
};

} // namespace mlir::sgc::import::hf

#endif // SGC_COMPILER_IMPORT_HF_CONFIGREADER_H
