//===- GraphParser.h - the schema-6 rules of a system_graph -----*- C++ -*-===//
//
// Part of sgc. Private to the importer: the parser parseSystemGraph runs,
// shared by GraphParser.cpp (the graph, its components and objects) and
// ExecutionParser.cpp (a component's execution block and its layers).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_GRAPHPARSER_H
#define SGC_COMPILER_IMPORT_GRAPHPARSER_H

#include "compiler/Import/FamilyCompletions.h"
#include "compiler/Import/GraphSpec.h"
#include "compiler/Import/Importer.h"
#include "compiler/Import/JsonReader.h"

#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::sgc::import {

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

// They keep hostile input from costing stack or time, or from overflowing
// arithmetic.

/// Containers may nest this deep; the seeds need 7.
constexpr unsigned kMaxDepth = 64;
/// The seeds are ~40 KB.
constexpr size_t kMaxFileBytes = 64u << 20;
constexpr int64_t kMaxLayers = 4096;
/// Widths: hidden, intermediate, head_dim, heads x head_dim.
constexpr int64_t kMaxWidth = 1 << 20;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxVocab = 1 << 24;
/// Context length and window.
constexpr int64_t kMaxContext = 1 << 24;
constexpr size_t kMaxComponents = 16;
constexpr size_t kMaxObjects = 256;
constexpr size_t kMaxBindings = 256;
constexpr int64_t kMaxTensors = 1 << 24;
constexpr int64_t kMaxBytes = int64_t(1) << 50;

//===----------------------------------------------------------------------===//
// The parser
//===----------------------------------------------------------------------===//

/// Geometry that layers without `geometry` take.
struct LayerDefaults {
  int64_t numQHeads = 0, numKvHeads = 0, headDim = 0;
  /// Paths of the defaults, for diagnostics about them.
  std::string kvHeadsPath, headDimPath;
  /// Full layers need their own geometry (gemma4 text, not strict).
  bool fullNeedsGeometry = false;
};

/// The validated `execution` block of a component.
struct ExecSpec {
  JsonNode node;
  std::optional<int64_t> contextLength;
  int64_t numQHeads = 0, numKvHeads = 0, headDim = 0;
  double scoreScale = 1.0;
  /// Keys a perception execution may leave out.
  bool hasScoreScale = false, hasFreeNorm = false;
  std::optional<bool> attentionBias, ffnBias;
  /// qk_norm_scope given (q and k norms with weights).
  bool qkNorms = false;
  int64_t qkNormOffset = 0;
  bool freeQ = false, freeK = false, freeV = false;
  int64_t intermediateSize = 0;
  FfnKind ffnKind = FfnKind::Gated;
  NormSpec pre, post, finalNorm;
  bool hasPost = false, hasFinal = false, postNorms = false;
  bool hasHead = false;
  int64_t vocabSize = 0;
  double embedScale = 1.0;
  std::optional<double> softcap;
  bool tied = true;
};

/// Enforces SCHEMA6.md on one file and fills a GraphSpec; the first error
/// ends the parse.
class GraphParser : public JsonReader {
public:
  GraphParser(MLIRContext *ctx, StringRef fileName, StringRef text,
              const ImportOptions &options)
      : JsonReader(ctx, fileName, text, options.strictGraph), options(options) {
  }

  FailureOr<GraphSpec> parse();

private:
  using Node = JsonNode;

  /// Records a completion; the remarks go out when the parse succeeds.
  void complete(const std::string &path, const std::string &parent,
                std::string message) {
    graph.completions.push_back(
        Completion{posOf(path, parent), std::move(message)});
  }

  /// A norm weight offset: 0 or 1 (written 0, 1, 0.0 or 1.0).
  FailureOr<int64_t> getWeightOffset(const Node &obj, StringRef key);

  //===--- Sections -------------------------------------------------------===//

  LogicalResult parseComponent(const Node &c);
  LogicalResult parseText(const Node &c, Family family);
  LogicalResult parsePerception(const Node &c, Family family);

  //===--- Perception (PerceptionParser.cpp)
  //-------------------------------===//

  /// An absent key: its family value `value` as a completion, or an error
  /// naming `path` under --strict-graph.
  LogicalResult absentKey(const std::string &path, const std::string &parent,
                          StringRef key, Family family,
                          const std::string &value);
  /// A present key whose value differs from the family's: a remark (the
  /// graph's value applies).
  void differs(const std::string &path, StringRef key, Family family,
               const std::string &graphValue, const std::string &familyValue);
  LogicalResult parseImage(const Node &perception, VisionSpec &spec);
  LogicalResult checkVisionLayers(const Node &c, VisionSpec &spec);
  LogicalResult applyVisionExecution(const Node &execNode, const ExecSpec &exec,
                                     VisionSpec &spec,
                                     PerceptionAsWritten &written);
  /// Every vision token id below the text vocab size.
  LogicalResult checkVisionTokens();
  LogicalResult parseExecution(const Node &exec, bool text, ExecSpec &out);
  /// A norm; `text` allows rms_norm only.
  LogicalResult parseNorm(const Node &obj, StringRef key, bool text,
                          NormSpec &out);
  LogicalResult parseLayers(const Node &c, int64_t numLayers,
                            const LayerDefaults &defaults,
                            std::vector<LayerSpec> &out);
  LogicalResult parseLayer(const Node &a, unsigned index,
                           const LayerDefaults &defaults, LayerSpec &out);
  LogicalResult parseObject(const Node &o);
  LogicalResult resolvePrefixes();
  void deriveFigures();

  const ImportOptions &options;
  GraphSpec graph;

  struct ComponentInfo {
    std::string id;
    bool text;
    Family family;
    std::string path;
  };
  std::vector<ComponentInfo> components;
  /// Where each perception component's token ids are (or would be).
  struct VisionPaths {
    std::string tokens, tokensParent;
    bool tokensGiven = false;
  };
  std::vector<VisionPaths> visionPaths;
  bool haveText = false;
  llvm::StringSet<> objectIds;
};

} // namespace mlir::sgc::import

#endif // SGC_COMPILER_IMPORT_GRAPHPARSER_H
