//===- GraphParser.cpp - parse and validate a system_graph.json -----------===//
//
// Part of sgc. Enforces SCHEMA6.md on untrusted text and fills a GraphSpec:
// the primary_text component with every layer's geometry resolved, the
// perception components (validated, not lowered), the objects with their
// declared and derived tensor figures, and the family completions.
//
// Every problem is one diagnostic located at the JSON path of the value (and
// its line:col); the first error ends the parse. nlohmann/json parses
// without exceptions (this code builds with -fno-exceptions): a SAX parse
// reports syntax errors with their byte offset, and JsonPositions supplies
// the offsets of values. Limits (nesting, file size, layer counts, widths)
// keep hostile input from costing stack, time or overflowing arithmetic.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"
#include "compiler/Import/GraphSpec.h"
#include "compiler/Import/Importer.h"
#include "compiler/Import/JsonPositions.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;
using json = nlohmann::json;

Location mlir::sgc::import::makeLoc(MLIRContext *ctx, StringRef fileName,
                                    const SourcePos &pos) {
  Location file =
      pos.line
          ? Location(FileLineColLoc::get(ctx, fileName, pos.line, pos.column))
          : Location(FileLineColLoc::get(ctx, fileName, 0, 0));
  if (pos.jsonPath.empty())
    return file;
  return NameLoc::get(StringAttr::get(ctx, pos.jsonPath), file);
}

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

namespace {
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
} // namespace

//===----------------------------------------------------------------------===//
// JSON helpers
//===----------------------------------------------------------------------===//

namespace {

/// A value and its JSON path.
struct Node {
  const json *value = nullptr;
  std::string path;

  const json &operator*() const { return *value; }
  const json *operator->() const { return value; }
};

/// `text` as it may appear in a one-line message: control characters
/// escaped, long strings cut.
std::string printable(StringRef text, size_t limit = 64) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    unsigned char c = text[i];
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// What a value is, for "expected X, got Y".
std::string describe(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return v.get<bool>() ? "boolean true" : "boolean false";
  case json::value_t::string:
    return "string '" + printable(v.get_ref<const std::string &>()) + "'";
  case json::value_t::number_integer:
    return "integer " + std::to_string(v.get<int64_t>());
  case json::value_t::number_unsigned:
    return "integer " + std::to_string(v.get<uint64_t>());
  case json::value_t::number_float:
    return "number " + formatDouble(v.get<double>());
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "an unsupported value";
  }
}

/// Lists `allowed` as "'a', 'b' or 'c'".
std::string listOf(ArrayRef<StringRef> allowed) {
  std::string out;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i)
      out += i + 1 == allowed.size() ? " or " : ", ";
    out += "'" + allowed[i].str() + "'";
  }
  return out;
}

/// Builds the DOM like nlohmann's own parser, without exceptions, and keeps
/// the position and text of a syntax error.
class DomBuilder : public nlohmann::detail::json_sax_dom_parser<json> {
public:
  explicit DomBuilder(json &root)
      : nlohmann::detail::json_sax_dom_parser<json>(
            root,
            /*allow_exceptions=*/false) {}

  template <class Exception>
  bool parse_error(std::size_t position, const std::string &lastToken,
                   const Exception &ex) {
    errorPosition = position;
    errorMessage = ex.what();
    return nlohmann::detail::json_sax_dom_parser<json>::parse_error(
        position, lastToken, ex);
  }

  size_t errorPosition = 0;
  std::string errorMessage;
};

/// nlohmann's message without its "[json.exception...] parse error at line
/// L, column C: " prefix (we print our own position).
std::string syntaxMessage(const std::string &what) {
  StringRef message = what;
  if (message.starts_with("[json.exception."))
    message = message.drop_until([](char c) { return c == ']'; }).drop_front();
  message = message.ltrim();
  if (message.starts_with("parse error")) {
    size_t colon = message.find(": ");
    if (colon != StringRef::npos)
      message = message.drop_front(colon + 2);
  }
  // The last-read text may hold any byte: keep the line printable ASCII.
  std::string out;
  for (unsigned char c : message) {
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

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
  Node node;
  std::optional<int64_t> contextLength;
  int64_t numQHeads = 0, numKvHeads = 0, headDim = 0;
  double scoreScale = 1.0;
  int64_t qkNormOffset = 0;
  bool freeQ = false, freeK = false, freeV = false;
  int64_t intermediateSize = 0;
  NormSpec pre, post, finalNorm;
  bool hasPost = false, hasFinal = false, postNorms = false;
  bool hasHead = false;
  int64_t vocabSize = 0;
  double embedScale = 1.0;
  std::optional<double> softcap;
  bool tied = true;
};

class GraphParser {
public:
  GraphParser(MLIRContext *ctx, StringRef fileName, StringRef text,
              const ImportOptions &options)
      : ctx(ctx), fileName(fileName), text(text), options(options) {}

  FailureOr<GraphSpec> parse();

private:
  //===--- Diagnostics ----------------------------------------------------===//

  SourcePos posOf(const std::string &path, const std::string &parent = {}) {
    SourcePos pos{path, 0, 0};
    if (!positions)
      return pos;
    std::optional<size_t> offset = positions->lookup(path);
    if (!offset && !parent.empty())
      offset = positions->lookup(parent);
    if (offset)
      std::tie(pos.line, pos.column) = positions->lineColumn(*offset);
    return pos;
  }
  SourcePos posAtOffset(const std::string &path, size_t offset) {
    SourcePos pos{path, 1, 1};
    if (positions)
      std::tie(pos.line, pos.column) = positions->lineColumn(offset);
    return pos;
  }
  InFlightDiagnostic error(const SourcePos &pos) {
    return emitError(makeLoc(ctx, fileName, pos));
  }
  InFlightDiagnostic error(const std::string &path,
                           const std::string &parent = {}) {
    return error(posOf(path, parent));
  }
  InFlightDiagnostic warning(const std::string &path) {
    return emitWarning(makeLoc(ctx, fileName, posOf(path)));
  }
  /// Records a completion; the remarks go out when the parse succeeds.
  void complete(const std::string &path, const std::string &parent,
                std::string message) {
    graph.completions.push_back(
        Completion{posOf(path, parent), std::move(message)});
  }

  //===--- Access ---------------------------------------------------------===//

  static bool has(const Node &obj, StringRef key) {
    return obj->is_object() && obj->find(key.str()) != obj->end();
  }
  /// The member `key` of object `obj` (null when absent).
  static Node child(const Node &obj, StringRef key) {
    static const json null;
    auto it = obj->is_object() ? obj->find(key.str()) : obj->end();
    Node n{it == obj->end() ? &null : &*it, obj.path};
    appendJsonKey(n.path, key);
    return n;
  }
  static Node element(const Node &array, size_t index) {
    Node n{&(*array)[index], array.path};
    appendJsonIndex(n.path, index);
    return n;
  }

  /// `node` must be an object with every key of `required`; keys outside
  /// `required` and `optional` are warnings (errors under --strict-graph).
  LogicalResult checkObject(const Node &node, ArrayRef<StringRef> required,
                            ArrayRef<StringRef> optional, StringRef what);
  LogicalResult checkArray(const Node &node, StringRef what, size_t minSize,
                           size_t maxSize);
  FailureOr<int64_t> getInt(const Node &obj, StringRef key, int64_t lo,
                            int64_t hi);
  /// A finite number in (lo, hi] (or [lo, hi] when `loInclusive`).
  FailureOr<double> getNumber(const Node &obj, StringRef key, double lo,
                              double hi, bool loInclusive = false);
  FailureOr<std::string> getString(const Node &obj, StringRef key,
                                   bool nonEmpty = true);
  FailureOr<bool> getBool(const Node &obj, StringRef key);
  /// One of `allowed`; `what` names the thing for "unknown <what> 'x'".
  FailureOr<std::string> getEnum(const Node &obj, StringRef key,
                                 ArrayRef<StringRef> allowed, StringRef what);
  /// A norm weight offset: 0 or 1 (written 0, 1, 0.0 or 1.0).
  FailureOr<int64_t> getWeightOffset(const Node &obj, StringRef key);

  //===--- Sections -------------------------------------------------------===//

  LogicalResult parseComponent(const Node &c);
  LogicalResult parseText(const Node &c, Family family);
  LogicalResult parsePerception(const Node &c, Family family);
  LogicalResult parseExecution(const Node &exec, bool text, ExecSpec &out);
  LogicalResult parseNorm(const Node &obj, StringRef key, NormSpec &out);
  LogicalResult parseLayers(const Node &c, int64_t numLayers,
                            const LayerDefaults &defaults,
                            std::vector<LayerSpec> &out);
  LogicalResult parseLayer(const Node &a, unsigned index,
                           const LayerDefaults &defaults, LayerSpec &out);
  LogicalResult parseObject(const Node &o);
  LogicalResult resolvePrefixes();
  void deriveFigures();

  MLIRContext *ctx;
  StringRef fileName, text;
  const ImportOptions &options;
  std::optional<JsonPositions> positions;
  GraphSpec graph;

  struct ComponentInfo {
    std::string id;
    bool text;
    Family family;
    std::string path;
  };
  std::vector<ComponentInfo> components;
  bool haveText = false;
  llvm::StringSet<> objectIds;
};

} // namespace

//===----------------------------------------------------------------------===//
// Access helpers
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::checkObject(const Node &node,
                                       ArrayRef<StringRef> required,
                                       ArrayRef<StringRef> optional,
                                       StringRef what) {
  if (!node->is_object())
    return error(node.path)
           << "expected an object for " << what << ", got " << describe(*node);
  for (StringRef key : required)
    if (!has(node, key))
      return error(node.path)
             << "missing required key '" << key << "' in " << what;
  // Unknown keys in file order.
  std::vector<std::pair<size_t, std::string>> unknown;
  for (auto it = node->begin(); it != node->end(); ++it) {
    StringRef key = it.key();
    if (llvm::is_contained(required, key) || llvm::is_contained(optional, key))
      continue;
    std::string path = node.path;
    appendJsonKey(path, key);
    std::optional<size_t> offset =
        positions ? positions->lookup(path) : std::nullopt;
    unknown.emplace_back(offset.value_or(0), path);
    if (unknown.size() > 64)
      break;
  }
  llvm::sort(unknown);
  for (const auto &[offset, path] : unknown) {
    StringRef key = StringRef(path).drop_front(node.path.size());
    key.consume_front(".");
    if (options.strictGraph)
      return error(path) << "unknown key '" << printable(key) << "' in " << what
                         << " (--strict-graph)";
    warning(path) << "unknown key '" << printable(key) << "' in " << what
                  << " is ignored";
  }
  return success();
}

LogicalResult GraphParser::checkArray(const Node &node, StringRef what,
                                      size_t minSize, size_t maxSize) {
  if (!node->is_array())
    return error(node.path)
           << "expected an array for " << what << ", got " << describe(*node);
  if (node->size() < minSize)
    return error(node.path) << "expected at least " << minSize << " "
                            << (minSize == 1 ? "entry" : "entries") << " in "
                            << what << ", got " << node->size();
  if (node->size() > maxSize)
    return error(node.path) << what << " has " << node->size()
                            << " entries, more than the limit of " << maxSize;
  return success();
}

FailureOr<int64_t> GraphParser::getInt(const Node &obj, StringRef key,
                                       int64_t lo, int64_t hi) {
  Node n = child(obj, key);
  int64_t value;
  if (n->is_number_unsigned()) {
    uint64_t u = n->get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) {
      error(n.path) << key << " " << u << " exceeds the limit of " << hi;
      return failure();
    }
    value = static_cast<int64_t>(u);
  } else if (n->is_number_integer()) {
    value = n->get<int64_t>();
  } else if (n->is_number_float() && n->get<double>() > hi &&
             n->get<double>() == std::floor(n->get<double>())) {
    // An integer literal too large for 64 bits (nlohmann keeps a double).
    error(n.path) << key << " " << formatDouble(n->get<double>())
                  << " exceeds the limit of " << hi;
    return failure();
  } else {
    // Floats are refused even when integral (1024.0): counts are written
    // as integers.
    error(n.path) << "expected an integer for " << key << ", got "
                  << describe(*n);
    return failure();
  }
  if (value < lo) {
    error(n.path) << "expected an integer >= " << lo << " for " << key
                  << ", got " << value;
    return failure();
  }
  if (value > hi) {
    error(n.path) << key << " " << value << " exceeds the limit of " << hi;
    return failure();
  }
  return value;
}

FailureOr<double> GraphParser::getNumber(const Node &obj, StringRef key,
                                         double lo, double hi,
                                         bool loInclusive) {
  Node n = child(obj, key);
  if (!n->is_number()) {
    error(n.path) << "expected a number for " << key << ", got "
                  << describe(*n);
    return failure();
  }
  double value = n->get<double>();
  bool aboveLo = loInclusive ? value >= lo : value > lo;
  if (!std::isfinite(value) || !aboveLo || value > hi) {
    auto diag = error(n.path);
    diag << key << " " << formatDouble(value) << " is out of range (expected ";
    if (hi == std::numeric_limits<double>::max())
      diag << (loInclusive ? ">= " : "> ") << formatDouble(lo) << ")";
    else
      diag << formatDouble(lo) << (loInclusive ? " <= " : " < ") << key
           << " <= " << formatDouble(hi) << ")";
    return failure();
  }
  return value;
}

FailureOr<std::string> GraphParser::getString(const Node &obj, StringRef key,
                                              bool nonEmpty) {
  Node n = child(obj, key);
  if (!n->is_string()) {
    error(n.path) << "expected a string for " << key << ", got "
                  << describe(*n);
    return failure();
  }
  const std::string &s = n->get_ref<const std::string &>();
  if (nonEmpty && s.empty()) {
    error(n.path) << "expected a non-empty string for " << key;
    return failure();
  }
  return s;
}

FailureOr<bool> GraphParser::getBool(const Node &obj, StringRef key) {
  Node n = child(obj, key);
  if (!n->is_boolean()) {
    error(n.path) << "expected true or false for " << key << ", got "
                  << describe(*n);
    return failure();
  }
  return n->get<bool>();
}

FailureOr<std::string> GraphParser::getEnum(const Node &obj, StringRef key,
                                            ArrayRef<StringRef> allowed,
                                            StringRef what) {
  FailureOr<std::string> s = getString(obj, key, /*nonEmpty=*/false);
  if (failed(s))
    return failure();
  if (!llvm::is_contained(allowed, StringRef(*s))) {
    error(child(obj, key).path) << "unknown " << what << " '" << printable(*s)
                                << "' (expected " << listOf(allowed) << ")";
    return failure();
  }
  return s;
}

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

LogicalResult GraphParser::parseNorm(const Node &obj, StringRef key,
                                     NormSpec &out) {
  Node n = child(obj, key);
  if (failed(checkObject(n, {"kind", "eps", "weight_offset"}, {}, "a norm")))
    return failure();
  FailureOr<std::string> kind = getEnum(n, "kind", {"rms_norm"}, "norm kind");
  FailureOr<double> eps;
  FailureOr<int64_t> offset;
  if (failed(kind) || failed(eps = getNumber(n, "eps", 0, 1)) ||
      failed(offset = getWeightOffset(n, "weight_offset")))
    return failure();
  out.eps = *eps;
  out.weightOffset = *offset;
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
  Node attn = child(exec, "attention");
  if (failed(checkObject(attn,
                         {"num_q_heads", "num_kv_heads", "head_dim",
                          "score_scale", "qk_norm_scope",
                          "qk_norm_weight_offset", "parameter_free_qk_norm"},
                         {"attention_bias"}, "execution.attention")))
    return failure();
  FailureOr<int64_t> q, kv, d, offset;
  FailureOr<double> scale;
  if (failed(q = getInt(attn, "num_q_heads", 1, kMaxHeads)) ||
      failed(kv = getInt(attn, "num_kv_heads", 1, kMaxHeads)) ||
      failed(d = getInt(attn, "head_dim", 1, kMaxWidth)) ||
      failed(scale = getNumber(attn, "score_scale", 0,
                               std::numeric_limits<double>::max())) ||
      failed(getEnum(attn, "qk_norm_scope", {"per_head"}, "qk_norm_scope")) ||
      failed(offset = getWeightOffset(attn, "qk_norm_weight_offset")))
    return failure();
  out.numQHeads = *q;
  out.numKvHeads = *kv;
  out.headDim = *d;
  out.scoreScale = *scale;
  out.qkNormOffset = *offset;
  Node freeNorm = child(attn, "parameter_free_qk_norm");
  if (failed(
          checkObject(freeNorm, {"q", "k", "v"}, {}, "parameter_free_qk_norm")))
    return failure();
  FailureOr<bool> fq, fk, fv;
  if (failed(fq = getBool(freeNorm, "q")) ||
      failed(fk = getBool(freeNorm, "k")) ||
      failed(fv = getBool(freeNorm, "v")))
    return failure();
  out.freeQ = *fq;
  out.freeK = *fk;
  out.freeV = *fv;
  if (text && (out.freeQ || out.freeK))
    return error(child(freeNorm, out.freeQ ? "q" : "k").path)
           << "a parameter-free " << (out.freeQ ? "q" : "k")
           << " norm is not supported (gemma q and k norms have weights)";
  if (has(attn, "attention_bias")) {
    FailureOr<bool> bias = getBool(attn, "attention_bias");
    if (failed(bias))
      return failure();
    if (*bias && text)
      return error(child(attn, "attention_bias").path)
             << "attention biases are not supported (gemma decoders have "
                "none)";
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
  if (failed(checkObject(ffn, {"intermediate_size", "activation", "ffn_type"},
                         {"gate_policy"}, "execution.ffn")))
    return failure();
  FailureOr<int64_t> inter = getInt(ffn, "intermediate_size", 1, kMaxWidth);
  if (failed(inter) ||
      failed(getEnum(ffn, "activation", {"gelu_tanh"}, "activation")) ||
      failed(getEnum(ffn, "ffn_type", {"gated"}, "ffn_type")))
    return failure();
  out.intermediateSize = *inter;
  if (has(ffn, "gate_policy")) {
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
      failed(parseNorm(norm, "pre", out.pre)))
    return failure();
  out.hasPost = has(norm, "post");
  out.hasFinal = has(norm, "final_norm");
  if ((out.hasPost && failed(parseNorm(norm, "post", out.post))) ||
      (out.hasFinal && failed(parseNorm(norm, "final_norm", out.finalNorm))))
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

//===----------------------------------------------------------------------===//
// Components
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::parseComponent(const Node &c) {
  if (failed(checkObject(c,
                         {"id", "role", "source_artifact", "num_layers",
                          "hidden_size", "attention"},
                         {"execution", "perception"}, "a component")))
    return failure();
  FailureOr<std::string> id = getString(c, "id");
  if (failed(id))
    return failure();
  for (const ComponentInfo &other : components)
    if (other.id == *id)
      return error(child(c, "id").path)
             << "duplicate component id '" << printable(*id) << "'";
  FailureOr<std::string> role =
      getEnum(c, "role", {"primary_text", "perception"}, "role");
  FailureOr<std::string> artifact;
  if (failed(role) || failed(artifact = getString(c, "source_artifact")))
    return failure();
  std::optional<Family> family = familyFromArtifact(*artifact);
  if (!family)
    return error(child(c, "source_artifact").path)
           << "unknown model family in source_artifact '"
           << printable(*artifact)
           << "' (expected a name starting with 'gemma-3' or 'gemma-4'; "
              "sgc derives the checkpoint's tensors from the family)";
  bool isText = *role == "primary_text";
  if (isText && haveText)
    return error(child(c, "role").path)
           << "a second component with role 'primary_text' ('" << printable(*id)
           << "'); a graph has exactly one";
  components.push_back(ComponentInfo{*id, isText, *family, c.path});
  if (isText) {
    haveText = true;
    graph.text.id = *id;
    graph.text.sourceArtifact = *artifact;
    graph.text.family = *family;
    graph.text.pos = posOf(c.path);
    return parseText(c, *family);
  }
  OpaqueComponentSpec spec;
  spec.id = *id;
  spec.role = *role;
  spec.sourceArtifact = *artifact;
  spec.family = *family;
  spec.pos = posOf(c.path);
  graph.opaqueComponents.push_back(std::move(spec));
  return parsePerception(c, *family);
}

/// `value` as the compute dtype rounds it (via f32, as the reference's f32
/// buffer).
static double roundTo(double value, StringRef dtype) {
  llvm::APFloat f(static_cast<float>(value));
  if (dtype == "bf16") {
    bool losesInfo = false;
    f.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
  }
  return f.convertToDouble();
}

LogicalResult GraphParser::parseText(const Node &c, Family family) {
  TextSpec &t = graph.text;
  const TextFacts &facts = textFacts(family);
  bool strict = options.strictGraph;
  if (!has(c, "execution"))
    return error(c.path) << "missing required key 'execution' (the "
                            "primary_text component needs one)";
  if (has(c, "perception"))
    return error(child(c, "perception").path)
           << "'perception' on a primary_text component";
  FailureOr<int64_t> numLayers = getInt(c, "num_layers", 1, kMaxLayers);
  FailureOr<int64_t> hidden;
  if (failed(numLayers) ||
      failed(hidden = getInt(c, "hidden_size", 1, kMaxWidth)))
    return failure();
  t.numLayers = *numLayers;
  t.hiddenSize = *hidden;

  ExecSpec exec;
  Node execNode = child(c, "execution");
  if (failed(parseExecution(execNode, /*text=*/true, exec)))
    return failure();
  Node attn = child(execNode, "attention");
  Node head = child(execNode, "head");
  t.numQHeads = exec.numQHeads;
  t.vocabSize = exec.vocabSize;
  t.intermediateSize = exec.intermediateSize;
  t.scoreScale = exec.scoreScale;
  t.qkNormOffset = exec.qkNormOffset;
  t.preNorm = exec.pre;
  t.postNorm = exec.hasPost ? exec.post : exec.pre;
  t.finalNorm = exec.finalNorm;
  t.postNorms = exec.postNorms;
  t.embedScale = exec.embedScale;
  t.finalSoftcap = exec.softcap;
  t.tiedHead = exec.tied;

  // Context length: the graph's, else the family's.
  std::string contextPath = execNode.path + ".context_length";
  if (exec.contextLength) {
    t.contextLength = *exec.contextLength;
  } else if (strict) {
    return error(execNode.path)
           << "missing required key 'context_length' (--strict-graph: no "
              "family default)";
  } else {
    t.contextLength = facts.contextLength;
    complete(contextPath, execNode.path,
             "context_length: absent; the " + familyName(family).str() +
                 " family default " + withCommas(facts.contextLength) +
                 " (max_position_embeddings) applies");
  }

  LayerDefaults defaults;
  defaults.numQHeads = exec.numQHeads;
  defaults.numKvHeads = exec.numKvHeads;
  defaults.headDim = exec.headDim;
  defaults.kvHeadsPath = child(attn, "num_kv_heads").path;
  defaults.headDimPath = child(attn, "head_dim").path;
  defaults.fullNeedsGeometry = !strict && !facts.fullLayersShareGeometry;
  if (failed(parseLayers(c, t.numLayers, defaults, t.layers)))
    return failure();

  // Completions.
  if (strict) {
    t.castEmbedScale = false;
    for (LayerSpec &layer : t.layers)
      layer.vNorm = exec.freeV;
    return success();
  }
  int64_t sliding = llvm::count_if(
      t.layers, [](const LayerSpec &l) { return l.span == Span::Sliding; });
  int64_t ownGeometry = 0;
  for (size_t i = 0; i < t.layers.size(); ++i)
    ownGeometry += has(element(child(c, "attention"), i), "geometry");
  complete(attn.path, "",
           "execution.attention: num_kv_heads " +
               std::to_string(exec.numKvHeads) + " and head_dim " +
               std::to_string(exec.headDim) + " describe the " +
               std::to_string(sliding) +
               " sliding layers; full layers take their own geometry (" +
               std::to_string(ownGeometry) + " of " +
               std::to_string(t.numLayers) + " layers give one)" +
               (facts.fullLayersShareGeometry
                    ? ", else the same (" + familyName(family).str() + ")"
                    : ""));
  if (facts.layerScalar) {
    for (LayerSpec &layer : t.layers)
      layer.layerScalar = true;
    complete(child(c, "attention").path, "",
             "layer_scalar: " + familyName(family).str() +
                 " multiplies the residual stream by a trained shape-[1] "
                 "scalar after every layer (tensor '<layer>.layer_scalar', " +
                 std::to_string(t.numLayers) + " layers)");
  }
  Node freeV = child(child(attn, "parameter_free_qk_norm"), "v");
  if (facts.vNormEveryLayer) {
    for (LayerSpec &layer : t.layers)
      layer.vNorm = true;
    complete(freeV.path, "",
             "v norm: " + familyName(family).str() +
                 " applies a weightless RMSNorm to V on every layer "
                 "(sliding and full)" +
                 (exec.freeV ? "" : "; the graph's 'false' is overridden"));
  } else {
    for (LayerSpec &layer : t.layers)
      layer.vNorm = exec.freeV;
  }
  std::string dtype = options.computeDtype;
  complete(child(head, "embed_scale").path, "",
           "embed_scale " + formatDouble(t.embedScale) +
               " is applied cast to " + dtype + ": " +
               formatFloat(roundTo(t.embedScale, dtype)) +
               " (the reference casts sqrt(hidden_size) to its weight "
               "dtype)");
  return success();
}

LogicalResult GraphParser::parsePerception(const Node &c, Family family) {
  OpaqueComponentSpec &spec = graph.opaqueComponents.back();
  const VisionFacts &facts = visionFacts(family);
  bool strict = options.strictGraph;
  if (!has(c, "perception"))
    return error(c.path) << "missing required key 'perception' (a "
                            "perception component needs one)";
  FailureOr<int64_t> numLayers = getInt(c, "num_layers", 1, kMaxLayers);
  FailureOr<int64_t> hidden;
  if (failed(numLayers) ||
      failed(hidden = getInt(c, "hidden_size", 1, kMaxWidth)))
    return failure();
  spec.numLayers = *numLayers;
  spec.hiddenSize = *hidden;

  Node p = child(c, "perception");
  if (failed(checkObject(p, {"modality", "transform"}, {}, "perception")))
    return failure();
  FailureOr<std::string> modality =
      getEnum(p, "modality", {"image"}, "modality");
  if (failed(modality))
    return failure();
  spec.modality = *modality;
  Node transform = child(p, "transform");
  if (failed(checkObject(transform, {"encoder"}, {}, "perception.transform")))
    return failure();
  Node encoder = child(transform, "encoder");
  if (failed(checkObject(encoder, {"depth", "width", "num_heads"}, {},
                         "perception.transform.encoder")))
    return failure();
  FailureOr<int64_t> depth = getInt(encoder, "depth", 1, kMaxLayers);
  FailureOr<int64_t> width, heads;
  if (failed(depth) || failed(width = getInt(encoder, "width", 1, kMaxWidth)) ||
      failed(heads = getInt(encoder, "num_heads", 1, kMaxHeads)))
    return failure();
  if (*depth != spec.numLayers)
    return error(child(encoder, "depth").path)
           << "encoder depth " << *depth << " disagrees with num_layers "
           << spec.numLayers;
  if (*width != spec.hiddenSize)
    return error(child(encoder, "width").path)
           << "encoder width " << *width << " disagrees with hidden_size "
           << spec.hiddenSize;
  spec.numHeads = *heads;

  LayerDefaults defaults;
  defaults.numQHeads = spec.numHeads;
  if (has(c, "execution")) {
    ExecSpec exec;
    Node execNode = child(c, "execution");
    if (failed(parseExecution(execNode, /*text=*/false, exec)))
      return failure();
    Node attn = child(execNode, "attention");
    if (exec.numQHeads != spec.numHeads)
      return error(child(attn, "num_q_heads").path)
             << "num_q_heads " << exec.numQHeads
             << " disagrees with the encoder's num_heads " << spec.numHeads;
    if (exec.numQHeads * exec.headDim != spec.hiddenSize)
      return error(child(attn, "head_dim").path)
             << "num_q_heads x head_dim = " << exec.numQHeads << " x "
             << exec.headDim << " = " << exec.numQHeads * exec.headDim
             << " disagrees with hidden_size " << spec.hiddenSize;
    spec.numKvHeads = exec.numKvHeads;
    spec.headDim = exec.headDim;
    spec.intermediateSize = exec.intermediateSize;
    defaults.kvHeadsPath = child(attn, "num_kv_heads").path;
    defaults.headDimPath = child(attn, "head_dim").path;
    // Where the block contradicts the family (gemma-vision.md,
    // "Discrepancies"), the family fact wins.
    if (!strict && family == Family::Gemma4) {
      if (exec.scoreScale != facts.scoreScale)
        complete(child(attn, "score_scale").path, "",
                 "score_scale " + formatDouble(exec.scoreScale) + " -> " +
                     formatDouble(facts.scoreScale) +
                     ": the gemma4 vision encoder RMS-normalizes q and k and "
                     "does not scale scores (72^-0.5 is SigLIP's)");
      if (exec.freeV != facts.vNorm)
        complete(child(child(attn, "parameter_free_qk_norm"), "v").path, "",
                 "parameter_free_qk_norm.v false -> true: the gemma4 vision "
                 "encoder applies a weightless RMSNorm to V");
      if (!exec.postNorms || exec.hasFinal)
        complete(child(execNode, "norm").path, "",
                 "norm: pre only -> pre_post (four RMSNorms per layer) and no "
                 "final encoder norm: the gemma4 vision tower pools, scales, "
                 "standardizes and projects after its last layer");
    }
  } else {
    if (spec.hiddenSize % spec.numHeads != 0)
      return error(child(encoder, "num_heads").path)
             << "hidden_size " << spec.hiddenSize
             << " is not a multiple of num_heads " << spec.numHeads;
    spec.numKvHeads = spec.numHeads;
    spec.headDim = spec.hiddenSize / spec.numHeads;
    spec.intermediateSize = facts.intermediateSize;
    defaults.kvHeadsPath = child(encoder, "num_heads").path;
    defaults.headDimPath = child(encoder, "num_heads").path;
    if (!strict)
      complete(c.path + ".execution", c.path,
               "execution: absent; the " + familyName(family).str() +
                   " family supplies it: " + facts.executionSummary.str());
  }
  defaults.numKvHeads = spec.numKvHeads;
  defaults.headDim = spec.headDim;
  if (failed(parseLayers(c, spec.numLayers, defaults, spec.layers)))
    return failure();
  if (!strict && facts.rope2d &&
      llvm::any_of(spec.layers, [](const LayerSpec &l) {
        return l.position == PositionKind::Rope;
      }))
    complete(child(c, "attention").path, "",
             "rope: 2-D axial over patch (x, y): each head's channels split "
             "in an x half and a y half, rotate-half within each, " +
                 std::to_string(spec.headDim / 4) + " frequencies per axis");
  if (!strict && facts.vNorm)
    for (LayerSpec &layer : spec.layers)
      layer.vNorm = true;
  return success();
}

//===----------------------------------------------------------------------===//
// Objects
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::parseObject(const Node &o) {
  if (failed(checkObject(
          o, {"id", "component", "kind", "source_bindings", "representations"},
          {}, "an object")))
    return failure();
  ObjectSpec spec;
  spec.pos = posOf(o.path);
  FailureOr<std::string> id = getString(o, "id");
  FailureOr<std::string> component;
  if (failed(id) || failed(component = getString(o, "component")))
    return failure();
  if (!objectIds.insert(*id).second)
    return error(child(o, "id").path)
           << "duplicate object id '" << printable(*id) << "'";
  const ComponentInfo *owner = nullptr;
  for (const ComponentInfo &info : components)
    if (info.id == *component)
      owner = &info;
  if (!owner) {
    std::string known;
    for (const ComponentInfo &info : components)
      known += (known.empty() ? "'" : ", '") + info.id + "'";
    return error(child(o, "component").path)
           << "unknown component '" << printable(*component)
           << "' (components: " << known << ")";
  }
  FailureOr<std::string> kind =
      getEnum(o, "kind",
              {"decoder_stack", "embedding", "final_norm", "perception_tower",
               "perception_adapter"},
              "object kind");
  if (failed(kind))
    return failure();
  bool textKind = !StringRef(*kind).starts_with("perception_");
  if (textKind != owner->text)
    return error(child(o, "kind").path)
           << "an object of kind '" << *kind << "' binds a "
           << (textKind ? "primary_text" : "perception") << " component, but '"
           << owner->id << "' is "
           << (owner->text ? "primary_text" : "perception");
  spec.id = *id;
  spec.component = *component;
  spec.kind = *kind;

  Node bindings = child(o, "source_bindings");
  if (failed(checkArray(bindings, "source_bindings", 1, kMaxBindings)))
    return failure();
  for (size_t i = 0; i < bindings->size(); ++i) {
    Node b = element(bindings, i);
    if (failed(checkObject(b, {"artifact", "tensor_prefix", "tensors", "bytes"},
                           {}, "a source binding")))
      return failure();
    BindingSpec binding;
    binding.pos = posOf(b.path);
    FailureOr<std::string> artifact = getString(b, "artifact");
    FailureOr<std::string> prefix;
    FailureOr<int64_t> tensors, bytes;
    if (failed(artifact) || failed(prefix = getString(b, "tensor_prefix")) ||
        failed(tensors = getInt(b, "tensors", 0, kMaxTensors)) ||
        failed(bytes = getInt(b, "bytes", 0, kMaxBytes)))
      return failure();
    binding.artifact = *artifact;
    binding.tensorPrefix = *prefix;
    binding.declaredTensors = *tensors;
    binding.declaredBytes = *bytes;
    spec.bindings.push_back(std::move(binding));
  }

  Node reps = child(o, "representations");
  if (failed(checkArray(reps, "representations", 1, 16)))
    return failure();
  for (size_t i = 0; i < reps->size(); ++i) {
    Node r = element(reps, i);
    if (failed(
            checkObject(r, {"encoding", "fidelity"}, {}, "a representation")))
      return failure();
    FailureOr<std::string> encoding = getString(r, "encoding", false);
    if (failed(encoding))
      return failure();
    if (*encoding != "BF16")
      return error(child(r, "encoding").path)
             << "unsupported encoding '" << printable(*encoding)
             << "' (expected 'BF16')";
    if (failed(getEnum(r, "fidelity", {"canonical"}, "fidelity")))
      return failure();
  }
  graph.objects.push_back(std::move(spec));
  return success();
}

/// The checkpoint prefixes the tensor tables build names from.
LogicalResult GraphParser::resolvePrefixes() {
  TextSpec &t = graph.text;
  struct TextKind {
    StringRef kind;
    std::string *prefix;
  };
  TextKind kinds[] = {{"decoder_stack", &t.layersPrefix},
                      {"embedding", &t.embedPrefix},
                      {"final_norm", &t.finalNormPrefix}};
  for (const TextKind &k : kinds) {
    const ObjectSpec *found = nullptr;
    for (const ObjectSpec &o : graph.objects) {
      if (o.component != t.id || o.kind != k.kind)
        continue;
      if (found)
        return error(o.pos.jsonPath + ".kind", o.pos.jsonPath)
               << "a second '" << k.kind << "' object ('" << o.id
               << "') for component '" << t.id << "'";
      if (o.bindings.size() != 1)
        return error(o.pos.jsonPath + ".source_bindings", o.pos.jsonPath)
               << "a '" << k.kind
               << "' object needs exactly one source binding, got "
               << o.bindings.size();
      found = &o;
    }
    if (!found)
      return error("$.objects", "$")
             << "no object of kind '" << k.kind << "' binds component '" << t.id
             << "' (its tensor prefix names the checkpoint tensors)";
    *k.prefix = found->bindings.front().tensorPrefix;
  }

  for (OpaqueComponentSpec &c : graph.opaqueComponents) {
    const VisionFacts &facts = visionFacts(c.family);
    c.towerPrefix = facts.towerPrefix.str();
    c.adapterPrefix = facts.adapterPrefix.str();
    std::string shortestAdapter;
    for (const ObjectSpec &o : graph.objects) {
      if (o.component != c.id)
        continue;
      for (const BindingSpec &b : o.bindings) {
        StringRef prefix = b.tensorPrefix;
        if (o.kind == "perception_tower" &&
            prefix.consume_back(".encoder.layers"))
          c.towerPrefix = prefix.str();
        if (o.kind == "perception_adapter" &&
            (shortestAdapter.empty() ||
             b.tensorPrefix.size() < shortestAdapter.size()))
          shortestAdapter = b.tensorPrefix;
      }
    }
    if (!shortestAdapter.empty()) {
      StringRef adapter = shortestAdapter;
      if (!facts.adapterChild.empty())
        adapter.consume_back(("." + facts.adapterChild).str());
      c.adapterPrefix = adapter.str();
    }
  }
  return success();
}

/// Assigns every tensor of the family tables to the binding with the
/// longest matching prefix and compares with the declared figures.
void GraphParser::deriveFigures() {
  llvm::StringMap<BindingSpec *> byPrefix;
  for (ObjectSpec &o : graph.objects)
    for (BindingSpec &b : o.bindings)
      byPrefix.try_emplace(b.tensorPrefix, &b);
  auto attribute = [&](const std::vector<TensorSpec> &tensors) {
    for (const TensorSpec &tensor : tensors) {
      StringRef name = tensor.name;
      while (true) {
        auto it = byPrefix.find(name);
        if (it != byPrefix.end()) {
          it->second->derivedTensors += 1;
          it->second->derivedBytes += tensor.numElements() * kBF16Bytes;
          break;
        }
        size_t dot = name.rfind('.');
        if (dot == StringRef::npos)
          break;
        name = name.take_front(dot);
      }
    }
  };
  attribute(textTensors(graph.text));
  for (const OpaqueComponentSpec &c : graph.opaqueComponents)
    attribute(perceptionTensors(c, graph.text.hiddenSize));

  for (const ObjectSpec &o : graph.objects) {
    Family family = graph.text.family;
    for (const OpaqueComponentSpec &c : graph.opaqueComponents)
      if (c.id == o.component)
        family = c.family;
    for (const BindingSpec &b : o.bindings) {
      if (b.declaredTensors == b.derivedTensors &&
          b.declaredBytes == b.derivedBytes)
        continue;
      emitWarning(makeLoc(ctx, fileName, b.pos))
          << "tensor_prefix '" << printable(b.tensorPrefix, 200)
          << "' declares " << withCommas(b.declaredTensors) << " tensors and "
          << withCommas(b.declaredBytes) << " bytes, but the "
          << familyName(family) << " tensor table derives "
          << withCommas(b.derivedTensors) << " tensors and "
          << withCommas(b.derivedBytes) << " bytes";
    }
  }
}

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

FailureOr<GraphSpec> GraphParser::parse() {
  graph.fileName = fileName.str();
  SourcePos top{"$", 1, 1};
  if (text.size() > kMaxFileBytes) {
    error(top) << "file is " << withCommas(text.size())
               << " bytes, more than the limit of " << withCommas(kMaxFileBytes)
               << " for a system_graph.json";
    return failure();
  }
  StringRef content = text;
  content.consume_front("\xEF\xBB\xBF");
  if (content.ltrim(" \t\r\n").empty()) {
    error(top) << "empty file (expected a system_graph.json object)";
    return failure();
  }

  positions.emplace(text, kMaxDepth);
  if (positions->getStatus() == JsonPositions::Status::TooDeep) {
    error(posAtOffset(positions->getStopPath(), positions->getStopOffset()))
        << "nesting deeper than " << kMaxDepth << " levels";
    return failure();
  }

  json root;
  DomBuilder builder(root);
  if (!json::sax_parse(text.begin(), text.end(), &builder,
                       nlohmann::detail::input_format_t::json,
                       /*strict=*/true)) {
    size_t offset = builder.errorPosition ? builder.errorPosition - 1 : 0;
    std::string path =
        positions->getStatus() == JsonPositions::Status::Malformed
            ? positions->getStopPath()
            : positions->pathAt(offset);
    error(posAtOffset(path, offset))
        << "not valid JSON: " << syntaxMessage(builder.errorMessage);
    return failure();
  }
  if (const auto &dup = positions->getDuplicateKey()) {
    error(posAtOffset(dup->path, dup->offset))
        << "duplicate key '" << printable(dup->key)
        << "' (JSON readers disagree on which value wins)";
    return failure();
  }

  Node rootNode{&root, "$"};
  if (!root.is_object()) {
    error(top) << "expected a JSON object at the top level, got "
               << describe(root);
    return failure();
  }
  if (!has(rootNode, "schema")) {
    error(top) << "missing required key 'schema' (expected schema 6)";
    return failure();
  }
  Node schema = child(rootNode, "schema");
  if (!schema->is_number_integer() && !schema->is_number_unsigned()) {
    error(schema.path) << "expected the integer 6 for schema, got "
                       << describe(*schema);
    return failure();
  }
  if (*schema != 6) {
    error(schema.path) << "unsupported schema " << schema->dump()
                       << " (expected 6)";
    return failure();
  }
  if (failed(checkObject(rootNode, {"schema", "components", "objects", "edges"},
                         {}, "the graph")))
    return failure();

  Node comps = child(rootNode, "components");
  if (failed(checkArray(comps, "components", 1, kMaxComponents)))
    return failure();
  for (size_t i = 0; i < comps->size(); ++i)
    if (failed(parseComponent(element(comps, i))))
      return failure();
  if (!haveText) {
    error(comps.path) << "no component with role 'primary_text'";
    return failure();
  }

  Node objects = child(rootNode, "objects");
  if (failed(checkArray(objects, "objects", 0, kMaxObjects)))
    return failure();
  for (size_t i = 0; i < objects->size(); ++i)
    if (failed(parseObject(element(objects, i))))
      return failure();

  Node edges = child(rootNode, "edges");
  if (failed(checkArray(edges, "edges", 0, kMaxObjects)))
    return failure();
  if (!edges->empty()) {
    error(element(edges, 0).path)
        << "edges are not supported yet (the vision -> text hand-off is "
           "implied by the roles); expected an empty list";
    return failure();
  }

  if (failed(resolvePrefixes()))
    return failure();
  deriveFigures();
  for (const Completion &completion : graph.completions)
    emitRemark(makeLoc(ctx, fileName, completion.pos)) << completion.message;
  return std::move(graph);
}

FailureOr<GraphSpec> mlir::sgc::parseSystemGraph(MLIRContext *ctx,
                                                 StringRef fileName,
                                                 StringRef text,
                                                 const ImportOptions &options) {
  return GraphParser(ctx, fileName, text, options).parse();
}
