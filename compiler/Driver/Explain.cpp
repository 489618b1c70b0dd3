//===- Explain.cpp - `sgc explain`: what the compiler understood ----------===//
//
// Part of sgc. Prints the GraphSpec the importer built and the KV cache plan
// of the IR it imported: the same plan the `sg-plan-kv-cache` pass records,
// computed by the same code (compiler/Transforms/KVCachePlan.h), so what
// explain says is what the compiler does.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Explain.h"
#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/FusionUtils.h"
#include "compiler/Transforms/KVCachePlan.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

namespace {

/// 10000.0 -> "10,000"; 0.25 -> "0.25".
std::string number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 9e15 &&
      std::fabs(value) >= 1000)
    return withCommas(static_cast<int64_t>(value));
  return formatDouble(value);
}

/// Sorted indices as "0-4, 6-10, 12".
std::string ranges(ArrayRef<unsigned> indices) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
      ++j;
    if (!out.empty())
      out += ", ";
    out += std::to_string(indices[i]);
    if (j > i)
      out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

/// Layers grouped by their description, in order of first appearance.
class Groups {
public:
  std::vector<unsigned> &operator[](const std::string &description) {
    auto [it, inserted] = index.try_emplace(description, groups.size());
    if (inserted)
      groups.emplace_back(description, std::vector<unsigned>());
    return groups[it->second].second;
  }
  auto begin() const { return groups.begin(); }
  auto end() const { return groups.end(); }

private:
  llvm::StringMap<size_t> index;
  std::vector<std::pair<std::string, std::vector<unsigned>>> groups;
};

void printGroups(llvm::raw_ostream &os, const Groups &groups,
                 StringRef indent) {
  for (const auto &[description, indices] : groups)
    os << indent << (indices.size() == 1 ? "layer " : "layers ")
       << ranges(indices) << " (" << indices.size() << "): " << description
       << "\n";
}

std::string describeLayer(const LayerSpec &l, int64_t numQHeads) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (l.span == Span::Sliding)
    os << "sliding, window " << withCommas(l.window);
  else
    os << "full";
  os << ", head_dim " << l.headDim << ", kv heads " << l.numKvHeads
     << ", q heads " << numQHeads << ", ";
  switch (l.position) {
  case PositionKind::None:
    os << "no position encoding";
    break;
  case PositionKind::Rope:
    os << "rope theta " << number(l.theta);
    break;
  case PositionKind::Linear:
    os << "linear rope theta " << number(l.theta) << " factor "
       << number(l.factor);
    break;
  case PositionKind::PartialRope:
    os << "partial_rope theta " << number(l.theta) << " fraction "
       << number(l.rotaryFraction) << " basis " << l.basis;
    break;
  }
  if (l.vFromK)
    os << ", v_from_k";
  if (l.layerScalar)
    os << ", layer scalar";
  if (l.vNorm)
    os << ", v norm";
  return s;
}

std::string describeNorm(const NormSpec &n) {
  return "eps " + formatDouble(n.eps) + ", offset " +
         std::to_string(n.weightOffset);
}

void printText(llvm::raw_ostream &os, const TextSpec &t,
               const ImportOptions &options, const KVCachePlan &plan) {
  os << "component '" << t.id << "': primary_text, " << t.sourceArtifact
     << " (family " << familyName(t.family) << ")\n";
  os << "  " << t.numLayers << " layers, hidden " << withCommas(t.hiddenSize)
     << ", " << t.numQHeads << " q heads, ffn "
     << withCommas(t.intermediateSize) << " (gated gelu_tanh), vocab "
     << withCommas(t.vocabSize) << ", context " << withCommas(t.contextLength)
     << "\n";
  os << "  score scale " << formatDouble(t.scoreScale) << ", q/k norm offset "
     << t.qkNormOffset << ", norms " << (t.postNorms ? "pre+post" : "pre")
     << " (rms_norm, " << describeNorm(t.preNorm) << "), final norm ("
     << describeNorm(t.finalNorm) << ")\n";
  os << "  embed scale " << formatDouble(t.embedScale);
  if (t.castEmbedScale)
    os << " -> "
       << formatFloat(roundToComputeDtype(t.embedScale, options.computeDtype))
       << " (" << computeDtypeName(options.computeDtype) << ")";
  os << ", final softcap "
     << (t.finalSoftcap ? formatDouble(*t.finalSoftcap) : std::string("none"))
     << ", " << (t.tiedHead ? "tied" : "untied") << " LM head\n";
  Groups layers;
  for (const LayerSpec &l : t.layers)
    layers[describeLayer(l, t.numQHeads)].push_back(l.index);
  printGroups(os, layers, "  ");

  os << "  KV cache at context " << withCommas(plan.contextLength) << " ("
     << computeDtypeName(options.computeDtype) << "):\n";
  Groups caches;
  for (const KVLayerPlan &l : plan.layers) {
    std::string s;
    llvm::raw_string_ostream d(s);
    if (l.ring)
      d << "ring of " << withCommas(l.slots) << " slots";
    else
      d << "full, " << withCommas(l.slots) << " slots";
    if (l.keysFromValues)
      d << ", " << l.kvHeads << " kv heads x V " << l.vHeadDim
        << " (K = V: keys rebuilt from V when read)";
    else
      d << ", " << l.kvHeads << " kv heads x (K " << l.headDim << " + V "
        << l.vHeadDim << ")" << (l.vFromK ? ", V from K" : "");
    d << ", " << withCommas(l.bytesPerToken()) << " B/token, "
      << withCommas(l.bytes()) << " B each";
    caches[s].push_back(l.layer);
  }
  printGroups(os, caches, "    ");
  os << "    total " << withCommas(plan.totalBytes())
     << " B (rings for sliding layers) vs " << withCommas(plan.naiveBytes())
     << " B naive (every layer keeps the whole context)\n";
  int64_t keys = 0;
  for (const KVLayerPlan &l : plan.layers)
    if (l.keysFromValues)
      keys += l.slots * l.kvHeads * l.headDim * l.elementBytes;
  if (keys > 0)
    os << "    K = V layers cache V only; --kv-keep-keys adds "
       << withCommas(keys) << " B of K\n";
}

std::string describeVisionNorm(const NormSpec &n) {
  if (n.kind == NormKind::LayerNorm)
    return "layer_norm, eps " + formatDouble(n.eps);
  return "rms_norm, " + describeNorm(n);
}

/// Tensors and bytes of `tensors` whose name starts with `prefix` + ".".
std::pair<int64_t, int64_t> sumUnder(const std::vector<TensorSpec> &tensors,
                                     const std::string &prefix) {
  std::pair<int64_t, int64_t> sum{0, 0};
  for (const TensorSpec &t : tensors)
    if (StringRef(t.name).starts_with(prefix + ".")) {
      sum.first += 1;
      sum.second += t.numElements() * kBF16Bytes;
    }
  return sum;
}

void printVision(llvm::raw_ostream &os, const GraphSpec &graph,
                 const VisionSpec &c) {
  bool g3 = c.family == Family::Gemma3;
  os << "component '" << c.id << "': " << c.role << " (" << c.modality << "), "
     << c.sourceArtifact << " (family " << familyName(c.family)
     << "), @encode_image on the cpu target (cuda: not lowered yet)\n";
  os << "  " << c.numLayers << " layers, hidden " << withCommas(c.hiddenSize)
     << ", " << c.numHeads << " heads x " << c.headDim << ", " << c.numKvHeads
     << " kv heads, ffn " << withCommas(c.intermediateSize) << " ("
     << (c.ffnKind == FfnKind::Plain ? "plain" : "gated") << " gelu_tanh"
     << (c.ffnBias ? ", biases" : "") << ")\n";
  os << "  norms " << (c.postNorms ? "pre+post" : "pre") << " ("
     << describeVisionNorm(c.preNorm) << "), final norm "
     << (c.hasFinalNorm ? "(" + describeVisionNorm(c.finalNorm) + ")"
                        : std::string("none"))
     << "; attention " << (c.attentionBias ? "with" : "without")
     << " biases, score scale " << formatDouble(c.scoreScale) << ", "
     << (c.qkNorms ? "q/k norms (offset " + std::to_string(c.qkNormOffset) + ")"
                   : std::string("no q/k norms"))
     << (c.vNorm ? ", v norm" : "") << "\n";
  if (c.position == PositionKind::Rope)
    os << "  positions: 2-D axial RoPE theta " << number(c.ropeTheta) << " ("
       << c.headDim / 4 << " frequencies per axis) and learned x/y tables of "
       << withCommas(c.positionTableSize) << " rows\n";
  else
    os << "  positions: a learned table of " << withCommas(c.positionTableSize)
       << " rows, added once (no RoPE)\n";
  if (g3)
    os << "  image " << c.imageSize << " x " << c.imageSize << " px, patch "
       << c.patchSize << " -> " << withCommas(c.patchesPerImage())
       << " patches per image; " << c.poolingKernel << "x" << c.poolingKernel
       << " average pool -> " << withCommas(c.softTokensPerImage)
       << " soft tokens per image\n";
  else
    os << "  patch " << c.patchSize << ", budget "
       << withCommas(c.softTokensPerImage) << " soft tokens per image -> "
       << withCommas(c.patchesPerImage()) << " patches per image; "
       << c.poolingKernel << "x" << c.poolingKernel << " average pool, x "
       << formatDouble(c.poolScale) << " (sqrt(hidden))"
       << (c.standardize ? ", standardized" : "") << "\n";
  os << "  adapter: rms_norm ("
     << (c.adapterNormWeight
             ? "offset " + std::to_string(c.adapterNorm.weightOffset)
             : std::string("no weight"))
     << ", eps " << formatDouble(c.adapterNorm.eps) << "), projection "
     << withCommas(c.hiddenSize) << " -> " << withCommas(graph.text.hiddenSize)
     << "; token ids image " << c.tokens.image << ", boi " << c.tokens.boi
     << ", eoi " << c.tokens.eoi << "\n";

  // The tower's and the adapter's tensors, next to what their objects
  // declare (gemma-vision.md §0).
  std::vector<TensorSpec> tensors = perceptionTensors(c, graph.text.hiddenSize);
  struct Part {
    StringRef name, kind;
    std::pair<int64_t, int64_t> derived;
  } parts[] = {
      {"tower", "perception_tower", sumUnder(tensors, c.towerPrefix)},
      {"adapter", "perception_adapter", sumUnder(tensors, c.adapterPrefix)}};
  for (const Part &part : parts) {
    int64_t tensorsDeclared = 0, bytesDeclared = 0;
    for (const ObjectSpec &o : graph.objects)
      if (o.component == c.id && o.kind == part.kind)
        for (const BindingSpec &b : o.bindings) {
          tensorsDeclared += b.declaredTensors;
          bytesDeclared += b.declaredBytes;
        }
    bool agree = part.derived.first == tensorsDeclared &&
                 part.derived.second == bytesDeclared;
    os << "  " << part.name << " tensors ("
       << (part.name == "tower" ? c.towerPrefix : c.adapterPrefix)
       << ".*): " << withCommas(part.derived.first) << ", "
       << withCommas(part.derived.second) << " B | declared "
       << withCommas(tensorsDeclared) << ", " << withCommas(bytesDeclared)
       << " B" << (agree ? "" : "  MISMATCH") << "\n";
  }
  Groups layers;
  for (const LayerSpec &l : c.layers)
    layers[describeLayer(l, c.numHeads)].push_back(l.index);
  printGroups(os, layers, "  ");
}

/// The fusions the compiler applies to the decode variant: runs graph-opt
/// and fusion on a copy of the module and keeps the changes the fusion
/// passes' remarks carry (the remarks themselves are not printed).
FailureOr<std::vector<FusionChange>> collectFusions(ModuleOp module) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
  std::vector<FusionChange> fusions;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Remark)
      return failure(); // errors go on to the driver's handler
    std::optional<FusionChange> change = getFusionChange(diag);
    if (change && change->function == "decode")
      fusions.push_back(std::move(*change));
    return success();
  });
  PassManager pm(module.getContext());
  buildGraphOptPipeline(pm);
  buildFusionPipeline(pm);
  if (failed(pm.run(*copy)))
    return failure();
  return fusions;
}

/// The bytes the model binds, per encoding, as the IR types them (what the
/// manifest lists and the runtime's memory budget counts); `source`: where
/// the encodings came from (a GGUF, a --weights recipe), if not the graph.
void printWeightsByEncoding(ModuleOp module, StringRef source,
                            llvm::raw_ostream &os) {
  std::map<std::string, std::pair<int64_t, int64_t>> byEncoding;
  module.walk([&](sg::WeightOp op) {
    RankedTensorType type = op.getType();
    std::string name;
    if (auto quant = dyn_cast<sg::QuantType>(type.getElementType()))
      name = quant.getEncoding().str();
    else
      llvm::raw_string_ostream(name) << type.getElementType();
    auto &entry = byEncoding[StringRef(name).upper()];
    entry.first += 1;
    entry.second += sg::storageBytes(type);
  });
  os << "\nweights by encoding"
     << (source.empty() ? "" : " (as " + source.str() + " stores them)")
     << ":\n";
  for (const auto &[name, entry] : byEncoding)
    os << "  " << name << ": " << withCommas(entry.first) << " tensors, "
       << withCommas(entry.second) << " B\n";
}

} // namespace

LogicalResult mlir::sgc::explainSystemGraph(MLIRContext *ctx,
                                            StringRef fileName, StringRef text,
                                            const ImportOptions &options,
                                            llvm::raw_ostream &os) {
  // Parse once (the remarks go out once), then build and verify the IR the
  // compiler would build.
  FailureOr<GraphSpec> graph = parseSystemGraph(ctx, fileName, text, options);
  if (failed(graph))
    return failure();
  return explainGraph(ctx, fileName, *graph, options, os);
}

LogicalResult mlir::sgc::explainGraph(MLIRContext *ctx, StringRef fileName,
                                      const GraphSpec &graphSpec,
                                      const ImportOptions &options,
                                      llvm::raw_ostream &os) {
  const GraphSpec *graph = &graphSpec;
  OwningOpRef<ModuleOp> module = buildModule(ctx, *graph, options);
  if (!module || failed(verify(*module)))
    return failure();
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return emitError(module->getLoc(),
                     "internal error: the imported module has no @forward");
  FailureOr<KVCachePlan> plan = KVCachePlan::compute(forward);
  if (failed(plan))
    return failure();

  os << "graph " << fileName << " (schema 6), compute dtype "
     << computeDtypeName(options.computeDtype)
     << (options.strictGraph ? ", --strict-graph" : "") << "\n\n";
  printText(os, graph->text, options, *plan);
  for (const VisionSpec &c : graph->opaqueComponents) {
    os << "\n";
    printVision(os, *graph, c);
  }

  os << "\nobjects (tensors, bytes: derived from the family tensor table | "
        "declared):\n";
  int64_t derivedTensors = 0, derivedBytes = 0, declaredTensors = 0,
          declaredBytes = 0;
  for (const ObjectSpec &o : graph->objects) {
    os << "  " << o.id << " (" << o.kind << " of '" << o.component << "'"
       << (o.encoding == "BF16" ? "" : ", matrices " + o.encoding) << ")\n";
    for (const BindingSpec &b : o.bindings) {
      bool agree = b.derivedTensors == b.declaredTensors &&
                   b.derivedBytes == b.declaredBytes;
      os << "    " << b.tensorPrefix << ": " << withCommas(b.derivedTensors)
         << ", " << withCommas(b.derivedBytes) << " B | "
         << withCommas(b.declaredTensors) << ", " << withCommas(b.declaredBytes)
         << " B" << (agree ? "" : "  MISMATCH") << "\n";
      derivedTensors += b.derivedTensors;
      derivedBytes += b.derivedBytes;
      declaredTensors += b.declaredTensors;
      declaredBytes += b.declaredBytes;
    }
  }
  os << "  total: " << withCommas(derivedTensors) << ", "
     << withCommas(derivedBytes) << " B | " << withCommas(declaredTensors)
     << ", " << withCommas(declaredBytes) << " B\n";
  printWeightsByEncoding(*module, graph->fileTensorsSource, os);

  FailureOr<std::vector<FusionChange>> fusions = collectFusions(*module);
  if (failed(fusions))
    return failure();
  os << "\nfusions (decode; prefill is the same):\n";
  for (const FusionChange &fusion : *fusions)
    os << "  " << fusion.describe() << "\n";
  if (fusions->empty())
    os << "  none\n";

  if (options.strictGraph) {
    os << "\ncompletions: none (--strict-graph follows the graph "
          "literally)\n";
    return success();
  }
  os << "\ncompletions (" << graph->completions.size() << "):\n";
  for (const Completion &c : graph->completions)
    os << "  [" << c.pos.jsonPath << "] " << c.message << "\n";
  return success();
}
