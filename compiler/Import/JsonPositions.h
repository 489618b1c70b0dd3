//===- JsonPositions.h - JSON path -> byte offset index ---------*- C++ -*-===//
//
// Part of sgc. nlohmann/json 3.11 keeps no source positions, so the importer
// scans the text once more and records where every value starts, keyed by
// its JSON path (`$.components[0].attention[5].window`). The scan is
// iterative and stops at a fixed nesting depth, so hostile input (200k
// nested brackets) costs neither stack nor time. It also finds duplicate
// object keys, which nlohmann resolves silently (last one wins).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_JSONPOSITIONS_H
#define SGC_COMPILER_IMPORT_JSONPOSITIONS_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::sgc::import {

/// Appends the path component of object key `key` to `path`: `.key` for
/// identifier-like keys, `["key"]` (JSON-escaped) otherwise.
void appendJsonKey(std::string &path, llvm::StringRef key);
/// Appends `[index]` to `path`.
void appendJsonIndex(std::string &path, size_t index);

class JsonPositions {
public:
  enum class Status {
    /// The whole text was indexed.
    Ok,
    /// A container opened deeper than the limit; indexing stopped there.
    TooDeep,
    /// The scanner met text that is not JSON; indexing stopped there (the
    /// parser's message is the one to report).
    Malformed,
  };

  /// Indexes `text`. Containers may nest `maxDepth` levels deep (the top
  /// level value is level 1).
  JsonPositions(llvm::StringRef text, unsigned maxDepth);

  Status getStatus() const { return status; }
  /// Where the scan stopped (TooDeep, Malformed) and the path of the value
  /// it was in.
  size_t getStopOffset() const { return stopOffset; }
  const std::string &getStopPath() const { return stopPath; }

  /// The first duplicated object key: its second occurrence's path, the
  /// key, and the offset of that key.
  struct Duplicate {
    std::string path;
    std::string key;
    size_t offset;
  };
  const std::optional<Duplicate> &getDuplicateKey() const { return duplicate; }

  /// The offset at which the value at `path` starts.
  std::optional<size_t> lookup(llvm::StringRef path) const;

  /// The path of the last value that starts at or before `offset` ("$"
  /// if none does).
  std::string pathAt(size_t offset) const;

  /// 1-based line and column (in bytes) of `offset`; offsets past the end
  /// map to the end of the text.
  std::pair<unsigned, unsigned> lineColumn(size_t offset) const;

private:
  void scan(unsigned maxDepth);

  llvm::StringRef text;
  llvm::StringMap<size_t> offsets;
  /// The entries of `offsets` in text order.
  std::vector<const llvm::StringMapEntry<size_t> *> inOrder;
  std::vector<size_t> lineStarts;
  Status status = Status::Ok;
  size_t stopOffset = 0;
  std::string stopPath;
  std::optional<Duplicate> duplicate;
};

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_JSONPOSITIONS_H
