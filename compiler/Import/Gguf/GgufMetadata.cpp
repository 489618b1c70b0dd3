//===- GgufMetadata.cpp - typed reads of a GGUF's metadata ----------------===//
//
// Part of sgc. Every read names the file and the key it failed on.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Gguf/GgufMetadata.h"

#include <cmath>

using namespace mlir;
using namespace mlir::sgc::gguf_import;
namespace gguf = ::sgc::gguf;

InFlightDiagnostic Metadata::error() {
  return emitError(UnknownLoc::get(ctx)) << "'" << path << "': ";
}

FailureOr<int64_t> Metadata::integer(const std::string &key, int64_t lo,
                                     int64_t hi,
                                     std::optional<int64_t> fallback) {
  const gguf::value *v = h.find(key);
  if (!v) {
    if (fallback)
      return *fallback;
    return error() << "missing metadata key '" << key << "'", failure();
  }
  if (!v->is_integer())
    return error() << "metadata key '" << key << "' is "
                   << gguf::value_type_name(v->type)
                   << ", expected an integer",
           failure();
  int64_t x = v->as_int();
  if (x < lo || x > hi)
    return error() << "metadata key '" << key << "' is " << x << ", expected "
                   << lo << " to " << hi,
           failure();
  return x;
}

FailureOr<double> Metadata::number(const std::string &key,
                                   std::optional<double> fallback) {
  const gguf::value *v = h.find(key);
  if (!v) {
    if (fallback)
      return *fallback;
    return error() << "missing metadata key '" << key << "'", failure();
  }
  if (v->type == gguf::value_type::string ||
      v->type == gguf::value_type::array ||
      v->type == gguf::value_type::boolean)
    return error() << "metadata key '" << key << "' is "
                   << gguf::value_type_name(v->type) << ", expected a number",
           failure();
  double x = v->as_double();
  if (!(x > 0) || !std::isfinite(x))
    return error() << "metadata key '" << key << "' is " << x
                   << ", expected a positive number",
           failure();
  return x;
}

std::optional<std::string> Metadata::string(const std::string &key) {
  const gguf::value *v = h.find(key);
  if (!v || v->type != gguf::value_type::string)
    return std::nullopt;
  return v->text;
}

FailureOr<std::vector<int64_t>>
Metadata::perLayer(const std::string &key, int64_t layers, int64_t lo,
                   int64_t hi, std::optional<int64_t> fallback) {
  const gguf::value *v = h.find(key);
  if (!v || v->type != gguf::value_type::array) {
    FailureOr<int64_t> one = integer(key, lo, hi, fallback);
    if (failed(one))
      return failure();
    return std::vector<int64_t>(layers, *one);
  }
  gguf::value element;
  element.type = v->element_type;
  if (!element.is_integer() || v->element_type == gguf::value_type::boolean)
    return error() << "metadata key '" << key << "' is an ARRAY of "
                   << gguf::value_type_name(v->element_type)
                   << ", expected integers",
           failure();
  if (static_cast<int64_t>(v->size()) != layers)
    return error() << "metadata key '" << key << "' has " << v->size()
                   << " entries, expected one per layer (" << layers << ")",
           failure();
  std::vector<int64_t> out;
  for (size_t i = 0; i < v->size(); ++i) {
    int64_t x = v->element_int(i);
    if (x < lo || x > hi)
      return error() << "metadata key '" << key << "' entry " << i << " is "
                     << x << ", expected " << lo << " to " << hi,
             failure();
    out.push_back(x);
  }
  return out;
}

FailureOr<int64_t> Metadata::uniform(const std::string &key, int64_t layers,
                                     int64_t lo, int64_t hi,
                                     std::optional<int64_t> fallback) {
  FailureOr<std::vector<int64_t>> all =
      perLayer(key, layers, lo, hi, fallback);
  if (failed(all))
    return failure();
  for (size_t i = 1; i < all->size(); ++i)
    if ((*all)[i] != (*all)[0])
      return error() << "metadata key '" << key << "' entry " << i << " is "
                     << (*all)[i] << ", entry 0 " << (*all)[0]
                     << ": sgc compiles models whose layers agree on it",
             failure();
  return (*all)[0];
}

FailureOr<std::vector<bool>> Metadata::flags(const std::string &key,
                                             int64_t layers) {
  const gguf::value *v = h.find(key);
  if (!v)
    return error() << "missing metadata key '" << key << "'", failure();
  if (v->type != gguf::value_type::array ||
      v->element_type != gguf::value_type::boolean)
    return error() << "metadata key '" << key << "' is "
                   << gguf::value_type_name(v->type)
                   << (v->type == gguf::value_type::array
                           ? std::string(" of ") +
                                 gguf::value_type_name(v->element_type)
                           : std::string())
                   << ", expected an ARRAY of BOOL, one per layer",
           failure();
  if (static_cast<int64_t>(v->size()) != layers)
    return error() << "metadata key '" << key << "' has " << v->size()
                   << " entries, expected one per layer (" << layers << ")",
           failure();
  std::vector<bool> out;
  for (size_t i = 0; i < v->size(); ++i)
    out.push_back(v->element_int(i) != 0);
  return out;
}
