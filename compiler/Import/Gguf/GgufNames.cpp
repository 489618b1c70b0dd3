//===- GgufNames.cpp - the GGUF names of a graph's tensors ----------------===//
//
// Part of sgc. llama.cpp's tensor names for the gemma3 and gemma4 archs, the
// norm weights its converter stores as 1 + w, and the weights recipes
// (--weights=q8_0|q4_0) built on them. No GGUF is read here: the schema-6
// importer uses these without the GGUF reader.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Gguf/GgufNames.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

namespace {
/// The GGUF name of each tensor of a Gemma decoder layer, by its HF name
/// after "<layers>.<l>." (llama.cpp's tensor names for the gemma3 and
/// gemma4 archs; the layer scalar is Gemma 4's).
const std::pair<const char *, const char *> kLayerTensors[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"post_attention_layernorm.weight", "post_attention_norm.weight"},
    {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
    {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
    {"layer_scalar", "layer_output_scale.weight"},
};
} // namespace

/// The GGUF name of the graph's tensor `name` (a Gemma text model), or ""
/// when the table has none.
std::string mlir::sgc::ggufNameOf(const TextSpec &text, StringRef name) {
  if (name == text.embedPrefix + ".weight")
    return "token_embd.weight";
  if (name == text.finalNormPrefix + ".weight")
    return "output_norm.weight";
  if (name.consume_front(text.layersPrefix + ".")) {
    auto [layer, rest] = name.split('.');
    for (auto [hf, gg] : kLayerTensors)
      if (rest == hf)
        return ("blk." + layer + "." + gg).str();
  }
  return "";
}

/// A GGUF's Gemma 3 norm weights are stored as 1 + w (the converter folds
/// the offset in): every norm multiplies by the stored weight.
void mlir::sgc::takeStoredNormWeights(TextSpec &text) {
  for (NormSpec *norm : {&text.preNorm, &text.postNorm, &text.finalNorm})
    norm->weightOffset = 0;
  text.qkNormOffset = 0;
}

LogicalResult mlir::sgc::applyWeightsRecipe(MLIRContext *ctx,
                                            GraphSpec &graph,
                                            StringRef recipe) {
  Location loc = makeLoc(ctx, graph.fileName, graph.text.pos);
  // A graph that names its recipe (a decoder stack stored as Q8_0 / Q4_0)
  // has it applied already; --weights may only repeat it.
  if (!graph.weightsRecipe.empty()) {
    if (graph.weightsRecipe == recipe)
      return success();
    return emitError(loc) << "--weights=" << recipe << ": the graph's "
                          << "decoder stack is stored as "
                          << StringRef(graph.weightsRecipe).upper();
  }
  if (recipe != "q8_0" && recipe != "q4_0")
    return emitError(loc) << "--weights=" << recipe
                          << ": unknown recipe (q8_0 or q4_0)";
  if (!graph.text.tiedHead)
    return emitError(loc) << "--weights=" << recipe
                          << ": the graph's LM head is not the embedding";
  TextSpec &text = graph.text;
  // A GGUF holds the text model; llama.cpp keeps an image tower in a
  // separate mmproj file.
  if (!graph.opaqueComponents.empty()) {
    graph.opaqueComponents.clear();
    llvm::erase_if(graph.objects, [&](const ObjectSpec &o) {
      return o.component != text.id;
    });
    graph.completions.push_back(
        {text.pos, "--weights: the image tower is left out (a GGUF holds "
                   "the text model; llama.cpp keeps a tower in its mmproj "
                   "file)"});
  }
  // The converter keeps the tokenizer's rows of Gemma 3's embedding.
  bool gemma3 = text.family == Family::Gemma3;
  if (gemma3 && text.vocabSize == 262208) {
    text.vocabSize = 262144;
    graph.completions.push_back(
        {text.pos, "vocabulary 262,144: llama.cpp's converter keeps the "
                   "tokenizer's rows of Gemma 3's 262,208-row embedding"});
  }
  // Gemma 3's converter stores its norms as 1 + w; Gemma 4's as they are.
  if (gemma3)
    takeStoredNormWeights(text);
  graph.completions.push_back(
      {text.pos, "--weights=" + recipe.str() + ": the tensors llama-quantize "
                 "writes (" + (recipe == "q8_0" ? "every matrix Q8_0"
                                                : "matrices Q4_0, the tied "
                                                  "embedding Q6_K (Q8_0 "
                                                  "when its width is no "
                                                  "multiple of 256)") +
                 (gemma3 ? ", norms F32 as 1 + w" : ", norms and layer "
                                                    "scalars F32") +
                 "), bound by their GGUF names"});
  for (const TensorSpec &t : textTensors(text)) {
    std::string ggufName = ggufNameOf(text, t.name);
    if (ggufName.empty())
      return emitError(loc) << "--weights=" << recipe << ": tensor '"
                            << t.name << "' has no GGUF name";
    std::string encoding = "F32";
    if (t.shape.size() == 2) {
      int64_t k = t.shape[1];
      bool embedding = ggufName == "token_embd.weight";
      if (recipe == "q8_0" || (embedding && k % 256 != 0))
        encoding = "Q8_0";
      else
        encoding = embedding ? "Q6_K" : "Q4_0";
      if (k % 32 != 0)
        return emitError(loc)
               << "--weights=" << recipe << ": tensor '" << t.name
               << "' has rows of " << k << ", not a whole number of "
               << encoding << " blocks of 32";
    }
    graph.fileTensors[t.name] = FileTensor{ggufName, encoding};
  }
  graph.fileTensorsSource = "--weights=" + recipe.str();
  graph.weightsRecipe = recipe.str();
  return success();
}
