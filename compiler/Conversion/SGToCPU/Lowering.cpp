//===- Lowering.cpp - shared helpers of the sg -> buffers lowering --------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToCPU/Lowering.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

Value lowering::withDynamicTokens(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.isDynamicDim(0))
    return buffer;
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = ShapedType::kDynamic;
  return memref::CastOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()), buffer);
}

func::FuncOp lowering::declareDispatcher(OpBuilder &b, ModuleOp module,
                                         func::FuncOp kernel, StringRef name,
                                         int64_t rows,
                                         std::optional<int64_t> parallelRows) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> inputs = {LLVM::LLVMPointerType::get(ctx)};
  llvm::append_range(inputs, kernel.getFunctionType().getInputs().drop_back(2));
  auto decl = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(inputs, {}));
  decl.setPrivate();
  decl->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  sg::SGDialect::DispatchAttrHelper(ctx).setAttr(decl, FlatSymbolRefAttr::get(kernel));
  sg::SGDialect::RowsAttrHelper(ctx).setAttr(decl, b.getI64IntegerAttr(rows));
  if (parallelRows)
    sg::SGDialect::ParallelRowsAttrHelper(ctx).setAttr(
        decl, b.getI64IntegerAttr(*parallelRows));
  return decl;
}

func::FuncOp lowering::createPrivateFunction(OpBuilder &b, ModuleOp module,
                                             StringRef name,
                                             ArrayRef<Type> args) {
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(args, {}));
  func.setPrivate();
  b.setInsertionPointToStart(func.addEntryBlock());
  return func;
}

func::FuncOp lowering::createKernelFunction(OpBuilder &b, ModuleOp module,
                                            StringRef name,
                                            ArrayRef<Type> args,
                                            StringRef specName) {
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(args, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  sg::SGDialect::KernelAttrHelper(b.getContext())
      .setAttr(func, b.getStringAttr(specName));
  b.setInsertionPointToStart(func.addEntryBlock());
  return func;
}

void lowering::emitElementwise(
    OpBuilder &b, Location loc, ValueRange inputs, Value output,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto outType = cast<MemRefType>(output.getType());
  unsigned rank = outType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size() + 1, identity);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, inputs, ValueRange{output}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
}

void lowering::emitFor(
    OpBuilder &b, Location loc, Value lb, Value ub,
    llvm::function_ref<void(OpBuilder &, Location, Value)> body) {
  Value one = constIndex(b, loc, 1);
  scf::ForOp::create(b, loc, lb, ub, one, ValueRange{},
                     [&](OpBuilder &nb, Location nloc, Value iv, ValueRange) {
                       body(nb, nloc, iv);
                       scf::YieldOp::create(nb, nloc);
                     });
}

Value FunctionLowering::allocTemp(Location loc, ArrayRef<int64_t> shape,
                                  Type elementType) {
  SmallVector<Value> dynamicSizes;
  for (int64_t d : shape)
    if (ShapedType::isDynamic(d))
      dynamicSizes.push_back(tokens);
  auto type = MemRefType::get(shape, elementType);
  Value buffer = memref::AllocOp::create(b, loc, type, dynamicSizes,
                                         b.getI64IntegerAttr(64));
  allocated.push_back(buffer);
  return buffer;
}

Value FunctionLowering::bufferFor(Location loc, Value result) {
  if (Value dest = destinations.lookup(result))
    return dest;
  auto type = cast<RankedTensorType>(result.getType());
  return allocTemp(loc, type.getShape(), type.getElementType());
}

Value lowering::emitChainedSum(
    OpBuilder &b, Location loc, int64_t n, int64_t lanes, int64_t chains,
    ChainTermFn term, llvm::function_ref<void(OpBuilder &, Location, Value)> onStep) {
  return emitChainedSums(
      b, loc, n, lanes, chains, 1,
      [&](OpBuilder &b, Location loc, Value col, int64_t lanes,
          ValueRange accs) -> SmallVector<Value> {
        return {term(b, loc, col, lanes, accs[0])};
      },
      onStep)[0];
}

SmallVector<Value> lowering::emitChainedSums(
    OpBuilder &b, Location loc, int64_t n, int64_t lanes, int64_t chains,
    int64_t count, ChainTermsFn term,
    llvm::function_ref<void(OpBuilder &, Location, Value)> onStep) {
  auto vecF32 = VectorType::get({lanes}, b.getF32Type());
  int64_t step = lanes * chains;
  int64_t nMain = n - n % step, nVec = n - n % lanes;
  Value zeroVec = arith::ConstantOp::create(b, loc, vecF32,
                                            DenseElementsAttr::get(vecF32, 0.0f));
  // Sum t's chain c is carried at t * chains + c.
  SmallVector<Value> inits(count * chains, zeroVec);
  auto main = scf::ForOp::create(
      b, loc, constIndex(b, loc, 0), constIndex(b, loc, nMain),
      constIndex(b, loc, step), inits,
      [&](OpBuilder &b, Location loc, Value col, ValueRange accs) {
        if (onStep)
          onStep(b, loc, col);
        SmallVector<Value> next(accs.size());
        for (int64_t c = 0; c < chains; ++c) {
          SmallVector<Value> chain;
          for (int64_t t = 0; t < count; ++t)
            chain.push_back(accs[t * chains + c]);
          SmallVector<Value> out = term(
              b, loc,
              arith::AddIOp::create(b, loc, col, constIndex(b, loc, c * lanes)),
              lanes, chain);
          for (int64_t t = 0; t < count; ++t)
            next[t * chains + c] = out[t];
        }
        scf::YieldOp::create(b, loc, next);
      });
  SmallVector<Value> firsts;
  for (int64_t t = 0; t < count; ++t)
    firsts.push_back(main.getResult(t * chains));
  auto vecTail = scf::ForOp::create(
      b, loc, constIndex(b, loc, nMain), constIndex(b, loc, nVec),
      constIndex(b, loc, lanes), firsts,
      [&](OpBuilder &b, Location loc, Value col, ValueRange acc) {
        scf::YieldOp::create(b, loc, term(b, loc, col, lanes, acc));
      });
  SmallVector<Value> sums;
  for (int64_t t = 0; t < count; ++t) {
    SmallVector<Value> accs(main.getResults().slice(t * chains, chains));
    accs[0] = vecTail.getResult(t);
    // Pairwise: (0 + 1) + (2 + 3), ...
    while (accs.size() > 1) {
      SmallVector<Value> halved;
      for (size_t c = 0; c + 1 < accs.size(); c += 2)
        halved.push_back(arith::AddFOp::create(b, loc, accs[c], accs[c + 1]));
      if (accs.size() % 2)
        halved.push_back(accs.back());
      accs = std::move(halved);
    }
    sums.push_back(vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD, accs[0],
        arith::FastMathFlags::reassoc));
  }
  auto tail = scf::ForOp::create(
      b, loc, constIndex(b, loc, nVec), constIndex(b, loc, n),
      constIndex(b, loc, 1), sums,
      [&](OpBuilder &b, Location loc, Value col, ValueRange acc) {
        scf::YieldOp::create(b, loc, term(b, loc, col, 1, acc));
      });
  return SmallVector<Value>(tail.getResults());
}

SmallVector<Value> lowering::emitUnrolledSteps(
    OpBuilder &b, Location loc, int64_t count, int64_t unroll, ValueRange inits,
    llvm::function_ref<void(OpBuilder &, Location, Value, SmallVector<Value> &)>
        step) {
  int64_t main = count - count % unroll;
  auto unrolled = scf::ForOp::create(
      b, loc, constIndex(b, loc, 0), constIndex(b, loc, main),
      constIndex(b, loc, unroll), inits,
      [&](OpBuilder &b, Location loc, Value s, ValueRange iter) {
        SmallVector<Value> values(iter);
        for (int64_t u = 0; u < unroll; ++u)
          step(b, loc,
               u ? Value(arith::AddIOp::create(b, loc, s, constIndex(b, loc, u))) : s,
               values);
        scf::YieldOp::create(b, loc, values);
      });
  auto rest = scf::ForOp::create(
      b, loc, constIndex(b, loc, main), constIndex(b, loc, count),
      constIndex(b, loc, 1), unrolled.getResults(),
      [&](OpBuilder &b, Location loc, Value s, ValueRange iter) {
        SmallVector<Value> values(iter);
        step(b, loc, s, values);
        scf::YieldOp::create(b, loc, values);
      });
  return SmallVector<Value>(rest.getResults());
}

Value lowering::emitRmsScale(OpBuilder &b, Location loc, int64_t width,
                             double eps, RowLoadFn load) {
  Value sum = emitChainedSum(
      b, loc, width, kNormLanes, /*chains=*/4,
      [&](OpBuilder &b, Location loc, Value col, int64_t lanes, Value acc) -> Value {
        Value v = toF32(b, loc, load(b, loc, col, lanes));
        return arith::AddFOp::create(b, loc, acc,
                                     Value(arith::MulFOp::create(b, loc, v, v)));
      });
  Value mean = arith::DivFOp::create(b, loc, sum,
                                     constF32(b, loc, static_cast<float>(width)));
  return math::RsqrtOp::create(
      b, loc,
      Value(arith::AddFOp::create(b, loc, mean,
                                  constF32(b, loc, static_cast<float>(eps)))));
}

void lowering::emitRowChunks(
    OpBuilder &b, Location loc, int64_t width,
    llvm::function_ref<void(OpBuilder &, Location, Value, int64_t)> body) {
  int64_t wVec = width - width % kNormLanes;
  scf::ForOp::create(b, loc, constIndex(b, loc, 0), constIndex(b, loc, wVec),
                     constIndex(b, loc, kNormLanes), ValueRange{},
                     [&](OpBuilder &b, Location loc, Value col, ValueRange) {
                       body(b, loc, col, kNormLanes);
                       scf::YieldOp::create(b, loc);
                     });
  emitFor(b, loc, constIndex(b, loc, wVec), constIndex(b, loc, width),
          [&](OpBuilder &b, Location loc, Value col) { body(b, loc, col, 1); });
}

/// The value of the external global `name` of type `type`, declared in
/// `module` on first use (constant: a CPU variant's flag, which LLVM folds;
/// not: a knob the runtime writes).
static Value loadCpuGlobal(OpBuilder &b, Location loc, ModuleOp module,
                           StringRef name, Type type, bool isConstant) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(b, loc, type, isConstant,
                                    LLVM::Linkage::External, name,
                                    Attribute());
  }
  return LLVM::LoadOp::create(b, loc, type,
                              LLVM::AddressOfOp::create(b, loc, global));
}

/// i1: the i8 CPU flag `name`.
static Value loadCpuFlag(OpBuilder &b, Location loc, ModuleOp module,
                         StringRef name) {
  Value flag = loadCpuGlobal(b, loc, module, name, b.getI8Type(),
                             /*isConstant=*/true);
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, flag,
      arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)));
}

Value lowering::loadBf16DotFlag(OpBuilder &b, Location loc, ModuleOp module) {
  return loadCpuFlag(b, loc, module, kBf16DotFlag);
}

Value lowering::loadInt8DotFlag(OpBuilder &b, Location loc, ModuleOp module) {
  return loadCpuFlag(b, loc, module, kInt8DotFlag);
}

Value lowering::loadRowPrefetchBytes(OpBuilder &b, Location loc,
                                     ModuleOp module) {
  // Not constant: the runtime writes it after loading the library.
  Value bytes = loadCpuGlobal(b, loc, module, kRowPrefetchGlobal,
                              b.getI64Type(), /*isConstant=*/false);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), bytes);
}
