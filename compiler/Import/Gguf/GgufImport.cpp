//===- GgufImport.cpp - a GGUF file -> the graph it describes -------------===//
//
// Part of sgc. What llama.cpp's loader takes from a `gemma3` file and what
// it assumes (design/QUANT.md §2; llama.cpp's gemma3 loader and
// converter): the sliding pattern from `gemma3.attention.
// sliding_window_pattern`, else every 6th layer full; the attention scale
// 1/√head_dim (1/√(hidden/heads) at 62 layers), never stored; the sliding
// layers' RoPE base 10000; norm weights stored as 1 + w; the embedding's
// rows the vocabulary. Each assumption is a completion `sgc explain` lists.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Gguf/GgufImport.h"
#include "compiler/Import/Gguf/GgufNames.h"
#include "compiler/Import/HF/HfImport.h"
#include "lib/gguf/gguf.h"

#include "llvm/Support/Path.h"

#include <cmath>

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;
namespace gguf = ::sgc::gguf;

namespace {

/// The encodings sgc compiles (ggml's type names).
bool readable(StringRef encoding) {
  return encoding == "F32" || encoding == "F16" || encoding == "BF16" ||
         encoding == "Q8_0" || encoding == "Q4_0" || encoding == "Q6_K";
}

/// Reads one file's metadata; every error names the file and the key.
class Metadata {
public:
  Metadata(MLIRContext *ctx, StringRef path, const gguf::header &h)
      : ctx(ctx), path(path), h(h) {}

  InFlightDiagnostic error() {
    return emitError(UnknownLoc::get(ctx)) << "'" << path << "': ";
  }

  FailureOr<int64_t> integer(const std::string &key, int64_t lo, int64_t hi,
                             std::optional<int64_t> fallback = {}) {
    const gguf::value *v = h.find(key);
    if (!v) {
      if (fallback)
        return *fallback;
      return error() << "missing metadata key '" << key << "'",
             failure();
    }
    if (!v->is_integer())
      return error() << "metadata key '" << key << "' is "
                     << gguf::value_type_name(v->type)
                     << ", expected an integer",
             failure();
    int64_t x = v->as_int();
    if (x < lo || x > hi)
      return error() << "metadata key '" << key << "' is " << x
                     << ", expected " << lo << " to " << hi,
             failure();
    return x;
  }

  FailureOr<double> number(const std::string &key,
                           std::optional<double> fallback = {}) {
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
                     << gguf::value_type_name(v->type)
                     << ", expected a number",
             failure();
    double x = v->as_double();
    if (!(x > 0) || !std::isfinite(x))
      return error() << "metadata key '" << key << "' is " << x
                     << ", expected a positive number",
             failure();
    return x;
  }

  std::optional<std::string> string(const std::string &key) {
    const gguf::value *v = h.find(key);
    if (!v || v->type != gguf::value_type::string)
      return std::nullopt;
    return v->text;
  }

  MLIRContext *ctx;
  StringRef path;
  const gguf::header &h;
};

/// The file's stem as a gemma-3 artifact name ("gemma-3-<stem>" unless it
/// names one already); a file called model.gguf is named for its folder.
std::string artifactOf(StringRef path) {
  StringRef stem = llvm::sys::path::stem(path);
  if (stem == "model") {
    StringRef dir = llvm::sys::path::filename(llvm::sys::path::parent_path(path));
    if (!dir.empty() && dir != "." && dir != "/")
      stem = dir;
  }
  return stem.starts_with("gemma-3") ? stem.str() : "gemma-3-" + stem.str();
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
  Metadata m(ctx, path, h);
  std::optional<std::string> arch = m.string("general.architecture");
  if (!arch)
    return m.error() << "missing metadata key 'general.architecture' (a "
                        "GGUF names its model architecture)",
           failure();
  if (*arch == "gemma4")
    return m.error() << "general.architecture 'gemma4': sgc compiles gemma3 "
                        "GGUF files so far (Gemma 4 ones: its system_graph."
                        "json or HF checkpoint)",
           failure();
  if (*arch != "gemma3")
    return m.error() << "general.architecture '" << *arch
                     << "' is not a model sgc compiles (gemma3)",
           failure();
  if (h.find("gemma3.expert_count"))
    return m.error() << "metadata key 'gemma3.expert_count': mixture-of-"
                        "experts Gemma models are not supported",
           failure();

  const std::string a = "gemma3.";
  FailureOr<int64_t> layers = m.integer(a + "block_count", 1, 1024);
  FailureOr<int64_t> context = m.integer(a + "context_length", 1, 1 << 24);
  FailureOr<int64_t> hidden = m.integer(a + "embedding_length", 1, 1 << 20);
  FailureOr<int64_t> ffn = m.integer(a + "feed_forward_length", 1, 1 << 22);
  FailureOr<int64_t> heads = m.integer(a + "attention.head_count", 1, 4096);
  if (failed(layers) || failed(context) || failed(hidden) || failed(ffn) ||
      failed(heads))
    return failure();
  FailureOr<int64_t> kvHeads =
      m.integer(a + "attention.head_count_kv", 1, *heads, *heads);
  FailureOr<int64_t> headDim = m.integer(a + "attention.key_length", 1, 4096,
                                         *hidden / *heads);
  FailureOr<int64_t> window =
      m.integer(a + "attention.sliding_window", 1, 1 << 24);
  FailureOr<double> eps = m.number(a + "attention.layer_norm_rms_epsilon");
  FailureOr<double> theta = m.number(a + "rope.freq_base", 10000.0);
  if (failed(kvHeads) || failed(headDim) || failed(window) || failed(eps) ||
      failed(theta))
    return failure();
  FailureOr<int64_t> valueDim =
      m.integer(a + "attention.value_length", 1, 4096, *headDim);
  if (failed(valueDim))
    return failure();
  if (*valueDim != *headDim)
    return m.error() << "metadata key '" << a << "attention.value_length' is "
                     << *valueDim << ", but key_length is " << *headDim
                     << " (gemma3 has one head size)",
           failure();
  FailureOr<int64_t> pattern =
      m.integer(a + "attention.sliding_window_pattern", 1, 1024, 6);
  if (failed(pattern))
    return failure();

  std::vector<Completion> completions;
  SourcePos top{"$", 1, 1};
  if (!h.find(a + "attention.sliding_window_pattern"))
    completions.push_back(
        {top, "sliding pattern: every 6th layer full (the file has no "
              "gemma3.attention.sliding_window_pattern; llama.cpp's rule)"});
  double queryScalar =
      *layers == 62 ? double(*hidden) / double(*heads) : double(*headDim);
  completions.push_back(
      {top, "attention scale 1/sqrt(" + std::to_string(int64_t(queryScalar)) +
                "): a GGUF does not store query_pre_attn_scalar (llama.cpp: "
                "head_dim, hidden/heads at 62 layers)"});
  completions.push_back(
      {top, "sliding layers' RoPE base 10000 (llama.cpp's constant for "
            "gemma3)"});
  completions.push_back(
      {top, "norm weights are stored as 1 + w (the converter folds Gemma 3's "
            "offset in): every norm multiplies by the stored weight"});

  // The tensors: the embedding's rows are the vocabulary.
  const gguf::tensor_info *embed = h.find_tensor("token_embd.weight");
  if (!embed || embed->dims.size() != 2)
    return m.error() << "tensor 'token_embd.weight' is "
                     << (embed ? "not a matrix" : "missing"),
           failure();
  if (h.find_tensor("output.weight"))
    return m.error() << "tensor 'output.weight': an LM head of its own; "
                        "Gemma 3 ties it to the embedding",
           failure();
  int64_t vocab = static_cast<int64_t>(embed->dims[1]);

  nlohmann::json config = {
      {"model_type", "gemma3_text"},
      {"vocab_size", vocab},
      {"hidden_size", *hidden},
      {"intermediate_size", *ffn},
      {"num_hidden_layers", *layers},
      {"num_attention_heads", *heads},
      {"num_key_value_heads", *kvHeads},
      {"head_dim", *headDim},
      {"sliding_window", *window},
      {"max_position_embeddings", *context},
      {"rms_norm_eps", *eps},
      {"query_pre_attn_scalar", queryScalar},
      {"rope_theta", *theta},
      {"rope_local_base_freq", 10000.0},
      {"tie_word_embeddings", true},
  };
  nlohmann::json types = nlohmann::json::array();
  for (int64_t l = 0; l < *layers; ++l)
    types.push_back(l % *pattern < *pattern - 1 ? "sliding_attention"
                                                : "full_attention");
  config["layer_types"] = types;
  if (std::optional<std::string> scaling = m.string(a + "rope.scaling.type")) {
    if (*scaling != "linear" && *scaling != "none")
      return m.error() << "metadata key '" << a << "rope.scaling.type' is '"
                       << *scaling << "', expected linear or none",
             failure();
    if (*scaling == "linear") {
      FailureOr<double> factor = m.number(a + "rope.scaling.factor");
      if (failed(factor))
        return failure();
      config["rope_scaling"] = {{"rope_type", "linear"}, {"factor", *factor}};
    }
  }

  HfImportOptions hfOptions;
  hfOptions.artifact = artifactOf(path);
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
                          "BF16, Q8_0, Q4_0, Q6_K)",
             failure();
    graph->fileTensors[t.name] = FileTensor{ggufName, encoding};
    used[ggufName] = true;
  }
  for (const gguf::tensor_info &t : h.tensors)
    if (!used.count(t.name))
      return m.error() << "tensor '" << t.name
                       << "' is not part of a gemma3 text model as sgc reads "
                          "it",
             failure();
  for (Completion &c : completions)
    graph->completions.push_back(std::move(c));
  graph->fileTensorsSource = "'" + path.str() + "'";
  return graph;
}
