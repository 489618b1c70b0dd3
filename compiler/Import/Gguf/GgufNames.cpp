//===- GgufNames.cpp - the GGUF names of a graph's tensors ----------------===//
//
// Part of sgc. llama.cpp's tensor names for the gemma3 and gemma4 archs, the
// norm weights its converter stores as 1 + w, and the weights recipes
// (--weights=q8_0|q4_0|q4_k_m) built on them. No GGUF is read here: the schema-6
// importer uses these without the GGUF reader.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Gguf/GgufNames.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

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

namespace {
/// What the recipe stores, for `sgc explain`.
std::string recipeSummary(StringRef recipe) {
  if (recipe == "q8_0")
    return "every matrix Q8_0";
  if (recipe == "q4_0")
    return "matrices Q4_0, the tied embedding Q6_K (Q8_0 when its width is "
           "no multiple of 256)";
  if (recipe == "q6_k")
    return "every matrix Q6_K (Q8_0 when its width is no multiple of 256)";
  return "matrices Q4_K; the tied embedding, and attn_v and ffn_down on "
         "llama.cpp's more-bits layers, Q6_K (Q8_0 when the width is no "
         "multiple of 256)";
}

/// llama-quantize's use_more_bits: the i-th of n tensors of a kind gets
/// Q4_K_M's extra bits in the first and last eighth and every third between.
bool useMoreBits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/// The attn_v and ffn_down tensors Q4_K_M stores as Q6_K. Each kind is
/// counted over its own tensors in layer order, as llama.cpp counts them:
/// Gemma 4's K=V layers have no attn_v, so its count is not the layers'.
llvm::StringSet<> moreBitsTensors(ArrayRef<std::string> names) {
  llvm::StringSet<> out;
  for (StringRef kind : {".attn_v.weight", ".ffn_down.weight"}) {
    SmallVector<std::pair<int64_t, StringRef>> layers;
    for (StringRef name : names) {
      int64_t layer;
      if (name.consume_front("blk.") && name.ends_with(kind) &&
          !name.drop_back(kind.size()).getAsInteger(10, layer))
        layers.push_back({layer, name});
    }
    llvm::sort(layers);
    for (auto [i, entry] : llvm::enumerate(layers))
      if (useMoreBits(i, layers.size()))
        out.insert(("blk." + entry.second).str());
  }
  return out;
}
} // namespace

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
  if (recipe != "q8_0" && recipe != "q4_0" && recipe != "q4_k_m" &&
      recipe != "q6_k")
    return emitError(loc) << "--weights=" << recipe
                          << ": unknown recipe (q8_0, q4_0, q4_k_m or q6_k)";
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
                 "writes (" + recipeSummary(recipe) +
                 (gemma3 ? ", norms F32 as 1 + w" : ", norms and layer "
                                                    "scalars F32") +
                 "), bound by their GGUF names"});
  SmallVector<std::string> names;
  for (const TensorSpec &t : textTensors(text)) {
    names.push_back(ggufNameOf(text, t.name));
    if (names.back().empty())
      return emitError(loc) << "--weights=" << recipe << ": tensor '"
                            << t.name << "' has no GGUF name";
  }
  llvm::StringSet<> moreBits = moreBitsTensors(names);
  for (auto [t, ggufName] : llvm::zip_equal(textTensors(text), names)) {
    std::string encoding = "F32";
    if (t.shape.size() == 2) {
      int64_t k = t.shape[1];
      bool embedding = ggufName == "token_embd.weight";
      if (recipe == "q8_0")
        encoding = "Q8_0";
      else if (embedding || recipe == "q6_k" ||
               (recipe == "q4_k_m" && moreBits.contains(ggufName)))
        encoding = k % 256 == 0 ? "Q6_K" : "Q8_0";
      else
        encoding = recipe == "q4_k_m" ? "Q4_K" : "Q4_0";
      // llama-quantize would store such rows as Q5_0, which sgc does not
      // read.
      if (encoding == "Q4_K" && k % 256 != 0)
        return emitError(loc)
               << "--weights=" << recipe << ": tensor '" << t.name
               << "' has rows of " << k << ", not a whole number of Q4_K "
               << "blocks of 256 (llama-quantize falls back to Q5_0 there, "
                  "an encoding sgc does not compile yet)";
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
