//===- IndexExpr.cpp - a kernel's index arithmetic as it reads ------------===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Common/IndexExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineExprVisitor.h"

using namespace mlir;
using namespace mlir::sgc;

IndexExpr::IndexExpr(Value v)
    : expr(getAffineDimExpr(0, v.getContext())), dims({v}) {}

IndexExpr IndexExpr::combine(const IndexExpr &x, const IndexExpr &y,
                             AffineExpr (*op)(AffineExpr, AffineExpr)) {
  SmallVector<Value, 4> dims(x.dims);
  SmallVector<AffineExpr> renamed;
  for (Value v : y.dims) {
    auto *it = llvm::find(dims, v);
    if (it == dims.end()) {
      dims.push_back(v);
      it = dims.end() - 1;
    }
    renamed.push_back(getAffineDimExpr(it - dims.begin(), v.getContext()));
  }
  return IndexExpr(op(x.expr, y.expr.replaceDims(renamed)), std::move(dims));
}

namespace mlir::sgc {
IndexExpr operator+(const IndexExpr &x, const IndexExpr &y) {
  return IndexExpr::combine(x, y,
                            [](AffineExpr a, AffineExpr b) { return a + b; });
}
IndexExpr operator-(const IndexExpr &x, const IndexExpr &y) {
  return IndexExpr::combine(x, y,
                            [](AffineExpr a, AffineExpr b) { return a - b; });
}
IndexExpr operator+(const IndexExpr &x, int64_t c) {
  return x.withExpr(x.expr + c);
}
IndexExpr operator-(const IndexExpr &x, int64_t c) {
  return x.withExpr(x.expr - c);
}
IndexExpr operator*(const IndexExpr &x, int64_t c) {
  return x.withExpr(x.expr * c);
}
IndexExpr operator/(const IndexExpr &x, int64_t c) {
  assert(c > 0 && "divides by a positive constant");
  return x.withExpr(x.expr.floorDiv(c));
}
IndexExpr operator%(const IndexExpr &x, int64_t c) {
  assert(c > 0 && "divides by a positive constant");
  return x.withExpr(x.expr % c);
}
} // namespace mlir::sgc

IndexExpr IndexExpr::ceilDiv(int64_t c) const {
  assert(c > 0 && "divides by a positive constant");
  return withExpr(expr.ceilDiv(c));
}

namespace {
/// Creates an expression's ops, operands first, left before right.
class IndexEmitter : public AffineExprVisitor<IndexEmitter, Value> {
public:
  IndexEmitter(ImplicitLocOpBuilder &b, ArrayRef<Value> dims)
      : b(b), dims(dims) {}

  Value visitDimExpr(AffineDimExpr e) { return dims[e.getPosition()]; }
  Value visitConstantExpr(AffineConstantExpr e) {
    return arith::ConstantIndexOp::create(b, e.getValue());
  }
  Value visitSymbolExpr(AffineSymbolExpr) {
    llvm_unreachable("index expressions have no symbols");
  }
  Value visitAddExpr(AffineBinaryOpExpr e) {
    Value lhs = visit(e.getLHS());
    // x - y is x + y * -c (c > 0), x - c is x + -c: a subtraction.
    if (auto c = dyn_cast<AffineConstantExpr>(e.getRHS());
        c && c.getValue() < 0)
      return arith::SubIOp::create(b, lhs, constant(-c.getValue()));
    if (auto mul = dyn_cast<AffineBinaryOpExpr>(e.getRHS());
        mul && mul.getKind() == AffineExprKind::Mul) {
      auto c = dyn_cast<AffineConstantExpr>(mul.getRHS());
      if (c && c.getValue() < 0) {
        Value y = visit(mul.getLHS());
        if (c.getValue() != -1)
          y = arith::MulIOp::create(b, y, constant(-c.getValue()));
        return arith::SubIOp::create(b, lhs, y);
      }
    }
    Value rhs = visit(e.getRHS());
    return arith::AddIOp::create(b, lhs, rhs);
  }
  Value visitMulExpr(AffineBinaryOpExpr e) {
    Value lhs = visit(e.getLHS());
    Value rhs = visit(e.getRHS());
    return arith::MulIOp::create(b, lhs, rhs);
  }
  Value visitFloorDivExpr(AffineBinaryOpExpr e) {
    Value lhs = visit(e.getLHS());
    Value rhs = visit(e.getRHS());
    return arith::DivUIOp::create(b, lhs, rhs);
  }
  Value visitCeilDivExpr(AffineBinaryOpExpr e) {
    // (x + c - 1) / c.
    int64_t c = cast<AffineConstantExpr>(e.getRHS()).getValue();
    Value lhs = visit(e.getLHS());
    Value sum = arith::AddIOp::create(b, lhs, constant(c - 1));
    return arith::DivUIOp::create(b, sum, constant(c));
  }
  Value visitModExpr(AffineBinaryOpExpr e) {
    Value lhs = visit(e.getLHS());
    Value rhs = visit(e.getRHS());
    return arith::RemUIOp::create(b, lhs, rhs);
  }

private:
  Value constant(int64_t v) { return arith::ConstantIndexOp::create(b, v); }

  ImplicitLocOpBuilder &b;
  ArrayRef<Value> dims;
};
} // namespace

Value IndexExpr::emit(ImplicitLocOpBuilder &b) const {
  return IndexEmitter(b, dims).visit(expr);
}
