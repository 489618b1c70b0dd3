//===- GlueEmitter.cpp - the C glue of a compiled model -------------------===//
//
// Part of sgc. Generates one C file from the module's `sg.plan` and the
// lowered functions: the ABI v1 table (lib/abi/sgc/abi.h, embedded), and per
// CPU variant the entry points that run the plan (build memref descriptors
// for weights, caches and activations, call each body in order, convert the
// logits to f32) and the dispatchers that run each kernel's rows through the
// runtime's parallel_for.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/CPULibrary.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sgc;

namespace {

const char *const kAbiHeader =
#include "compiler/Target/CPU/AbiHeader.inc"
    ;

/// The model-independent part of the glue: descriptors, plan replay, the
/// current call context, the row dispatcher.
const char *const kPrelude = R"c(
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A memref descriptor of rank <= 3 as MLIR's C interface reads it: allocated
   and aligned pointer, offset, then sizes[rank] and strides[rank] packed. */
typedef struct { int64_t w[9]; } sgc_desc;

static void sgc_fill(sgc_desc *d, const void *p, int rank, const int64_t *shape) {
  int64_t stride = 1;
  d->w[0] = d->w[1] = (int64_t)(intptr_t)p;
  d->w[2] = 0;
  for (int i = rank - 1; i >= 0; --i) {
    d->w[3 + i] = shape[i];
    d->w[3 + rank + i] = stride;
    stride *= shape[i];
  }
}

/* What a plan step passes: the prompt tokens, the start position, a weight,
   a layer's K or V cache, or an activation buffer (temp). */
enum { SGC_REF_TOKENS, SGC_REF_POS0, SGC_REF_WEIGHT, SGC_REF_K, SGC_REF_V, SGC_REF_TEMP };
typedef struct { uint8_t kind; int32_t index; } sgc_ref;
/* An activation buffer: shape[i] < 0 stands for the chunk's token count. */
typedef struct { int32_t rank, elem_bytes; int64_t shape[3]; } sgc_temp_type;
typedef struct { int32_t callee, num_args; sgc_ref args[SGC_MAX_ARGS]; } sgc_step;
typedef struct {
  int32_t num_steps; const sgc_step *steps;
  int32_t num_temps; const sgc_temp_type *temps;
  const int64_t *offsets; /* of each temp in the workspace (sg-plan-memory) */
  int32_t logits_temp; int64_t max_tokens;
} sgc_plan;
typedef void (*sgc_callee_fn)(sgc_desc *args, int64_t pos0);

/* The context of the call in progress on this thread; kernels reach the
   runtime's threads through it. */
static _Thread_local const sgc_abi_call_context_t *sgc_current;

/* Runs rows [0, rows) of a kernel, split over the runtime's threads;
   `range` calls the kernel on a row range with the arguments in `args`. */
static void sgc_run_rows(int64_t rows, sgc_abi_range_fn_t range, void **args) {
  const sgc_abi_call_context_t *ctx = sgc_current;
  if (ctx && ctx->num_threads > 1 && rows >= 64)
    ctx->parallel_for(ctx->runtime_state, rows, range, args);
  else
    range(args, 0, rows);
}

static float sgc_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
)c";

/// The model-specific runner, emitted after the tables.
const char *const kRunner = R"c(
static int32_t sgc_run_plan(const sgc_plan *plan, const sgc_callee_fn *callees,
                            const sgc_abi_call_context_t *ctx,
                            const int32_t *tokens, int64_t n, int64_t pos0,
                            float *logits_out, int32_t all_positions) {
  if (!ctx || ctx->struct_size < sizeof(sgc_abi_call_context_t) ||
      ctx->num_weights != SGC_NUM_TENSORS || ctx->num_layers != SGC_NUM_LAYERS ||
      !ctx->weights || (SGC_NUM_LAYERS && (!ctx->k_cache || !ctx->v_cache)) ||
      ctx->workspace_bytes < SGC_WORKSPACE_BYTES ||
      (SGC_WORKSPACE_BYTES && !ctx->workspace))
    return SGC_ABI_ERROR_BAD_CONTEXT;
  if (!tokens || !logits_out || n < 1 || n > plan->max_tokens || pos0 < 0 ||
      pos0 + n > SGC_CONTEXT)
    return SGC_ABI_ERROR_INVALID_ARGUMENT;
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= SGC_VOCAB)
      return SGC_ABI_ERROR_INVALID_ARGUMENT;

  /* Activations live in the workspace at the offsets sg-plan-memory chose. */
  void *temps[SGC_MAX_TEMPS] = {0};
  for (int32_t t = 0; t < plan->num_temps; ++t)
    temps[t] = (char *)ctx->workspace + plan->offsets[t];
  {
    sgc_current = ctx;
    for (int32_t s = 0; s < plan->num_steps; ++s) {
      const sgc_step *step = &plan->steps[s];
      sgc_desc args[SGC_MAX_ARGS];
      for (int32_t a = 0; a < step->num_args; ++a) {
        sgc_ref ref = step->args[a];
        int64_t shape[3];
        switch (ref.kind) {
        case SGC_REF_TOKENS:
          shape[0] = n;
          sgc_fill(&args[a], tokens, 1, shape);
          break;
        case SGC_REF_WEIGHT: {
          const sgc_abi_tensor_t *t = &sgc_tensors[ref.index];
          sgc_fill(&args[a], ctx->weights[ref.index], (int)t->rank, t->shape);
          break;
        }
        case SGC_REF_K:
        case SGC_REF_V: {
          const sgc_abi_kv_layer_t *l = &sgc_kv_layers[ref.index];
          shape[0] = l->slots; shape[1] = l->kv_heads; shape[2] = l->head_dim;
          sgc_fill(&args[a], ref.kind == SGC_REF_K ? ctx->k_cache[ref.index]
                                                  : ctx->v_cache[ref.index], 3, shape);
          break;
        }
        case SGC_REF_TEMP: {
          const sgc_temp_type *type = &plan->temps[ref.index];
          for (int i = 0; i < type->rank; ++i)
            shape[i] = type->shape[i] < 0 ? n : type->shape[i];
          sgc_fill(&args[a], temps[ref.index], type->rank, shape);
          break;
        }
        default: /* pos0 is passed by value */
          break;
        }
      }
      callees[step->callee](args, pos0);
    }
    sgc_current = 0;

    /* Logits to f32: the last row, or every row. */
    const sgc_temp_type *lt = &plan->temps[plan->logits_temp];
    const void *logits = temps[plan->logits_temp];
    int64_t first = all_positions ? 0 : n - 1;
    for (int64_t r = first; r < n; ++r)
      for (int64_t i = 0; i < SGC_VOCAB; ++i)
        logits_out[(r - first) * SGC_VOCAB + i] =
            lt->elem_bytes == 2
                ? sgc_bf16_to_f32(((const uint16_t *)logits)[r * SGC_VOCAB + i])
                : ((const float *)logits)[r * SGC_VOCAB + i];
  }
  return SGC_ABI_OK;
}
)c";

/// Bytes of one element of `t`.
unsigned elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

std::string abiDtype(Type t) {
  if (t.isBF16())
    return "SGC_ABI_DTYPE_BF16";
  if (t.isF32())
    return "SGC_ABI_DTYPE_F32";
  if (t.isF16())
    return "SGC_ABI_DTYPE_F16";
  if (t.isInteger(32))
    return "SGC_ABI_DTYPE_I32";
  return "SGC_ABI_DTYPE_INVALID";
}

std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// A plan variant (decode or prefill) resolved against the lowered module.
struct PlanInfo {
  std::string name;
  DictionaryAttr attr;
  /// Distinct callees in first-use order.
  SmallVector<std::string> callees;
  /// Per step: callee index and every argument (call args, then outputs).
  SmallVector<std::pair<unsigned, SmallVector<std::string>>> steps;
};

/// The glue writer: one instance per module.
class Glue {
public:
  Glue(ModuleOp module, DictionaryAttr plan, ArrayRef<CPUVariant> variants,
       llvm::raw_ostream &os)
      : module(module), plan(plan), variants(variants), os(os) {}

  LogicalResult emit();

private:
  LogicalResult resolvePlan(PlanInfo &info);
  LogicalResult emitTables();
  void emitPlanTables(const PlanInfo &info);
  LogicalResult emitRef(StringRef name, const PlanInfo &info);
  void emitVariant(const CPUVariant &variant);

  ModuleOp module;
  DictionaryAttr plan;
  ArrayRef<CPUVariant> variants;
  llvm::raw_ostream &os;
  ArrayAttr tensors, kv;
  int64_t vocab = 0, context = 0, maxChunk = 1, workspaceBytes = 0;
  Type logitsType;
  SmallVector<PlanInfo, 2> plans;
  size_t maxArgs = 1, maxTemps = 1;
};

LogicalResult Glue::resolvePlan(PlanInfo &info) {
  auto steps = cast<ArrayAttr>(info.attr.get("steps"));
  for (auto [stepIndex, stepAttr] : llvm::enumerate(steps)) {
    auto step = cast<DictionaryAttr>(stepAttr);
    std::string callee =
        cast<FlatSymbolRefAttr>(step.get("callee")).getValue().str();
    auto func = module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_" + callee);
    auto slots = func ? func->getAttrOfType<ArrayAttr>("sg.result_slots")
                      : ArrayAttr();
    if (!func || !slots)
      return emitError(module.getLoc(), "emit: no lowered body '")
             << callee << "' for step " << stepIndex << " of " << info.name;
    auto args = cast<ArrayAttr>(step.get("args"));
    auto results = cast<ArrayAttr>(step.get("results"));
    SmallVector<std::string> refs;
    for (Attribute a : args)
      refs.push_back(cast<StringAttr>(a).str());
    for (auto [slotAttr, resultAttr] : llvm::zip_equal(slots, results)) {
      int64_t slot = cast<IntegerAttr>(slotAttr).getInt();
      StringRef name = cast<StringAttr>(resultAttr).getValue();
      if (slot < 0) {
        refs.push_back(name.str());
        continue;
      }
      // Updated in place: must be the cache the step passed in that slot.
      if (slot >= static_cast<int64_t>(args.size()) ||
          cast<StringAttr>(args[slot]).getValue() != name)
        return emitError(module.getLoc(), "emit: result '")
               << name << "' of '" << callee
               << "' is not updated in place in the plan";
    }
    if (refs.size() != func.getFunctionType().getNumParams())
      return emitError(module.getLoc(), "emit: step ")
             << stepIndex << " of " << info.name << " passes " << refs.size()
             << " values to '" << callee << "', which takes "
             << func.getFunctionType().getNumParams();
    auto *it = llvm::find(info.callees, callee);
    unsigned calleeIndex = it - info.callees.begin();
    if (it == info.callees.end())
      info.callees.push_back(callee);
    maxArgs = std::max(maxArgs, refs.size());
    info.steps.push_back({calleeIndex, std::move(refs)});
  }
  maxTemps = std::max<size_t>(maxTemps,
                              cast<ArrayAttr>(info.attr.get("temps")).size());
  return success();
}

LogicalResult Glue::emitRef(StringRef name, const PlanInfo &info) {
  unsigned index = 0;
  auto emitKind = [&](StringRef kind, unsigned i) {
    os << "{" << kind << ", " << i << "}";
    return success();
  };
  if (name == "tokens")
    return emitKind("SGC_REF_TOKENS", 0);
  if (name == "pos0")
    return emitKind("SGC_REF_POS0", 0);
  StringRef rest = name.drop_front();
  if (!rest.getAsInteger(10, index)) {
    if (name[0] == 'w' && index < tensors.size())
      return emitKind("SGC_REF_WEIGHT", index);
    if (name[0] == 'k' && index < kv.size())
      return emitKind("SGC_REF_K", index);
    if (name[0] == 'v' && index < kv.size())
      return emitKind("SGC_REF_V", index);
    if (name[0] == 't' &&
        index < cast<ArrayAttr>(info.attr.get("temps")).size())
      return emitKind("SGC_REF_TEMP", index);
  }
  return emitError(module.getLoc(), "emit: unknown plan value '")
         << name << "' in " << info.name;
}

void Glue::emitPlanTables(const PlanInfo &info) {
  auto temps = cast<ArrayAttr>(info.attr.get("temps"));
  os << "static const sgc_temp_type sgc_" << info.name << "_temps[] = {\n";
  for (Attribute attr : temps) {
    auto type = cast<RankedTensorType>(cast<TypeAttr>(attr).getValue());
    os << "  {" << type.getRank() << ", " << elementBytes(type.getElementType())
       << ", {";
    for (auto [i, d] : llvm::enumerate(type.getShape()))
      os << (i ? ", " : "") << (ShapedType::isDynamic(d) ? -1 : d);
    os << "}},\n";
  }
  os << "};\nstatic const sgc_step sgc_" << info.name << "_steps[] = {\n";
  for (const auto &[callee, refs] : info.steps) {
    os << "  {" << callee << ", " << refs.size() << ", {";
    for (auto [i, ref] : llvm::enumerate(refs)) {
      os << (i ? ", " : "");
      (void)emitRef(ref, info);
    }
    os << "}},\n";
  }
  StringRef logits = cast<StringAttr>(info.attr.get("logits")).getValue();
  os << "};\nstatic const int64_t sgc_" << info.name << "_offsets[] = {";
  if (auto offsets = info.attr.getAs<ArrayAttr>("offsets"))
    for (auto [i, o] : llvm::enumerate(offsets))
      os << (i ? ", " : "") << cast<IntegerAttr>(o).getInt();
  else
    os << "0";
  os << "};\nstatic const sgc_plan sgc_" << info.name << "_plan = {"
     << info.steps.size() << ", sgc_" << info.name << "_steps, "
     << temps.size() << ", sgc_" << info.name << "_temps, sgc_" << info.name
     << "_offsets, "
     << logits.drop_front() << ", "
     << cast<IntegerAttr>(info.attr.get("max_tokens")).getInt() << "};\n\n";
}

void Glue::emitVariant(const CPUVariant &variant) {
  os << "#define SGC_V(name) " << variant.prefix << "##name\n";
  // Prototypes of the lowered functions; definitions of the dispatchers.
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    StringRef name = func.getName();
    if (!name.starts_with("_mlir_ciface_"))
      continue;
    if (func.isExternal()) {
      auto kernel = func->getAttrOfType<FlatSymbolRefAttr>("sg.dispatch");
      auto rows = func->getAttrOfType<IntegerAttr>("sg.rows");
      if (!kernel || !rows)
        continue;
      // The kernel takes the dispatcher's arguments and a row range.
      unsigned n = func.getFunctionType().getNumParams();
      os << "extern void SGC_V(_mlir_ciface_" << kernel.getValue() << ")(";
      for (unsigned i = 0; i < n; ++i)
        os << "void *, ";
      os << "int64_t, int64_t);\n"
         << "static void SGC_V(range_" << kernel.getValue()
         << ")(void *ctx, int64_t begin, int64_t end) {\n"
         << "  void **a = (void **)ctx;\n  SGC_V(_mlir_ciface_"
         << kernel.getValue() << ")(";
      for (unsigned i = 0; i < n; ++i)
        os << "a[" << i << "], ";
      os << "begin, end);\n}\nvoid SGC_V(" << name << ")(";
      for (unsigned i = 0; i < n; ++i)
        os << (i ? ", " : "") << "void *a" << i;
      os << ") {\n  void *args[] = {";
      for (unsigned i = 0; i < n; ++i)
        os << (i ? ", " : "") << "a" << i;
      os << "};\n  sgc_run_rows(" << rows.getInt() << ", SGC_V(range_"
         << kernel.getValue() << "), args);\n}\n";
      continue;
    }
    std::string params;
    for (Type t : func.getFunctionType().getParams())
      params += std::string(params.empty() ? "" : ", ") +
                (isa<LLVM::LLVMPointerType>(t) ? "void *" : "int64_t");
    os << "extern void SGC_V(" << name << ")(" << params << ");\n";
  }
  // One adapter per callee: descriptors by address, pos0 by value.
  for (const PlanInfo &info : plans) {
    for (auto [index, callee] : llvm::enumerate(info.callees)) {
      const auto &refs = llvm::find_if(info.steps, [&](const auto &step) {
                           return step.first == index;
                         })->second;
      os << "static void SGC_V(" << info.name << "_call" << index
         << ")(sgc_desc *a, int64_t pos0) {\n  (void)pos0;\n  SGC_V(_mlir_ciface_"
         << callee << ")(";
      for (auto [i, ref] : llvm::enumerate(refs))
        os << (i ? ", " : "")
           << (ref == "pos0" ? std::string("pos0") : "&a[" + std::to_string(i) + "]");
      os << ");\n}\n";
    }
    os << "static const sgc_callee_fn SGC_V(" << info.name << "_callees)[] = {";
    for (size_t i = 0; i < info.callees.size(); ++i)
      os << (i ? ", " : "") << "SGC_V(" << info.name << "_call" << i << ")";
    os << "};\n";
  }
  os << "static int32_t SGC_V(decode)(const sgc_abi_call_context_t *ctx, "
        "int32_t token, int64_t pos, float *logits_out) {\n"
        "  return sgc_run_plan(&sgc_decode_plan, SGC_V(decode_callees), ctx, "
        "&token, 1, pos, logits_out, 0);\n}\n"
        "static int32_t SGC_V(prefill)(const sgc_abi_call_context_t *ctx, "
        "const int32_t *tokens, int64_t n, int64_t pos0, float *logits_out, "
        "int32_t all_positions) {\n"
        "  return sgc_run_plan(&sgc_prefill_plan, SGC_V(prefill_callees), ctx, "
        "tokens, n, pos0, logits_out, all_positions);\n}\n"
        "#undef SGC_V\n\n";
}

LogicalResult Glue::emitTables() {
  os << "static const sgc_abi_tensor_t sgc_tensors[] = {\n";
  for (Attribute attr : tensors) {
    auto entry = cast<DictionaryAttr>(attr);
    auto type = cast<RankedTensorType>(cast<TypeAttr>(entry.get("type")).getValue());
    StringRef fill = cast<StringAttr>(entry.get("fill")).getValue();
    auto object = entry.getAs<StringAttr>("object");
    int64_t bytes = elementBytes(type.getElementType()) * type.getNumElements();
    os << "  {" << cString(cast<StringAttr>(entry.get("name")).getValue()) << ", "
       << abiDtype(type.getElementType()) << ", " << type.getRank() << ", {";
    for (auto [i, dim] : llvm::enumerate(type.getShape()))
      os << (i ? ", " : "") << dim;
    os << "}, " << bytes << "ull, " << (object ? cString(object.getValue()) : "0")
       << ", "
       << (fill == "ones"    ? "SGC_ABI_FILL_ONES"
           : fill == "zeros" ? "SGC_ABI_FILL_ZEROS"
                             : "SGC_ABI_FILL_RANDOM")
       << ", 0, 0},\n";
  }
  os << "};\n\nstatic const sgc_abi_kv_layer_t sgc_kv_layers[] = {\n";
  for (Attribute attr : kv) {
    auto layer = cast<DictionaryAttr>(attr);
    auto get = [&](StringRef key) {
      return cast<IntegerAttr>(layer.get(key)).getInt();
    };
    if (get("head_dim") != get("v_head_dim"))
      return emitError(module.getLoc(),
                       "emit: ABI v1 needs K and V caches of one head width");
    os << "  {" << (cast<StringAttr>(layer.get("kind")).getValue() == "ring"
                        ? "SGC_ABI_KV_RING"
                        : "SGC_ABI_KV_FULL")
       << ", " << abiDtype(logitsType) << ", " << get("slots") << ", "
       << get("kv_heads") << ", " << get("head_dim") << ", "
       << (layer.get("v_from_k") ? 1 : 0) << ", 1, " << get("bytes_per_token")
       << "ull, 0},\n";
  }
  if (kv.empty())
    os << "  {0},\n";
  os << "};\n\n";
  for (const PlanInfo &info : plans)
    emitPlanTables(info);
  os << kRunner << "\n";
  for (const CPUVariant &variant : variants)
    emitVariant(variant);

  auto modelId = module->getAttrOfType<StringAttr>("sg.model_id");
  auto family = module->getAttrOfType<StringAttr>("sg.family");
  os << "static const sgc_abi_cpu_variant_t sgc_variants[] = {\n";
  for (const CPUVariant &variant : variants)
    os << "  {" << cString(variant.name) << ", " << variant.requiredFeatures
       << "ull, " << variant.prefix << "prefill, " << variant.prefix
       << "decode, {0}},\n";
  os << "};\n\n"
     << "static const sgc_model_v1_t sgc_model = {\n"
     << "  .header = {SGC_ABI_MAGIC, SGC_ABI_VERSION_MAJOR, "
        "SGC_ABI_VERSION_MINOR, sizeof(sgc_model_v1_t)},\n"
     << "  .model_id = " << cString(modelId ? modelId.getValue() : "sg-module")
     << ",\n  .target = \"cpu\",\n  .family = "
     << cString(family ? family.getValue() : "unknown")
     << ",\n  .producer = \"sgc 0.1 (LLVM/MLIR 22.1)\",\n"
     << "  .device = SGC_ABI_DEVICE_CPU,\n"
     << "  .vocab_size = SGC_VOCAB,\n  .context_length = SGC_CONTEXT,\n"
     << "  .max_prefill_chunk = " << maxChunk << ",\n"
     << "  .bos_token_id = -1, .eos_token_id = -1, .pad_token_id = -1,\n"
     << "  .num_tensors = SGC_NUM_TENSORS, .tensors = sgc_tensors,\n"
     << "  .num_layers = SGC_NUM_LAYERS, .kv_layers = sgc_kv_layers,\n"
     << "  .workspace_bytes = SGC_WORKSPACE_BYTES,\n"
     << "  .num_cpu_variants = " << variants.size()
     << ", .cpu_variants = sgc_variants,\n};\n\n"
     << "SGC_ABI_EXPORT const sgc_abi_header_t *\n"
     << "sgc_model_query(uint32_t runtime_major, uint32_t runtime_minor) {\n"
     << "  (void)runtime_major;\n  (void)runtime_minor;\n"
     << "  return &sgc_model.header;\n}\n";
  return success();
}

LogicalResult Glue::emit() {
  tensors = plan.getAs<ArrayAttr>("tensors");
  kv = plan.getAs<ArrayAttr>("kv");
  auto variantPlans = plan.getAs<DictionaryAttr>("variants");
  if (!tensors || !variantPlans)
    return emitError(module.getLoc(), "emit: malformed sg.plan");
  if (!kv)
    kv = ArrayAttr::get(module.getContext(), {});
  for (StringRef name : {"decode", "prefill"}) {
    auto attr = variantPlans.getAs<DictionaryAttr>(name);
    if (!attr)
      return emitError(module.getLoc(), "emit: the plan has no '")
             << name << "' variant";
    plans.push_back(PlanInfo{name.str(), attr, {}, {}});
    if (failed(resolvePlan(plans.back())))
      return failure();
  }
  // The logits' type gives the vocabulary and the compute dtype.
  DictionaryAttr decode = plans[0].attr;
  StringRef logits = decode.getAs<StringAttr>("logits").getValue();
  unsigned index = 0;
  auto temps = decode.getAs<ArrayAttr>("temps");
  if (logits.drop_front().getAsInteger(10, index) || index >= temps.size())
    return emitError(module.getLoc(), "emit: no logits in the decode plan");
  auto logitsTensor =
      cast<RankedTensorType>(cast<TypeAttr>(temps[index]).getValue());
  vocab = logitsTensor.getShape().back();
  logitsType = logitsTensor.getElementType();
  maxChunk = plans[1].attr.getAs<IntegerAttr>("max_tokens").getInt();
  auto workspaceAttr = plan.getAs<IntegerAttr>("workspace_bytes");
  if (!workspaceAttr)
    return emitError(module.getLoc(),
                     "emit: the plan has no workspace (run sg-plan-memory)");
  workspaceBytes = workspaceAttr.getInt();
  auto contextAttr = module->getAttrOfType<IntegerAttr>("sg.context_length");
  context = contextAttr ? contextAttr.getInt() : 0;
  if (auto planContext = plan.getAs<IntegerAttr>("context_length"))
    context = std::max(context, planContext.getInt());
  if (context <= 0)
    context = INT32_MAX;

  os << "/* Generated by sgc: the runtime glue of one compiled model. */\n"
     << kAbiHeader << "\n#define SGC_MAX_ARGS " << maxArgs
     << "\n#define SGC_MAX_TEMPS " << maxTemps << "\n#define SGC_NUM_TENSORS "
     << tensors.size() << "u\n#define SGC_NUM_LAYERS " << kv.size()
     << "u\n#define SGC_VOCAB " << vocab << "\n#define SGC_CONTEXT " << context
     << "\n#define SGC_WORKSPACE_BYTES " << workspaceBytes << "ull"
     << "\n"
     << kPrelude << "\n";
  return emitTables();
}

} // namespace

FailureOr<std::string> mlir::sgc::emitCPUGlue(ModuleOp module,
                                             ArrayRef<CPUVariant> variants) {
  auto plan = module->getAttrOfType<DictionaryAttr>("sg.plan");
  if (!plan)
    return emitError(module.getLoc(),
                     "emit: the module has no sg.plan (compile a graph with "
                     "@forward through the plan and lower phases)");
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(Glue(module, plan, variants, os).emit()))
    return failure();
  return text;
}
