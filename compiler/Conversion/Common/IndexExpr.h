//===- IndexExpr.h - a kernel's index arithmetic as it reads ----*- C++ -*-===//
//
// Part of sgc. `IndexExpr` is index arithmetic written the way the kernel
// says it: `IndexExpr(t0) + m / group` or `warp % splits * 16 + lane / 4`.
// Building one creates no op: it is an AffineExpr over the index values it
// names. `emit` then creates its arith ops once, each operand before its
// user and the left before the right, so the IR does not depend on the
// order in which the host compiler evaluates a call's arguments (GCC and
// clang differ). Division and remainder are unsigned (divui,
// remui): a kernel divides only indices that are never negative (threads,
// tokens, positions, slots). A sum or difference may be negative where a
// signed compare reads it (a sliding window's first key).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_CONVERSION_COMMON_INDEXEXPR_H
#define SGC_COMPILER_CONVERSION_COMMON_INDEXEXPR_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::sgc {

class IndexExpr {
public:
  /// The index value `v`.
  IndexExpr(Value v);

  friend IndexExpr operator+(const IndexExpr &x, const IndexExpr &y);
  friend IndexExpr operator-(const IndexExpr &x, const IndexExpr &y);
  friend IndexExpr operator+(const IndexExpr &x, int64_t c);
  friend IndexExpr operator-(const IndexExpr &x, int64_t c);
  friend IndexExpr operator*(const IndexExpr &x, int64_t c);
  /// Unsigned floor division and remainder by a positive constant.
  friend IndexExpr operator/(const IndexExpr &x, int64_t c);
  friend IndexExpr operator%(const IndexExpr &x, int64_t c);
  /// x / c rounded up.
  IndexExpr ceilDiv(int64_t c) const;

  /// The expression's value, computed by arith ops at `b`'s insertion point
  /// (a value it names alone is returned as is).
  Value emit(ImplicitLocOpBuilder &b) const;

private:
  IndexExpr(AffineExpr expr, SmallVector<Value, 4> dims)
      : expr(expr), dims(std::move(dims)) {}
  /// `y`'s expression over this one's values (values new to it appended).
  static IndexExpr combine(const IndexExpr &x, const IndexExpr &y,
                           AffineExpr (*op)(AffineExpr, AffineExpr));
  IndexExpr withExpr(AffineExpr e) const { return IndexExpr(e, dims); }

  AffineExpr expr;
  /// The values of the expression's dimensions d0, d1, ...
  SmallVector<Value, 4> dims;
};

} // namespace mlir::sgc

#endif // SGC_COMPILER_CONVERSION_COMMON_INDEXEXPR_H
