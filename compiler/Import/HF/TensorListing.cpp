//===- TensorListing.cpp - the tensors a checkpoint holds -----------------===//
//
// Part of sgc. Reads safetensors headers (8-byte little-endian length,
// then a JSON object: name -> {dtype, shape, data_offsets}) and HF index
// files ({"weight_map": {name: shard}}) with the same limits as the
// runtime's reader (lib/safetensors).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/HF/TensorListing.h"
#include "compiler/Import/HF/CompressedTensors.h"
#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"
#include "compiler/Import/JsonReader.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;
using json = nlohmann::json;

namespace {
constexpr uint64_t kMaxHeaderBytes = 100000000;
constexpr uint64_t kMaxIndexBytes = 100000000;

InFlightDiagnostic fileError(MLIRContext *ctx, StringRef file) {
  (void)file;
  return emitError(UnknownLoc::get(ctx));
}


/// Adds the tensors of one .safetensors header to `out`. With `expected`,
/// the file must hold exactly those names (an index's view of the shard).
LogicalResult readHeader(MLIRContext *ctx, StringRef file,
                         std::map<std::string, ListedTensor> &out,
                         const std::vector<std::string> *expected,
                         StringRef indexPath) {
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fileError(ctx, file)
           << "cannot read '" << file << "': " << buffer.getError().message();
  StringRef data = (*buffer)->getBuffer();
  if (data.size() < 8)
    return fileError(ctx, file) << "'" << file
                                << "' is not a safetensors file (shorter "
                                   "than its 8-byte header length)";
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<uint8_t>(data[i]);
  if (n > kMaxHeaderBytes || n > data.size() - 8)
    return fileError(ctx, file) << "'" << file << "': header length " << n
                                << " exceeds the file or the limit";
  json header = json::parse(data.substr(8, n), nullptr, /*allow_exceptions=*/
                            false);
  if (header.is_discarded() || !header.is_object())
    return fileError(ctx, file)
           << "'" << file << "': the header is not a JSON object";
  size_t count = 0;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__")
      continue;
    const json &t = it.value();
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() ||
        !t.contains("shape") || !t["shape"].is_array())
      return fileError(ctx, file) << "'" << file << "': tensor '"
                                  << printable(it.key(), 200)
                                  << "' has no dtype and shape";
    ListedTensor listed;
    listed.file = file.str();
    listed.dtype = t["dtype"].get<std::string>();
    for (const json &d : t["shape"]) {
      if (!d.is_number_unsigned())
        return fileError(ctx, file) << "'" << file << "': tensor '"
                                    << printable(it.key(), 200)
                                    << "' has a bad shape";
      listed.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    }
    if (expected && !llvm::is_contained(*expected, it.key()))
      return fileError(ctx, file)
             << "'" << file << "' holds tensor '" << printable(it.key(), 200)
             << "', which " << indexPath << " does not list under it";
    ++count;
    out[it.key()] = std::move(listed);
  }
  if (expected)
    for (const std::string &name : *expected)
      if (!out.count(name) || out[name].file != file)
        return fileError(ctx, file)
               << "tensor '" << printable(name, 200) << "' listed in '"
               << indexPath << "' is missing from shard '" << file << "'";
  (void)count;
  return success();
}
} // namespace

FailureOr<TensorListing>
mlir::sgc::import::hf::readTensorListing(MLIRContext *ctx, StringRef path) {
  TensorListing listing;
  listing.path = path.str();
  if (!path.ends_with(".json")) {
    if (failed(readHeader(ctx, path, listing.tensors, nullptr, "")))
      return failure();
    return listing;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    fileError(ctx, path) << "cannot read '" << path
                         << "': " << buffer.getError().message();
    return failure();
  }
  if ((*buffer)->getBufferSize() > kMaxIndexBytes) {
    fileError(ctx, path) << "'" << path << "' exceeds the limit of "
                         << withCommas(kMaxIndexBytes) << " bytes";
    return failure();
  }
  json index = json::parse((*buffer)->getBuffer(), nullptr, false);
  if (index.is_discarded() || !index.is_object()) {
    fileError(ctx, path) << "'" << path << "' is not a JSON object";
    return failure();
  }
  if (!index.contains("weight_map") || !index["weight_map"].is_object()) {
    fileError(ctx, path) << "'" << path
                         << "': missing required key 'weight_map' (an "
                            "object: tensor name -> shard file)";
    return failure();
  }
  std::map<std::string, std::vector<std::string>> byShard;
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end();
       ++it) {
    if (!it.value().is_string()) {
      fileError(ctx, path) << "'" << path << "' [$.weight_map."
                           << printable(it.key(), 200)
                           << "] expected a shard file name, got "
                           << describe(it.value());
      return failure();
    }
    std::string shard = it.value().get<std::string>();
    if (shard.empty() || shard.find('/') != std::string::npos ||
        shard == "..") {
      fileError(ctx, path) << "'" << path << "' [$.weight_map."
                           << printable(it.key(), 200) << "] shard '"
                           << printable(shard)
                           << "' is not a file next to the index";
      return failure();
    }
    byShard[shard].push_back(it.key());
  }
  StringRef dir = llvm::sys::path::parent_path(path);
  for (const auto &[shard, names] : byShard) {
    llvm::SmallString<256> shardPath(dir);
    llvm::sys::path::append(shardPath, shard);
    if (llvm::sys::fs::exists(shardPath)) {
      if (failed(readHeader(ctx, shardPath, listing.tensors, &names, path)))
        return failure();
      continue;
    }
    // Only the index: names without shapes (import-hf --tensors on an
    // index alone). The runtime refuses a missing shard.
    for (const std::string &name : names)
      listing.tensors[name].file = shardPath.str().str();
  }
  return listing;
}

namespace {
/// The one prefix of `candidates` (a family default and its other
/// spellings) under which `listing` has a tensor starting with
/// `prefix + child`.
std::optional<std::string> findPrefix(const TensorListing &listing,
                                      Family family, StringRef defaultPrefix,
                                      StringRef child) {
  std::vector<std::string> candidates = {defaultPrefix.str()};
  for (const std::string &alt :
       alternativeTensorNames(family, (defaultPrefix + ".").str()))
    candidates.push_back(StringRef(alt).drop_back().str());
  // transformers 5 builds the SigLIP tower without its `vision_model`
  // level (model.vision_tower.encoder...); a checkpoint saved from the
  // module's own state_dict has those names.
  if (family == Family::Gemma3 && defaultPrefix == "vision_tower.vision_model")
    candidates.push_back("model.vision_tower");
  for (const std::string &c : candidates) {
    std::string start = c + child.str();
    auto it = listing.tensors.lower_bound(start);
    if (it != listing.tensors.end() && StringRef(it->first).starts_with(start))
      return c;
  }
  return std::nullopt;
}
} // namespace

std::string mlir::sgc::import::hf::shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

LogicalResult mlir::sgc::import::hf::applyListing(MLIRContext *ctx,
                                                  const TensorListing &listing,
                                                  HfModel &model) {
  // The text decoder's prefix: where its one embedding table sits.
  std::vector<std::string> embeds;
  for (const auto &[name, t] : listing.tensors) {
    StringRef n = name;
    if (n.ends_with("embed_tokens.weight") && !n.contains("vision") &&
        !n.contains("audio"))
      embeds.push_back(name);
  }
  if (embeds.size() != 1)
    return fileError(ctx, listing.path)
           << "'" << listing.path << "' has " << embeds.size()
           << " tensors named '...embed_tokens.weight' (expected exactly one, "
              "the text decoder's embedding)";
  std::string prefix =
      StringRef(embeds.front()).drop_back(strlen("embed_tokens.weight")).str();
  TextSpec &text = model.text;
  text.layersPrefix = prefix + "layers";
  text.embedPrefix = prefix + "embed_tokens";
  text.finalNormPrefix = prefix + "norm";

  if (model.vision) {
    OpaqueComponentSpec &v = model.vision->spec;
    std::optional<std::string> tower =
        findPrefix(listing, v.family, v.towerPrefix, ".encoder.layers.");
    std::optional<std::string> adapter =
        findPrefix(listing, v.family, v.adapterPrefix, ".");
    if (!tower || !adapter)
      return fileError(ctx, listing.path)
             << "'" << listing.path << "' has no vision "
             << (tower ? "adapter" : "tower") << " tensors ('"
             << (tower ? v.adapterPrefix : v.towerPrefix + ".encoder.layers")
             << ".*' or another spelling), but the config has a "
                "vision_config";
    v.towerPrefix = *tower;
    v.adapterPrefix = *adapter;
  }

  std::vector<TensorSpec> table = textTensors(text);
  if (model.vision) {
    std::vector<TensorSpec> vision =
        perceptionTensors(model.vision->spec, text.hiddenSize);
    table.insert(table.end(), vision.begin(), vision.end());
  }
  std::map<std::string, bool> derived;
  // Per text object kind, its first F16 and first BF16 matrix: an object's
  // matrices share one encoding (its graph object's representation).
  std::map<std::string, std::string> firstF16, firstBF16;
  assignCompressedEncodings(model);
  for (const TensorSpec &t : table) {
    derived[t.name] = true;
    // A compressed-tensors matrix: its parts instead of a BF16 tensor.
    auto quantized = model.tensorEncodings.find(t.name);
    if (quantized != model.tensorEncodings.end()) {
      std::vector<std::string> parts;
      if (failed(checkCompressedParts(ctx, listing, t.name, t.shape,
                                      quantized->second, parts)))
        return failure();
      for (const std::string &p : parts)
        derived[p] = true;
      continue;
    }
    // The vision tower is read in BF16 (compressed-tensors checkpoints
    // leave it out of their scheme).
    std::string module = StringRef(t.name).drop_back(strlen("weight")).str();
    for (StringRef part : {"weight_scale", "weight_packed"})
      if (StringRef(t.name).ends_with(".weight") &&
          listing.tensors.count(module + part.str()))
        return fileError(ctx, listing.path)
               << "tensor '" << module << part << "' in '"
               << listing.tensors.at(module + part.str()).file
               << "': '" << t.name << "' is stored quantized, which sgc "
               << "reads for the decoder layers' Linear weights only ("
               << (model.quantization ? "the config's quantization_config "
                                        "does not quantize it"
                                      : "the config has no "
                                        "quantization_config")
               << ")";
    auto it = listing.tensors.find(t.name);
    if (it == listing.tensors.end())
      return fileError(ctx, listing.path)
             << "tensor '" << t.name << "' " << shapeString(t.shape)
             << ", which the config implies, is not in '" << listing.path
             << "'";
    const ListedTensor &l = it->second;
    if (!l.dtype)
      continue;
    if (l.shape != t.shape)
      return fileError(ctx, l.file)
             << "tensor '" << t.name << "' in '" << l.file << "' has shape "
             << shapeString(l.shape) << ", but the config implies "
             << shapeString(t.shape);
    StringRef kind = StringRef(t.name).starts_with(text.embedPrefix)
                         ? "embedding"
                     : StringRef(t.name).starts_with(text.layersPrefix)
                         ? "decoder_stack"
                         : "";
    bool matrix = t.shape.size() == 2 && !kind.empty();
    if (*l.dtype == "BF16") {
      if (matrix)
        firstBF16.try_emplace(kind.str(), t.name);
      continue;
    }
    // F16: the matrices of the embedding and the decoder layers.
    if (*l.dtype != "F16" || !matrix)
      return fileError(ctx, l.file)
             << "tensor '" << t.name << "' in '" << l.file << "' is "
             << printable(*l.dtype)
             << " (sgc reads BF16 tensors, and F16 matrices of the embedding "
                "and the decoder layers)";
    firstF16.try_emplace(kind.str(), t.name);
  }
  for (const auto &[kind, f16Tensor] : firstF16) {
    auto bf16 = firstBF16.find(kind);
    if (bf16 != firstBF16.end()) {
      const std::string &file = listing.tensors.at(bf16->second).file;
      return fileError(ctx, file)
             << "tensor '" << bf16->second << "' in '" << file
             << "' is BF16 but '" << f16Tensor << "' of the same " << kind
             << " is F16 (sgc reads one encoding per object's matrices)";
    }
    model.matrixEncodings[kind] = "F16";
  }
  std::vector<std::string> extra;
  for (const auto &[name, t] : listing.tensors)
    if (!derived.count(name))
      extra.push_back(name);
  if (!extra.empty()) {
    auto w = emitWarning(UnknownLoc::get(ctx));
    w << extra.size() << " tensor(s) of '" << listing.path
      << "' are not used by the model the config describes (first: '"
      << printable(extra.front(), 200) << "')";
  }
  return success();
}
