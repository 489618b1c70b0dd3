// A bf16 linear with K = 4 (two K pairs), run by bf16-tiles-order.test.
func.func @proj(%x: tensor<?x4xbf16>, %w: tensor<16x4xbf16>) -> tensor<?x16xbf16> {
  %y = sg.linear %x, %w : (tensor<?x4xbf16>, tensor<16x4xbf16>) -> tensor<?x16xbf16>
  return %y : tensor<?x16xbf16>
}
