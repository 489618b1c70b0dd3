//===- PlanSerializer.cpp - plan IR -> the ABI tables ---------------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/ABI/PlanSerializer.h"
#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/SG/IR/SGDialect.h"
#include "lib/abi/sgc/abi.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// The safetensors name of an element type, as abi.h's SGC_ABI_DTYPES rows
/// spell it, or "INVALID" for a type that has no row.
StringRef dtypeName(Type t) {
  if (auto quant = dyn_cast<sg::QuantType>(t))
    return quant.getEncoding();
  StringRef name = t.isBF16()          ? "BF16"
                   : t.isF16()         ? "F16"
                   : t.isF32()         ? "F32"
                   : t.isF64()         ? "F64"
                   : t.isInteger(8)    ? "I8"
                   : t.isInteger(16)   ? "I16"
                   : t.isInteger(32)   ? "I32"
                   : t.isInteger(64)   ? "I64"
                   : isa<Float8E4M3FNType>(t) ? "F8_E4M3"
                   : isa<Float8E5M2Type>(t) ? "F8_E5M2"
                                       : "INVALID";
#define SGC_KNOWN_DTYPE(row, code, blockBytes, blockElements)                 \
  if (name == #row)                                                           \
    return name;
  SGC_ABI_DTYPES(SGC_KNOWN_DTYPE)
#undef SGC_KNOWN_DTYPE
  return "INVALID";
}

std::string abiDtype(Type t) { return ("SGC_ABI_DTYPE_" + dtypeName(t)).str(); }

unsigned elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

const char *fillName(plan::Fill fill) {
  switch (fill) {
  case plan::Fill::ones:
    return "SGC_ABI_FILL_ONES";
  case plan::Fill::zeros:
    return "SGC_ABI_FILL_ZEROS";
  case plan::Fill::random:
    break;
  }
  return "SGC_ABI_FILL_RANDOM";
}

const char *phaseName(plan::EntryKind kind) {
  switch (kind) {
  case plan::EntryKind::prefill:
    return "SGC_ABI_PHASE_PREFILL";
  case plan::EntryKind::decode:
    return "SGC_ABI_PHASE_DECODE";
  case plan::EntryKind::decode_batch:
    return "SGC_ABI_PHASE_DECODE_BATCH";
  case plan::EntryKind::encode_image:
    break;
  }
  return "SGC_ABI_PHASE_ENCODE_IMAGE";
}

/// Operand kinds as the ABI numbers them (abi.h, SGC_ABI_OPERAND_*).
enum OperandKind : unsigned {
  kTokens = 0,
  kPosition = 1,
  kWeight = 2,
  kKCache = 3,
  kVCache = 4,
  kWorkspace = 5,
  kPixels = 6,
  kPatchPositions = 7,
  kImageEmbeds = 8,
  kImageBlocks = 9
};

/// Index of every symbol of op type `OpT` in the module, in order.
template <typename OpT>
llvm::StringMap<unsigned> indexSymbols(ModuleOp module) {
  llvm::StringMap<unsigned> index;
  for (OpT op : module.getOps<OpT>())
    index.try_emplace(op.getSymName(), index.size());
  return index;
}

} // namespace

std::string PlanSerializer::cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

FailureOr<PlanSerializer> PlanSerializer::read(ModuleOp module) {
  PlanSerializer s(module);
  if (failed(s.readEntries()))
    return failure();
  return s;
}

LogicalResult PlanSerializer::readEntries() {
  llvm::StringMap<unsigned> tensorIndex = indexSymbols<plan::TensorOp>(module);
  llvm::StringMap<unsigned> layerIndex = indexSymbols<plan::KVLayerOp>(module);
  for (plan::KVLayerOp layer : module.getOps<plan::KVLayerOp>())
    if (layer.getHeadDim() != layer.getVHeadDim())
      return layer.emitError("emit: ABI 2.0 needs K and V caches of one head "
                             "width, got ")
             << layer.getHeadDim() << " and " << layer.getVHeadDim();
  llvm::raw_string_ostream ops(operands), sts(steps), phs(phases),
      best(phaseArgmax);

  // One operand record; returns its kind. An encode_image entry's two
  // arguments are its pixels and patch positions.
  auto writeOperand = [&](llvm::raw_ostream &os, Value v,
                          plan::EntryOp entry) -> FailureOr<unsigned> {
    unsigned kind = kWorkspace, index = 0;
    int64_t offset = 0;
    bool image = entry && entry.getKind() == plan::EntryKind::encode_image;
    bool batched = entry && entry.getKind() == plan::EntryKind::decode_batch;
    auto arg = dyn_cast<BlockArgument>(v);
    if (batched && arg && arg.getOwner() == &entry.getBlock() &&
        arg.getArgNumber() > 0) {
      // Row r's position: offset r (abi.h, SGC_ABI_PHASE_DECODE_BATCH).
      kind = kPosition;
      offset = arg.getArgNumber() - 1;
    } else if (entry && v == entry.getBlock().getArgument(0)) {
      kind = image ? kPixels : kTokens;
    } else if (entry && v == entry.getBlock().getArgument(1)) {
      kind = image ? kPatchPositions : kPosition;
    } else if (entry && entry.getBlock().getNumArguments() == 4 &&
               v == entry.getBlock().getArgument(2)) {
      kind = kImageEmbeds;
    } else if (entry && entry.getBlock().getNumArguments() == 4 &&
               v == entry.getBlock().getArgument(3)) {
      kind = kImageBlocks;
    } else if (auto weight = v.getDefiningOp<plan::WeightOp>()) {
      kind = kWeight;
      index = tensorIndex.lookup(weight.getTensor());
    } else if (auto cache = v.getDefiningOp<plan::KVCacheOp>()) {
      kind = cache.getHalf() == plan::CacheHalf::key ? kKCache : kVCache;
      index = layerIndex.lookup(cache.getLayer());
      offset = cache.getRow().value_or(0);
    } else if (auto alloc = v.getDefiningOp<plan::AllocOp>()) {
      if (!alloc.getOffset())
        return alloc.emitError("emit: the buffer has no workspace offset "
                               "(run sg-plan-memory)");
      offset = *alloc.getOffset();
    } else {
      return emitError(v.getLoc(), "emit: a step operand the ABI cannot name");
    }
    static const char *const kindNames[] = {
        "SGC_ABI_OPERAND_TOKENS",  "SGC_ABI_OPERAND_POSITION",
        "SGC_ABI_OPERAND_WEIGHT",  "SGC_ABI_OPERAND_K_CACHE",
        "SGC_ABI_OPERAND_V_CACHE", "SGC_ABI_OPERAND_WORKSPACE",
        "SGC_ABI_OPERAND_PIXELS",  "SGC_ABI_OPERAND_PATCH_POSITIONS",
        "SGC_ABI_OPERAND_IMAGE_EMBEDS", "SGC_ABI_OPERAND_IMAGE_BLOCKS"};
    os << "{" << kindNames[kind] << ", " << index << ", " << offset << "ull, ";
    auto buffer = dyn_cast<plan::BufferType>(v.getType());
    if (kind >= kWorkspace) {
      ArrayRef<int64_t> shape = buffer.getShape();
      if (shape.empty() || shape.size() > 4)
        return emitError(v.getLoc(), "emit: workspace buffers have rank 1..4");
      os << abiDtype(buffer.getElementType()) << ", " << shape.size() << ", {";
      for (auto [i, d] : llvm::enumerate(shape))
        os << (i ? ", " : "") << (ShapedType::isDynamic(d) ? -1 : d);
      os << "}}";
    } else {
      os << "0, 0, {0}}";
    }
    return kind;
  };

  auto stepFlags = [](plan::StepOpInterface call, plan::LaunchOp launch) {
    std::string flags;
    auto add = [&](StringRef flag) {
      flags += (flags.empty() ? "" : " | ") + flag.str();
    };
    if (call.isRowwise())
      add("SGC_ABI_STEP_ROWWISE");
    if (std::optional<uint64_t> dim =
            launch ? launch.getTokenGridDim() : std::nullopt)
      add(*dim == 0 ? "SGC_ABI_STEP_GRID_TOKENS_X"
                    : "SGC_ABI_STEP_GRID_TOKENS_Y");
    return flags.empty() ? std::string("0") : flags;
  };
  // A launch's grid or block as a C initializer; zeros for a function call.
  auto dims = [](ArrayRef<int64_t> d) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "{";
    for (int i = 0; i < 3; ++i)
      os << (i ? ", " : "") << (d.size() == 3 ? d[i] : 0);
    os << "}";
    return s;
  };
  for (plan::EntryOp entry : module.getOps<plan::EntryOp>()) {
    if (!entry.getWorkspace())
      return entry.emitError("emit: the entry has no workspace (run "
                             "sg-plan-memory)");
    workspace = std::max(workspace, static_cast<int64_t>(*entry.getWorkspace()));
    if (entry.getKind() == plan::EntryKind::prefill)
      maxPrefillChunk = static_cast<int64_t>(entry.getMaxTokens());
    size_t firstStep = numSteps;
    for (plan::StepOpInterface call :
         entry.getBlock().getOps<plan::StepOpInterface>()) {
      auto launch = dyn_cast<plan::LaunchOp>(call.getOperation());
      // The operands: the inputs, then the outputs not updated in place.
      SmallVector<Value> values(call.getIns());
      for (Value out : call.getOuts())
        if (!llvm::is_contained(call.getIns(), out))
          values.push_back(out);
      PlanFunction fn{call.getCalleeAttr().getLeafReference().str(), {}};
      size_t firstOperand = numOperands;
      for (Value v : values) {
        ops << "  ";
        FailureOr<unsigned> kind =
            writeOperand(ops, v, entry);
        if (failed(kind))
          return failure();
        ops << ",\n";
        fn.operandKinds.push_back(*kind);
        ++numOperands;
      }
      auto *it = llvm::find_if(functions_, [&](const PlanFunction &f) {
        return f.name == fn.name;
      });
      // Calls may pass different buffers (a K or a V cache, a weight or a
      // workspace row); only where the position goes must agree, as it is
      // passed by value on the CPU.
      auto positions = [](ArrayRef<unsigned> kinds) {
        SmallVector<bool> p;
        for (unsigned k : kinds)
          p.push_back(k == kPosition);
        return p;
      };
      if (it != functions_.end() &&
          positions(it->operandKinds) != positions(fn.operandKinds))
        return call.emitError("emit: '")
               << fn.name << "' is called with operands of other kinds";
      size_t function = it - functions_.begin();
      if (it == functions_.end())
        functions_.push_back(std::move(fn));
      sts << "  {" << function << ", " << firstOperand << ", " << values.size()
          << ", "
          << (call.getLayer() ? static_cast<int64_t>(*call.getLayer()) : -1)
          << ", " << dims(launch ? launch.getGrid() : ArrayRef<int64_t>())
          << ", " << dims(launch ? launch.getBlock() : ArrayRef<int64_t>())
          << ", " << (launch ? launch.getDynamicShared() : 0) << ", "
          << stepFlags(call, launch) << "},\n";
      ++numSteps;
    }
    auto ret = cast<plan::ReturnOp>(entry.getBlock().getTerminator());
    auto logitsType = ret.getLogits().getType();
    Type element = logitsType.getElementType();
    if (!element.isBF16() && !element.isF32())
      return ret.emitError("emit: logits must be bf16 or f32");
    if (entry.getKind() == plan::EntryKind::decode)
      vocab = logitsType.getShape().back();
    if (entry.getKind() == plan::EntryKind::encode_image)
      imageSoftTokens = logitsType.getShape().front();
    phs << "  {" << phaseName(entry.getKind()) << ", " << firstStep << ", "
        << numSteps - firstStep << ", 0, " << entry.getMaxTokens() << ", ";
    if (failed(writeOperand(phs, ret.getLogits(), plan::EntryOp())))
      return failure();
    phs << "},\n";
    best << "  ";
    if (Value argmax = ret.getArgmax()) {
      anyArgmax = true;
      if (failed(writeOperand(best, argmax, plan::EntryOp())))
        return failure();
    } else {
      best << "{0}";
    }
    best << ",\n";
    ++numPhases;
  }
  if (numPhases == 0)
    return emitError(module.getLoc(), "emit: the module has no plan.entry "
                                      "(compile a graph with @forward "
                                      "through the plan phase)");
  if (vocab <= 0)
    return emitError(module.getLoc(), "emit: the plan has no decode entry");

  MLIRContext *ctx = module.getContext();
  if (auto attr = plan::PlanDialect::ContextLengthAttrHelper(ctx).getAttr(module))
    context = attr.getInt();
  else if (auto attr = sg::SGDialect::ContextLengthAttrHelper(ctx).getAttr(module))
    context = attr.getInt();
  if (context <= 0)
    context = INT32_MAX;
  return success();
}

void PlanSerializer::writeTables(llvm::raw_ostream &os) const {
  // Alternative names first: the tensor table points at them.
  unsigned t = 0;
  for (plan::TensorOp tensor : module.getOps<plan::TensorOp>()) {
    if (ArrayAttr alt = tensor.getAltAttr()) {
      os << "static const char *const sgc_alt_names_" << t << "[] = {";
      for (auto [i, name] : llvm::enumerate(alt.getAsValueRange<StringAttr>()))
        os << (i ? ", " : "") << cString(name);
      os << "};\n";
    }
    ++t;
  }
  os << "static const sgc_abi_tensor_t sgc_tensors[] = {\n";
  t = 0;
  for (plan::TensorOp tensor : module.getOps<plan::TensorOp>()) {
    RankedTensorType type = tensor.getTensorType();
    int64_t bytes = sg::storageBytes(type);
    os << "  {" << cString(tensor.getSymName()) << ", ";
    if (ArrayAttr alt = tensor.getAltAttr())
      os << "sgc_alt_names_" << t << ", " << alt.size();
    else
      os << "0, 0";
    os << ", " << abiDtype(type.getElementType()) << ", " << type.getRank()
       << ", {";
    for (auto [i, dim] : llvm::enumerate(type.getShape()))
      os << (i ? ", " : "") << dim;
    os << "}, " << bytes << "ull, "
       << (tensor.getObject() ? cString(*tensor.getObject()) : "0") << ", "
       << fillName(tensor.getFill()) << ", 0},\n";
    ++t;
  }
  if (t == 0)
    os << "  {0},\n";
  os << "};\n\nstatic const sgc_abi_kv_layer_t sgc_kv_layers[] = {\n";
  size_t layers = 0;
  for (plan::KVLayerOp layer : module.getOps<plan::KVLayerOp>()) {
    unsigned bytes = elementBytes(layer.getElementType());
    os << "  {"
       << (layer.getKind() == plan::KVKind::ring ? "SGC_ABI_KV_RING"
                                                 : "SGC_ABI_KV_FULL")
       << ", " << abiDtype(layer.getElementType()) << ", " << layer.getSlots()
       << ", " << layer.getKvHeads() << ", " << layer.getHeadDim() << ", "
       << (layer.getVFromK() ? 1 : 0) << ", "
       << (layer.getKeysFromValues() ? 0 : 1) << ", " << layer.bytesPerSlot()
       << "ull, 0},\n";
    ++layers;
  }
  if (layers == 0)
    os << "  {0},\n";
  os << "};\n\nstatic const sgc_abi_operand_t sgc_operands[] = {\n"
     << (numOperands ? operands : std::string("  {0},\n"))
     << "};\n\nstatic const sgc_abi_step_t sgc_steps[] = {\n"
     << (numSteps ? steps : std::string("  {0},\n"))
     << "};\n\nstatic const sgc_abi_phase_t sgc_phases[] = {\n"
     << phases << "};\n\n";
  if (anyArgmax)
    os << "static const sgc_abi_operand_t sgc_phase_argmax[] = {\n"
       << phaseArgmax << "};\n\n";
  if (imageSoftTokens > 0)
    writeImage(os);
}

void PlanSerializer::writeImage(llvm::raw_ostream &os) const {
  auto facts = sg::SGDialect::ImageAttrHelper(module.getContext()).getAttr(module);
  auto get = [&](StringRef key) -> int64_t {
    auto attr = facts ? dyn_cast_or_null<IntegerAttr>(facts.get(key))
                      : IntegerAttr();
    return attr ? attr.getInt() : 0;
  };
  os << "static const sgc_abi_image_t sgc_image = {" << get("image_token_id")
     << ", " << get("boi_token_id") << ", " << get("eoi_token_id") << ", "
     << get("patch_size") << ", " << get("image_size") << ", "
     << get("pooling_kernel") << ", " << imageSoftTokens << ", 0};\n\n";
}

void PlanSerializer::writeModel(llvm::raw_ostream &os, StringRef target,
                                StringRef device, StringRef variants,
                                size_t numVariants, StringRef cudaEmu) const {
  auto modelId = sg::SGDialect::ModelIdAttrHelper(module.getContext()).getAttr(module);
  auto family = sg::SGDialect::FamilyAttrHelper(module.getContext()).getAttr(module);
  size_t numTensors = llvm::range_size(module.getOps<plan::TensorOp>());
  size_t numLayers = llvm::range_size(module.getOps<plan::KVLayerOp>());
  os << "static const sgc_model_v2_t sgc_model = {\n"
     << "  .header = {SGC_ABI_MAGIC, SGC_ABI_VERSION_MAJOR, "
        "SGC_ABI_VERSION_MINOR, sizeof(sgc_model_v2_t)},\n"
     << "  .model_id = " << cString(modelId ? modelId.getValue() : "sg-module")
     << ",\n  .target = " << cString(target) << ",\n  .family = "
     << cString(family ? family.getValue() : "unknown")
     << ",\n  .producer = \"sgc 0.1 (LLVM/MLIR 22.1)\",\n"
     << "  .device = " << device << ",\n"
     << "  .vocab_size = " << vocab << ",\n  .context_length = " << context
     << ",\n  .max_prefill_chunk = " << maxPrefillChunk << ",\n"
     << "  .bos_token_id = -1, .eos_token_id = -1, .pad_token_id = -1,\n"
     << "  .num_tensors = " << numTensors << ", .tensors = sgc_tensors,\n"
     << "  .num_layers = " << numLayers << ", .kv_layers = sgc_kv_layers,\n"
     << "  .workspace_bytes = " << workspace << "ull,\n"
     << "  .num_phases = " << numPhases << ", .num_steps = " << numSteps
     << ", .num_operands = " << numOperands << ",\n"
     << "  .phases = sgc_phases, .steps = sgc_steps, .operands = "
        "sgc_operands,\n"
     << "  .num_variants = " << numVariants << ", .variants = " << variants
     << ",\n";
  if (!cudaEmu.empty())
    os << "  .cuda_emu = &" << cudaEmu << ",\n";
  if (imageSoftTokens > 0)
    os << "  .image = &sgc_image,\n";
  if (anyArgmax)
    os << "  .phase_argmax = sgc_phase_argmax,\n";
  os << "};\n\n"
     << "SGC_ABI_EXPORT const sgc_abi_header_t *\n"
     << "sgc_model_query(uint32_t runtime_major, uint32_t runtime_minor) {\n"
     << "  (void)runtime_major;\n  (void)runtime_minor;\n"
     << "  return &sgc_model.header;\n}\n";
}
