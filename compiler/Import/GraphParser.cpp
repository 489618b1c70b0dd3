//===- GraphParser.cpp - parse and validate a system_graph.json -----------===//
//
// Part of sgc. Enforces SCHEMA6.md on untrusted text and fills a GraphSpec:
// the primary_text component with every layer's geometry resolved, the
// perception components (validated, not lowered), the objects with their
// declared and derived tensor figures, and the family completions
// (FamilyCompletions.h). This file has the graph, its components and
// objects; ExecutionParser.cpp a component's execution block and layers;
// PerceptionParser.cpp a perception component's keys (VISION_KEYS.md).
//
// Every problem is one diagnostic located at the JSON path of the value (and
// its line:col); the first error ends the parse. Limits (nesting, file size,
// layer counts, widths; GraphParser.h) keep hostile input from costing
// stack, time or overflowing arithmetic.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/GraphParser.h"
#include "compiler/Import/Gguf/GgufNames.h"
#include "compiler/Import/FamilyCompletions.h"
#include "compiler/Import/FamilyFacts.h"
#include "compiler/Import/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::import;

//===----------------------------------------------------------------------===//
// Components
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::parseComponent(const Node &c) {
  if (failed(checkObject(c,
                         {"id", "role", "source_artifact", "num_layers",
                          "hidden_size", "attention"},
                         {"execution", "perception"}, "a component")))
    return failure();
  FailureOr<std::string> id = getString(c, "id");
  if (failed(id))
    return failure();
  for (const ComponentInfo &other : components)
    if (other.id == *id)
      return error(child(c, "id").path)
             << "duplicate component id '" << printable(*id) << "'";
  FailureOr<std::string> role =
      getEnum(c, "role", {"primary_text", "perception"}, "role");
  FailureOr<std::string> artifact;
  if (failed(role) || failed(artifact = getString(c, "source_artifact")))
    return failure();
  std::optional<Family> family = familyFromArtifact(*artifact);
  if (!family)
    return error(child(c, "source_artifact").path)
           << "unknown model family in source_artifact '"
           << printable(*artifact)
           << "' (expected a name starting with 'gemma-3' or 'gemma-4'; "
              "sgc derives the checkpoint's tensors from the family)";
  bool isText = *role == "primary_text";
  if (isText && haveText)
    return error(child(c, "role").path)
           << "a second component with role 'primary_text' ('" << printable(*id)
           << "'); a graph has exactly one";
  components.push_back(ComponentInfo{*id, isText, *family, c.path});
  if (isText) {
    haveText = true;
    graph.text.id = *id;
    graph.text.sourceArtifact = *artifact;
    graph.text.family = *family;
    graph.text.pos = posOf(c.path);
    return parseText(c, *family);
  }
  OpaqueComponentSpec spec;
  spec.id = *id;
  spec.role = *role;
  spec.sourceArtifact = *artifact;
  spec.family = *family;
  spec.pos = posOf(c.path);
  graph.opaqueComponents.push_back(std::move(spec));
  return parsePerception(c, *family);
}

LogicalResult GraphParser::parseText(const Node &c, Family family) {
  TextSpec &t = graph.text;
  const TextFacts &facts = textFacts(family);
  bool strict = options.strictGraph;
  if (!has(c, "execution"))
    return error(c.path) << "missing required key 'execution' (the "
                            "primary_text component needs one)";
  if (has(c, "perception"))
    return error(child(c, "perception").path)
           << "'perception' on a primary_text component";
  FailureOr<int64_t> numLayers = getInt(c, "num_layers", 1, kMaxLayers);
  FailureOr<int64_t> hidden;
  if (failed(numLayers) ||
      failed(hidden = getInt(c, "hidden_size", 1, kMaxWidth)))
    return failure();
  t.numLayers = *numLayers;
  t.hiddenSize = *hidden;

  ExecSpec exec;
  Node execNode = child(c, "execution");
  if (failed(parseExecution(execNode, /*text=*/true, exec)))
    return failure();
  Node attn = child(execNode, "attention");
  Node head = child(execNode, "head");
  t.numQHeads = exec.numQHeads;
  t.vocabSize = exec.vocabSize;
  t.intermediateSize = exec.intermediateSize;
  t.scoreScale = exec.scoreScale;
  t.qkNormOffset = exec.qkNormOffset;
  t.preNorm = exec.pre;
  t.postNorm = exec.hasPost ? exec.post : exec.pre;
  t.finalNorm = exec.finalNorm;
  t.postNorms = exec.postNorms;
  t.embedScale = exec.embedScale;
  t.finalSoftcap = exec.softcap;
  t.tiedHead = exec.tied;

  // Context length: the graph's, else the family's (a completion).
  if (exec.contextLength)
    t.contextLength = *exec.contextLength;
  else if (strict)
    return error(execNode.path)
           << "missing required key 'context_length' (--strict-graph: no "
              "family default)";

  LayerDefaults defaults;
  defaults.numQHeads = exec.numQHeads;
  defaults.numKvHeads = exec.numKvHeads;
  defaults.headDim = exec.headDim;
  defaults.kvHeadsPath = child(attn, "num_kv_heads").path;
  defaults.headDimPath = child(attn, "head_dim").path;
  defaults.fullNeedsGeometry = !strict && !facts.fullLayersShareGeometry;
  if (failed(parseLayers(c, t.numLayers, defaults, t.layers)))
    return failure();
  for (LayerSpec &layer : t.layers)
    layer.vNorm = exec.freeV;
  if (strict) {
    t.castEmbedScale = false;
    return success();
  }

  TextAsWritten written;
  written.layersPath = child(c, "attention").path;
  written.executionPath = execNode.path;
  written.attentionPath = attn.path;
  written.freeVPath = child(child(attn, "parameter_free_qk_norm"), "v").path;
  written.embedScalePath = child(head, "embed_scale").path;
  written.hasContextLength = exec.contextLength.has_value();
  written.numKvHeads = exec.numKvHeads;
  written.headDim = exec.headDim;
  written.freeV = exec.freeV;
  for (size_t i = 0; i < t.layers.size(); ++i)
    written.layersWithGeometry +=
        has(element(child(c, "attention"), i), "geometry");
  completeText(
      t, written, options.computeDtype,
      [&](const std::string &path, const std::string &parent,
          std::string message) { complete(path, parent, std::move(message)); });
  return success();
}

//===----------------------------------------------------------------------===//
// Objects
//===----------------------------------------------------------------------===//

LogicalResult GraphParser::parseObject(const Node &o) {
  if (failed(checkObject(
          o, {"id", "component", "kind", "source_bindings", "representations"},
          {}, "an object")))
    return failure();
  ObjectSpec spec;
  spec.pos = posOf(o.path);
  FailureOr<std::string> id = getString(o, "id");
  FailureOr<std::string> component;
  if (failed(id) || failed(component = getString(o, "component")))
    return failure();
  if (!objectIds.insert(*id).second)
    return error(child(o, "id").path)
           << "duplicate object id '" << printable(*id) << "'";
  const ComponentInfo *owner = nullptr;
  for (const ComponentInfo &info : components)
    if (info.id == *component)
      owner = &info;
  if (!owner) {
    std::string known;
    for (const ComponentInfo &info : components)
      known += (known.empty() ? "'" : ", '") + info.id + "'";
    return error(child(o, "component").path)
           << "unknown component '" << printable(*component)
           << "' (components: " << known << ")";
  }
  FailureOr<std::string> kind =
      getEnum(o, "kind",
              {"decoder_stack", "embedding", "final_norm", "perception_tower",
               "perception_adapter"},
              "object kind");
  if (failed(kind))
    return failure();
  bool textKind = !StringRef(*kind).starts_with("perception_");
  if (textKind != owner->text)
    return error(child(o, "kind").path)
           << "an object of kind '" << *kind << "' binds a "
           << (textKind ? "primary_text" : "perception") << " component, but '"
           << owner->id << "' is "
           << (owner->text ? "primary_text" : "perception");
  spec.id = *id;
  spec.component = *component;
  spec.kind = *kind;

  Node bindings = child(o, "source_bindings");
  if (failed(checkArray(bindings, "source_bindings", 1, kMaxBindings)))
    return failure();
  for (size_t i = 0; i < bindings->size(); ++i) {
    Node b = element(bindings, i);
    if (failed(checkObject(b, {"artifact", "tensor_prefix", "tensors", "bytes"},
                           {}, "a source binding")))
      return failure();
    BindingSpec binding;
    binding.pos = posOf(b.path);
    FailureOr<std::string> artifact = getString(b, "artifact");
    FailureOr<std::string> prefix;
    FailureOr<int64_t> tensors, bytes;
    if (failed(artifact) || failed(prefix = getString(b, "tensor_prefix")) ||
        failed(tensors = getInt(b, "tensors", 0, kMaxTensors)) ||
        failed(bytes = getInt(b, "bytes", 0, kMaxBytes)))
      return failure();
    binding.artifact = *artifact;
    binding.tensorPrefix = *prefix;
    binding.declaredTensors = *tensors;
    binding.declaredBytes = *bytes;
    spec.bindings.push_back(std::move(binding));
  }

  Node reps = child(o, "representations");
  if (failed(checkArray(reps, "representations", 1, 16)))
    return failure();
  for (size_t i = 0; i < reps->size(); ++i) {
    Node r = element(reps, i);
    if (failed(
            checkObject(r, {"encoding", "fidelity"}, {}, "a representation")))
      return failure();
    FailureOr<std::string> encoding = getString(r, "encoding", false);
    if (failed(encoding))
      return failure();
    bool recipe = *encoding == "Q8_0" || *encoding == "Q4_0";
    if (*encoding != "BF16" && *encoding != "F16" && !recipe)
      return error(child(r, "encoding").path)
             << "unsupported encoding '" << printable(*encoding)
             << "' (expected 'BF16', 'F16', or 'Q8_0' / 'Q4_0' on the "
                "decoder_stack)";
    // Q8_0 / Q4_0 name the recipe of the GGUF llama-quantize makes (sgc
    // compile --weights): it picks every tensor's storage, so it is named
    // once, on the decoder stack.
    if (recipe && spec.kind != "decoder_stack")
      return error(child(r, "encoding").path)
             << "encoding '" << *encoding << "' of an object of kind '"
             << spec.kind << "' (Q8_0 and Q4_0 name the model's recipe, on "
             << "its 'decoder_stack' object)";
    // F16 matrices have kernels in the text decoder's projections and
    // embedding; the towers read BF16 only.
    if (*encoding == "F16" && spec.kind != "embedding" &&
        spec.kind != "decoder_stack")
      return error(child(r, "encoding").path)
             << "encoding 'F16' of an object of kind '" << spec.kind
             << "' (F16 is read for 'embedding' and 'decoder_stack' objects)";
    if (i > 0 && *encoding != spec.encoding)
      return error(child(r, "encoding").path)
             << "encoding '" << *encoding << "' differs from the object's "
             << "first representation's '" << spec.encoding
             << "' (one encoding per object)";
    spec.encoding = *encoding;
    if (failed(getEnum(r, "fidelity", {"canonical"}, "fidelity")))
      return failure();
  }
  graph.objects.push_back(std::move(spec));
  return success();
}

/// The checkpoint prefixes the tensor tables build names from.
LogicalResult GraphParser::resolvePrefixes() {
  TextSpec &t = graph.text;
  struct TextKind {
    StringRef kind;
    std::string *prefix;
  };
  TextKind kinds[] = {{"decoder_stack", &t.layersPrefix},
                      {"embedding", &t.embedPrefix},
                      {"final_norm", &t.finalNormPrefix}};
  for (const TextKind &k : kinds) {
    const ObjectSpec *found = nullptr;
    for (const ObjectSpec &o : graph.objects) {
      if (o.component != t.id || o.kind != k.kind)
        continue;
      if (found)
        return error(o.pos.jsonPath + ".kind", o.pos.jsonPath)
               << "a second '" << k.kind << "' object ('" << o.id
               << "') for component '" << t.id << "'";
      if (o.bindings.size() != 1)
        return error(o.pos.jsonPath + ".source_bindings", o.pos.jsonPath)
               << "a '" << k.kind
               << "' object needs exactly one source binding, got "
               << o.bindings.size();
      found = &o;
    }
    if (!found)
      return error("$.objects", "$")
             << "no object of kind '" << k.kind << "' binds component '" << t.id
             << "' (its tensor prefix names the checkpoint tensors)";
    *k.prefix = found->bindings.front().tensorPrefix;
  }

  for (OpaqueComponentSpec &c : graph.opaqueComponents) {
    const VisionFacts &facts = visionFacts(c.family);
    c.towerPrefix = facts.towerPrefix.str();
    c.adapterPrefix = facts.adapterPrefix.str();
    std::string shortestAdapter;
    for (const ObjectSpec &o : graph.objects) {
      if (o.component != c.id)
        continue;
      for (const BindingSpec &b : o.bindings) {
        StringRef prefix = b.tensorPrefix;
        if (o.kind == "perception_tower" &&
            prefix.consume_back(".encoder.layers"))
          c.towerPrefix = prefix.str();
        if (o.kind == "perception_adapter" &&
            (shortestAdapter.empty() ||
             b.tensorPrefix.size() < shortestAdapter.size()))
          shortestAdapter = b.tensorPrefix;
      }
    }
    if (!shortestAdapter.empty()) {
      StringRef adapter = shortestAdapter;
      if (!facts.adapterChild.empty())
        adapter.consume_back(("." + facts.adapterChild).str());
      c.adapterPrefix = adapter.str();
    }
    c.tensors = visionTensorNames(c);
  }
  return success();
}

/// Assigns every tensor of the family tables to the binding with the
/// longest matching prefix and compares with the declared figures.
void GraphParser::deriveFigures() {
  llvm::StringMap<BindingSpec *> byPrefix;
  for (ObjectSpec &o : graph.objects)
    for (BindingSpec &b : o.bindings)
      byPrefix.try_emplace(b.tensorPrefix, &b);
  auto attribute = [&](const std::vector<TensorSpec> &tensors) {
    for (const TensorSpec &tensor : tensors) {
      StringRef name = tensor.name;
      while (true) {
        auto it = byPrefix.find(name);
        if (it != byPrefix.end()) {
          it->second->derivedTensors += 1;
          it->second->derivedBytes += tensor.numElements() * kBF16Bytes;
          break;
        }
        size_t dot = name.rfind('.');
        if (dot == StringRef::npos)
          break;
        name = name.take_front(dot);
      }
    }
  };
  attribute(textTensors(graph.text));
  for (const OpaqueComponentSpec &c : graph.opaqueComponents)
    attribute(perceptionTensors(c, graph.text.hiddenSize));

  for (const ObjectSpec &o : graph.objects) {
    Family family = graph.text.family;
    for (const OpaqueComponentSpec &c : graph.opaqueComponents)
      if (c.id == o.component)
        family = c.family;
    for (const BindingSpec &b : o.bindings) {
      if (b.declaredTensors == b.derivedTensors &&
          b.declaredBytes == b.derivedBytes)
        continue;
      warning(b.pos) << "tensor_prefix '" << printable(b.tensorPrefix, 200)
                     << "' declares " << withCommas(b.declaredTensors)
                     << " tensors and " << withCommas(b.declaredBytes)
                     << " bytes, but the " << familyName(family)
                     << " tensor table derives " << withCommas(b.derivedTensors)
                     << " tensors and " << withCommas(b.derivedBytes)
                     << " bytes";
    }
  }
}

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

FailureOr<GraphSpec> GraphParser::parse() {
  graph.fileName = fileName.str();
  SourcePos top{"$", 1, 1};
  if (text.size() > kMaxFileBytes) {
    error(top) << "file is " << withCommas(text.size())
               << " bytes, more than the limit of " << withCommas(kMaxFileBytes)
               << " for a system_graph.json";
    return failure();
  }
  StringRef content = text;
  content.consume_front("\xEF\xBB\xBF");
  if (content.ltrim(" \t\r\n").empty()) {
    error(top) << "empty file (expected a system_graph.json object)";
    return failure();
  }

  json root;
  if (failed(readDocument(kMaxDepth, root)))
    return failure();

  Node rootNode{&root, "$"};
  if (!root.is_object()) {
    error(top) << "expected a JSON object at the top level, got "
               << describe(root);
    return failure();
  }
  if (!has(rootNode, "schema")) {
    error(top) << "missing required key 'schema' (expected schema 6)";
    return failure();
  }
  Node schema = child(rootNode, "schema");
  if (!schema->is_number_integer() && !schema->is_number_unsigned()) {
    error(schema.path) << "expected the integer 6 for schema, got "
                       << describe(*schema);
    return failure();
  }
  if (*schema != 6) {
    error(schema.path) << "unsupported schema " << schema->dump()
                       << " (expected 6)";
    return failure();
  }
  if (failed(checkObject(rootNode, {"schema", "components", "objects", "edges"},
                         {}, "the graph")))
    return failure();

  Node comps = child(rootNode, "components");
  if (failed(checkArray(comps, "components", 1, kMaxComponents)))
    return failure();
  for (size_t i = 0; i < comps->size(); ++i)
    if (failed(parseComponent(element(comps, i))))
      return failure();
  if (!haveText) {
    error(comps.path) << "no component with role 'primary_text'";
    return failure();
  }
  if (failed(checkVisionTokens()))
    return failure();

  Node objects = child(rootNode, "objects");
  if (failed(checkArray(objects, "objects", 0, kMaxObjects)))
    return failure();
  for (size_t i = 0; i < objects->size(); ++i)
    if (failed(parseObject(element(objects, i))))
      return failure();

  Node edges = child(rootNode, "edges");
  if (failed(checkArray(edges, "edges", 0, kMaxObjects)))
    return failure();
  if (!edges->empty()) {
    error(element(edges, 0).path)
        << "edges are not supported yet (the vision -> text hand-off is "
           "implied by the roles); expected an empty list";
    return failure();
  }

  if (failed(resolvePrefixes()))
    return failure();
  deriveFigures();
  for (const Completion &completion : graph.completions)
    emitRemark(makeLoc(ctx, fileName, completion.pos)) << completion.message;
  return std::move(graph);
}

FailureOr<GraphSpec> mlir::sgc::parseSystemGraph(MLIRContext *ctx,
                                                 StringRef fileName,
                                                 StringRef text,
                                                 const ImportOptions &options) {
  FailureOr<GraphSpec> graph = GraphParser(ctx, fileName, text, options).parse();
  if (failed(graph))
    return failure();
  // A decoder stack stored as Q8_0 / Q4_0 names the weights recipe.
  for (const ObjectSpec &object : graph->objects)
    if (object.encoding == "Q8_0" || object.encoding == "Q4_0")
      if (failed(applyWeightsRecipe(ctx, *graph,
                                    StringRef(object.encoding).lower())))
        return failure();
  return graph;
}
