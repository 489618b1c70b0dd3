// RUN: sgc-opt %s -split-input-file -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s

// bf16 rows and weights with an even K: the rows are written as f32 and as
// bf16, and the kernel carries the bf16 tiles behind the per-variant flag.
// CHECK: llvm.mlir.global external constant @sgc_cpu_bf16_dot() {{.*}} : i8
// CHECK-LABEL: func.func @proj(
// CHECK: %[[XS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x96xf32>
// CHECK: %[[XB:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x96xbf16>
// CHECK: call @sgc_rows_96_bf16_b(%{{.*}}, %[[XS]], %[[XB]])
// CHECK: call @sgc_dispatch_linear_64x96_bf16_bf16_dot(%{{.*}}, %[[XS]], %[[XB]], %{{.*}}, %{{.*}})
// The rows, once: f32 for the f32 tiles and rows, bf16 for the bf16 tiles.
// CHECK-LABEL: func.func private @sgc_rows_96_bf16_b(
// CHECK-SAME: %[[RX:[a-z0-9]+]]: memref<?x96xbf16>, %[[RXS:[a-z0-9]+]]: memref<?x96xf32>, %[[RXB:[a-z0-9]+]]: memref<?x96xbf16>)
// CHECK: %[[V:.*]] = memref.load %[[RX]]
// CHECK: %[[VF:.*]] = arith.extf %[[V]] : bf16 to f32
// CHECK: memref.store %[[VF]], %[[RXS]]
// CHECK: memref.store %[[V]], %[[RXB]]
// The kernel: the flag and the tile condition choose the path.
// CHECK-LABEL: func.func @sgc_linear_64x96_bf16_bf16_dot(
// CHECK-SAME: %[[KXS:[a-z0-9]+]]: memref<?x96xf32>, %[[KXB:[a-z0-9]+]]: memref<?x96xbf16>, %[[W:[a-z0-9]+]]: memref<64x96xbf16>
// CHECK: %[[ADDR:.*]] = llvm.mlir.addressof @sgc_cpu_bf16_dot : !llvm.ptr
// CHECK: %[[FLAG:.*]] = llvm.load %[[ADDR]] : !llvm.ptr -> i8
// CHECK: %[[ON:.*]] = arith.cmpi ne, %[[FLAG]], %{{.*}} : i8
// The runtime's choice for its host: the tiles on FMAs (sgc/abi.h).
// CHECK: %[[KNOB:.*]] = llvm.mlir.addressof @sgc_cpu_bf16_on_fma : !llvm.ptr
// CHECK: %[[KNOBV:.*]] = llvm.load %[[KNOB]] : !llvm.ptr -> i64
// CHECK: %[[FMA:.*]] = arith.cmpi ne, %[[KNOBV]], %{{.*}} : i64
// CHECK: %[[DOT:.*]] = arith.andi %[[TILES:.*]], %[[ON]] : i1
// CHECK: %[[SPILL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<12x16xf32>
// CHECK: scf.if %[[DOT]] {
// The pair panels of the call's row blocks, packed once: each row's bf16
// pairs, zero past the rows' end.
// CHECK: %[[PANEL:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x32xbf16>
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<64x96xbf16>, vector<2xbf16>
// CHECK: vector.store %{{.*}}, %[[PANEL]][%{{.*}}, %{{.*}}] : memref<?x32xbf16>, vector<2xbf16>
// Then per super-block of tokens, per row block, its tiles.
// CHECK: scf.for %[[TB:.*]] = %{{.*}} to %{{.*}} step %c2724
// CHECK: scf.for %[[NB:.*]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: scf.for %[[T0:.*]] = %[[TB]] to %{{.*}} step %c12
// With the knob set, the same sums on FMAs: each K pair of the panel widened
// in registers (odd k: the high halves masked; even k: the low halves
// shifted up), and per token the odd product added first, then the even
// one, activations broadcast from the f32 rows: vdpbf16ps's order.
// CHECK: scf.if %[[FMA]] {
// CHECK-DAG: %[[HIGH:.*]] = arith.constant dense<-65536> : vector<16xi32>
// CHECK-DAG: %[[HALF:.*]] = arith.constant dense<16> : vector<16xi32>
// CHECK-DAG: %[[T00:.*]] = arith.addi %[[T0]], %c0{{.*}} : index
// CHECK: %[[WW:.*]] = vector.load %[[PANEL]][%{{.*}}, %{{.*}}] : memref<?x32xbf16>, vector<32xbf16>
// CHECK: %[[WORDS:.*]] = vector.bitcast %[[WW]] : vector<32xbf16> to vector<16xi32>
// CHECK: %[[ODDI:.*]] = arith.andi %[[WORDS]], %[[HIGH]] : vector<16xi32>
// CHECK: %[[ODD:.*]] = vector.bitcast %[[ODDI]] : vector<16xi32> to vector<16xf32>
// CHECK: %[[EVENI:.*]] = arith.shli %[[WORDS]], %[[HALF]] : vector<16xi32>
// CHECK: %[[EVEN:.*]] = vector.bitcast %[[EVENI]] : vector<16xi32> to vector<16xf32>
// CHECK: %[[COLE:.*]] = arith.muli %{{.*}}, %c2{{.*}} : index
// CHECK: %[[COLO:.*]] = arith.addi %[[COLE]], %c1{{.*}} : index
// CHECK: %[[XO:.*]] = memref.load %[[KXS]][%[[T00]], %[[COLO]]] : memref<?x96xf32>
// CHECK: %[[XOV:.*]] = vector.broadcast %[[XO]] : f32 to vector<16xf32>
// CHECK: %[[SUM:.*]] = vector.fma %[[XOV]], %[[ODD]], %{{.*}} : vector<16xf32>
// CHECK: %[[XE:.*]] = memref.load %[[KXS]][%[[T00]], %[[COLE]]] : memref<?x96xf32>
// CHECK: %[[XEV:.*]] = vector.broadcast %[[XE]] : f32 to vector<16xf32>
// CHECK: vector.fma %[[XEV]], %[[EVEN]], %[[SUM]] : vector<16xf32>
// CHECK-COUNT-22: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT: x86vector
// CHECK: vector.store %{{.*}}, %[[SPILL]][%{{.*}}, %{{.*}}] : memref<12x16xf32>, vector<16xf32>
// Unset (the default), vdpbf16ps.
// CHECK: } else {
// One step: 16 rows x 2 K from the panel, each token's pair broadcast, one
// dot product per token of the 12, the broadcast pair its last source (the
// operand x86 lets be memory: LLVM folds the load and broadcast into the
// vdpbf16ps as {1to16}; B2 prefill ran 1.2x faster on znver4 than with a
// vbroadcastss of its own, the same bits).
// CHECK: %[[WV:.*]] = vector.load %[[PANEL]][%{{.*}}, %{{.*}}] : memref<?x32xbf16>, vector<32xbf16>
// CHECK: %[[PAIR:.*]] = vector.load %[[KXB]][%{{.*}}, %{{.*}}] : memref<?x96xbf16>, vector<2xbf16>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[X:.*]] = vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK: %[[XV:.*]] = vector.bitcast %[[X]] : vector<16xi32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[WV]], %[[XV]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-11: x86vector.avx512.dot %{{.*}}, %[[WV]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: %[[WV]]
// CHECK: vector.load %[[PANEL]]
// Spilled once per tile, the epilogue loops over the tile's tokens.
// CHECK: vector.store %{{.*}}, %[[SPILL]][%{{.*}}, %{{.*}}] : memref<12x16xf32>, vector<16xf32>
// CHECK: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: memref.dealloc %[[PANEL]] : memref<?x32xbf16>
// The other path: the f32 tiles and the row kernel.
// CHECK: } else {
// CHECK: vector.fma
// CHECK-LABEL: func.func private @sgc_dispatch_linear_64x96_bf16_bf16_dot(
func.func @proj(%x: tensor<?x96xbf16>, %w: tensor<64x96xbf16>) -> tensor<?x64xbf16> {
  %y = sg.linear %x, %w : (tensor<?x96xbf16>, tensor<64x96xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----

// f32 rows (--compute-dtype=f32) or an odd K: no bf16 tiles, no bf16 copy,
// no flag.
// CHECK-LABEL: func.func @no_tiles(
// CHECK: call @sgc_rows_96_f32(
// CHECK: call @sgc_dispatch_linear_64x96_bf16_f32(
// CHECK: call @sgc_rows_95_bf16(
// CHECK: call @sgc_dispatch_linear_64x95_bf16_bf16(
// CHECK-LABEL: func.func @sgc_linear_64x96_bf16_f32(
// CHECK-NOT: x86vector
// CHECK-LABEL: func.func @sgc_linear_64x95_bf16_bf16(
// CHECK-NOT: x86vector
// CHECK-NOT: sgc_cpu_bf16_dot
// CHECK: return
func.func @no_tiles(%xf: tensor<?x96xf32>, %xo: tensor<?x95xbf16>,
                    %w: tensor<64x96xbf16>, %wo: tensor<64x95xbf16>)
    -> (tensor<?x64xf32>, tensor<?x64xbf16>) {
  %a = sg.linear %xf, %w : (tensor<?x96xf32>, tensor<64x96xbf16>) -> tensor<?x64xf32>
  %b = sg.linear %xo, %wo : (tensor<?x95xbf16>, tensor<64x95xbf16>) -> tensor<?x64xbf16>
  return %a, %b : tensor<?x64xf32>, tensor<?x64xbf16>
}

// -----

// A 1-token chunk (decode) calls the same kernel as a prefill chunk: its
// rows take the bf16 pairs from the bf16 copy, one vdpbf16ps per 32
// weights in 4 chains, behind the variant's flag; the f32 chains otherwise.
// K = 128 bf16 fill two 64-byte lines: the bf16 copy's rows are padded to
// three (160 columns), so a tile's token rows sit in different L1 sets
// (K = 96 above, three lines, is not padded).
// CHECK-LABEL: func.func @decode(
// CHECK: %[[DXBA:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x160xbf16>
// CHECK: call @sgc_rows_128_bf16_b(%{{.*}}, %{{.*}}, %[[DXBA]]) : (memref<?x128xbf16>, memref<?x128xf32>, memref<?x160xbf16>) -> ()
// CHECK: call @sgc_dispatch_linear_64x128_bf16_bf16_dot(
// CHECK-LABEL: func.func @sgc_linear_64x128_bf16_bf16_dot(
// CHECK-SAME: %{{.*}}: memref<?x128xf32>, %[[DXB:[a-z0-9]+]]: memref<?x160xbf16>, %[[DW:[a-z0-9]+]]: memref<64x128xbf16>
// CHECK: %[[DON:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i8
// CHECK: arith.andi %{{.*}}, %[[DON]] : i1
// CHECK: scf.if %[[DON]] -> (f32) {
// CHECK-COUNT-4: memref.prefetch %[[DW]]
// CHECK: %[[RW:.*]] = vector.load %[[DW]][%{{.*}}, %{{.*}}] : memref<64x128xbf16>, vector<32xbf16>
// CHECK: %[[RX:.*]] = vector.load %[[DXB]][%{{.*}}, %{{.*}}] : memref<?x160xbf16>, vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.*}}, %[[RX]], %[[RW]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-3: x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: } else {
// CHECK: vector.fma
func.func @decode(%x1: tensor<1x128xbf16>, %w: tensor<64x128xbf16>) -> tensor<1x64xbf16> {
  %c = sg.linear %x1, %w : (tensor<1x128xbf16>, tensor<64x128xbf16>) -> tensor<1x64xbf16>
  return %c : tensor<1x64xbf16>
}

// -----

// K = 170 (85 pairs): one whole chain step (64 pairs), one vector step (16),
// then 5 pairs one at a time, each its odd product first, as vdpbf16ps adds
// them.
// CHECK-LABEL: func.func @sgc_linear_8x170_bf16_bf16_dot(
// CHECK-SAME: %{{.*}}: memref<?x170xf32>, %[[TXB:[a-z0-9]+]]: memref<?x170xbf16>, %[[TW:[a-z0-9]+]]: memref<8x170xbf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{[_0-9]*}} step %c64{{[_0-9]*}} iter_args
// CHECK-COUNT-4: x86vector.avx512.dot
// CHECK: scf.for %{{.*}} = %{{.*}} to %c80{{[_0-9]*}} step %c16{{[_0-9]*}} iter_args
// CHECK: x86vector.avx512.dot
// CHECK: vector.reduction <add>
// CHECK: scf.for %[[P:.*]] = %{{.*}} to %c85{{[_0-9]*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK: %[[C0:.*]] = arith.muli %[[P]], %{{.*}} : index
// CHECK: %[[C1:.*]] = arith.addi %[[C0]], %{{.*}} : index
// CHECK: %[[WO:.*]] = memref.load %[[TW]][%{{.*}}, %[[C1]]]
// CHECK: %[[XO:.*]] = memref.load %[[TXB]][%{{.*}}, %[[C1]]]
// CHECK: %[[SO:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
// CHECK: memref.load %[[TW]][%{{.*}}, %[[C0]]]
// CHECK: memref.load %[[TXB]][%{{.*}}, %[[C0]]]
// CHECK: arith.addf %[[SO]], %{{.*}} : f32
func.func @decode_tail(%x1: tensor<1x170xbf16>, %w: tensor<8x170xbf16>) -> tensor<1x8xbf16> {
  %c = sg.linear %x1, %w : (tensor<1x170xbf16>, tensor<8x170xbf16>) -> tensor<1x8xbf16>
  return %c : tensor<1x8xbf16>
}

// -----

// K = 1024: an f32 row of 4 KiB. The f32 copy's rows are padded by one line
// (1040 columns), so the 12 token rows a bf16 tile on FMAs broadcasts from
// sit in different L1 sets (B1's down projection, K = 2048: 4 % faster
// prefill on Emerald Rapids); K = 96 and 128 above are not padded.
// CHECK-LABEL: func.func @wide(
// CHECK: %[[WXS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x1040xf32>
// CHECK: %[[WXB:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x1056xbf16>
// CHECK: call @sgc_rows_1024_bf16_b(%{{.*}}, %[[WXS]], %[[WXB]]) : (memref<?x1024xbf16>, memref<?x1040xf32>, memref<?x1056xbf16>) -> ()
// CHECK-LABEL: func.func @sgc_linear_16x1024_bf16_bf16_dot(
// CHECK-SAME: %[[KXS:[a-z0-9]+]]: memref<?x1040xf32>, %{{[a-z0-9]+}}: memref<?x1056xbf16>
// CHECK: memref.load %[[KXS]][%{{.*}}, %{{.*}}] : memref<?x1040xf32>
func.func @wide(%x: tensor<?x1024xbf16>, %w: tensor<16x1024xbf16>) -> tensor<?x16xbf16> {
  %y = sg.linear %x, %w : (tensor<?x1024xbf16>, tensor<16x1024xbf16>) -> tensor<?x16xbf16>
  return %y : tensor<?x16xbf16>
}
