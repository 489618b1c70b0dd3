//===- SGTypes.td - sg dialect types -----------------------*- tablegen -*-===//
//
// Part of sgc.
//
//===----------------------------------------------------------------------===//

#ifndef SGC_DIALECTS_SG_IR_SGTYPES_TD
#define SGC_DIALECTS_SG_IR_SGTYPES_TD

include "dialects/SG/IR/SGBase.td"
include "mlir/IR/AttrTypeBase.td"

def SG_QuantType : TypeDef<SG_Dialect, "Quant"> {
  let mnemonic = "quant";
  let summary = "a weight element stored in a block encoding";
  let description = [{
    The element type of a block-encoded weight: `tensor<N x K x
    !sg.quant<"Q4_0">>` is an `[N, K]` weight whose every row is stored as
    K / B blocks of ggml's layout for that encoding (design/QUANT.md §3;
    the table of encodings is `SGC_ABI_DTYPES` in abi.h):

    | encoding | block: elements / bytes | value |
    |---|---|---|
    | `Q8_0` | 32 / 34 | `f32(d) · q` |
    | `Q4_0` | 32 / 18 | `f32(d) · (q − 8)` |
    | `Q6_K` | 256 / 210 | `(f32(d) · sc) · (q − 32)` |
    | `Q4_K` | 256 / 144 | `(f32(d) · sc) · q − f32(dmin) · m` |
    | `FP8_CH` | 32 / 36 | `s · e4m3(q)` (f32 `s`, the row's scale) |
    | `INT4_G32` | 32 / 20 | `s · (q − 8)` (f32 `s`) |
    | `INT4_G128` | 128 / 68 | `s · (q − 8)` (f32 `s`) |

    The last three are compressed-tensors FP8 and INT4 weights as the
    runtime packs them at load (one f32 scale a block, nibbles in Q4_0's
    order).

    Ops read such a weight as its dequantized f32 value (exact for Q8_0,
    Q4_0 and the compressed-tensors encodings; Q6_K and Q4_K round as ggml's reference does), rounded to bf16 under bf16
    activations, as the reference runs the dequantized checkpoint in bf16.
    On buffers the weight is its bytes: `[N, K / B · bytes]` of i8.

    Constraints:
    - C1: the encoding is a block row of `SGC_ABI_DTYPES`: `Q8_0`, `Q4_0`,
      `Q6_K`, `Q4_K`, `FP8_CH`, `INT4_G32` or `INT4_G128`.
  }];
  let parameters = (ins StringRefParameter<"the encoding">:$encoding);
  let assemblyFormat = "`<` $encoding `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Weights per block and bytes per block.
    int64_t getBlockElements() const;
    int64_t getBlockBytes() const;
    /// Bytes of a row of `k` weights (k a multiple of the block).
    int64_t getRowBytes(int64_t k) const {
      return k / getBlockElements() * getBlockBytes();
    }
  }];
}

#endif // SGC_DIALECTS_SG_IR_SGTYPES_TD
