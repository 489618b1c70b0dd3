// RUN: sgc-opt %s --sgc-approximate-math | FileCheck %s
// RUN: sgc-opt %s | FileCheck %s --check-prefix=WITHOUT
// sgc-approximate-math expands f32 math.tanh and math.exp, scalar and
// vector, into arithmetic; other math ops stay.

// CHECK-LABEL: func.func @gelu_softmax
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: math.sqrt
// CHECK: return
// WITHOUT: math.tanh
// WITHOUT: math.exp
func.func @gelu_softmax(%x: vector<8xf32>, %s: f32) -> (vector<8xf32>, f32, f32) {
  %t = math.tanh %x : vector<8xf32>
  %e = math.exp %s : f32
  %r = math.sqrt %s : f32
  return %t, %e, %r : vector<8xf32>, f32, f32
}
