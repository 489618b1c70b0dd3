// RUN: sgc-opt %s -split-input-file -sg-plan-memory | FileCheck %s

// A chain of four steps: t0 = a(tokens), t1 = b(t0), t2 = c(t1), the logits
// t3 = d(t2). A step never writes over what it reads, so t1 sits next to t0;
// t2 reuses t0's bytes (t0 is dead after step 1) and t3 reuses t1's. With
// max_tokens 4: t0..t2 are 4 x 96 x 2 = 768 B, t3 4 x 512 x 2 = 4096 B.
// CHECK-LABEL: plan.entry @prefill prefill max_tokens(4) workspace(4864)
// CHECK: plan.alloc offset(0) : !plan.buffer<?x96xbf16>
// CHECK: plan.alloc offset(768) : !plan.buffer<?x96xbf16>
// CHECK: plan.alloc offset(0) : !plan.buffer<?x96xbf16>
// CHECK: plan.alloc offset(768) : !plan.buffer<?x512xbf16>
func.func private @a(memref<?xi32>)
func.func private @b(memref<?x96xbf16>)
func.func private @c(memref<?x96xbf16>)
func.func private @d(memref<?x96xbf16>)
plan.entry @prefill prefill max_tokens(4) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %t0 = plan.alloc : !plan.buffer<?x96xbf16>
  plan.call @a(%tokens) -> (%t0) : (!plan.buffer<?xi32>) -> (!plan.buffer<?x96xbf16>)
  %t1 = plan.alloc : !plan.buffer<?x96xbf16>
  plan.call @b(%t0) -> (%t1) : (!plan.buffer<?x96xbf16>) -> (!plan.buffer<?x96xbf16>)
  %t2 = plan.alloc : !plan.buffer<?x96xbf16>
  plan.call @c(%t1) -> (%t2) : (!plan.buffer<?x96xbf16>) -> (!plan.buffer<?x96xbf16>)
  %t3 = plan.alloc : !plan.buffer<?x512xbf16>
  plan.call @d(%t2) -> (%t3) : (!plan.buffer<?x96xbf16>) -> (!plan.buffer<?x512xbf16>)
  plan.return %t3 : !plan.buffer<?x512xbf16>
}

// -----
// A residual read two steps later stays live across the step between: the
// skip buffer s (written by step 0, read by step 2) keeps its bytes while
// the middle buffer m is placed after it; the logits are live to the end, so
// nothing written after them shares their bytes. Sizes are rounded up to 64
// bytes (1 x 8 x 4 = 32 B -> 64 B).
// CHECK-LABEL: plan.entry @decode decode max_tokens(1) workspace(192)
// CHECK: %[[S:.*]] = plan.alloc offset(0) : !plan.buffer<1x8xf32>
// CHECK: %[[M:.*]] = plan.alloc offset(64) : !plan.buffer<1x8xf32>
// CHECK: %[[L:.*]] = plan.alloc offset(128) : !plan.buffer<1x8xf32>
func.func private @a(memref<1xi32>)
func.func private @b(memref<1x8xf32>)
func.func private @c(memref<1x8xf32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %s = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @a(%tokens) -> (%s) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  %m = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @b(%s) -> (%m) : (!plan.buffer<1x8xf32>) -> (!plan.buffer<1x8xf32>)
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @c(%m, %s) -> (%l) : (!plan.buffer<1x8xf32>, !plan.buffer<1x8xf32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// After convert-sg-to-gpu: the argmax lives to the end as the logits do
// (q, written after the LM head, skips both: 128 B at 192, not at 128), and
// the zeroed region's buffers (sg.zeroed: counters) share one offset past
// the largest entry's workspace, which every entry then has. Decode: t at
// 0, l 64, the argmax 128, the partials p 192, q 192 -> 320 B; prefill 128
// B. The zeroed region: 320, 64 bytes (2 x i32 rounded up).
// CHECK-LABEL: plan.entry @decode decode max_tokens(1) workspace(384)
// CHECK: plan.alloc offset(0) : !plan.buffer<1x8xf32>
// CHECK: plan.alloc offset(320) {sg.zeroed} : !plan.buffer<2xi32>
// CHECK: plan.alloc offset(64) : !plan.buffer<1x8xf32>
// CHECK: plan.alloc offset(128) : !plan.buffer<1xi32>
// CHECK: plan.alloc offset(192) : !plan.buffer<1xf32>
// CHECK: plan.alloc offset(192) : !plan.buffer<1x32xf32>
// CHECK-LABEL: plan.entry @prefill prefill max_tokens(4) workspace(384)
// CHECK: plan.alloc offset(0) : !plan.buffer<?x8xf32>
// CHECK: plan.alloc offset(320) {sg.zeroed} : !plan.buffer<2xi32>
func.func private @a(memref<1xi32>)
func.func private @head(memref<1x8xf32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %t = plan.alloc : !plan.buffer<1x8xf32>
  %z = plan.alloc {sg.zeroed} : !plan.buffer<2xi32>
  plan.call @a(%tokens) -> (%t, %z) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>, !plan.buffer<2xi32>)
  %l = plan.alloc : !plan.buffer<1x8xf32>
  %arg = plan.alloc : !plan.buffer<1xi32>
  %p = plan.alloc : !plan.buffer<1xf32>
  plan.call @head(%t) -> (%l, %arg, %p) : (!plan.buffer<1x8xf32>) -> (!plan.buffer<1x8xf32>, !plan.buffer<1xi32>, !plan.buffer<1xf32>)
  %q = plan.alloc : !plan.buffer<1x32xf32>
  plan.call @a(%tokens) -> (%q) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x32xf32>)
  plan.return %l argmax %arg : !plan.buffer<1x8xf32>, !plan.buffer<1xi32>
}
func.func private @b(memref<?xi32>)
plan.entry @prefill prefill max_tokens(4) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %t = plan.alloc : !plan.buffer<?x8xf32>
  %z = plan.alloc {sg.zeroed} : !plan.buffer<2xi32>
  plan.call @b(%tokens) -> (%t, %z) : (!plan.buffer<?xi32>) -> (!plan.buffer<?x8xf32>, !plan.buffer<2xi32>)
  plan.return %t : !plan.buffer<?x8xf32>
}
