// RUN: sgc-opt %s -split-input-file -sg-verify-graph -verify-diagnostics | FileCheck %s

// The same checkpoint tensor referenced twice with one type is fine.
// CHECK-LABEL: func.func @tied_embedding
func.func @tied_embedding() -> (tensor<512x96xbf16>, tensor<512x96xbf16>) {
  %a = sg.weight "embed" : tensor<512x96xbf16>
  %b = sg.weight "embed" : tensor<512x96xbf16>
  return %a, %b : tensor<512x96xbf16>, tensor<512x96xbf16>
}

// -----
// @negative_conflicting_types: one name, two shapes, cannot bind.
func.func @negative_conflicting_types() -> (tensor<512x96xbf16>, tensor<96xbf16>) {
  // expected-note @+1 {{first bound here}}
  %a = sg.weight "embed" : tensor<512x96xbf16>
  // expected-error @+1 {{checkpoint tensor 'embed' is bound as 'tensor<96xbf16>' here and as 'tensor<512x96xbf16>' elsewhere}}
  %b = sg.weight "embed" : tensor<96xbf16>
  return %a, %b : tensor<512x96xbf16>, tensor<96xbf16>
}
