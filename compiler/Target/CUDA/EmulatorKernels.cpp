//===- EmulatorKernels.cpp - gpu.func -> host function of one GPU thread --===//
//
// Part of sgc. The emulator (runtime/src/cuda_emu) runs each GPU thread of a
// launch on a fiber and calls the host copy of the kernel once per thread.
// Everything that makes a thread a GPU thread goes through the emulator's
// ops table, so the emulator sees every barrier, shuffle and out-of-bounds
// index (and the bytes of every access of a kernel parameter, checked
// against the launch's buffers), and can reorder threads between them. The copy keeps the kernel's
// code otherwise unchanged: what is tested is what the device runs.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/EmulatorKernels.h"
#include "compiler/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_GPUTOEMULATORPASS
#include "compiler/Target/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// SGC_ABI_SHUFFLE_* (lib/abi/sgc/abi.h).
uint32_t shuffleMode(gpu::ShuffleMode mode) {
  switch (mode) {
  case gpu::ShuffleMode::XOR:
    return 0;
  case gpu::ShuffleMode::UP:
    return 1;
  case gpu::ShuffleMode::DOWN:
    return 2;
  case gpu::ShuffleMode::IDX:
    return 3;
  }
  return 0;
}

class KernelCopier {
public:
  KernelCopier(ModuleOp module, SmallVector<Attribute> &sites)
      : module(module), ctx(module.getContext()), sites(sites) {}

  LogicalResult copy(gpu::GPUFuncOp kernel);

private:
  /// Declares `@sgc_emu_rt_<name>(ops, args...) -> results` once.
  func::FuncOp runtimeFn(StringRef name, TypeRange args, TypeRange results);
  Value call(OpBuilder &b, Location loc, StringRef name, ValueRange args,
             TypeRange results = {});
  Value i32(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  /// A new site for `op` of `kernel`.
  uint32_t site(StringRef kernel, Operation *op, StringRef what);
  /// Reports an index outside `type`'s static shape; returns the site.
  uint32_t checkIndices(OpBuilder &b, Operation *op, StringRef kernel,
                        MemRefType type, ValueRange indices,
                        int64_t lastWidth);
  /// Checks the bytes a global-memory access touches against the launch's
  /// buffers (the emulator's check_access): a buffer may be smaller than the
  /// static shape (a full-attention cache allocated for a session's context
  /// below the model's).
  void checkRange(OpBuilder &b, Location loc, uint32_t site, Value memref,
                  ValueRange indices, int64_t lastWidth, bool isWrite);
  LogicalResult rewriteOp(Operation *op, StringRef kernel);
  /// nvvm.mma.sync as the emulator's warp-wide mma (lane fragments through
  /// buffers allocated once per function).
  LogicalResult rewriteMma(NVVM::MmaOp mma, StringRef kernel);
  /// nvgpu.ldmatrix as the emulator's warp-wide ldmatrix: each lane passes
  /// the address of the row it supplies.
  LogicalResult rewriteLdMatrix(nvgpu::LdMatrixOp ld, StringRef kernel);
  /// A buffer of `n` x `type` at the function's entry (once per function:
  /// an alloca per call would grow the fiber's stack at every iteration).
  Value entryBuffer(Location loc, int64_t n, Type type);

  ModuleOp module;
  MLIRContext *ctx;
  SmallVector<Attribute> &sites;
  llvm::StringMap<unsigned> perKernel;
  Value ops;
  /// The function being written (its entry block holds the mma buffers).
  func::FuncOp current;
  SmallVector<Value, 4> mmaBuffers;
  Value ldmatrixBuffer;
  /// The function's dynamic shared memory (after the static part), or null.
  Value dynamicShared;
};

func::FuncOp KernelCopier::runtimeFn(StringRef name, TypeRange args,
                                     TypeRange results) {
  std::string symbol = (kEmuRuntimePrefix + name).str();
  if (auto existing = module.lookupSymbol<func::FuncOp>(symbol))
    return existing;
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  SmallVector<Type> inputs = {LLVM::LLVMPointerType::get(ctx)};
  llvm::append_range(inputs, args);
  auto fn = func::FuncOp::create(b, module.getLoc(), symbol,
                                 b.getFunctionType(inputs, results));
  fn.setPrivate();
  return fn;
}

Value KernelCopier::call(OpBuilder &b, Location loc, StringRef name,
                         ValueRange args, TypeRange results) {
  func::FuncOp fn = runtimeFn(name, args.getTypes(), results);
  SmallVector<Value> operands = {ops};
  llvm::append_range(operands, args);
  auto op = func::CallOp::create(b, loc, fn, operands);
  return results.empty() ? Value() : op.getResult(0);
}

uint32_t KernelCopier::site(StringRef kernel, Operation *op, StringRef what) {
  // The kernel, the op and its place among the kernel's ops of that kind
  // (the kernel IR in the dumps shows them in order).
  unsigned nth = ++perKernel[(kernel + " " + what).str()];
  sites.push_back(StringAttr::get(
      ctx, (kernel + ": " + what + " #" + Twine(nth)).str()));
  return sites.size() - 1;
}

uint32_t KernelCopier::checkIndices(OpBuilder &b, Operation *op,
                                    StringRef kernel, MemRefType type,
                                    ValueRange indices, int64_t lastWidth) {
  Location loc = op->getLoc();
  uint32_t id = site(kernel, op, op->getName().getStringRef());
  for (auto [dim, index] : llvm::enumerate(indices)) {
    int64_t size = type.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      continue;
    // The last index of a vector access covers `lastWidth` elements.
    int64_t bound = dim + 1 == indices.size() ? size - lastWidth + 1 : size;
    Value limit = arith::ConstantIndexOp::create(b, loc, std::max<int64_t>(bound, 0));
    // Unsigned: a negative index is huge.
    Value bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, index,
                                      limit);
    auto ifOp = scf::IfOp::create(b, loc, bad, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value index64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    Value size64 = arith::ConstantIntOp::create(b, loc, b.getI64Type(), size);
    call(b, loc, "out_of_bounds", {i32(b, loc, id), index64, size64});
  }
  return id;
}

void KernelCopier::checkRange(OpBuilder &b, Location loc, uint32_t id,
                              Value memref, ValueRange indices,
                              int64_t lastWidth, bool isWrite) {
  auto type = cast<MemRefType>(memref.getType());
  // The kernel's parameters only: shared and private memory are exactly
  // their static shapes, and constant tables (memref.get_global) are no
  // buffer of the launch.
  auto arg = dyn_cast<BlockArgument>(memref);
  if (type.getMemorySpace() || !arg || !arg.getOwner()->isEntryBlock() ||
      !isa<gpu::GPUFuncOp, func::FuncOp>(arg.getOwner()->getParentOp()))
    return;
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (!type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0 ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return;
  const int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  Value element = arith::ConstantIndexOp::create(b, loc, offset);
  for (auto [index, stride] : llvm::zip_equal(indices, strides))
    element = arith::AddIOp::create(
        b, loc, element,
        Value(arith::MulIOp::create(
            b, loc, index, arith::ConstantIndexOp::create(b, loc, stride))));
  Value byteOffset = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      Value(arith::MulIOp::create(
          b, loc, element,
          arith::ConstantIndexOp::create(b, loc, elementBytes))));
  Value base = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
  Value bytes = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                             lastWidth * elementBytes);
  call(b, loc, "check_access",
       {i32(b, loc, id), base, byteOffset, bytes, i32(b, loc, isWrite)});
}

LogicalResult KernelCopier::rewriteOp(Operation *op, StringRef kernel) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type i32Type = b.getI32Type();
  auto dimension = [&](gpu::Dimension d) {
    return i32(b, loc, static_cast<int64_t>(d));
  };
  auto indexQuery = [&](StringRef name, gpu::Dimension d) {
    Value v = call(b, loc, name, {dimension(d)}, {i32Type});
    Value wide = arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
    op->getResult(0).replaceAllUsesWith(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), wide));
    op->erase();
  };
  if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
    indexQuery("thread_id", id.getDimension());
  } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
    indexQuery("block_id", id.getDimension());
  } else if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
    indexQuery("block_dim", dim.getDimension());
  } else if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
    indexQuery("grid_dim", dim.getDimension());
  } else if (isa<gpu::BarrierOp>(op)) {
    call(b, loc, "barrier", {i32(b, loc, site(kernel, op, "gpu.barrier"))});
    op->erase();
  } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    Value value = shuffle.getValue();
    Type type = value.getType();
    if (type.getIntOrFloatBitWidth() != 32)
      return op->emitError("sgc-gpu-to-emu: only 32-bit shuffles");
    Value bits = type.isF32() ? Value(arith::BitcastOp::create(b, loc, i32Type,
                                                               value))
                              : value;
    Value packed = call(
        b, loc, "shuffle",
        {bits, shuffle.getOffset(), shuffle.getWidth(),
         i32(b, loc, shuffleMode(shuffle.getMode())),
         i32(b, loc, site(kernel, op, "gpu.shuffle"))},
        {b.getI64Type()});
    Value low = arith::TruncIOp::create(b, loc, i32Type, packed);
    Value result = type.isF32() ? Value(arith::BitcastOp::create(b, loc, type,
                                                                 low))
                                : low;
    Value high = arith::ShRUIOp::create(
        b, loc, packed,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32));
    Value valid = arith::TruncIOp::create(b, loc, b.getI1Type(), high);
    shuffle.getShuffleResult().replaceAllUsesWith(result);
    shuffle.getValid().replaceAllUsesWith(valid);
    op->erase();
  } else if (isa<gpu::ReturnOp>(op)) {
    func::ReturnOp::create(b, loc);
    op->erase();
  } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
    uint32_t id =
        checkIndices(b, op, kernel, load.getMemRefType(), load.getIndices(), 1);
    checkRange(b, loc, id, load.getMemref(), load.getIndices(), 1, false);
  } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
    uint32_t id = checkIndices(b, op, kernel, store.getMemRefType(),
                               store.getIndices(), 1);
    checkRange(b, loc, id, store.getMemref(), store.getIndices(), 1, true);
  } else if (auto load = dyn_cast<vector::LoadOp>(op)) {
    int64_t width = load.getVectorType().getNumElements();
    uint32_t id = checkIndices(b, op, kernel, load.getMemRefType(),
                               load.getIndices(), width);
    checkRange(b, loc, id, load.getBase(), load.getIndices(), width, false);
  } else if (auto store = dyn_cast<vector::StoreOp>(op)) {
    int64_t width = store.getVectorType().getNumElements();
    uint32_t id = checkIndices(b, op, kernel, store.getMemRefType(),
                               store.getIndices(), width);
    checkRange(b, loc, id, store.getBase(), store.getIndices(), width, true);
  } else if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
    return rewriteMma(mma, kernel);
  } else if (auto ld = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    return rewriteLdMatrix(ld, kernel);
  } else if (isa<gpu::DynamicSharedMemoryOp>(op)) {
    if (!dynamicShared)
      return op->emitError("sgc-gpu-to-emu: the kernel uses dynamic shared "
                           "memory but does not record its bytes");
    op->getResult(0).replaceAllUsesWith(dynamicShared);
    op->erase();
  } else if (isa<NVVM::MembarOp>(op)) {
    // Blocks run one after another and threads never preempt each other:
    // every write is visible to every later read without a fence.
    op->erase();
  } else if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
    MemRefType type = atomic.getMemRefType();
    if (atomic.getKind() != arith::AtomicRMWKind::addi ||
        !type.getElementType().isInteger(32) || type.getRank() != 1)
      return op->emitError("sgc-gpu-to-emu: only an i32 atomic add on a 1-D "
                           "memref has an emulation");
    checkIndices(b, op, kernel, type, atomic.getIndices(), 1);
    // The buffer's address as an integer: one declaration serves every
    // memref type.
    Value base = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc,
                                                       atomic.getMemref()));
    Value index = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                             atomic.getIndices()[0]);
    Value old = call(b, loc, "atomic_add_u32",
                     {base, index, atomic.getValue(),
                      i32(b, loc, site(kernel, op, "memref.atomic_rmw"))},
                     {i32Type});
    atomic.getResult().replaceAllUsesWith(old);
    op->erase();
  } else if (op->getDialect() &&
             (op->getDialect()->getNamespace() == "gpu" ||
              op->getDialect()->getNamespace() == "nvvm" ||
              op->getDialect()->getNamespace() == "nvgpu")) {
    return op->emitError("sgc-gpu-to-emu: '")
           << op->getName() << "' has no emulation yet";
  }
  return success();
}

LogicalResult KernelCopier::rewriteMma(NVVM::MmaOp mma, StringRef kernel) {
  auto shape = mma.getShape();
  if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 ||
      mma.getMultiplicandAPtxType() != NVVM::MMATypes::bf16 ||
      mma.getMultiplicandBPtxType() != NVVM::MMATypes::bf16 ||
      mma.getLayoutA() != NVVM::MMALayout::row ||
      mma.getLayoutB() != NVVM::MMALayout::col ||
      mma.getOperandA().size() != 4 || mma.getOperandB().size() != 2 ||
      mma.getOperandC().size() != 4 ||
      !llvm::all_of(mma.getOperandC().getTypes(),
                    [](Type t) { return t.isF32(); }))
    return mma.emitError("sgc-gpu-to-emu: only mma.sync m16n8k16 row.col "
                         "with bf16 operands and f32 accumulators has an "
                         "emulation");
  Location loc = mma.getLoc();
  Type i32Type = IntegerType::get(ctx, 32), f32Type = Float32Type::get(ctx);
  if (mmaBuffers.empty())
    for (auto [n, type] : {std::pair<int64_t, Type>{4, i32Type},
                           {2, i32Type},
                           {4, f32Type},
                           {4, f32Type}})
      mmaBuffers.push_back(entryBuffer(loc, n, type));
  OpBuilder b(mma);
  auto fill = [&](Value buffer, ValueRange values) {
    for (auto [i, v] : llvm::enumerate(values))
      memref::StoreOp::create(
          b, loc, v, buffer,
          ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
  };
  fill(mmaBuffers[0], mma.getOperandA());
  fill(mmaBuffers[1], mma.getOperandB());
  fill(mmaBuffers[2], mma.getOperandC());
  call(b, loc, "mma_bf16",
       {mmaBuffers[0], mmaBuffers[1], mmaBuffers[2], mmaBuffers[3],
        i32(b, loc, site(kernel, mma, "nvvm.mma.sync"))});
  Value result = LLVM::PoisonOp::create(b, loc, mma.getType());
  for (int64_t i = 0; i < 4; ++i) {
    Value d = memref::LoadOp::create(
        b, loc, mmaBuffers[3],
        ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
    result = LLVM::InsertValueOp::create(b, loc, result, d, i);
  }
  mma.getResult().replaceAllUsesWith(result);
  mma->erase();
  return success();
}

Value KernelCopier::entryBuffer(Location loc, int64_t n, Type type) {
  OpBuilder eb(ctx);
  eb.setInsertionPointToStart(&current.getBody().front());
  return memref::AllocaOp::create(eb, loc, MemRefType::get({n}, type));
}

LogicalResult KernelCopier::rewriteLdMatrix(nvgpu::LdMatrixOp ld,
                                            StringRef kernel) {
  auto type = cast<MemRefType>(ld.getSrcMemref().getType());
  auto result = cast<VectorType>(ld.getRes().getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (!type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() != 16 ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return ld.emitError("sgc-gpu-to-emu: only ldmatrix of 16-bit elements "
                        "from a statically strided memref has an emulation");
  Location loc = ld.getLoc();
  OpBuilder b(ld);
  Type i32Type = b.getI32Type(), i64Type = b.getI64Type();
  // The row a lane supplies is 8 elements of the last dimension.
  checkIndices(b, ld, kernel, type, ld.getIndices(), 8);
  if (!ldmatrixBuffer)
    ldmatrixBuffer = entryBuffer(loc, 4, i32Type);
  Value element = arith::ConstantIndexOp::create(b, loc, offset);
  for (auto [index, stride] : llvm::zip_equal(ld.getIndices(), strides))
    element = arith::AddIOp::create(
        b, loc, element,
        Value(arith::MulIOp::create(
            b, loc, index, arith::ConstantIndexOp::create(b, loc, stride))));
  Value byteOffset = arith::MulIOp::create(
      b, loc, element, arith::ConstantIndexOp::create(b, loc, 2));
  Value address = arith::IndexCastOp::create(
      b, loc, i64Type,
      Value(arith::AddIOp::create(
          b, loc,
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc,
                                                         ld.getSrcMemref()),
          byteOffset)));
  int64_t num = ld.getNumTiles();
  call(b, loc, "ldmatrix",
       {address, i32(b, loc, num), i32(b, loc, ld.getTranspose() ? 1 : 0),
        ldmatrixBuffer, i32(b, loc, site(kernel, ld, "nvgpu.ldmatrix"))});
  // Register m of the lane is row m of the result (a pair of elements).
  SmallVector<Value> regs;
  for (int64_t m = 0; m < num; ++m)
    regs.push_back(memref::LoadOp::create(
        b, loc, ldmatrixBuffer,
        ValueRange{arith::ConstantIndexOp::create(b, loc, m)}));
  Value words = vector::FromElementsOp::create(
      b, loc, VectorType::get({num}, i32Type), regs);
  Value flat = vector::BitCastOp::create(
      b, loc, VectorType::get({result.getNumElements()}, result.getElementType()),
      words);
  ld.getRes().replaceAllUsesWith(
      vector::ShapeCastOp::create(b, loc, result, flat).getResult());
  ld->erase();
  return success();
}

/// `type` without its memory space.
static Type withoutMemorySpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.getMemorySpace())
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout());
}

LogicalResult KernelCopier::copy(gpu::GPUFuncOp kernel) {
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = kernel.getLoc();
  SmallVector<Type> inputs = {LLVM::LLVMPointerType::get(ctx)};
  llvm::append_range(inputs, kernel.getArgumentTypes());
  std::string name = (kEmuKernelPrefix + kernel.getName()).str();
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType(inputs, {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ops = entry->getArgument(0);
  current = fn;
  mmaBuffers.clear();
  ldmatrixBuffer = Value();
  dynamicShared = Value();

  IRMapping map;
  Block &body = kernel.getBody().front();
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    map.map(body.getArgument(i), entry->getArgument(1 + i));
  // Workgroup buffers: consecutive 16-byte aligned views of the block's
  // shared memory.
  int64_t offset = 0;
  SmallVector<std::pair<Value, int64_t>> views;
  for (BlockArgument attribution : kernel.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(attribution.getType());
    int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
    views.push_back({attribution, offset});
    offset += (bytes + 15) / 16 * 16;
  }
  // The launch's dynamic bytes follow the static part (the ops table's
  // shared_memory); the kernel records how many it uses.
  int64_t dynamicBytes = 0;
  if (auto bytes = kernel->getAttrOfType<IntegerAttr>(
          "sg.dynamic_shared_bytes"))
    dynamicBytes = bytes.getInt();
  if (!views.empty() || dynamicBytes) {
    auto sharedType = MemRefType::get({offset + dynamicBytes}, b.getI8Type());
    Value shared = call(b, loc, "shared_memory", {}, {sharedType});
    for (auto [attribution, start] : views) {
      auto type = cast<MemRefType>(withoutMemorySpace(attribution.getType()));
      Value at = arith::ConstantIndexOp::create(b, loc, start);
      map.map(attribution, memref::ViewOp::create(b, loc, type, shared, at,
                                                  ValueRange{}));
    }
    if (dynamicBytes)
      dynamicShared = memref::ViewOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
          shared, arith::ConstantIndexOp::create(b, loc, offset),
          ValueRange{arith::ConstantIndexOp::create(b, loc, dynamicBytes)});
  }
  fn->setAttr("sg.emu_shared_bytes", b.getI64IntegerAttr(offset));
  fn->setAttr("sg.emu_dynamic_shared_bytes", b.getI64IntegerAttr(dynamicBytes));
  for (Operation &op : body)
    b.clone(op, map);

  // Globals the kernel reads (RoPE tables) get host copies.
  auto kernels = cast<gpu::GPUModuleOp>(kernel->getParentOp());
  WalkResult copied = fn.walk([&](memref::GetGlobalOp get) {
    std::string hostName = ("sgc_emu_" + get.getName()).str();
    if (!module.lookupSymbol(hostName)) {
      auto global = SymbolTable::lookupSymbolIn(kernels, get.getNameAttr());
      if (!global)
        return WalkResult::interrupt();
      OpBuilder gb(ctx);
      gb.setInsertionPointToStart(module.getBody());
      auto clone = cast<memref::GlobalOp>(gb.clone(*global));
      clone.setSymName(hostName);
    }
    get.setName(hostName);
    return WalkResult::advance();
  });
  if (copied.wasInterrupted())
    return kernel.emitError("sgc-gpu-to-emu: a kernel reads an unknown global");

  // Types: no memory spaces on the host.
  fn.walk([](Operation *op) {
    for (Value result : op->getResults())
      result.setType(withoutMemorySpace(result.getType()));
  });
  SmallVector<Operation *> todo;
  fn.walk([&](Operation *op) {
    if (op != fn)
      todo.push_back(op);
  });
  for (Operation *op : todo)
    if (failed(rewriteOp(op, kernel.getName())))
      return failure();
  return success();
}

struct GPUToEmulatorPass
    : public sgc::impl::GPUToEmulatorPassBase<GPUToEmulatorPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Attribute> sites;
    KernelCopier copier(module, sites);
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : kernels.getOps<gpu::GPUFuncOp>())
        if (failed(copier.copy(kernel)))
          return signalPassFailure();
    module->setAttr("sg.emu_sites", ArrayAttr::get(&getContext(), sites));
  }
};

} // namespace
