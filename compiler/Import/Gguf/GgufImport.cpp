//===- GgufImport.cpp - a GGUF file -> the graph it describes -------------===//
//
// Part of sgc. The architecture's reader (GgufGemma3.cpp, GgufGemma4.cpp)
// turns the metadata into the HF config the file means; the graph is built
// from it as from a config.json, then bound to the file's tensors: each
// graph tensor has its GGUF name, shape and encoding, and a file tensor the
// graph does not read is an error unless it is a fact the reader checked.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Gguf/GgufImport.h"
#include "compiler/Import/Gguf/GgufMetadata.h"
#include "compiler/Import/Gguf/GgufNames.h"
#include "compiler/Import/HF/HfImport.h"
#include "lib/gguf/gguf.h"

#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;
namespace gguf = ::sgc::gguf;

namespace {

/// The encodings sgc compiles (ggml's type names).
bool readable(StringRef encoding) {
  return encoding == "F32" || encoding == "F16" || encoding == "BF16" ||
         encoding == "Q8_0" || encoding == "Q4_0" || encoding == "Q6_K" ||
         encoding == "Q4_K";
}

/// The file's stem as an artifact name ("<prefix>-<stem>" unless it names
/// one already); a file called model.gguf is named for its folder.
std::string artifactOf(StringRef path, StringRef prefix) {
  StringRef stem = llvm::sys::path::stem(path);
  if (stem == "model") {
    StringRef dir = llvm::sys::path::filename(llvm::sys::path::parent_path(path));
    if (!dir.empty() && dir != "." && dir != "/")
      stem = dir;
  }
  return stem.starts_with(prefix) ? stem.str() : (prefix + "-" + stem).str();
}

} // namespace

bool mlir::sgc::isGgufContents(StringRef contents) {
  return contents.starts_with("GGUF");
}

FailureOr<GraphSpec> mlir::sgc::graphFromGguf(MLIRContext *ctx,
                                              StringRef path,
                                              const ImportOptions &options) {
  std::unique_ptr<gguf::file> file;
  ::sgc::status st = gguf::file::open(path.str(), &file);
  if (!st.ok()) {
    InFlightDiagnostic d = emitError(UnknownLoc::get(ctx)) << st.message();
    for (const std::string &n : st.notes())
      d.attachNote() << n;
    return failure();
  }
  const gguf::header &h = file->hdr();
  gguf_import::Metadata m(ctx, path, *file);
  std::optional<std::string> arch = m.string("general.architecture");
  if (!arch)
    return m.error() << "missing metadata key 'general.architecture' (a "
                        "GGUF names its model architecture)",
           failure();
  if (*arch != "gemma3" && *arch != "gemma4")
    return m.error() << "general.architecture '" << *arch
                     << "' is not a model sgc compiles (gemma3, gemma4)",
           failure();
  FailureOr<gguf_import::ModelConfig> model =
      *arch == "gemma3" ? gguf_import::gemma3Config(m)
                        : gguf_import::gemma4Config(m);
  if (failed(model))
    return failure();

  // The tensors: the embedding's rows are the vocabulary.
  const gguf::tensor_info *embed = h.find_tensor("token_embd.weight");
  if (!embed || embed->dims.size() != 2)
    return m.error() << "tensor 'token_embd.weight' is "
                     << (embed ? "not a matrix" : "missing"),
           failure();
  if (h.find_tensor("output.weight"))
    return m.error() << "tensor 'output.weight': an LM head of its own; "
                        "sgc compiles Gemma models whose head is the "
                        "embedding",
           failure();
  int64_t vocab = static_cast<int64_t>(embed->dims[1]);
  nlohmann::json &config = model->config;
  config["vocab_size"] = vocab;

  HfImportOptions hfOptions;
  hfOptions.artifact = artifactOf(path, model->artifactPrefix);
  std::string configName = (path + " (metadata)").str();
  FailureOr<std::string> graphText =
      importHfConfig(ctx, configName, config.dump(2), hfOptions);
  if (failed(graphText))
    return failure();
  FailureOr<GraphSpec> graph =
      parseSystemGraph(ctx, path, *graphText, options);
  if (failed(graph))
    return failure();

  // The file's facts: norms multiply by the stored weight, and every tensor
  // has the file's name and encoding.
  TextSpec &text = graph->text;
  if (model->normsStoredPlusOne)
    takeStoredNormWeights(text);
  std::map<std::string, bool> used;
  for (const TensorSpec &t : textTensors(text)) {
    std::string ggufName = ggufNameOf(text, t.name);
    const gguf::tensor_info *g =
        ggufName.empty() ? nullptr : h.find_tensor(ggufName);
    if (!g)
      return m.error() << "missing tensor '"
                       << (ggufName.empty() ? t.name : ggufName)
                       << "' (the graph's '" << t.name << "')",
             failure();
    std::vector<int64_t> shape(g->dims.rbegin(), g->dims.rend());
    if (shape != t.shape) {
      InFlightDiagnostic d = m.error() << "tensor '" << ggufName << "' is [";
      llvm::interleaveComma(shape, d);
      d << "], the metadata makes it [";
      llvm::interleaveComma(t.shape, d);
      return d << "]", failure();
    }
    const gguf::type_traits *traits = gguf::find_type(g->type);
    std::string encoding = traits ? traits->name : "?";
    if (!readable(encoding) || (shape.size() < 2 && encoding != "F32" &&
                                encoding != "F16" && encoding != "BF16"))
      return m.error() << "tensor '" << ggufName << "' is " << encoding
                       << ", an encoding sgc does not compile yet (F32, F16, "
                          "BF16, Q8_0, Q4_0, Q6_K, Q4_K)",
             failure();
    graph->fileTensors[t.name] = FileTensor{ggufName, encoding};
    used[ggufName] = true;
  }
  for (const gguf::tensor_info &t : h.tensors)
    if (!used.count(t.name) && !model->factTensors.count(t.name))
      return m.error() << "tensor '" << t.name
                       << "' is not part of a " << *arch
                       << " text model as sgc reads it",
             failure();
  for (Completion &c : model->completions)
    graph->completions.push_back(std::move(c));
  graph->fileTensorsSource = "'" + path.str() + "'";
  return graph;
}
