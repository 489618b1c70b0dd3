// RUN: sgc-opt %s --sgc-expand-bf16-rounding | FileCheck %s
// sgc-expand-bf16-rounding rounds vectors of f32 to bf16 in integer code: a NaN becomes
// the quiet NaN 0x7fc00000 on the f32 lanes, then 0x7fff plus
// bit 16 is added and the high half kept. No select on i16 lanes is left
// (AVX2 took that one lane at a time); other truncations stay.

// CHECK-LABEL: func.func @round_vector
// CHECK-DAG:   %[[NAN:.*]] = arith.constant dense<0x7FC00000> : vector<16xf32>
// CHECK-DAG:   %[[BIAS:.*]] = arith.constant dense<32767> : vector<16xi32>
// CHECK-DAG:   %[[ONE:.*]] = arith.constant dense<1> : vector<16xi32>
// CHECK-DAG:   %[[C16:.*]] = arith.constant dense<16> : vector<16xi32>
// CHECK:       %[[ISNAN:.*]] = arith.cmpf uno, %[[X:.*]], %[[X]] : vector<16xf32>
// CHECK:       %[[SEL:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[X]] : vector<16xi1>, vector<16xf32>
// CHECK:       %[[BITS:.*]] = arith.bitcast %[[SEL]] : vector<16xf32> to vector<16xi32>
// CHECK:       %[[SH:.*]] = arith.shrui %[[BITS]], %[[C16]]
// CHECK:       %[[B16:.*]] = arith.andi %[[SH]], %[[ONE]]
// CHECK:       %[[R:.*]] = arith.addi %[[B16]], %[[BIAS]]
// CHECK:       %[[SUM:.*]] = arith.addi %[[BITS]], %[[R]]
// CHECK:       %[[HI:.*]] = arith.shrui %[[SUM]], %[[C16]]
// CHECK:       %[[T:.*]] = arith.trunci %[[HI]] : vector<16xi32> to vector<16xi16>
// CHECK:       %[[B:.*]] = arith.bitcast %[[T]] : vector<16xi16> to vector<16xbf16>
// CHECK:       return %[[B]]
// CHECK-NOT:   arith.truncf
func.func @round_vector(%x: vector<16xf32>) -> vector<16xbf16> {
  %r = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %r : vector<16xbf16>
}

// A scalar keeps arith-expand's i16 select (a cmov).
// CHECK-LABEL: func.func @round_scalar
// CHECK-NEXT:  arith.truncf {{.*}} : f32 to bf16
func.func @round_scalar(%x: f32) -> bf16 {
  %r = arith.truncf %x : f32 to bf16
  return %r : bf16
}

// CHECK-LABEL: func.func @others_stay
// CHECK:       arith.truncf {{.*}} : f32 to f16
// CHECK:       arith.truncf {{.*}} : f64 to bf16
// CHECK:       arith.truncf {{.*}} to_nearest_away : f32 to bf16
func.func @others_stay(%x: f32, %y: f64) -> (f16, bf16, bf16) {
  %h = arith.truncf %x : f32 to f16
  %d = arith.truncf %y : f64 to bf16
  %a = arith.truncf %x to_nearest_away : f32 to bf16
  return %h, %d, %a : f16, bf16, bf16
}
