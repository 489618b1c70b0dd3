// RUN: sgc-opt %s -split-input-file -verify-diagnostics -convert-sg-to-cpu
// convert-sg-to-cpu lowers an op by the family recorded on it; a record
// that names no CPU family, or one that does not lower the op's kind,
// is refused at the op.

func.func @wrong_family(%x: tensor<?x32xbf16>, %y: tensor<?x32xbf16>) -> tensor<?x32xbf16> {
  // expected-error @+1 {{convert-sg-to-cpu: the CPU kernel family 'cpu_vision' does not lower 'sg.add'}}
  %z = sg.add %x, %y {sg.selected_kernel = #sg.kernel<"cpu_vision">} : tensor<?x32xbf16>
  return %z : tensor<?x32xbf16>
}

// -----

func.func @cuda_family(%x: tensor<?x32xbf16>, %y: tensor<?x32xbf16>) -> tensor<?x32xbf16> {
  // expected-error @+1 {{convert-sg-to-cpu: no CPU kernel family 'row_chain'}}
  %z = sg.add %x, %y {sg.selected_kernel = #sg.kernel<"row_chain">} : tensor<?x32xbf16>
  return %z : tensor<?x32xbf16>
}
