//===- HfImport.cpp - HF config.json -> system_graph.json -----------------===//
//
// Part of sgc. Dispatches on `model_type` to the family readers, applies
// the tensor listing, names the artifact and writes the graph.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/HF/HfImport.h"
#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"
#include "compiler/Import/HF/CompressedTensors.h"
#include "compiler/Import/HF/ConfigReader.h"
#include "compiler/Import/GraphSpec.h"
#include "compiler/Import/HF/Families.h"
#include "compiler/Import/HF/GraphWriter.h"
#include "compiler/Import/HF/TensorListing.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;
using namespace mlir::sgc::import::hf;

namespace {
/// Config files are small (the 31B one is ~6 KB).
constexpr size_t kMaxConfigBytes = 16u << 20;

/// A source_artifact whose family is `family` (the schema-6 importer takes
/// the family from it).
std::string artifactName(StringRef configPath, const JsonNode &root,
                         Family family) {
  auto fits = [&](StringRef name) {
    return !name.empty() && familyFromArtifact(name) == family;
  };
  StringRef dir = llvm::sys::path::filename(
      llvm::sys::path::parent_path(configPath));
  if (fits(dir))
    return dir.str();
  if (root->contains("_name_or_path") && (*root)["_name_or_path"].is_string()) {
    StringRef name = (*root)["_name_or_path"].get_ref<const std::string &>();
    name = name.rsplit('/').second.empty() ? name : name.rsplit('/').second;
    if (fits(name))
      return name.str();
  }
  return family == Family::Gemma3 ? "gemma-3" : "gemma-4";
}
} // namespace

FailureOr<std::string>
mlir::sgc::importHfConfig(MLIRContext *ctx, StringRef configPath,
                          StringRef text, const HfImportOptions &options,
                          HfStorage *storage) {
  ConfigReader r(ctx, configPath, text);
  SourcePos top{"$", 1, 1};
  if (text.size() > kMaxConfigBytes) {
    r.error(top) << "file is " << withCommas(text.size())
                 << " bytes, more than the limit of "
                 << withCommas(kMaxConfigBytes) << " for a config.json";
    return failure();
  }
  json root;
  if (failed(r.readDocument(/*maxDepth=*/64, root)))
    return failure();
  JsonNode rootNode{&root, "$"};
  if (!root.is_object()) {
    r.error(top) << "expected a JSON object at the top level of an HF "
                    "config, got "
                 << describe(root);
    return failure();
  }
  if (!JsonReader::has(rootNode, "model_type")) {
    r.error(top) << "missing required key 'model_type' (an HF config.json "
                    "names its model type)";
    return failure();
  }
  FailureOr<std::string> type = r.getString(rootNode, "model_type");
  if (failed(type))
    return failure();
  FailureOr<HfModel> model = failure();
  if (*type == "gemma3" || *type == "gemma3_text")
    model = readGemma3(r, rootNode, *type);
  else if (*type == "gemma4" || *type == "gemma4_text")
    model = readGemma4(r, rootNode, *type);
  else {
    r.error(JsonReader::child(rootNode, "model_type").path)
        << "unsupported model_type '" << printable(*type)
        << "' (sgc imports gemma3, gemma3_text, gemma4, gemma4_text)";
    return failure();
  }
  if (failed(model))
    return failure();
  FailureOr<std::optional<CompressedScheme>> scheme =
      readQuantizationConfig(r, rootNode);
  if (failed(scheme))
    return failure();
  model->quantization = std::move(*scheme);

  if (!options.tensorsPath.empty()) {
    FailureOr<TensorListing> listing =
        readTensorListing(ctx, options.tensorsPath);
    if (failed(listing) || failed(applyListing(ctx, *listing, *model)))
      return failure();
  } else {
    assignCompressedEncodings(*model);
  }
  if (model->quantization) {
    if (storage) {
      storage->encodings = model->tensorEncodings;
      storage->summary = model->quantization->summary;
    } else {
      r.warning(JsonReader::child(rootNode, "quantization_config").path)
          << "the graph describes the model in BF16; its "
          << model->quantization->summary << " storage is read when "
          << "compiling the folder itself (sgc compile DIR)";
    }
  }
  std::string artifact = options.artifact.empty()
                             ? artifactName(configPath, rootNode,
                                            model->text.family)
                             : options.artifact;
  if (familyFromArtifact(artifact) != model->text.family) {
    emitError(UnknownLoc::get(ctx))
        << "--artifact '" << printable(artifact) << "' does not name a "
        << familyName(model->text.family) << " model (expected 'gemma-"
        << (model->text.family == Family::Gemma3 ? "3" : "4") << "...')";
    return failure();
  }
  return writeGraph(*model, artifact);
}

HfDirectory mlir::sgc::findHfFiles(StringRef dir) {
  HfDirectory out;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "config.json");
  out.config = path.str().str();
  for (StringRef name : {"model.safetensors.index.json", "model.safetensors"}) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    if (llvm::sys::fs::exists(p)) {
      out.tensors = p.str().str();
      break;
    }
  }
  return out;
}

void mlir::sgc::applyHfStorage(import::GraphSpec &graph,
                               const HfStorage &storage, StringRef source) {
  if (storage.encodings.empty())
    return;
  for (const auto &[name, encoding] : storage.encodings)
    graph.fileTensors[name] = import::FileTensor{name, encoding};
  graph.fileTensorsSource = "'" + source.str() + "'";
  graph.completions.push_back(
      {graph.text.pos, "compressed-tensors: " +
                           std::to_string(storage.encodings.size()) +
                           " decoder matrices " + storage.summary +
                           ", computed weight-only on their dequantized "
                           "values; every other tensor BF16"});
}
