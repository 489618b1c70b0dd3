//===- PlanOps.cpp - plan op verifiers ------------------------------------===//
//
// Part of sgc. Every check carries the tag of the constraint it enforces
// (`<op>_cN`, as numbered in PlanOps.td); test/Dialect/Plan/invalid.mlir has
// one negative case per tag.
//
//===----------------------------------------------------------------------===//

#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/Common/ShapeString.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using mlir::sgc::shapeStr;
using namespace mlir::sgc::plan;

#include "dialects/Plan/IR/PlanInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Plan/IR/PlanOps.cpp.inc"

/// Workspace offsets are aligned for any vector load.
static constexpr int64_t kWorkspaceAlignment = 64;

//===----------------------------------------------------------------------===//
// TensorOp, KVLayerOp
//===----------------------------------------------------------------------===//

LogicalResult TensorOp::verify() {
  // tensor_c1
  RankedTensorType type = getTensorType();
  if (!type || !type.hasStaticShape() || type.getRank() > 8)
    return emitOpError("requires a static ranked tensor type of rank <= 8, "
                       "got ")
           << getType();
  return success();
}

LogicalResult KVLayerOp::verify() {
  // kv_layer_c1
  for (uint64_t v : {getSlots(), getKvHeads(), getHeadDim(), getVHeadDim()})
    // I64Attr getters are unsigned: a negative value reads as huge.
    if (v == 0 || v > (uint64_t(1) << 62))
      return emitOpError("requires positive slots, kv_heads and head dims, "
                         "got slots ")
             << getSlots() << ", kv_heads " << getKvHeads() << ", head_dim "
             << getHeadDim() << ", " << getVHeadDim();
  // kv_layer_c2
  int64_t before = 0;
  for (Operation &op : *(*this)->getBlock()) {
    if (&op == getOperation())
      break;
    before += isa<KVLayerOp>(op);
  }
  if (getLayer() != static_cast<uint64_t>(before))
    return emitOpError("is the KV layer at index ")
           << before << " but says layer(" << getLayer() << ")";
  // kv_layer_c3
  if (getKeysFromValues() && (!getVFromK() || getHeadDim() != getVHeadDim()))
    return emitOpError("with keys_from_values requires v_from_k and equal "
                       "head dims");
  return success();
}

//===----------------------------------------------------------------------===//
// EntryOp
//===----------------------------------------------------------------------===//

void EntryOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  if (region.empty() || region.front().getNumArguments() < 2)
    return;
  bool image = getKind() == EntryKind::encode_image;
  setNameFn(region.front().getArgument(0), image ? "pixels" : "tokens");
  if (getKind() == EntryKind::decode_batch) {
    for (BlockArgument pos : region.front().getArguments().drop_front())
      setNameFn(pos, ("pos" + Twine(pos.getArgNumber() - 1)).str());
    return;
  }
  setNameFn(region.front().getArgument(1), image ? "patch_pos" : "pos");
  if (region.front().getNumArguments() == 4) {
    setNameFn(region.front().getArgument(2), "soft_tokens");
    setNameFn(region.front().getArgument(3), "image_blocks");
  }
}

/// entry_c1 and entry_c2 of an encode_image entry: (pixels [N, P] f32,
/// patch positions [N, 2] i32), N static and equal to max_tokens.
static LogicalResult verifyImageArguments(EntryOp entry) {
  Block &block = entry.getBlock();
  auto pixels = block.getNumArguments() == 2
                    ? dyn_cast<BufferType>(block.getArgument(0).getType())
                    : BufferType();
  auto positions = block.getNumArguments() == 2
                       ? dyn_cast<BufferType>(block.getArgument(1).getType())
                       : BufferType();
  if (!pixels || !positions || pixels.getShape().size() != 2 ||
      !pixels.getElementType().isF32() || positions.getShape().size() != 2 ||
      positions.getShape()[1] != 2 ||
      !positions.getElementType().isInteger(32) ||
      pixels.getShape()[0] != positions.getShape()[0])
    return entry.emitOpError("requires encode_image block arguments (pixels: "
                             "!plan.buffer<NxPxf32>, patch positions: "
                             "!plan.buffer<Nx2xi32>)");
  if (pixels.getShape()[0] != static_cast<int64_t>(entry.getMaxTokens()))
    return entry.emitOpError("requires max_tokens to be the patch count ")
           << pixels.getShape()[0] << ", got " << entry.getMaxTokens();
  return success();
}

/// entry_c1 and entry_c2 of a prefill or decode entry.
static LogicalResult verifyTextArguments(EntryOp entry) {
  Block &block = entry.getBlock();
  // entry_c1
  unsigned n = block.getNumArguments();
  bool images = n == 4 && entry.getKind() == EntryKind::prefill;
  if (entry.getKind() == EntryKind::decode_batch) {
    // A batched decode step: the rows' tokens, then each row's position.
    auto tokens = dyn_cast<BufferType>(block.getArgument(0).getType());
    int64_t rows = entry.getMaxTokens();
    if (n != 1 + rows || !tokens || tokens.getShape().size() != 1 ||
        tokens.getShape()[0] != rows ||
        !tokens.getElementType().isInteger(32) ||
        llvm::any_of(block.getArguments().drop_front(), [](BlockArgument a) {
          return !a.getType().isInteger(64);
        }))
      return entry.emitOpError("requires block arguments (tokens: "
                               "!plan.buffer<Bxi32>, B positions: i64) for "
                               "B = max_tokens(")
             << rows << ")";
    return success();
  }
  auto tokens = n == 2 || images
                    ? dyn_cast<BufferType>(block.getArgument(0).getType())
                    : BufferType();
  if (!tokens || tokens.getShape().size() != 1 ||
      !tokens.getElementType().isInteger(32) ||
      !block.getArgument(1).getType().isInteger(64))
    return entry.emitOpError("requires block arguments (tokens: "
                             "!plan.buffer<?xi32>, position: i64)");
  if (images) {
    auto embeds = dyn_cast<BufferType>(block.getArgument(2).getType());
    auto blocks = dyn_cast<BufferType>(block.getArgument(3).getType());
    if (!embeds || !blocks || embeds.getShape().size() != 2 ||
        !embeds.getElementType().isF32() || blocks.getShape().size() != 1 ||
        !blocks.getElementType().isInteger(32) ||
        embeds.getShape()[0] != tokens.getShape()[0] ||
        blocks.getShape()[0] != tokens.getShape()[0])
      return entry.emitOpError("requires image arguments (soft tokens: "
                               "!plan.buffer<?xHxf32>, image blocks: "
                               "!plan.buffer<?xi32>) after the position");
  }
  // entry_c2
  int64_t maxTokens = entry.getMaxTokens();
  if (maxTokens < 1 || (!ShapedType::isDynamic(tokens.getShape()[0]) &&
                        tokens.getShape()[0] > maxTokens))
    return entry.emitOpError("requires max_tokens >= 1 and at least the "
                             "static token count, got max_tokens(")
           << maxTokens << ") for tokens " << shapeStr(tokens.getShape());
  return success();
}

LogicalResult EntryOp::verifyRegions() {
  if (getKind() == EntryKind::encode_image) {
    if (failed(verifyImageArguments(*this)))
      return failure();
  } else if (failed(verifyTextArguments(*this))) {
    return failure();
  }
  return verifyBuffers();
}

LogicalResult EntryOp::verifyBuffers() {
  Block &block = getBlock();
  int64_t maxTokens = getMaxTokens();

  // Live ranges of the allocs, in steps: first write to last read.
  struct Range {
    AllocOp alloc;
    int64_t first = -1, last = -1;
  };
  SmallVector<Range> ranges;
  llvm::DenseMap<Value, size_t> rangeOf;
  for (AllocOp alloc : block.getOps<AllocOp>()) {
    rangeOf[alloc.getResult()] = ranges.size();
    ranges.push_back({alloc});
  }
  int64_t step = 0;
  for (StepOpInterface call : block.getOps<StepOpInterface>()) {
    // entry_c3
    for (Value in : call.getIns()) {
      auto it = rangeOf.find(in);
      if (it == rangeOf.end())
        continue;
      Range &r = ranges[it->second];
      if (r.first < 0)
        return call.emitOpError("reads a buffer no earlier step wrote")
                   .attachNote(r.alloc.getLoc())
               << "allocated here";
      r.last = step;
    }
    for (Value out : call.getOuts()) {
      auto it = rangeOf.find(out);
      if (it == rangeOf.end())
        continue;
      Range &r = ranges[it->second];
      if (r.first < 0)
        r.first = step;
      r.last = std::max(r.last, step);
    }
    ++step;
  }
  auto ret = dyn_cast<ReturnOp>(block.getTerminator());
  if (auto it = rangeOf.find(ret.getLogits()); it != rangeOf.end()) {
    if (ranges[it->second].first < 0)
      return ret.emitOpError("returns a buffer no step wrote");
    ranges[it->second].last = step;
  }

  // entry_c4
  size_t placed = llvm::count_if(
      ranges, [](Range &r) { return r.alloc.getOffset().has_value(); });
  if (placed == 0)
    return success();
  if (placed != ranges.size() || !getWorkspace())
    return emitOpError("requires either no alloc offsets or an offset on "
                       "every alloc and a workspace size (")
           << placed << " of " << ranges.size() << " allocs placed)";
  // entry_c5
  int64_t workspace = *getWorkspace();
  for (Range &r : ranges) {
    int64_t offset = *r.alloc.getOffset();
    int64_t bytes = r.alloc.getType().getBytes(maxTokens);
    if (offset < 0 || offset % kWorkspaceAlignment != 0 ||
        offset + bytes > workspace)
      return r.alloc.emitOpError("at offset ")
             << offset << " with " << bytes
             << " bytes is not 64-byte aligned within the workspace of "
             << workspace << " bytes";
  }
  // entry_c6
  for (auto [i, a] : llvm::enumerate(ranges))
    for (Range &b : MutableArrayRef<Range>(ranges).drop_front(i + 1)) {
      bool liveTogether = a.first <= b.last && b.first <= a.last;
      int64_t aBegin = *a.alloc.getOffset(), bBegin = *b.alloc.getOffset();
      bool overlap = aBegin < bBegin + b.alloc.getType().getBytes(maxTokens) &&
                     bBegin < aBegin + a.alloc.getType().getBytes(maxTokens);
      if (liveTogether && overlap)
        return b.alloc.emitOpError("shares workspace bytes with a buffer "
                                   "live at the same time")
                   .attachNote(a.alloc.getLoc())
               << "the other buffer";
    }
  return success();
}

//===----------------------------------------------------------------------===//
// WeightOp, KVCacheOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verifySymbolUses(SymbolTableCollection &symbols) {
  // weight_c1
  auto tensor =
      symbols.lookupNearestSymbolFrom<TensorOp>(*this, getTensorAttr());
  if (!tensor)
    return emitOpError("names no plan.tensor: ") << getTensorAttr();
  // weight_c2
  RankedTensorType type = tensor.getTensorType();
  if (!type)
    return emitOpError("names a tensor without a tensor type");
  // A weight buffer is static; holds() admits a block-encoded tensor's
  // bytes.
  if (!getType().holds(type) ||
      llvm::any_of(getType().getShape(), ShapedType::isDynamic))
    return emitOpError("has type ")
           << getType() << " but the tensor is " << tensor.getType();
  return success();
}

LogicalResult KVCacheOp::verify() {
  // kv_cache_c3
  auto entry = (*this)->getParentOfType<EntryOp>();
  bool batched = entry.getKind() == EntryKind::decode_batch;
  std::optional<uint64_t> row = getRow();
  if (batched != row.has_value())
    return emitOpError(batched ? "in a decode_batch entry requires a row"
                               : "has a row outside a decode_batch entry");
  if (row && *row >= entry.getMaxTokens())
    return emitOpError("row ") << *row << " is not below max_tokens("
                               << entry.getMaxTokens() << ")";
  return success();
}

LogicalResult KVCacheOp::verifySymbolUses(SymbolTableCollection &symbols) {
  // kv_cache_c1
  auto layer = symbols.lookupNearestSymbolFrom<KVLayerOp>(*this, getLayerAttr());
  if (!layer)
    return emitOpError("names no plan.kv_layer: ") << getLayerAttr();
  // kv_cache_c2
  int64_t dim =
      getHalf() == CacheHalf::key ? layer.getHeadDim() : layer.getVHeadDim();
  SmallVector<int64_t> expected = {static_cast<int64_t>(layer.getSlots()),
                                   static_cast<int64_t>(layer.getKvHeads()),
                                   dim};
  if (ArrayRef(expected) != getType().getShape() ||
      layer.getElementType() != getType().getElementType())
    return emitOpError("requires a buffer ")
           << shapeStr(expected) << " of " << layer.getElementType()
           << ", got " << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// CallOp, LaunchOp, ReturnOp
//===----------------------------------------------------------------------===//

namespace {
/// What a step's callee resolves to.
struct ResolvedCallee {
  /// The function or kernel; the `gpu.binary` once kernels are compiled.
  Operation *op = nullptr;
  /// `@module::@kernel` of a `gpu.module` or `gpu.binary`.
  bool isKernel = false;
};
} // namespace

static ResolvedCallee resolveCallee(Operation *step, SymbolRefAttr ref,
                                    SymbolTableCollection &symbols) {
  // Once the module is compiled to a binary its kernels are no symbols.
  Operation *root = symbols.lookupNearestSymbolFrom(
      step, FlatSymbolRefAttr::get(ref.getRootReference()));
  auto named = [&](StringRef name) {
    return root && root->getName().getStringRef() == name;
  };
  ResolvedCallee r;
  r.isKernel = !ref.getNestedReferences().empty() &&
               (named("gpu.module") || named("gpu.binary"));
  r.op = named("gpu.binary") ? root : symbols.lookupNearestSymbolFrom(step, ref);
  return r;
}

/// call_c4, call_c5 and launch_c4, launch_c5: the outputs of a step.
static LogicalResult verifyStepOutputs(StepOpInterface step) {
  for (auto [i, out] : llvm::enumerate(step.getOuts())) {
    Operation *def = out.getDefiningOp();
    if (!isa_and_nonnull<AllocOp, KVCacheOp>(def))
      return step->emitOpError("output ")
             << i << " must be a plan.alloc or a plan.kv_cache buffer";
    if (isa<KVCacheOp>(def) && !llvm::is_contained(step.getIns(), out))
      return step->emitOpError("output ")
             << i << " is a KV cache that is not also an input (caches are "
                     "updated in place)";
  }
  return success();
}

bool CallOp::isRowwise() { return getRowwise(); }

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbols) {
  ResolvedCallee callee = resolveCallee(*this, getCalleeAttr(), symbols);
  // call_c1
  if (!callee.op)
    return emitOpError("calls an unknown function ") << getCalleeAttr();
  if (callee.isKernel)
    return emitOpError("calls the kernel ")
           << getCalleeAttr() << " (a kernel is launched by plan.launch)";
  // Lowered bodies take buffers in the target's convention; only the sg
  // form has types to compare.
  auto func = dyn_cast<func::FuncOp>(callee.op);
  if (!func || func.getNumResults() == 0)
    return success();
  FunctionType type = func.getFunctionType();
  // call_c2
  if (type.getNumInputs() != getIns().size() ||
      type.getNumResults() != getOuts().size())
    return emitOpError("passes ")
           << getIns().size() << " inputs and " << getOuts().size()
           << " outputs to " << getCalleeAttr() << ", which takes "
           << type.getNumInputs() << " and returns " << type.getNumResults();
  // call_c3
  auto check = [&](Value v, Type want, StringRef what,
                   size_t index) -> LogicalResult {
    auto buffer = dyn_cast<BufferType>(v.getType());
    auto tensor = dyn_cast<RankedTensorType>(want);
    bool ok = buffer && tensor ? buffer.holds(tensor) : v.getType() == want;
    if (!ok)
      return emitOpError() << what << " " << index << " is " << v.getType()
                           << " but " << getCalleeAttr() << " has " << want;
    return success();
  };
  for (auto [i, v] : llvm::enumerate(getIns()))
    if (failed(check(v, type.getInput(i), "input", i)))
      return failure();
  for (auto [i, v] : llvm::enumerate(getOuts()))
    if (failed(check(v, type.getResult(i), "output", i)))
      return failure();
  return success();
}

LogicalResult CallOp::verify() {
  if (failed(verifyStepOutputs(*this)))
    return failure();
  if (!getRowwise())
    return success();
  // call_c6
  for (auto [i, out] : llvm::enumerate(getOuts())) {
    ArrayRef<int64_t> shape = cast<BufferType>(out.getType()).getShape();
    if (shape.empty() || !ShapedType::isDynamic(shape[0]))
      return emitOpError("is rowwise but output ")
             << i << " has no token dimension first: " << out.getType();
  }
  for (auto [i, in] : llvm::enumerate(getIns()))
    if (!isa<BufferType>(in.getType()) || in.getDefiningOp<KVCacheOp>())
      return emitOpError("is rowwise but input ")
             << i << " is the position or a KV cache";
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  ResolvedCallee callee = resolveCallee(*this, getCalleeAttr(), symbols);
  // launch_c1
  if (!callee.op || !callee.isKernel)
    return emitOpError("launches ")
           << getCalleeAttr() << ", which is no kernel of a gpu.module or "
           << "gpu.binary";
  return success();
}

LogicalResult LaunchOp::verify() {
  // launch_c2
  auto positive = [](ArrayRef<int64_t> dims) {
    return dims.size() == 3 && llvm::all_of(dims, [](int64_t d) { return d > 0; });
  };
  if (!positive(getGrid()) || !positive(getBlock()))
    return emitOpError("needs a grid and a block of three positive sizes "
                       "each, got grid ")
           << shapeStr(getGrid()) << " and block " << shapeStr(getBlock());
  // (I64Attr accessors return the value unsigned.)
  if (int64_t bytes = getDynamicSharedAttr().getInt(); bytes < 0)
    return emitOpError("needs dynamic_shared >= 0, got ") << bytes;
  // launch_c3
  if (IntegerAttr dim = getTokenGridDimAttr();
      dim && dim.getInt() != 0 && dim.getInt() != 1)
    return emitOpError("has token_grid_dim ")
           << dim.getInt() << "; the tokens run along grid x (0) or y (1)";
  return verifyStepOutputs(*this);
}

LogicalResult ReturnOp::verify() {
  // return_c1
  if (!getLogits().getDefiningOp<AllocOp>() ||
      getLogits().getType().getShape().size() != 2)
    return emitOpError("requires a rank-2 plan.alloc buffer of logits, got ")
           << getLogits().getType();
  // return_c2
  if (Value argmax = getArgmax()) {
    auto type = cast<BufferType>(argmax.getType());
    if (!argmax.getDefiningOp<AllocOp>() || type.getShape() != ArrayRef<int64_t>{1} ||
        !type.getElementType().isInteger(32))
      return emitOpError("requires the argmax in a plan.alloc buffer of one "
                         "i32, got ")
             << argmax.getType();
  }
  return success();
}
