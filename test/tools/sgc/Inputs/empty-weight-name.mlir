func.func @f() {
  %0 = sg.weight "" : tensor<4xbf16>
  return
}
