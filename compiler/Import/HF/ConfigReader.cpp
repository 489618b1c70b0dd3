//===- ConfigReader.cpp - typed access to an HF config.json ---------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/HF/ConfigReader.h"

using namespace mlir;
using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;

FailureOr<int64_t> ConfigReader::intOr(const JsonNode &obj, StringRef key,
                                       int64_t fallback, int64_t lo,
                                       int64_t hi) {
  if (!given(obj, key))
    return fallback;
  return getInt(obj, key, lo, hi);
}

FailureOr<double> ConfigReader::numberOr(const JsonNode &obj, StringRef key,
                                         double fallback, double lo,
                                         double hi) {
  if (!given(obj, key))
    return fallback;
  return getNumber(obj, key, lo, hi);
}

FailureOr<bool> ConfigReader::boolOr(const JsonNode &obj, StringRef key,
                                     bool fallback) {
  if (!given(obj, key))
    return fallback;
  return getBool(obj, key);
}

FailureOr<std::string> ConfigReader::stringOr(const JsonNode &obj,
                                              StringRef key,
                                              StringRef fallback) {
  if (!given(obj, key))
    return fallback.str();
  return getString(obj, key, /*nonEmpty=*/false);
}

FailureOr<JsonNode> ConfigReader::objectOr(const JsonNode &obj,
                                           StringRef key) {
  static const json empty = json::object();
  JsonNode n = child(obj, key);
  if (n->is_null())
    return JsonNode{&empty, n.path};
  if (!n->is_object()) {
    error(n.path) << "expected an object for " << key << ", got "
                  << describe(*n);
    return failure();
  }
  return n;
}

LogicalResult ConfigReader::unsupported(const JsonNode &obj, StringRef key,
                                        const Twine &why) {
  JsonNode n = child(obj, key);
  return error(n.path, obj.path) << "unsupported: " << why;
}
