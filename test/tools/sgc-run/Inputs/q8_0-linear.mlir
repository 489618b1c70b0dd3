// A one-layer model with a Q8_0 projection (test/tools/sgc-run/gguf-weights.test).
module {
  func.func @forward(%tokens: tensor<?xi32>, %pos0: i64) -> (tensor<?x96xf32>) {
    %v1 = sg.weight "embed" : tensor<48x256xbf16>
    %v2 = sg.embed %v1[%tokens] scale(2.0) {sg.block = "embed"} : (tensor<48x256xbf16>, tensor<?xi32>) -> tensor<?x256xf32>
    %v3 = sg.weight "w" : tensor<96x256x!sg.quant<"Q8_0">>
    %v4 = sg.linear %v2, %v3 {sg.block = "layer", sg.layer = 0 : i64} : (tensor<?x256xf32>, tensor<96x256x!sg.quant<"Q8_0">>) -> tensor<?x96xf32>
    %v5 = sg.weight "out_norm" : tensor<96xbf16>
    %v6 = sg.rms_norm %v4, %v5 {sg.block = "layer", sg.layer = 0 : i64, eps = 1.0e-06 : f64, weight_offset = 0 : i64} : (tensor<?x96xf32>, tensor<96xbf16>) -> tensor<?x96xf32>
    return %v6 : tensor<?x96xf32>
  }
}
