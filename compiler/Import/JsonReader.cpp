//===- JsonReader.cpp - typed JSON access with JSON-path diagnostics ------===//
//
// Part of sgc. nlohmann/json parses through a SAX builder here, which
// reports a syntax error's byte offset instead of throwing; JsonPositions
// supplies the offsets of values.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/JsonReader.h"
#include "compiler/Import/Format.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

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
// Messages
//===----------------------------------------------------------------------===//

/// `text` as it may appear in a one-line message: control characters
/// escaped, long strings cut.
std::string mlir::sgc::import::printable(StringRef text, size_t limit) {
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
std::string mlir::sgc::import::describe(const json &v) {
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

namespace {

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

} // namespace

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

LogicalResult JsonReader::readDocument(unsigned maxDepth, json &root) {
  positions.emplace(text, maxDepth);
  if (positions->getStatus() == JsonPositions::Status::TooDeep) {
    error(posAtOffset(positions->getStopPath(), positions->getStopOffset()))
        << "nesting deeper than " << maxDepth << " levels";
    return failure();
  }

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
  return success();
}

//===----------------------------------------------------------------------===//
// Positions and diagnostics
//===----------------------------------------------------------------------===//

SourcePos JsonReader::posOf(const std::string &path,
                            const std::string &parent) const {
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

SourcePos JsonReader::posAtOffset(const std::string &path,
                                  size_t offset) const {
  SourcePos pos{path, 1, 1};
  if (positions)
    std::tie(pos.line, pos.column) = positions->lineColumn(offset);
  return pos;
}

InFlightDiagnostic JsonReader::error(const SourcePos &pos) {
  return emitError(makeLoc(ctx, fileName, pos));
}

InFlightDiagnostic JsonReader::warning(const SourcePos &pos) {
  return emitWarning(makeLoc(ctx, fileName, pos));
}

//===----------------------------------------------------------------------===//
// Access
//===----------------------------------------------------------------------===//

JsonNode JsonReader::child(const JsonNode &obj, StringRef key) {
  static const json null;
  auto it = obj->is_object() ? obj->find(key.str()) : obj->end();
  JsonNode n{it == obj->end() ? &null : &*it, obj.path};
  appendJsonKey(n.path, key);
  return n;
}

JsonNode JsonReader::element(const JsonNode &array, size_t index) {
  JsonNode n{&(*array)[index], array.path};
  appendJsonIndex(n.path, index);
  return n;
}

LogicalResult JsonReader::checkObject(const JsonNode &node,
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
    if (strictKeys)
      return error(path) << "unknown key '" << printable(key) << "' in " << what
                         << " (--strict-graph)";
    warning(path) << "unknown key '" << printable(key) << "' in " << what
                  << " is ignored";
  }
  return success();
}

LogicalResult JsonReader::checkArray(const JsonNode &node, StringRef what,
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

FailureOr<int64_t> JsonReader::getInt(const JsonNode &obj, StringRef key,
                                      int64_t lo, int64_t hi) {
  JsonNode n = child(obj, key);
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

FailureOr<double> JsonReader::getNumber(const JsonNode &obj, StringRef key,
                                        double lo, double hi,
                                        bool loInclusive) {
  JsonNode n = child(obj, key);
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

FailureOr<std::string> JsonReader::getString(const JsonNode &obj, StringRef key,
                                             bool nonEmpty) {
  JsonNode n = child(obj, key);
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

FailureOr<bool> JsonReader::getBool(const JsonNode &obj, StringRef key) {
  JsonNode n = child(obj, key);
  if (!n->is_boolean()) {
    error(n.path) << "expected true or false for " << key << ", got "
                  << describe(*n);
    return failure();
  }
  return n->get<bool>();
}

FailureOr<std::string> JsonReader::getEnum(const JsonNode &obj, StringRef key,
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
