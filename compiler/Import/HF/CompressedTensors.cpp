//===- CompressedTensors.cpp - an HF config's quantization_config ---------===//
//
// Part of sgc. The keys are compressed-tensors' QuantizationConfig and
// QuantizationArgs; the parts are what its FP8 and pack-quantized
// compressors write (QUANT.md §4).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/HF/CompressedTensors.h"
#include "compiler/Import/Format.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;

namespace {

/// compressed-tensors' match of a target or ignore entry against a module
/// name: "re:" then a regular expression matched from the start (Python's
/// re.match), else the exact name.
bool matches(StringRef entry, StringRef module) {
  if (entry.consume_front("re:"))
    return llvm::Regex(("^(" + entry + ")").str()).match(module);
  return entry == module;
}

/// The strings of `key` (an array of them) of `obj`, each a valid pattern.
FailureOr<std::vector<std::string>> readNames(ConfigReader &r,
                                              const JsonNode &obj,
                                              StringRef key) {
  std::vector<std::string> out;
  if (!ConfigReader::given(obj, key))
    return out;
  JsonNode list = JsonReader::child(obj, key);
  if (!list->is_array()) {
    r.error(list.path) << "expected an array of module names, got "
                       << describe(*list);
    return failure();
  }
  for (size_t i = 0; i < list->size(); ++i) {
    JsonNode e = JsonReader::element(list, i);
    if (!e->is_string()) {
      r.error(e.path) << "expected a module name, got " << describe(*e);
      return failure();
    }
    std::string name = e->get<std::string>();
    StringRef pattern(name);
    std::string why;
    if (pattern.consume_front("re:") &&
        !llvm::Regex(("^(" + pattern + ")").str()).isValid(why)) {
      r.error(e.path) << "bad regular expression '" << printable(pattern)
                      << "': " << why;
      return failure();
    }
    out.push_back(std::move(name));
  }
  return out;
}

/// The one weights scheme of a config group, as an encoding.
FailureOr<std::string> readWeights(ConfigReader &r, const JsonNode &weights,
                                   StringRef format, std::string &summary) {
  auto refuse = [&](StringRef key, const Twine &why) {
    return r.unsupported(weights, key, why);
  };
  FailureOr<int64_t> bits = r.intOr(weights, "num_bits", 8, 1, 64);
  FailureOr<std::string> type = r.stringOr(weights, "type", "int");
  FailureOr<std::string> strategy = r.stringOr(weights, "strategy", "tensor");
  FailureOr<bool> symmetric = r.boolOr(weights, "symmetric", true);
  FailureOr<bool> dynamic = r.boolOr(weights, "dynamic", false);
  if (failed(bits) || failed(type) || failed(strategy) || failed(symmetric) ||
      failed(dynamic))
    return failure();
  if (!*symmetric)
    return refuse("symmetric", "asymmetric weights (zero points): sgc reads "
                               "symmetric compressed-tensors weights");
  if (*dynamic)
    return refuse("dynamic", "weights quantized at run time");
  if (ConfigReader::given(weights, "actorder") &&
      !(JsonReader::child(weights, "actorder")->is_boolean() &&
        !JsonReader::child(weights, "actorder")->get<bool>()))
    return refuse("actorder", "act-order weights (weight_g_idx)");
  if (*type == "float" && *bits == 8) {
    if (format != "float-quantized")
      return refuse("type", "FP8 weights in format '" + format +
                                "' (sgc reads float-quantized)");
    if (*strategy == "block" || ConfigReader::given(weights, "block_structure"))
      return refuse("strategy", "FP8 128 x 128 blocks (sgc reads channel and "
                                "tensor scales)");
    if (*strategy != "channel" && *strategy != "tensor")
      return refuse("strategy", "FP8 strategy '" + *strategy +
                                    "' (sgc reads channel and tensor)");
    summary = "FP8 e4m3, " + *strategy + " scales";
    return std::string("FP8_CH");
  }
  if (*type == "int" && *bits == 4) {
    if (format != "pack-quantized")
      return refuse("type", "INT4 weights in format '" + format +
                                "' (sgc reads pack-quantized)");
    if (*strategy != "group")
      return refuse("strategy", "INT4 strategy '" + *strategy +
                                    "' (sgc reads groups)");
    FailureOr<int64_t> group = r.intOr(weights, "group_size", 0, 0, 1 << 20);
    if (failed(group))
      return failure();
    if (*group != 32 && *group != 128)
      return refuse("group_size", "INT4 groups of " + Twine(*group) +
                                      " (sgc reads 32 and 128)");
    summary = "INT4, symmetric groups of " + std::to_string(*group);
    return std::string(*group == 32 ? "INT4_G32" : "INT4_G128");
  }
  return refuse("num_bits", Twine(*bits) + "-bit " + *type +
                                " weights (sgc reads 8-bit float and 4-bit "
                                "int)");
}

} // namespace

FailureOr<std::optional<CompressedScheme>>
mlir::sgc::import::hf::readQuantizationConfig(ConfigReader &r,
                                              const JsonNode &root) {
  if (!ConfigReader::given(root, "quantization_config"))
    return std::optional<CompressedScheme>();
  FailureOr<JsonNode> q = r.objectOr(root, "quantization_config");
  if (failed(q))
    return failure();
  FailureOr<std::string> method = r.stringOr(*q, "quant_method", "");
  if (failed(method))
    return failure();
  if (*method != "compressed-tensors") {
    (void)r.unsupported(*q, "quant_method",
                        "quant_method '" + printable(*method) +
                            "' (sgc reads compressed-tensors folders; a "
                            "GGUF file, or a BF16 folder with sgc compile "
                            "--weights, for the others)");
    return failure();
  }
  FailureOr<std::string> format = r.stringOr(*q, "format", "");
  if (failed(format))
    return failure();
  if (*format != "float-quantized" && *format != "pack-quantized") {
    (void)r.unsupported(*q, "format",
                        "format '" + printable(*format) +
                            "' (sgc reads float-quantized FP8 and "
                            "pack-quantized INT4)");
    return failure();
  }
  for (StringRef key : {"kv_cache_scheme", "sparsity_config",
                        "transform_config"}) {
    JsonNode n = JsonReader::child(*q, key);
    if (ConfigReader::given(*q, key) && !(n->is_object() && n->empty()))
      {
      (void)r.unsupported(*q, key, "a " + key + " (sgc reads quantized "
                                                 "weights only)");
      return failure();
    }
  }
  FailureOr<JsonNode> groups = r.objectOr(*q, "config_groups");
  if (failed(groups))
    return failure();
  if ((*groups)->size() != 1) {
    r.error(groups->path, q->path)
        << "unsupported: " << (*groups)->size()
        << " config groups (sgc reads one)";
    return failure();
  }
  JsonNode group{&(*groups)->begin().value(),
                 groups->path + "." + (*groups)->begin().key()};
  FailureOr<JsonNode> weights = r.objectOr(group, "weights");
  if (failed(weights))
    return failure();
  FailureOr<std::string> groupFormat = r.stringOr(group, "format", *format);
  if (failed(groupFormat))
    return failure();
  if (*groupFormat != *format)
    {
      (void)r.unsupported(group, "format", "a group format other than the "
                                          "config's");
      return failure();
    }
  CompressedScheme scheme;
  FailureOr<std::string> encoding =
      readWeights(r, *weights, *format, scheme.summary);
  if (failed(encoding))
    return failure();
  scheme.encoding = *encoding;
  // Activations quantized at run time (FP8 dynamic) or with a static scale
  // (FP8 static) are computed unquantized here: the path is weight-only.
  if (ConfigReader::given(group, "input_activations") &&
      scheme.encoding != "FP8_CH")
    {
      (void)r.unsupported(group, "input_activations",
                         "quantized activations with " + scheme.summary +
                             " weights (sgc reads W4A16)");
      return failure();
    }
  if (ConfigReader::given(group, "output_activations"))
    {
      (void)r.unsupported(group, "output_activations",
                         "quantized outputs");
      return failure();
    }
  FailureOr<std::vector<std::string>> targets =
      readNames(r, group, "targets");
  FailureOr<std::vector<std::string>> ignore = readNames(r, *q, "ignore");
  if (failed(targets) || failed(ignore))
    return failure();
  scheme.targets = std::move(*targets);
  scheme.ignore = std::move(*ignore);
  return std::optional<CompressedScheme>(std::move(scheme));
}

std::string mlir::sgc::import::hf::compressedEncoding(
    const CompressedScheme &scheme, StringRef name) {
  StringRef module = name;
  if (!module.consume_back(".weight"))
    return "";
  auto any = [&](const std::vector<std::string> &entries) {
    return llvm::any_of(entries, [&](const std::string &e) {
      return e == "Linear" || matches(e, module);
    });
  };
  auto named = [&](const std::vector<std::string> &entries) {
    return llvm::any_of(entries,
                        [&](const std::string &e) { return matches(e, module); });
  };
  return any(scheme.targets) && !named(scheme.ignore) ? scheme.encoding : "";
}

void mlir::sgc::import::hf::assignCompressedEncodings(HfModel &model) {
  model.tensorEncodings.clear();
  if (!model.quantization)
    return;
  for (const TensorSpec &t : textTensors(model.text)) {
    if (t.shape.size() != 2 ||
        !StringRef(t.name).starts_with(model.text.layersPrefix + "."))
      continue;
    std::string encoding = compressedEncoding(*model.quantization, t.name);
    if (!encoding.empty())
      model.tensorEncodings[t.name] = encoding;
  }
}

LogicalResult mlir::sgc::import::hf::checkCompressedParts(
    MLIRContext *ctx, const TensorListing &listing, StringRef name,
    ArrayRef<int64_t> shape, StringRef encoding,
    std::vector<std::string> &parts) {
  std::string module = name.drop_back(strlen(".weight")).str();
  int64_t n = shape[0], k = shape[1];
  // Each part: present, and where the header is read, its dtype and shape.
  auto part = [&](StringRef suffix, ArrayRef<StringRef> dtypes,
                  const std::vector<int64_t> &want,
                  StringRef what) -> LogicalResult {
    std::string partName = module + suffix.str();
    auto it = listing.tensors.find(partName);
    if (it == listing.tensors.end())
      return emitError(UnknownLoc::get(ctx))
             << "tensor '" << partName << "' (" << what << ") is not in '"
             << listing.path << "', but the config's quantization_config "
             << "stores '" << name << "' as " << encoding;
    parts.push_back(partName);
    const ListedTensor &l = it->second;
    if (!l.dtype)
      return success();
    if (!llvm::is_contained(dtypes, StringRef(*l.dtype)) || l.shape != want)
      return emitError(UnknownLoc::get(ctx))
             << "tensor '" << partName << "' in '" << l.file << "' is "
             << printable(*l.dtype) << " " << shapeString(l.shape)
             << "; " << what << " of " << encoding << " '" << name
             << "' " << shapeString(shape) << " must be "
             << llvm::join(dtypes, " or ") << " " << shapeString(want);
    return success();
  };
  // What sgc does not read: zero points and act-order permutations.
  for (StringRef extra : {".weight_zero_point", ".weight_g_idx"}) {
    auto it = listing.tensors.find(module + extra.str());
    if (it != listing.tensors.end())
      return emitError(UnknownLoc::get(ctx))
             << "tensor '" << it->first << "' in '" << it->second.file
             << "': sgc reads symmetric compressed-tensors weights without "
                "act-order (no weight_zero_point or weight_g_idx)";
  }
  const SmallVector<StringRef, 3> scaleTypes = {"BF16", "F16", "F32"};
  if (encoding == "FP8_CH") {
    if (failed(part(".weight", {"F8_E4M3"}, shape.vec(), "the e4m3 weight")))
      return failure();
    // A channel scale [N, 1] or a tensor scale [1].
    auto it = listing.tensors.find(module + ".weight_scale");
    bool perTensor = it != listing.tensors.end() && it->second.dtype &&
                     it->second.shape.size() <= 1;
    if (failed(part(".weight_scale", scaleTypes,
                    perTensor ? it->second.shape
                              : std::vector<int64_t>{n, 1},
                    "the scale")))
      return failure();
    if (perTensor && !it->second.shape.empty() && it->second.shape[0] != 1)
      return emitError(UnknownLoc::get(ctx))
             << "tensor '" << it->first << "' in '" << it->second.file
             << "' has " << it->second.shape[0] << " scales; a tensor "
             << "scale is one";
    if (listing.tensors.count(module + ".input_scale"))
      parts.push_back(module + ".input_scale");
    return success();
  }
  int64_t group = encoding == "INT4_G32" ? 32 : 128;
  if (k % group != 0)
    return emitError(UnknownLoc::get(ctx))
           << "tensor '" << name << "' has rows of " << k
           << ", not a whole number of " << encoding << " groups of "
           << group;
  return failure(
      failed(part(".weight_packed", {"I32"}, {n, k / 8}, "the packed nibbles")) ||
      failed(part(".weight_scale", scaleTypes, {n, k / group}, "the scales")) ||
      failed(part(".weight_shape", {"I64", "I32"}, {2}, "the shape")));
}
