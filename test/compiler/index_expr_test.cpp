//===- index_expr_test.cpp - IndexExpr: values and the ops it creates -----===//
//
// Part of sgc. A kernel's index arithmetic (compiler/Conversion/Common/
// IndexExpr.h) must compute what the expression says, with unsigned
// division, and create its ops operands first, left before right, whatever
// the host compiler.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/IndexExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;
using mlir::sgc::IndexExpr;

namespace {
class IndexExprTest : public ::testing::Test {
protected:
  IndexExprTest() : b(UnknownLoc::get(&ctx), &ctx) {
    ctx.loadDialect<arith::ArithDialect, func::FuncDialect>();
    module = ModuleOp::create(b.getLoc());
  }

  /// A function of `numArgs` index arguments whose body `build` fills,
  /// returning the value it emits.
  func::FuncOp function(unsigned numArgs,
                        llvm::function_ref<Value(ArrayRef<Value>)> build) {
    b.setInsertionPointToEnd(module->getBody());
    SmallVector<Type> args(numArgs, b.getIndexType());
    auto f = func::FuncOp::create(
        b, "f", b.getFunctionType(args, {b.getIndexType()}));
    Block *entry = f.addEntryBlock();
    b.setInsertionPointToStart(entry);
    SmallVector<Value> argValues(entry->getArguments());
    Value result = build(argValues);
    func::ReturnOp::create(b, result);
    return f;
  }

  /// The value of `build(x...)` for these argument values: each argument is
  /// a constant, and the greedy driver folds the function to one.
  int64_t evaluate(ArrayRef<int64_t> values,
                   llvm::function_ref<Value(ArrayRef<Value>)> build) {
    func::FuncOp f = function(0, [&](ArrayRef<Value>) {
      SmallVector<Value> xs;
      for (int64_t v : values)
        xs.push_back(arith::ConstantIndexOp::create(b, v));
      return build(xs);
    });
    EXPECT_TRUE(succeeded(applyPatternsGreedily(f, RewritePatternSet(&ctx))));
    auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
    auto c = ret.getOperand(0).getDefiningOp<arith::ConstantIndexOp>();
    EXPECT_TRUE(c) << "did not fold to a constant";
    int64_t v = c ? c.value() : -1;
    f.erase();
    return v;
  }

  /// The body's ops, one line each: "name operand-ids", arguments as aN,
  /// constants as their value, other results as %i by position.
  std::string ops(func::FuncOp f) {
    std::string out;
    llvm::DenseMap<Value, std::string> names;
    for (BlockArgument arg : f.getArguments())
      names[arg] = "a" + std::to_string(arg.getArgNumber());
    unsigned next = 0;
    for (Operation &op : f.getBody().front()) {
      if (auto c = dyn_cast<arith::ConstantIndexOp>(op)) {
        names[c] = std::to_string(c.value());
        continue;
      }
      out += op.getName().getStringRef().str();
      for (Value v : op.getOperands())
        out += " " + names.lookup(v);
      out += "\n";
      for (Value r : op.getResults())
        names[r] = "%" + std::to_string(next++);
    }
    return out;
  }

  MLIRContext ctx;
  ImplicitLocOpBuilder b;
  OwningOpRef<ModuleOp> module;
};

TEST_F(IndexExprTest, ComputesWhatItSays) {
  // Fragment addressing as attn_prefill writes it, over a warp's lanes and
  // some tokens and positions.
  for (int64_t lane : {0, 1, 7, 8, 15, 16, 31})
    for (int64_t t : {0, 3, 17}) {
      EXPECT_EQ(evaluate({lane, t},
                         [&](ArrayRef<Value> x) {
                           IndexExpr l(x[0]);
                           return (l / 16 * 8 + l % 8 + IndexExpr(x[1]) * 64)
                               .emit(b);
                         }),
                lane / 16 * 8 + lane % 8 + t * 64);
      EXPECT_EQ(evaluate({lane, t},
                         [&](ArrayRef<Value> x) {
                           return (IndexExpr(x[0]) / 8 % 2 * 8 -
                                   IndexExpr(x[1]) + 100)
                               .emit(b);
                         }),
                lane / 8 % 2 * 8 - t + 100);
      EXPECT_EQ(evaluate({lane, t},
                         [&](ArrayRef<Value> x) {
                           return (IndexExpr(x[0]) + x[1]).ceilDiv(16).emit(b);
                         }),
                (lane + t + 15) / 16);
    }
  // A sliding window's first key goes below zero early: the sum wraps as a
  // signed index does.
  EXPECT_EQ(evaluate({3},
                     [&](ArrayRef<Value> x) {
                       return (IndexExpr(x[0]) + (1 - 8)).emit(b);
                     }),
            -4);
}

TEST_F(IndexExprTest, DividesUnsigned) {
  // 2^63 + 4 is negative as a signed index: an unsigned division halves it
  // to 2^62 + 2, a signed floor division would not.
  int64_t big = static_cast<int64_t>((uint64_t(1) << 63) + 4);
  EXPECT_EQ(evaluate({big},
                     [&](ArrayRef<Value> x) {
                       return (IndexExpr(x[0]) / 2).emit(b);
                     }),
            int64_t((uint64_t(1) << 62) + 2));
  EXPECT_EQ(evaluate({big},
                     [&](ArrayRef<Value> x) {
                       return (IndexExpr(x[0]) % 3).emit(b);
                     }),
            int64_t(((uint64_t(1) << 63) + 4) % 3));
}

TEST_F(IndexExprTest, CreatesOperandsLeftToRight) {
  // Both products are operands of one sum: the left one first, as written.
  func::FuncOp f = function(2, [&](ArrayRef<Value> x) {
    return (IndexExpr(x[0]) * 3 + IndexExpr(x[1]) * 5).emit(b);
  });
  EXPECT_EQ(ops(f), "arith.muli a0 3\n"
                    "arith.muli a1 5\n"
                    "arith.addi %0 %1\n"
                    "func.return %2\n");
}

TEST_F(IndexExprTest, SubtractsAndNamesEachValueOnce) {
  // x - y·8 is one product and one subtraction; x - 7 one subtraction; a
  // value named twice is one dimension (x + x = x·2).
  func::FuncOp f = function(2, [&](ArrayRef<Value> x) {
    IndexExpr lhs = IndexExpr(x[0]) - IndexExpr(x[1]) * 8 - 7;
    Value first = lhs.emit(b);
    return (IndexExpr(first) + first).emit(b);
  });
  EXPECT_EQ(ops(f), "arith.muli a1 8\n"
                    "arith.subi a0 %0\n"
                    "arith.subi %1 7\n"
                    "arith.muli %2 2\n"
                    "func.return %3\n");
}

TEST_F(IndexExprTest, NamedValueAloneCreatesNothing) {
  func::FuncOp f = function(1, [&](ArrayRef<Value> x) {
    return IndexExpr(x[0]).emit(b);
  });
  EXPECT_EQ(ops(f), "func.return a0\n");
}
} // namespace
