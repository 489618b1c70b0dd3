// RUN: sgc-opt %s -split-input-file -verify-diagnostics
// One case per verifier constraint tag of dialects/Plan/IR/PlanOps.td; the
// case's comment carries the tag (`grep c3` links spec, code and test).

// tensor_c1: manifest tensors have static shapes.
// expected-error @+1 {{requires a static ranked tensor type of rank <= 8, got 'tensor<?x96xbf16>'}}
plan.tensor @w : tensor<?x96xbf16> fill(random)

// -----
// kv_layer_c1: positive sizes.
// expected-error @+1 {{requires positive slots, kv_heads and head dims, got slots 0}}
plan.kv_layer @kv0 ring layer(0) slots(0) kv_heads(2) head_dim(16, 16) : bf16

// -----
// kv_layer_c2: layer numbers follow the table order.
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
// expected-error @+1 {{is the KV layer at index 1 but says layer(2)}}
plan.kv_layer @kv1 ring layer(2) slots(4) kv_heads(2) head_dim(16, 16) : bf16

// -----
// kv_layer_c3: one buffer holds V only where V comes from K.
// expected-error @+1 {{with keys_from_values requires v_from_k and equal head dims}}
plan.kv_layer @kv0 full layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16 keys_from_values

// -----
// entry_c1: (tokens, position) arguments.
// expected-error @+1 {{requires block arguments (tokens: !plan.buffer<?xi32>, position: i64)}}
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi64>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c1: a prefill of a model with images takes the rows' soft tokens
// [?, H] f32 and image blocks [?] i32 after the position.
// expected-error @+1 {{requires image arguments (soft tokens: !plan.buffer<?xHxf32>, image blocks: !plan.buffer<?xi32>) after the position}}
plan.entry @prefill prefill max_tokens(8) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64, %soft: !plan.buffer<?x8xbf16>, %blocks: !plan.buffer<?xi32>):
  %l = plan.alloc : !plan.buffer<?x8xf32>
  plan.return %l : !plan.buffer<?x8xf32>
}

// -----
// entry_c1: decode takes no image rows.
// expected-error @+1 {{requires block arguments (tokens: !plan.buffer<?xi32>, position: i64)}}
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64, %soft: !plan.buffer<1x8xf32>, %blocks: !plan.buffer<1xi32>):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c1: encode_image takes f32 pixels [N, P] and i32 positions [N, 2].
// expected-error @+1 {{requires encode_image block arguments (pixels: !plan.buffer<NxPxf32>, patch positions: !plan.buffer<Nx2xi32>)}}
plan.entry @encode_image encode_image max_tokens(16) {
^bb0(%pixels: !plan.buffer<16x48xbf16>, %pos: !plan.buffer<16x2xi32>):
  %l = plan.alloc : !plan.buffer<4x8xf32>
  plan.return %l : !plan.buffer<4x8xf32>
}

// -----
// entry_c2: encode_image's max_tokens is its patch count.
// expected-error @+1 {{requires max_tokens to be the patch count 16, got 8}}
plan.entry @encode_image encode_image max_tokens(8) {
^bb0(%pixels: !plan.buffer<16x48xf32>, %pos: !plan.buffer<16x2xi32>):
  %l = plan.alloc : !plan.buffer<4x8xf32>
  plan.return %l : !plan.buffer<4x8xf32>
}

// -----
// entry_c2: the static token count fits max_tokens.
// expected-error @+1 {{requires max_tokens >= 1 and at least the static token count, got max_tokens(1) for tokens [2]}}
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<2xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c3: a buffer is written before it is read.
func.func private @f(memref<1x8xf32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-note @+1 {{allocated here}}
  %a = plan.alloc : !plan.buffer<1x8xf32>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{reads a buffer no earlier step wrote}}
  plan.call @f(%a) -> (%l) : (!plan.buffer<1x8xf32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c3: ... and so are the logits.
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{returns a buffer no step wrote}}
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c4: all allocs placed, or none.
func.func private @f(memref<1xi32>)
// expected-error @+1 {{requires either no alloc offsets or an offset on every alloc and a workspace size (1 of 2 allocs placed)}}
plan.entry @decode decode max_tokens(1) workspace(64) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %a = plan.alloc offset(0) : !plan.buffer<1x8xf32>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @f(%tokens) -> (%a, %l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>, !plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c4: offsets need a workspace size.
func.func private @f(memref<1xi32>)
// expected-error @+1 {{requires either no alloc offsets or an offset on every alloc and a workspace size (1 of 1 allocs placed)}}
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc offset(0) : !plan.buffer<1x8xf32>
  plan.call @f(%tokens) -> (%l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c5: aligned offsets.
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) workspace(256) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-error @+1 {{at offset 32 with 32 bytes is not 64-byte aligned within the workspace of 256 bytes}}
  %l = plan.alloc offset(32) : !plan.buffer<1x8xf32>
  plan.call @f(%tokens) -> (%l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c5: a dynamic buffer counts max_tokens rows inside the workspace.
func.func private @f(memref<?xi32>)
plan.entry @prefill prefill max_tokens(4) workspace(64) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  // expected-error @+1 {{at offset 0 with 128 bytes is not 64-byte aligned within the workspace of 64 bytes}}
  %l = plan.alloc offset(0) : !plan.buffer<?x8xf32>
  plan.call @f(%tokens) -> (%l) : (!plan.buffer<?xi32>) -> (!plan.buffer<?x8xf32>)
  plan.return %l : !plan.buffer<?x8xf32>
}

// -----
// entry_c6: buffers live at the same time share no byte.
func.func private @f(memref<1xi32>)
func.func private @g(memref<1x8xf32>)
plan.entry @decode decode max_tokens(1) workspace(128) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-note @+1 {{the other buffer}}
  %a = plan.alloc offset(0) : !plan.buffer<1x8xf32>
  plan.call @f(%tokens) -> (%a) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  // expected-error @+1 {{shares workspace bytes with a buffer live at the same time}}
  %l = plan.alloc offset(0) : !plan.buffer<1x8xf32>
  plan.call @g(%a) -> (%l) : (!plan.buffer<1x8xf32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// weight_c1: a weight names a manifest tensor.
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-error @+1 {{names no plan.tensor: @missing}}
  %w = plan.weight @missing : !plan.buffer<8xf32>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @f(%tokens, %w) -> (%l) : (!plan.buffer<1xi32>, !plan.buffer<8xf32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// weight_c2: ... with its shape.
plan.tensor @w : tensor<8xbf16> fill(random)
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-error @+1 {{has type '!plan.buffer<8xf32>' but the tensor is 'tensor<8xbf16>'}}
  %w = plan.weight @w : !plan.buffer<8xf32>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @f(%tokens, %w) -> (%l) : (!plan.buffer<1xi32>, !plan.buffer<8xf32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// kv_cache_c1: a cache names a KV layer.
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-error @+1 {{names no plan.kv_layer: @kv9}}
  %k = plan.kv_cache @kv9 key : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @f(%tokens, %k) -> (%l, %k) : (!plan.buffer<1xi32>, !plan.buffer<4x2x16xbf16>) -> (!plan.buffer<1x8xf32>, !plan.buffer<4x2x16xbf16>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// kv_cache_c2: ... with the layer's shape.
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 8) : bf16
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-error @+1 {{requires a buffer [4, 2, 8] of 'bf16', got '!plan.buffer<4x2x16xbf16>'}}
  %v = plan.kv_cache @kv0 value : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @f(%tokens, %v) -> (%l) : (!plan.buffer<1xi32>, !plan.buffer<4x2x16xbf16>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// kv_cache_c3: a decode_batch entry names each cache's row ...
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
func.func private @f(memref<1xi32>)
plan.entry @decode_b2 decode_batch max_tokens(2) {
^bb0(%tokens: !plan.buffer<2xi32>, %pos0: i64, %pos1: i64):
  // expected-error @+1 {{in a decode_batch entry requires a row}}
  %k = plan.kv_cache @kv0 key : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<2x8xf32>
  plan.call @f(%tokens, %k) -> (%l, %k) : (!plan.buffer<2xi32>, !plan.buffer<4x2x16xbf16>) -> (!plan.buffer<2x8xf32>, !plan.buffer<4x2x16xbf16>)
  plan.return %l : !plan.buffer<2x8xf32>
}

// -----
// kv_cache_c3: ... below its max_tokens ...
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
func.func private @f(memref<1xi32>)
plan.entry @decode_b2 decode_batch max_tokens(2) {
^bb0(%tokens: !plan.buffer<2xi32>, %pos0: i64, %pos1: i64):
  // expected-error @+1 {{row 2 is not below max_tokens(2)}}
  %k = plan.kv_cache @kv0 key row(2) : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<2x8xf32>
  plan.call @f(%tokens, %k) -> (%l, %k) : (!plan.buffer<2xi32>, !plan.buffer<4x2x16xbf16>) -> (!plan.buffer<2x8xf32>, !plan.buffer<4x2x16xbf16>)
  plan.return %l : !plan.buffer<2x8xf32>
}

// -----
// kv_cache_c3: ... and no other entry does.
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  // expected-error @+1 {{has a row outside a decode_batch entry}}
  %k = plan.kv_cache @kv0 key row(0) : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  plan.call @f(%tokens, %k) -> (%l, %k) : (!plan.buffer<1xi32>, !plan.buffer<4x2x16xbf16>) -> (!plan.buffer<1x8xf32>, !plan.buffer<4x2x16xbf16>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// entry_c1: a decode_batch entry takes its rows' tokens and one position each.
func.func private @f(memref<1xi32>)
// expected-error @+1 {{requires block arguments (tokens: !plan.buffer<Bxi32>, B positions: i64) for B = max_tokens(2)}}
plan.entry @decode_b2 decode_batch max_tokens(2) {
^bb0(%tokens: !plan.buffer<2xi32>, %pos0: i64):
  %l = plan.alloc : !plan.buffer<2x8xf32>
  plan.call @f(%tokens) -> (%l) : (!plan.buffer<2xi32>) -> (!plan.buffer<2x8xf32>)
  plan.return %l : !plan.buffer<2x8xf32>
}

// -----
// call_c1: the callee exists.
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{calls an unknown function @nowhere}}
  plan.call @nowhere(%tokens) -> (%l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// call_c2: as many inputs and outputs as the sg function has.
func.func private @f(tensor<1xi32>, i64) -> tensor<1x8xf32>
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{passes 1 inputs and 1 outputs to @f, which takes 2 and returns 1}}
  plan.call @f(%tokens) -> (%l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// call_c3: each buffer holds the tensor the function takes.
func.func private @f(tensor<1xi32>) -> tensor<1x16xf32>
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{output 0 is '!plan.buffer<1x8xf32>' but @f has 'tensor<1x16xf32>'}}
  plan.call @f(%tokens) -> (%l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// call_c4: outputs are allocs or caches, never weights.
plan.tensor @w : tensor<1x8xf32> fill(random)
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %w = plan.weight @w : !plan.buffer<1x8xf32>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{output 0 must be a plan.alloc or a plan.kv_cache buffer}}
  plan.call @f(%tokens) -> (%w, %l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>, !plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// call_c5: a cache is updated in place.
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %k = plan.kv_cache @kv0 key : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{output 1 is a KV cache that is not also an input (caches are updated in place)}}
  plan.call @f(%tokens) -> (%l, %k) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>, !plan.buffer<4x2x16xbf16>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// call_c6: a rowwise step writes buffers with the token dimension first.
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{is rowwise but output 0 has no token dimension first: '!plan.buffer<1x8xf32>'}}
  plan.call @f(%tokens) -> (%l) {rowwise} : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// call_c6: a rowwise step reads no KV cache and no position.
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
func.func private @f(memref<?xi32>)
plan.entry @prefill prefill max_tokens(4) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %k = plan.kv_cache @kv0 key : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<?x8xf32>
  // expected-error @+1 {{is rowwise but input 1 is the position or a KV cache}}
  plan.call @f(%tokens, %k) -> (%l) {rowwise} : (!plan.buffer<?xi32>, !plan.buffer<4x2x16xbf16>) -> (!plan.buffer<?x8xf32>)
  plan.return %l : !plan.buffer<?x8xf32>
}

// -----
// call_c1: a kernel is launched, not called.
gpu.module @kernels {
  gpu.func @k(%t: memref<1xi32>, %l: memref<1x8xf32>) kernel {
    gpu.return
  }
}
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{calls the kernel @kernels::@k (a kernel is launched by plan.launch)}}
  plan.call @kernels::@k(%tokens) -> (%l) : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// launch_c1: the callee is a kernel of a kernel module.
func.func private @f(memref<1xi32>)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{launches @f, which is no kernel of a gpu.module or gpu.binary}}
  plan.launch @f(%tokens) -> (%l) grid [1, 1, 1] block [32, 1, 1] : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// launch_c2: three positive sizes in the grid and in the block.
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{needs a grid and a block of three positive sizes each, got grid [4, 0, 1] and block [32, 1, 1]}}
  plan.launch @kernels::@k(%tokens) -> (%l) grid [4, 0, 1] block [32, 1, 1] : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// launch_c2: three sizes in the block.
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{needs a grid and a block of three positive sizes each, got grid [4, 1, 1] and block [32, 1]}}
  plan.launch @kernels::@k(%tokens) -> (%l) grid [4, 1, 1] block [32, 1] : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// launch_c2: dynamic shared memory is not negative.
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{needs dynamic_shared >= 0, got -16}}
  plan.launch @kernels::@k(%tokens) -> (%l) grid [4, 1, 1] block [32, 1, 1] {dynamic_shared = -16 : i64} : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// launch_c3: tokens run along grid x or y.
plan.entry @prefill prefill max_tokens(4) {
^bb0(%tokens: !plan.buffer<?xi32>, %pos: i64):
  %l = plan.alloc : !plan.buffer<?x8xf32>
  // expected-error @+1 {{has token_grid_dim 2; the tokens run along grid x (0) or y (1)}}
  plan.launch @kernels::@k(%tokens) -> (%l) grid [4, 1, 4] block [32, 1, 1] {token_grid_dim = 2 : i64} : (!plan.buffer<?xi32>) -> (!plan.buffer<?x8xf32>)
  plan.return %l : !plan.buffer<?x8xf32>
}

// -----
// launch_c4: outputs are allocs or caches, never weights.
plan.tensor @w : tensor<1x8xf32> fill(random)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %w = plan.weight @w : !plan.buffer<1x8xf32>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{output 0 must be a plan.alloc or a plan.kv_cache buffer}}
  plan.launch @kernels::@k(%tokens) -> (%w, %l) grid [1, 1, 1] block [32, 1, 1] : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>, !plan.buffer<1x8xf32>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// launch_c5: a cache is updated in place.
plan.kv_layer @kv0 ring layer(0) slots(4) kv_heads(2) head_dim(16, 16) : bf16
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %k = plan.kv_cache @kv0 key : !plan.buffer<4x2x16xbf16>
  %l = plan.alloc : !plan.buffer<1x8xf32>
  // expected-error @+1 {{output 1 is a KV cache that is not also an input (caches are updated in place)}}
  plan.launch @kernels::@k(%tokens) -> (%l, %k) grid [1, 1, 1] block [32, 1, 1] : (!plan.buffer<1xi32>) -> (!plan.buffer<1x8xf32>, !plan.buffer<4x2x16xbf16>)
  plan.return %l : !plan.buffer<1x8xf32>
}

// -----
// return_c1: the logits are a [tokens, vocab] alloc.
plan.tensor @w : tensor<8xf32> fill(random)
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %w = plan.weight @w : !plan.buffer<8xf32>
  // expected-error @+1 {{requires a rank-2 plan.alloc buffer of logits, got '!plan.buffer<8xf32>'}}
  plan.return %w : !plan.buffer<8xf32>
}

// -----
// return_c2: the argmax is an alloc of one i32.
plan.entry @decode decode max_tokens(1) {
^bb0(%tokens: !plan.buffer<1xi32>, %pos: i64):
  %l = plan.alloc offset(0) : !plan.buffer<1x8xf32>
  %a = plan.alloc offset(64) : !plan.buffer<2xi32>
  // expected-error @+1 {{requires the argmax in a plan.alloc buffer of one i32, got '!plan.buffer<2xi32>'}}
  plan.return %l argmax %a : !plan.buffer<1x8xf32>, !plan.buffer<2xi32>
}
