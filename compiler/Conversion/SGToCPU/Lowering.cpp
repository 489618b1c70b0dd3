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

Value lowering::withDynamicTokens(ImplicitLocOpBuilder &b, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.isDynamicDim(0))
    return buffer;
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = ShapedType::kDynamic;
  return memref::CastOp::create(
      b, MemRefType::get(shape, type.getElementType()), buffer);
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
    ImplicitLocOpBuilder &b, ValueRange inputs, Value output,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, ValueRange)> body) {
  auto outType = cast<MemRefType>(output.getType());
  unsigned rank = outType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size() + 1, identity);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, inputs, ValueRange{output}, maps, iterators,
      implicitLoc([&](ImplicitLocOpBuilder &nb, ValueRange args) {
        Value result = body(nb, args.drop_back());
        linalg::YieldOp::create(nb, result);
      }));
}

void lowering::emitFor(
    ImplicitLocOpBuilder &b, Value lb, Value ub,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  Value one = constIndex(b, 1);
  scf::ForOp::create(
      b, lb, ub, one, ValueRange{},
      implicitLoc([&](ImplicitLocOpBuilder &nb, Value iv, ValueRange) {
        body(nb, iv);
        scf::YieldOp::create(nb);
      }));
}

scf::ForOp lowering::emitLoop(
    ImplicitLocOpBuilder &b, int64_t lb, int64_t ub, int64_t step,
    ValueRange inits,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, ValueRange)> body) {
  Value lower = constIndex(b, lb);
  Value upper = constIndex(b, ub);
  Value stride = constIndex(b, step);
  return scf::ForOp::create(
      b, lower, upper, stride, inits,
      implicitLoc([&](ImplicitLocOpBuilder &b, Value iv, ValueRange carried) {
        body(b, iv, carried);
      }));
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
    ImplicitLocOpBuilder &b, int64_t n, int64_t lanes, int64_t chains,
    ChainTermFn term,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value)> onStep) {
  return emitChainedSums(
      b, n, lanes, chains, 1,
      [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes, ValueRange accs)
          -> SmallVector<Value> { return {term(b, col, lanes, accs[0])}; },
      onStep)[0];
}

SmallVector<Value> lowering::emitChainedSums(
    ImplicitLocOpBuilder &b, int64_t n, int64_t lanes, int64_t chains,
    int64_t count, ChainTermsFn term,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value)> onStep) {
  auto vecF32 = VectorType::get({lanes}, b.getF32Type());
  int64_t step = lanes * chains;
  int64_t nMain = n - n % step, nVec = n - n % lanes;
  Value zeroVec = arith::ConstantOp::create(
      b, vecF32, DenseElementsAttr::get(vecF32, 0.0f));
  // Sum t's chain c is carried at t * chains + c.
  SmallVector<Value> inits(count * chains, zeroVec);
  auto main =
      emitLoop(b, 0, nMain, step, inits,
               [&](ImplicitLocOpBuilder &b, Value col, ValueRange accs) {
                 if (onStep)
                   onStep(b, col);
                 SmallVector<Value> next(accs.size());
                 for (int64_t c = 0; c < chains; ++c) {
                   SmallVector<Value> chain;
                   for (int64_t t = 0; t < count; ++t)
                     chain.push_back(accs[t * chains + c]);
                   SmallVector<Value> out = term(
                       b, (IndexExpr(col) + c * lanes).emit(b), lanes, chain);
                   for (int64_t t = 0; t < count; ++t)
                     next[t * chains + c] = out[t];
                 }
                 scf::YieldOp::create(b, next);
               });
  SmallVector<Value> firsts;
  for (int64_t t = 0; t < count; ++t)
    firsts.push_back(main.getResult(t * chains));
  auto vecTail =
      emitLoop(b, nMain, nVec, lanes, firsts,
               [&](ImplicitLocOpBuilder &b, Value col, ValueRange acc) {
                 scf::YieldOp::create(b, term(b, col, lanes, acc));
               });
  SmallVector<Value> sums;
  for (int64_t t = 0; t < count; ++t) {
    SmallVector<Value> accs(main.getResults().slice(t * chains, chains));
    accs[0] = vecTail.getResult(t);
    // Pairwise: (0 + 1) + (2 + 3), ...
    while (accs.size() > 1) {
      SmallVector<Value> halved;
      for (size_t c = 0; c + 1 < accs.size(); c += 2)
        halved.push_back(arith::AddFOp::create(b, accs[c], accs[c + 1]));
      if (accs.size() % 2)
        halved.push_back(accs.back());
      accs = std::move(halved);
    }
    sums.push_back(vector::ReductionOp::create(
        b, vector::CombiningKind::ADD, accs[0], arith::FastMathFlags::reassoc));
  }
  auto tail = emitLoop(b, nVec, n, 1, sums,
                       [&](ImplicitLocOpBuilder &b, Value col, ValueRange acc) {
                         scf::YieldOp::create(b, term(b, col, 1, acc));
                       });
  return SmallVector<Value>(tail.getResults());
}

SmallVector<Value> lowering::emitUnrolledSteps(
    ImplicitLocOpBuilder &b, int64_t count, int64_t unroll, ValueRange inits,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value,
                            SmallVector<Value> &)>
        step) {
  int64_t main = count - count % unroll;
  auto unrolled =
      emitLoop(b, 0, main, unroll, inits,
               [&](ImplicitLocOpBuilder &b, Value s, ValueRange iter) {
                 SmallVector<Value> values(iter);
                 for (int64_t u = 0; u < unroll; ++u)
                   step(b, (IndexExpr(s) + u).emit(b), values);
                 scf::YieldOp::create(b, values);
               });
  auto rest = emitLoop(b, main, count, 1, unrolled.getResults(),
                       [&](ImplicitLocOpBuilder &b, Value s, ValueRange iter) {
                         SmallVector<Value> values(iter);
                         step(b, s, values);
                         scf::YieldOp::create(b, values);
                       });
  return SmallVector<Value>(rest.getResults());
}

Value lowering::emitRmsScale(ImplicitLocOpBuilder &b, int64_t width, double eps,
                             RowLoadFn load) {
  Value sum =
      emitChainedSum(b, width, kNormLanes, /*chains=*/4,
                     [&](ImplicitLocOpBuilder &b, Value col, int64_t lanes,
                         Value acc) -> Value {
                       Value v = toF32(b, load(b, col, lanes));
                       return arith::AddFOp::create(
                           b, acc, Value(arith::MulFOp::create(b, v, v)));
                     });
  Value mean =
      arith::DivFOp::create(b, sum, constF32(b, static_cast<float>(width)));
  Value shifted =
      arith::AddFOp::create(b, mean, constF32(b, static_cast<float>(eps)));
  return math::RsqrtOp::create(b, shifted);
}

void lowering::emitRowChunks(
    ImplicitLocOpBuilder &b, int64_t width,
    llvm::function_ref<void(ImplicitLocOpBuilder &, Value, int64_t)> body) {
  int64_t wVec = width - width % kNormLanes;
  emitLoop(b, 0, wVec, kNormLanes, ValueRange{},
           [&](ImplicitLocOpBuilder &b, Value col, ValueRange) {
             body(b, col, kNormLanes);
             scf::YieldOp::create(b);
           });
  emitLoop(b, wVec, width, 1, ValueRange{},
           [&](ImplicitLocOpBuilder &b, Value col, ValueRange) {
             body(b, col, 1);
             scf::YieldOp::create(b);
           });
}

/// The value of the external global `name` of type `type`, declared in
/// `module` on first use (constant: a CPU variant's flag, which LLVM folds;
/// not: a knob the runtime writes).
static Value loadCpuGlobal(ImplicitLocOpBuilder &b, ModuleOp module,
                           StringRef name, Type type, bool isConstant) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(b, type, isConstant,
                                    LLVM::Linkage::External, name, Attribute());
  }
  return LLVM::LoadOp::create(b, type, LLVM::AddressOfOp::create(b, global));
}

/// i1: the i8 CPU flag `name`.
static Value loadCpuFlag(ImplicitLocOpBuilder &b, ModuleOp module,
                         StringRef name) {
  Value flag = loadCpuGlobal(b, module, name, b.getI8Type(),
                             /*isConstant=*/true);
  return arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne, flag,
      arith::ConstantOp::create(b, b.getI8IntegerAttr(0)));
}

Value lowering::loadBf16DotFlag(ImplicitLocOpBuilder &b, ModuleOp module) {
  return loadCpuFlag(b, module, kBf16DotFlag);
}

Value lowering::loadInt8DotFlag(ImplicitLocOpBuilder &b, ModuleOp module) {
  return loadCpuFlag(b, module, kInt8DotFlag);
}

Value lowering::loadPrefetchToL1Flag(ImplicitLocOpBuilder &b, ModuleOp module) {
  return loadCpuFlag(b, module, kPrefetchToL1Flag);
}

Value lowering::loadRowPrefetchBytes(ImplicitLocOpBuilder &b, ModuleOp module) {
  // Not constant: the runtime writes it after loading the library.
  Value bytes = loadCpuGlobal(b, module, kRowPrefetchGlobal, b.getI64Type(),
                              /*isConstant=*/false);
  return arith::IndexCastOp::create(b, b.getIndexType(), bytes);
}

Value lowering::loadBf16OnFma(ImplicitLocOpBuilder &b, ModuleOp module) {
  // Not constant either: the runtime's choice for its host.
  Value set = loadCpuGlobal(b, module, kBf16OnFmaGlobal, b.getI64Type(),
                            /*isConstant=*/false);
  return arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne, set,
      arith::ConstantOp::create(b, b.getI64IntegerAttr(0)));
}
