//===- JsonReader.h - typed JSON access, JSON-path errors -------*- C++ -*-===//
//
// Part of sgc. Reads one untrusted JSON document: parses it without
// exceptions (this code builds with -fno-exceptions), and gets typed values
// out of it. Every problem is one diagnostic located at the JSON path of the
// value and its line:col (from JsonPositions). Knows nothing of schema 6:
// GraphParser puts the schema's rules on top.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_JSONREADER_H
#define SGC_COMPILER_IMPORT_JSONREADER_H

#include "compiler/Import/GraphSpec.h"
#include "compiler/Import/JsonPositions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mlir::sgc::import {

using json = nlohmann::json;

/// A value and its JSON path.
struct JsonNode {
  const json *value = nullptr;
  std::string path;

  const json &operator*() const { return *value; }
  const json *operator->() const { return value; }
};

/// `text` as it may appear in a one-line message: control characters
/// escaped, long strings cut.
std::string printable(llvm::StringRef text, size_t limit = 64);

/// What a value is, for "expected X, got Y".
std::string describe(const json &v);

class JsonReader {
public:
  /// Reads `text`, the contents of `fileName`. With `strictKeys`, unknown
  /// object keys are errors (the message names --strict-graph), else
  /// warnings.
  JsonReader(MLIRContext *ctx, llvm::StringRef fileName, llvm::StringRef text,
             bool strictKeys)
      : ctx(ctx), fileName(fileName), text(text), strictKeys(strictKeys) {}

  /// Indexes the text (containers nest at most `maxDepth` levels) and parses
  /// it into `root`. Too deep a nesting, a syntax error or a duplicated key
  /// is one error.
  LogicalResult readDocument(unsigned maxDepth, json &root);

  //===--- Positions and diagnostics --------------------------------------===//

  /// The position of the value at `path`; of `parent` when the file has no
  /// `path` (a missing key); line 0 when neither is known.
  SourcePos posOf(const std::string &path,
                  const std::string &parent = {}) const;
  /// `path` located at byte `offset` (1:1 before the text is indexed).
  SourcePos posAtOffset(const std::string &path, size_t offset) const;

  InFlightDiagnostic error(const SourcePos &pos);
  InFlightDiagnostic error(const std::string &path,
                           const std::string &parent = {}) {
    return error(posOf(path, parent));
  }
  InFlightDiagnostic warning(const SourcePos &pos);
  InFlightDiagnostic warning(const std::string &path) {
    return warning(posOf(path));
  }

  //===--- Access ---------------------------------------------------------===//

  static bool has(const JsonNode &obj, llvm::StringRef key) {
    return obj->is_object() && obj->find(key.str()) != obj->end();
  }
  /// The member `key` of object `obj` (null when absent).
  static JsonNode child(const JsonNode &obj, llvm::StringRef key);
  static JsonNode element(const JsonNode &array, size_t index);

  /// `node` must be an object with every key of `required`; keys outside
  /// `required` and `optional` are warnings (errors with `strictKeys`).
  LogicalResult checkObject(const JsonNode &node,
                            ArrayRef<llvm::StringRef> required,
                            ArrayRef<llvm::StringRef> optional,
                            llvm::StringRef what);
  LogicalResult checkArray(const JsonNode &node, llvm::StringRef what,
                           size_t minSize, size_t maxSize);
  /// An integer in [lo, hi]; floats are refused even when integral.
  FailureOr<int64_t> getInt(const JsonNode &obj, llvm::StringRef key,
                            int64_t lo, int64_t hi);
  /// A finite number in (lo, hi] (or [lo, hi] when `loInclusive`).
  FailureOr<double> getNumber(const JsonNode &obj, llvm::StringRef key,
                              double lo, double hi, bool loInclusive = false);
  FailureOr<std::string> getString(const JsonNode &obj, llvm::StringRef key,
                                   bool nonEmpty = true);
  FailureOr<bool> getBool(const JsonNode &obj, llvm::StringRef key);
  /// One of `allowed`; `what` names the thing for "unknown <what> 'x'".
  FailureOr<std::string> getEnum(const JsonNode &obj, llvm::StringRef key,
                                 ArrayRef<llvm::StringRef> allowed,
                                 llvm::StringRef what);

protected:
  MLIRContext *ctx;
  llvm::StringRef fileName, text;

private:
  bool strictKeys;
  /// Set by parse().
  std::optional<JsonPositions> positions;
};

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_JSONREADER_H
