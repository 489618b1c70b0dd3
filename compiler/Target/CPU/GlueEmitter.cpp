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

/// The runtime-independent part of the glue: descriptors, the current call
/// context, the row dispatcher, bf16 conversion.
const char *const kPrelude = R"c(
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A memref descriptor as MLIR's C interface passes it (one per rank). */
typedef struct { void *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } sgc_desc1;
typedef struct { void *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } sgc_desc2;
typedef struct { void *allocated, *aligned; int64_t offset, sizes[3], strides[3]; } sgc_desc3;

static sgc_desc1 sgc_d1(const void *p, int64_t a) {
  sgc_desc1 d = {(void *)p, (void *)p, 0, {a}, {1}};
  return d;
}
static sgc_desc2 sgc_d2(const void *p, int64_t a, int64_t b) {
  sgc_desc2 d = {(void *)p, (void *)p, 0, {a, b}, {b, 1}};
  return d;
}
static sgc_desc3 sgc_d3(const void *p, int64_t a, int64_t b, int64_t c) {
  sgc_desc3 d = {(void *)p, (void *)p, 0, {a, b, c}, {b * c, c, 1}};
  return d;
}

/* The context of the call in progress on this thread; kernels reach the
   runtime's threads through it. */
static _Thread_local const sgc_abi_call_context_t *sgc_current;

typedef void (*sgc_kernel_fn)(void *, void *, void *, int64_t, int64_t);
typedef struct { void *x, *w, *y; sgc_kernel_fn kernel; } sgc_rows_job;

static void sgc_rows_range(void *ctx, int64_t begin, int64_t end) {
  sgc_rows_job *job = (sgc_rows_job *)ctx;
  job->kernel(job->x, job->w, job->y, begin, end);
}

/* Runs rows [0, rows) of a kernel, split over the runtime's threads. */
static void sgc_run_rows(int64_t rows, sgc_rows_job *job) {
  const sgc_abi_call_context_t *ctx = sgc_current;
  if (ctx && ctx->num_threads > 1 && rows >= 64)
    ctx->parallel_for(ctx->runtime_state, rows, sgc_rows_range, job);
  else
    job->kernel(job->x, job->w, job->y, 0, rows);
}

static float sgc_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static void *sgc_alloc(size_t bytes) {
  return aligned_alloc(64, (bytes + 63) / 64 * 64);
}
)c";

/// A plan value's C expression of its descriptor's element type size.
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

/// The glue writer: one instance per module.
class Glue {
public:
  Glue(ModuleOp module, DictionaryAttr plan, ArrayRef<CPUVariant> variants,
       llvm::raw_ostream &os)
      : module(module), plan(plan), variants(variants), os(os) {}

  LogicalResult emit();

private:
  LogicalResult emitTables();
  void emitPrototypes();
  LogicalResult emitVariantEntry(StringRef variantName, DictionaryAttr variant);
  /// C code building the descriptor of plan value `name` into `var`;
  /// "" on an unknown name.
  std::string descriptor(StringRef name, StringRef var, ArrayAttr temps);
  std::string shapeArgs(ArrayRef<int64_t> shape);

  ModuleOp module;
  DictionaryAttr plan;
  ArrayRef<CPUVariant> variants;
  llvm::raw_ostream &os;
  ArrayAttr tensors, kv;
  int64_t vocab = 0, context = 0, maxChunk = 1;
  Type logitsType;
};

std::string Glue::shapeArgs(ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += ", " + (ShapedType::isDynamic(d) ? std::string("n") : std::to_string(d));
  return s;
}

std::string Glue::descriptor(StringRef name, StringRef var, ArrayAttr temps) {
  auto make = [&](StringRef ptr, ArrayRef<int64_t> shape) {
    return "sgc_desc" + std::to_string(shape.size()) + " " + var.str() +
           " = sgc_d" + std::to_string(shape.size()) + "(" + ptr.str() +
           shapeArgs(shape) + ");";
  };
  if (name == "tokens")
    return make("tokens", {ShapedType::kDynamic});
  unsigned index = 0;
  if (name.consume_front("w") && !name.getAsInteger(10, index) &&
      index < tensors.size()) {
    auto entry = cast<DictionaryAttr>(tensors[index]);
    auto type = cast<RankedTensorType>(
        cast<TypeAttr>(entry.get("type")).getValue());
    return make("ctx->weights[" + std::to_string(index) + "]", type.getShape());
  }
  bool isK = name.starts_with("k"), isV = name.starts_with("v");
  if ((isK || isV) && !name.drop_front().getAsInteger(10, index) &&
      index < kv.size()) {
    auto layer = cast<DictionaryAttr>(kv[index]);
    auto get = [&](StringRef key) {
      return cast<IntegerAttr>(layer.get(key)).getInt();
    };
    int64_t width = isK ? get("head_dim") : get("v_head_dim");
    return make(std::string(isK ? "ctx->k_cache[" : "ctx->v_cache[") +
                    std::to_string(index) + "]",
                {get("slots"), get("kv_heads"), width});
  }
  if (name.consume_front("t") && !name.getAsInteger(10, index) &&
      index < temps.size()) {
    auto type = cast<RankedTensorType>(cast<TypeAttr>(temps[index]).getValue());
    return make("t" + std::to_string(index), type.getShape());
  }
  return "";
}

void Glue::emitPrototypes() {
  // Every C-interface function of the lowered module, per variant.
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    StringRef name = func.getName();
    if (!name.starts_with("_mlir_ciface_"))
      continue;
    std::string params;
    for (Type t : func.getFunctionType().getParams()) {
      if (!params.empty())
        params += ", ";
      params += isa<LLVM::LLVMPointerType>(t) ? "void *" : "int64_t";
    }
    if (func.isExternal()) {
      // A dispatcher: defined here, runs its kernel's rows in parallel.
      auto kernel = func->getAttrOfType<FlatSymbolRefAttr>("sg.dispatch");
      auto rows = func->getAttrOfType<IntegerAttr>("sg.rows");
      if (!kernel || !rows)
        continue;
      os << "void SGC_V(" << name << ")(void *x, void *w, void *y) {\n"
         << "  sgc_rows_job job = {x, w, y, SGC_V(_mlir_ciface_"
         << kernel.getValue() << ")};\n"
         << "  sgc_run_rows(" << rows.getInt() << ", &job);\n}\n";
      continue;
    }
    os << "extern void SGC_V(" << name << ")(" << params << ");\n";
  }
}

LogicalResult Glue::emitVariantEntry(StringRef variantName,
                                     DictionaryAttr variant) {
  auto steps = cast<ArrayAttr>(variant.get("steps"));
  auto temps = cast<ArrayAttr>(variant.get("temps"));
  StringRef logits = cast<StringAttr>(variant.get("logits")).getValue();
  bool decode = variantName == "decode";
  if (decode)
    os << "static int32_t SGC_V(decode)(const sgc_abi_call_context_t *ctx, "
          "int32_t token, int64_t pos0, float *logits_out) {\n"
          "  const int32_t *tokens = &token;\n  const int64_t n = 1;\n"
          "  const int32_t all_positions = 0;\n";
  else
    os << "static int32_t SGC_V(prefill)(const sgc_abi_call_context_t *ctx, "
          "const int32_t *tokens, int64_t n, int64_t pos0, float *logits_out, "
          "int32_t all_positions) {\n";
  os << "  int32_t status = sgc_check(ctx, tokens, n, pos0, logits_out, "
     << cast<IntegerAttr>(variant.get("max_tokens")).getInt() << ");\n"
     << "  if (status != SGC_ABI_OK)\n    return status;\n"
     << "  sgc_current = ctx;\n";
  // Activations passed between bodies.
  for (auto [i, attr] : llvm::enumerate(temps)) {
    auto type = cast<RankedTensorType>(cast<TypeAttr>(attr).getValue());
    std::string bytes = std::to_string(elementBytes(type.getElementType()));
    for (int64_t d : type.getShape())
      bytes += " * " + (ShapedType::isDynamic(d) ? std::string("n")
                                                 : std::to_string(d));
    os << "  void *t" << i << " = sgc_alloc((size_t)(" << bytes << "));\n";
  }
  os << "  if (";
  for (size_t i = 0; i < temps.size(); ++i)
    os << (i ? " || " : "") << "!t" << i;
  os << (temps.empty() ? "0" : "") << ") {\n    status = SGC_ABI_ERROR_INTERNAL;\n"
     << "    goto done;\n  }\n";

  for (auto [stepIndex, stepAttr] : llvm::enumerate(steps)) {
    auto step = cast<DictionaryAttr>(stepAttr);
    auto calleeName = cast<FlatSymbolRefAttr>(step.get("callee")).getValue();
    auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(
        ("_mlir_ciface_" + calleeName).str());
    auto slots = callee ? callee->getAttrOfType<ArrayAttr>("sg.result_slots")
                        : ArrayAttr();
    if (!callee || !slots)
      return emitError(module.getLoc(), "emit: no lowered body '")
             << calleeName << "' for step " << stepIndex << " of " << variantName;
    os << "  {\n";
    SmallVector<std::string> callArgs;
    auto args = cast<ArrayAttr>(step.get("args"));
    auto results = cast<ArrayAttr>(step.get("results"));
    unsigned d = 0;
    auto addDescriptor = [&](StringRef name) -> LogicalResult {
      std::string var = "d" + std::to_string(d++);
      std::string code = descriptor(name, var, temps);
      if (code.empty())
        return emitError(module.getLoc(), "emit: unknown plan value '")
               << name << "' in step " << stepIndex << " of " << variantName;
      os << "    " << code << "\n";
      callArgs.push_back("&" + var);
      return success();
    };
    for (Attribute a : args) {
      StringRef name = cast<StringAttr>(a).getValue();
      if (name == "pos0") {
        callArgs.push_back("pos0");
        continue;
      }
      if (failed(addDescriptor(name)))
        return failure();
    }
    for (auto [slotAttr, resultAttr] : llvm::zip_equal(slots, results)) {
      int64_t slot = cast<IntegerAttr>(slotAttr).getInt();
      StringRef name = cast<StringAttr>(resultAttr).getValue();
      if (slot >= 0) {
        // Updated in place: must be the cache the step passed in that slot.
        if (slot >= static_cast<int64_t>(args.size()) ||
            cast<StringAttr>(args[slot]).getValue() != name)
          return emitError(module.getLoc(), "emit: result '")
                 << name << "' of '" << calleeName
                 << "' is not updated in place in the plan";
        continue;
      }
      if (failed(addDescriptor(name)))
        return failure();
    }
    os << "    SGC_V(_mlir_ciface_" << calleeName << ")(" << llvm::join(callArgs, ", ")
       << ");\n  }\n";
  }

  // Logits to f32: the last row, or every row.
  auto logitsIndex = logits.drop_front();
  os << "  {\n    const int64_t first = all_positions ? 0 : n - 1;\n"
     << "    for (int64_t r = first; r < n; ++r)\n"
     << "      for (int64_t i = 0; i < " << vocab << "; ++i)\n";
  if (logitsType.isBF16())
    os << "        logits_out[(r - first) * " << vocab
       << " + i] = sgc_bf16_to_f32(((const uint16_t *)t" << logitsIndex
       << ")[r * " << vocab << " + i]);\n";
  else
    os << "        logits_out[(r - first) * " << vocab
       << " + i] = ((const float *)t" << logitsIndex << ")[r * " << vocab
       << " + i];\n";
  os << "  }\ndone:\n  sgc_current = 0;\n";
  for (size_t i = 0; i < temps.size(); ++i)
    os << "  free(t" << i << ");\n";
  os << "  return status;\n}\n\n";
  return success();
}

LogicalResult Glue::emitTables() {
  auto modelId = module->getAttrOfType<StringAttr>("sg.model_id");
  auto family = module->getAttrOfType<StringAttr>("sg.family");
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
  // The shared argument check of every entry point.
  os << "static int32_t sgc_check(const sgc_abi_call_context_t *ctx, "
        "const int32_t *tokens, int64_t n, int64_t pos0, float *logits_out, "
        "int64_t max_tokens) {\n"
     << "  if (!ctx || ctx->struct_size < sizeof(sgc_abi_call_context_t) ||\n"
     << "      ctx->num_weights != " << tensors.size()
     << "u || ctx->num_layers != " << kv.size() << "u || !ctx->weights)\n"
     << "    return SGC_ABI_ERROR_BAD_CONTEXT;\n"
     << "  if (!tokens || !logits_out || n < 1 || n > max_tokens || pos0 < 0 ||\n"
     << "      pos0 + n > " << context << ")\n"
     << "    return SGC_ABI_ERROR_INVALID_ARGUMENT;\n"
     << "  for (int64_t i = 0; i < n; ++i)\n"
     << "    if (tokens[i] < 0 || tokens[i] >= " << vocab << ")\n"
     << "      return SGC_ABI_ERROR_INVALID_ARGUMENT;\n"
     << "  return SGC_ABI_OK;\n}\n\n";

  for (const CPUVariant &variant : variants) {
    os << "#define SGC_V(name) " << variant.prefix << "##name\n";
    emitPrototypes();
    auto variantPlans = cast<DictionaryAttr>(plan.get("variants"));
    for (StringRef name : {"decode", "prefill"}) {
      auto variantPlan = variantPlans.getAs<DictionaryAttr>(name);
      if (!variantPlan)
        return emitError(module.getLoc(), "emit: the plan has no '")
               << name << "' variant";
      if (failed(emitVariantEntry(name, variantPlan)))
        return failure();
    }
    os << "#undef SGC_V\n\n";
  }
  os << "static const sgc_abi_cpu_variant_t sgc_variants[] = {\n";
  for (const CPUVariant &variant : variants)
    os << "  {" << cString(variant.name) << ", " << variant.requiredFeatures
       << "ull, " << variant.prefix << "prefill, " << variant.prefix
       << "decode, {0}},\n";
  os << "};\n\n";

  os << "static const sgc_model_v1_t sgc_model = {\n"
     << "  .header = {SGC_ABI_MAGIC, SGC_ABI_VERSION_MAJOR, "
        "SGC_ABI_VERSION_MINOR, sizeof(sgc_model_v1_t)},\n"
     << "  .model_id = " << cString(modelId ? modelId.getValue() : "sg-module")
     << ",\n  .target = \"cpu\",\n  .family = "
     << cString(family ? family.getValue() : "unknown")
     << ",\n  .producer = \"sgc 0.1 (LLVM/MLIR 22.1)\",\n"
     << "  .device = SGC_ABI_DEVICE_CPU,\n"
     << "  .vocab_size = " << vocab << ",\n  .context_length = " << context
     << ",\n  .max_prefill_chunk = " << maxChunk << ",\n"
     << "  .bos_token_id = -1, .eos_token_id = -1, .pad_token_id = -1,\n"
     << "  .num_tensors = " << tensors.size() << ", .tensors = sgc_tensors,\n"
     << "  .num_layers = " << kv.size() << ", .kv_layers = sgc_kv_layers,\n"
     << "  .workspace_bytes = 0,\n"
     << "  .num_cpu_variants = " << variants.size()
     << ", .cpu_variants = sgc_variants,\n};\n\n"
     << "__attribute__((visibility(\"default\"))) const sgc_abi_header_t *\n"
     << "sgc_model_query(uint32_t runtime_major, uint32_t runtime_minor) {\n"
     << "  (void)runtime_minor;\n"
     << "  return &sgc_model.header;\n}\n";
  (void)maxChunk;
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
  auto decode = variantPlans.getAs<DictionaryAttr>("decode");
  auto prefill = variantPlans.getAs<DictionaryAttr>("prefill");
  if (!decode || !prefill)
    return emitError(module.getLoc(), "emit: the plan needs decode and prefill");
  // The logits' type gives the vocabulary and the compute dtype.
  StringRef logits = decode.getAs<StringAttr>("logits").getValue();
  unsigned index = 0;
  auto temps = decode.getAs<ArrayAttr>("temps");
  if (!logits.drop_front().getAsInteger(10, index) && index < temps.size()) {
    auto type = cast<RankedTensorType>(cast<TypeAttr>(temps[index]).getValue());
    vocab = type.getShape().back();
    logitsType = type.getElementType();
  } else {
    return emitError(module.getLoc(), "emit: no logits in the decode plan");
  }
  maxChunk = prefill.getAs<IntegerAttr>("max_tokens").getInt();
  auto contextAttr = module->getAttrOfType<IntegerAttr>("sg.context_length");
  context = contextAttr ? contextAttr.getInt() : 0;
  if (auto planContext = plan.getAs<IntegerAttr>("context_length"))
    context = std::max(context, planContext.getInt());
  if (context <= 0)
    context = INT32_MAX;

  os << "/* Generated by sgc: the runtime glue of one compiled model. */\n"
     << kAbiHeader << kPrelude << "\n";
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
