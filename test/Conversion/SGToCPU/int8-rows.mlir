// RUN: sgc-opt %s -split-input-file -sg-select-kernels=target=cpu -convert-sg-to-cpu | FileCheck %s

// Q4_0 weights under bf16 rows, K = 128 (two pairs of blocks): the decode
// rows' activations are quantized once a call, where the variant has the
// int8 rows (@sgc_cpu_int8_dot) and the call has no tiles, into 256-byte
// records a pair of blocks (4 K bytes a token); the kernel takes them after
// the bf16 rows.
// CHECK: llvm.mlir.global external constant @sgc_cpu_int8_dot() {{.*}} : i8
// CHECK-LABEL: func.func @proj(
// CHECK: %[[XS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x128xf32>
// CHECK: call @sgc_rows_128_bf16_b(
// CHECK: %[[TILES:.*]] = arith.cmpi sge, %{{.*}}, %c6{{.*}} : index
// CHECK: %[[FEW:.*]] = arith.xori %[[TILES]], %true{{.*}} : i1
// CHECK: %[[ADDR:.*]] = llvm.mlir.addressof @sgc_cpu_int8_dot : !llvm.ptr
// CHECK: %[[ON:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i8
// CHECK: %[[QUANT:.*]] = arith.andi %[[FEW]], %[[ON]] : i1
// CHECK: %[[ROWS:.*]] = arith.select %[[QUANT]], %{{.*}}, %c0{{.*}} : index
// CHECK: %[[REC:.*]] = memref.alloc(%[[ROWS]]) {alignment = 64 : i64} : memref<?x512xi8>
// CHECK: call @sgc_quant_rows_128_8(%[[XS]], %[[REC]])
// CHECK: call @sgc_dispatch_linear_64x128_q4_0_bf16_dot_i8(%{{.*}}, %[[XS]], %{{.*}}, %[[REC]], %{{.*}}, %{{.*}})
// The records: per block of 32 its two digits (t = x * 127 / max, rounded
// to even; the rest in 256ths, at most 127), the start -8 * sum(256 high +
// low) in its first i32 lane, and max / 127 / 256 over its 8 f32 lanes.
// CHECK-LABEL: func.func private @sgc_quant_rows_128_8(
// CHECK: vector.reduction <maxnumf>
// CHECK: %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[HI:.*]] = math.roundeven %[[T]] : vector<16xf32>
// CHECK: %[[REST:.*]] = arith.subf %[[T]], %[[HI]] : vector<16xf32>
// CHECK: arith.mulf %[[REST]], %{{.*}} : vector<16xf32>
// CHECK: arith.minsi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x512xi8>, vector<16xi8>
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// CHECK: %[[START:.*]] = arith.muli %[[SUM]], %c-8_i32 : i32
// CHECK: vector.insert %[[START]], %{{.*}} [0] : i32 into vector<8xi32>
// CHECK: arith.divf %{{.*}}, %cst{{.*}} : f32
// CHECK: vector.bitcast %{{.*}} : vector<8xf32> to vector<32xi8>
// The kernel: behind the flag, each step one pair of blocks: the nibbles
// as [b0, b0 >> 4, b1, b1 >> 4] & 15 (elements in order), the two f16
// scales over 8 lanes each, the high digits' dot product shifted by 8 and
// started at the records' starts, then the low digits', one f32 FMA.
// CHECK-LABEL: func.func @sgc_linear_64x128_q4_0_bf16_dot_i8(
// CHECK-SAME: %{{.*}}: memref<?x128xf32>, %{{.*}}: memref<?x160xbf16>, %[[KREC:[a-z0-9]+]]: memref<?x512xi8>, %[[W:[a-z0-9]+]]: memref<64x72xi8>
// CHECK: llvm.mlir.addressof @sgc_cpu_int8_dot : !llvm.ptr
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, {{.*}}, 31] : vector<16xi8>, vector<16xi8>
// CHECK: arith.constant dense<[0, 0, 4, 4, 0, 0, 4, 4]> : vector<8xi64>
// CHECK: %[[NIB:.*]] = arith.andi %{{.*}}, %{{.*}} : vector<64xi8>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1] : vector<1xf16>, vector<1xf16>
// CHECK: %[[HIGH:.*]] = vector.load %[[KREC]][%{{.*}}, %{{.*}}] : memref<?x512xi8>, vector<64xi8>
// CHECK: %[[D1:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[NIB]], %[[HIGH]])
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[D1]], %{{.*}} : vector<16xi32>
// CHECK: %[[BEGIN:.*]] = arith.addi %[[SHIFTED]], %{{.*}} : vector<16xi32>
// CHECK: %[[D2:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[BEGIN]], %[[NIB]], %{{.*}})
// CHECK: %[[F:.*]] = arith.sitofp %[[D2]] : vector<16xi32> to vector<16xf32>
// CHECK: vector.fma %[[F]], %{{.*}}, %{{.*}} : vector<16xf32>
func.func @proj(%x: tensor<?x128xbf16>, %w: tensor<64x128x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16> {
  %y = sg.linear %x, %w : (tensor<?x128xbf16>, tensor<64x128x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----

// Q8_0: the bytes with the sign bit flipped (weights + 128), so the start
// is -128 * sum. Q6_K: q + 32, the start of every 16 (its scales change
// there) in lanes 0 and 4 of the block's 8. f32 rows and an odd number of
// blocks (K = 96) take no int8 rows.
// CHECK-LABEL: func.func @others(
// CHECK: call @sgc_quant_rows_128_128(
// CHECK: call @sgc_dispatch_linear_64x128_q8_0_bf16_dot_i8(
// CHECK: call @sgc_quant_rows_256_32_s16(
// CHECK: call @sgc_dispatch_linear_64x256_q6_k_bf16_dot_i8(
// CHECK: call @sgc_dispatch_linear_64x128_q4_0_f32(
// CHECK: call @sgc_dispatch_linear_64x96_q4_0_bf16_dot(
// CHECK-LABEL: func.func private @sgc_quant_rows_128_128(
// CHECK: arith.constant -128 : i32
// CHECK: vector.insert %{{.*}}, %{{.*}} [0] : i32 into vector<8xi32>
// CHECK-LABEL: func.func @sgc_linear_64x128_q8_0_bf16_dot_i8(
// CHECK: %[[JOINED:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1, {{.*}}, 63] : vector<32xi8>, vector<32xi8>
// CHECK: arith.xori %[[JOINED]], %{{.*}} : vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-LABEL: func.func private @sgc_quant_rows_256_32_s16(
// CHECK: arith.constant -32 : i32
// CHECK: %[[S0:.*]] = vector.insert %{{.*}}, %{{.*}} [0] : i32 into vector<8xi32>
// CHECK: vector.insert %{{.*}}, %[[S0]] [4] : i32 into vector<8xi32>
// The pair's 6-bit q: ql's nibble (shifted 0 or 4) | qh's two bits, the
// half's 32 bytes twice, moved to bits 4 and 5; the four sub-block scales
// (4 bytes) over 4 lanes each, times d.
// CHECK-LABEL: func.func @sgc_linear_64x256_q6_k_bf16_dot_i8(
// CHECK: %[[QL:.*]] = vector.load %{{.*}} : memref<64x210xi8>, vector<64xi8>
// CHECK: %[[QH:.*]] = vector.load %{{.*}} : memref<64x210xi8>, vector<32xi8>
// CHECK: vector.shuffle %[[QH]], %[[QH]] [0, 1, {{.*}}, 31, 0, 1, {{.*}}, 31] : vector<32xi8>, vector<32xi8>
// CHECK: arith.constant dense<48> : vector<64xi8>
// CHECK: %[[Q:.*]] = arith.ori %{{.*}}, %{{.*}} : vector<64xi8>
// CHECK: %[[SC:.*]] = vector.load %{{.*}} : memref<64x210xi8>, vector<4xi8>
// CHECK: vector.shuffle %[[SC]], %[[SC]] [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3] : vector<4xi8>, vector<4xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[Q]], %{{.*}})
func.func @others(%x: tensor<?x128xbf16>, %w8: tensor<64x128x!sg.quant<"Q8_0">>,
                  %x6: tensor<?x256xbf16>, %w6: tensor<64x256x!sg.quant<"Q6_K">>,
                  %xf: tensor<?x128xf32>, %w4: tensor<64x128x!sg.quant<"Q4_0">>,
                  %xo: tensor<?x96xbf16>, %wo: tensor<64x96x!sg.quant<"Q4_0">>)
    -> (tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xf32>, tensor<?x64xbf16>) {
  %a = sg.linear %x, %w8 : (tensor<?x128xbf16>, tensor<64x128x!sg.quant<"Q8_0">>) -> tensor<?x64xbf16>
  %b = sg.linear %x6, %w6 : (tensor<?x256xbf16>, tensor<64x256x!sg.quant<"Q6_K">>) -> tensor<?x64xbf16>
  %c = sg.linear %xf, %w4 : (tensor<?x128xf32>, tensor<64x128x!sg.quant<"Q4_0">>) -> tensor<?x64xf32>
  %d = sg.linear %xo, %wo : (tensor<?x96xbf16>, tensor<64x96x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16>
  return %a, %b, %c, %d : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x64xf32>, tensor<?x64xbf16>
}

// -----

// Records past 24 KiB (K = 6,208: 24,832 bytes a token): outside batched
// decode, 4 rows a pass (16 sums: 4 rows x 4 chains), each row's weights
// and scales its own, the records loaded for each (LLVM keeps one load for
// the 4); the rows a pass leaves take the one-row path after it.
// CHECK-LABEL: func.func @sgc_linear_16x6208_q4_0_bf16_dot_i8(
// CHECK-SAME: %[[REC:[a-z0-9]+]]: memref<?x24832xi8>, %[[W:[a-z0-9]+]]: memref<16x3492xi8>
// CHECK: scf.for %[[N0:.*]] = %{{.*}} to %[[END:.*]] step %c4 {
// CHECK: %[[R0:.*]] = arith.addi %[[N0]], %c0
// CHECK: %[[R1:.*]] = arith.addi %[[N0]], %c1
// CHECK: %[[R2:.*]] = arith.addi %[[N0]], %c2
// CHECK: %[[R3:.*]] = arith.addi %[[N0]], %c3
// CHECK: scf.for %{{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-4: memref.prefetch %[[W]]
// CHECK: vector.load %[[W]][%[[R0]], %{{.*}}] : memref<16x3492xi8>, vector<16xi8>
// CHECK: %[[HIGH:.*]] = vector.load %[[REC]][%{{.*}}, %{{.*}}] : memref<?x24832xi8>, vector<64xi8>
// CHECK: vector.load %[[W]][%[[R1]], %{{.*}}] : memref<16x3492xi8>, vector<16xi8>
// CHECK: vector.load %[[W]][%[[R2]], %{{.*}}] : memref<16x3492xi8>, vector<16xi8>
// CHECK: vector.load %[[W]][%[[R3]], %{{.*}}] : memref<16x3492xi8>, vector<16xi8>
// CHECK: scf.for %{{.*}} = %[[END]] to %{{.*}} step %c1 {
func.func @wide(%xl: tensor<?x6208xbf16>, %wl: tensor<16x6208x!sg.quant<"Q4_0">>) -> tensor<?x16xbf16> {
  %e = sg.linear %xl, %wl : (tensor<?x6208xbf16>, tensor<16x6208x!sg.quant<"Q4_0">>) -> tensor<?x16xbf16>
  return %e : tensor<?x16xbf16>
}

// -----

// Q4_K (K is always a multiple of 256): the groups of Int8Q4Groups.cpp, a
// super-block each, on the same i16 records as Q4_0 but with -sa * sum(q)
// (its minimum multiplies it, not a zero point of 8). A pair is one chunk
// of 32 bytes: bytes 0-15 twice a word, shifted 0 (words 0-15: the low
// nibbles, block 2p) or 12 (16-31: the high, block 2p + 1), & 15; bytes
// 16-31 likewise for elements 16-31. The super-block's 8 scales times the
// records' sa, its 8 minimums against the records' -sa * sum(q).
// CHECK-LABEL: func.func @q4k(
// CHECK: call @sgc_quant_rows_256_q4kg(
// CHECK: call @sgc_dispatch_linear_64x256_q4_k_bf16_dot_i8(
// CHECK-LABEL: func.func private @sgc_quant_rows_256_q4kg(
// CHECK: %[[SA:.*]] = arith.divf %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[SUMQ:.*]] = vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// CHECK: %[[SUMF:.*]] = arith.sitofp %[[SUMQ]] : i32 to f32
// CHECK: %[[SUMX:.*]] = arith.mulf %[[SUMF]], %[[SA]] : f32
// CHECK: arith.mulf %[[SUMX]], %cst{{.*}} : f32
// CHECK-LABEL: func.func @sgc_linear_64x256_q4_k_bf16_dot_i8(
// CHECK: memref.prefetch %{{.*}}, read, locality<2>, data : memref<64x144xi8>
// CHECK: %[[BY:.*]] = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12]> : vector<32xi16>
// CHECK: %[[CHUNK:.*]] = vector.load %{{.*}} : memref<64x144xi8>, vector<32xi8>
// CHECK: %[[LOW:.*]] = vector.shuffle %[[CHUNK]], %[[CHUNK]] [0, 0, 1, 1, {{.*}}, 15, 15, 0, 0, {{.*}}, 15, 15] : vector<32xi8>, vector<32xi8>
// CHECK: %[[LW:.*]] = vector.bitcast %[[LOW]] : vector<64xi8> to vector<32xi16>
// CHECK: %[[LS:.*]] = arith.shrui %[[LW]], %[[BY]] : vector<32xi16>
// CHECK: %[[LN:.*]] = arith.andi %[[LS]], %{{.*}} : vector<32xi16>
// CHECK: vector.shuffle %[[CHUNK]], %[[CHUNK]] [16, 16, 17, 17, {{.*}}, 31, 31, 16, 16, {{.*}}, 31, 31] : vector<32xi8>, vector<32xi8>
// CHECK: %[[HN:.*]] = arith.andi %{{.*}}, %{{.*}} : vector<32xi16>
// CHECK: %[[SM:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[SC:.*]] = vector.shuffle %[[SM]], %[[SM]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf32>, vector<16xf32>
// CHECK: %[[MN:.*]] = vector.shuffle %[[SM]], %[[SM]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf32>, vector<16xf32>
// CHECK: arith.mulf %[[SC]], %{{.*}} : vector<8xf32>
// CHECK: vector.fma %[[MN]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: %[[D1:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.512"(%{{.*}}, %[[LN]], %{{.*}})
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.512"(%[[D1]], %[[HN]], %{{.*}})
func.func @q4k(%x: tensor<?x256xbf16>, %w: tensor<64x256x!sg.quant<"Q4_K">>) -> tensor<?x64xbf16> {
  %y = sg.linear %x, %w : (tensor<?x256xbf16>, tensor<64x256x!sg.quant<"Q4_K">>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}

// -----

// Q4_0 over K a multiple of 256 (Int8Q4Groups.cpp): its own records, a
// group of 256 weights in 576 bytes: each activation one i16 (x * 32767 /
// max, rounded to even, clamped), x_lo (elements 0-15 of each block of a
// pair) and x_hi (16-31) 128 bytes a pair, then the 8 blocks' max / 32767
// and -8 * that * sum(q) as f32.
// CHECK-LABEL: func.func @groups(
// CHECK: %[[GREC:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x2048xi8>
// CHECK: call @sgc_quant_rows_512_q4g(%{{.*}}, %[[GREC]])
// CHECK: call @sgc_dispatch_linear_64x512_q4_0_bf16_dot_i8(
// CHECK-LABEL: func.func private @sgc_quant_rows_512_q4g(
// CHECK: vector.reduction <maxnumf>
// CHECK: %[[SA:.*]] = arith.divf %{{.*}}, %cst{{.*}} : f32
// CHECK: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: arith.minsi %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: arith.muli %{{.*}}, %c576{{.*}} : index
// CHECK: arith.trunci %{{.*}} : vector<16xi32> to vector<16xi16>
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x2048xi8>, vector<32xi8>
// CHECK: %[[SUMQ:.*]] = vector.reduction <add>, %{{.*}} : vector<16xi32> into i32
// CHECK: %[[SUMF:.*]] = arith.sitofp %[[SUMQ]] : i32 to f32
// CHECK: %[[SUMX:.*]] = arith.mulf %[[SUMF]], %[[SA]] : f32
// CHECK: arith.mulf %[[SUMX]], %cst{{.*}} : f32
// The kernel, a group a step: the weights 8 KiB ahead, into L1 (locality
// 3) where the variant's @sgc_cpu_prefetch_to_l1 says so, else into L2
// (locality 2), each pair's 36 bytes by a masked load, its nibble bytes twice a word
// (& 15: the low nibble, >> 12: the high), the 8 f16 scales (words 0 and 9
// of each pair) times the records' scales, the zero point's sums in their
// own 8 lanes, and per pair two vpdpwssd and one FMA by its blocks' scales.
// CHECK-LABEL: func.func @sgc_linear_64x512_q4_0_bf16_dot_i8(
// CHECK-SAME: %[[GR:[a-z0-9]+]]: memref<?x2048xi8>, %[[GW:[a-z0-9]+]]: memref<64x288xi8>
// CHECK: llvm.mlir.addressof @sgc_cpu_prefetch_to_l1 : !llvm.ptr
// CHECK: %[[TOL1:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : i8
// CHECK: scf.for
// CHECK: scf.if %[[TOL1]] {
// CHECK-NEXT: arith.constant 8192 : index
// CHECK-COUNT-3: memref.prefetch %[[GW]][%{{.*}}, %{{.*}}], read, locality<3>, data
// CHECK: } else {
// CHECK-COUNT-3: memref.prefetch %[[GW]][%{{.*}}, %{{.*}}], read, locality<2>, data
// CHECK: }
// CHECK: %[[RAW:.*]] = vector.maskedload %[[GW]][%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<64x288xi8>, vector<64xi1>, vector<64xi8> into vector<64xi8>
// CHECK: %[[TWICE:.*]] = vector.shuffle %[[RAW]], %[[RAW]] [2, 2, 3, 3, {{.*}}, 17, 17, 20, 20, {{.*}}, 35, 35] : vector<64xi8>, vector<64xi8>
// CHECK: %[[WORDS:.*]] = vector.bitcast %[[TWICE]] : vector<64xi8> to vector<32xi16>
// CHECK: %[[C15:.*]] = arith.constant dense<15> : vector<32xi16>
// CHECK: %[[LO:.*]] = arith.andi %[[WORDS]], %[[C15]] : vector<32xi16>
// CHECK: %[[C12:.*]] = arith.constant dense<12> : vector<32xi16>
// CHECK: %[[HI:.*]] = arith.shrui %[[WORDS]], %[[C12]] : vector<32xi16>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 9, 32, 41] : vector<32xi16>, vector<32xi16>
// CHECK: %[[WS:.*]] = arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: %[[BOTH:.*]] = arith.mulf %[[WS]], %{{.*}} : vector<8xf32>
// CHECK: vector.fma %[[WS]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: %[[D1:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.512"(%{{.*}}, %[[LO]], %{{.*}})
// CHECK: %[[D2:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpwssd.512"(%[[D1]], %[[HI]], %{{.*}})
// CHECK: %[[PS:.*]] = vector.shuffle %[[BOTH]], %[[BOTH]] [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1] : vector<8xf32>, vector<8xf32>
// CHECK: %[[F:.*]] = arith.sitofp %[[D2]] : vector<16xi32> to vector<16xf32>
// CHECK: vector.fma %[[F]], %[[PS]], %{{.*}} : vector<16xf32>
func.func @groups(%x: tensor<?x512xbf16>, %w: tensor<64x512x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16> {
  %y = sg.linear %x, %w : (tensor<?x512xbf16>, tensor<64x512x!sg.quant<"Q4_0">>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}
