//===- Linear.cpp - sg.linear as a row kernel and a dispatcher call -------===//
//
// Part of sgc. y[s, n] = round(sum_k f32(x[s, k]) * f32(w[n, k])).
//
// The kernel walks one weight row at a time (row-major bf16, as the
// checkpoint stores it) with 4 independent vector<16xf32> accumulators along
// K, widening the weights exactly to f32 and fusing multiply and add: the
// structure CPU.md measured at 93-96 % of one core's read bandwidth. Each
// row is reused for every token of the chunk while it is in L1. The kernel
// takes a row range, so the runtime's parallel_for can split the rows across
// cores; the dispatcher that does so is emitted with the runtime glue.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/SGToLinalg/Lowering.h"
#include "dialects/SG/IR/SGOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::sgc;
using namespace mlir::sgc::lowering;

/// Lanes per accumulator and accumulators per K step.
static constexpr int64_t kLanes = 16;
static constexpr int64_t kAccumulators = 4;

static std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// Emits the kernel function `name` for an [N, K] weight of `wType` elements
/// and outputs of `yType` elements.
static func::FuncOp buildKernel(OpBuilder &b, ModuleOp module, StringRef name,
                                int64_t n, int64_t k, Type wType, Type yType) {
  Location loc = module.getLoc();
  auto xMem = MemRefType::get({ShapedType::kDynamic, k}, b.getF32Type());
  auto wMem = MemRefType::get({n, k}, wType);
  auto yMem = MemRefType::get({ShapedType::kDynamic, n}, yType);
  Type index = b.getIndexType();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      b, loc, name, b.getFunctionType({xMem, wMem, yMem, index, index}, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  func->setAttr("sg.kernel", b.getStringAttr("linear"));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value x = entry->getArgument(0), w = entry->getArgument(1);
  Value y = entry->getArgument(2);
  Value rowBegin = entry->getArgument(3), rowEnd = entry->getArgument(4);

  auto vecF32 = VectorType::get({kLanes}, b.getF32Type());
  auto vecW = VectorType::get({kLanes}, wType);
  int64_t kMain = k - k % (kLanes * kAccumulators);
  int64_t kVec = k - k % kLanes;
  Value zero = constIndex(b, loc, 0), one = constIndex(b, loc, 1);
  Value zeroVec = arith::ConstantOp::create(b, loc, vecF32,
                                            DenseElementsAttr::get(vecF32, 0.0f));
  Value tokens = dimOf(b, loc, x, 0);

  // Loads 16 weights and 16 inputs at column `col`, fused into `acc`.
  auto fma = [&](OpBuilder &b, Location loc, Value row, Value s, Value col,
                 Value acc) -> Value {
    Value wv = vector::LoadOp::create(b, loc, vecW, w, ValueRange{row, col});
    if (wType != b.getF32Type())
      wv = arith::ExtFOp::create(b, loc, vecF32, wv);
    Value xv = vector::LoadOp::create(b, loc, vecF32, x, ValueRange{s, col});
    return vector::FMAOp::create(b, loc, wv, xv, acc);
  };

  emitFor(b, loc, rowBegin, rowEnd, [&](OpBuilder &b, Location loc, Value row) {
    emitFor(b, loc, zero, tokens, [&](OpBuilder &b, Location loc, Value s) {
      SmallVector<Value> inits(kAccumulators, zeroVec);
      auto main = scf::ForOp::create(
          b, loc, zero, constIndex(b, loc, kMain),
          constIndex(b, loc, kLanes * kAccumulators), inits,
          [&](OpBuilder &b, Location loc, Value col, ValueRange accs) {
            SmallVector<Value> next;
            for (int64_t a = 0; a < kAccumulators; ++a) {
              Value c = arith::AddIOp::create(b, loc, col,
                                              constIndex(b, loc, a * kLanes));
              next.push_back(fma(b, loc, row, s, c, accs[a]));
            }
            scf::YieldOp::create(b, loc, next);
          });
      Value acc = main.getResult(0);
      for (int64_t a = 1; a < kAccumulators; ++a)
        acc = arith::AddFOp::create(b, loc, acc, main.getResult(a));
      auto tail = scf::ForOp::create(
          b, loc, constIndex(b, loc, kMain), constIndex(b, loc, kVec),
          constIndex(b, loc, kLanes), ValueRange{acc},
          [&](OpBuilder &b, Location loc, Value col, ValueRange accs) {
            scf::YieldOp::create(b, loc, fma(b, loc, row, s, col, accs[0]));
          });
      Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                              tail.getResult(0),
                                              arith::FastMathFlags::reassoc);
      auto scalarTail = scf::ForOp::create(
          b, loc, constIndex(b, loc, kVec), constIndex(b, loc, k), one,
          ValueRange{sum},
          [&](OpBuilder &b, Location loc, Value col, ValueRange accs) {
            Value wv = toF32(b, loc, memref::LoadOp::create(b, loc, w, ValueRange{row, col}));
            Value xv = memref::LoadOp::create(b, loc, x, ValueRange{s, col});
            Value prod = arith::MulFOp::create(b, loc, wv, xv);
            scf::YieldOp::create(b, loc, Value(arith::AddFOp::create(b, loc, accs[0], prod)));
          });
      memref::StoreOp::create(b, loc, roundTo(b, loc, scalarTail.getResult(0), yType),
                              y, ValueRange{s, row});
    });
  });
  func::ReturnOp::create(b, loc);
  return func;
}

/// The dispatcher `sgc_dispatch_<kernel>(x, w, y)`: declared here, defined in
/// the emitted glue, which runs the kernel over row ranges on the runtime's
/// threads.
static func::FuncOp getOrCreateDispatcher(OpBuilder &b, ModuleOp module,
                                          int64_t n, int64_t k, Type wType,
                                          Type yType) {
  std::string kernelName = "sgc_linear_" + std::to_string(n) + "x" +
                           std::to_string(k) + "_" + typeName(wType) + "_" +
                           typeName(yType);
  std::string name = "sgc_dispatch_" + kernelName.substr(4);
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  func::FuncOp kernel = buildKernel(b, module, kernelName, n, k, wType, yType);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto type = kernel.getFunctionType();
  auto decl = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType(type.getInputs().take_front(3), {}));
  decl.setPrivate();
  decl->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  decl->setAttr("sg.dispatch", FlatSymbolRefAttr::get(kernel));
  decl->setAttr("sg.rows", b.getI64IntegerAttr(n));
  return decl;
}

/// `buffer` as a memref with a dynamic leading dimension.
static Value withDynamicTokens(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.isDynamicDim(0))
    return buffer;
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = ShapedType::kDynamic;
  return memref::CastOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()), buffer);
}

LogicalResult lowering::lowerLinear(Operation *op, FunctionLowering &state) {
  auto linear = cast<sg::LinearOp>(op);
  OpBuilder &b = state.b;
  Location loc = op->getLoc();
  auto wType = linear.getW().getType();
  auto xType = linear.getX().getType();
  if (xType.getRank() != 2)
    return op->emitError("convert-sg-to-linalg: linear needs a [tokens, in] "
                         "input, got rank ")
           << xType.getRank();
  Value x = state.toF32Buffer(loc, state.lookup(linear.getX()));
  Value w = state.lookup(linear.getW());
  Value y = state.bufferFor(loc, linear.getResult());
  Type yType = cast<MemRefType>(y.getType()).getElementType();
  func::FuncOp dispatcher = getOrCreateDispatcher(
      b, state.module, wType.getDimSize(0), wType.getDimSize(1),
      wType.getElementType(), yType);
  func::CallOp::create(b, loc, dispatcher,
                       ValueRange{withDynamicTokens(b, loc, x), w,
                                  withDynamicTokens(b, loc, y)});
  state.buffers.map(linear.getResult(), y);
  return success();
}
