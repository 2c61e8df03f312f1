// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Round trips of the mixture-of-experts routing ops (dialects/ktir/routing.py).
// CHECK-LABEL: func.func @routing
// CHECK-NEXT:    %w, %e = ktir.topk %probs k 2 : tensor<16x8xf16> -> tensor<16x2xf16>, tensor<16x2xi64>
// CHECK-NEXT:    %v, %p = ktir.sort %ids : tensor<32xi64> -> tensor<32xi64>, tensor<32xi64>
// CHECK-NEXT:    %n = ktir.histc %counts bins 8 min 0.000000e+00 max 7.000000e+00 : tensor<32xf32> -> tensor<8xf32>
// CHECK-NEXT:    %r = ktir.scatter_rows %ids into %ids[%p] : tensor<32xi64>, tensor<32xi64>, tensor<32xi64> -> tensor<32xi64>
// CHECK-NEXT:    %rows = ktir.scatter_rows %x into %x[%p] : tensor<32x64xf16>, tensor<32x64xf16>, tensor<32xi64> -> tensor<32x64xf16>
// CHECK-NEXT:    %y = ktir.grouped_matmul %x, %experts, %offsets : tensor<32x64xf16>, tensor<8x64x256xf16>, tensor<8xi64> -> tensor<32x256xf16>
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @kv_cache
// CHECK-NEXT:    %k = ktir.scatter_rows %new into %cache[%pos] dim 2 in_place : tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi64> -> tensor<1x8x64x128xf16>
// CHECK-NEXT:    %c = ktir.scatter_rows %new into %other[%pos] dim 2 : tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi64> -> tensor<1x8x64x128xf16>
// CHECK-LABEL: func.func @prefill_chunk
// CHECK-NEXT:    %k = ktir.scatter_rows %new into %cache[%pos] dim 2 in_place contiguous : tensor<1x8x16x128xf16>, tensor<1x8x64x128xf16>, tensor<16xi64> -> tensor<1x8x64x128xf16>
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "routing"
// CHECK-GENERIC:         %w, %e = "ktir.topk"(%probs) <{k = 2 : i64}> : (tensor<16x8xf16>) -> (tensor<16x2xf16>, tensor<16x2xi64>)
// CHECK-GENERIC:         %n = "ktir.histc"(%counts) <{bins = 8 : i64, min = 0.000000e+00 : f64, max = 7.000000e+00 : f64}> : (tensor<32xf32>) -> tensor<8xf32>
// CHECK-GENERIC:         %y = "ktir.grouped_matmul"(%x, %experts, %offsets) : (tensor<32x64xf16>, tensor<8x64x256xf16>, tensor<8xi64>) -> tensor<32x256xf16>
// CHECK-GENERIC:         %k = "ktir.scatter_rows"(%new, %cache, %pos) <{dim = 2 : i64, in_place}> : (tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi64>) -> tensor<1x8x64x128xf16>
// CHECK-GENERIC:         %k = "ktir.scatter_rows"(%new, %cache, %pos) <{dim = 2 : i64, in_place, contiguous}> : (tensor<1x8x16x128xf16>, tensor<1x8x64x128xf16>, tensor<16xi64>) -> tensor<1x8x64x128xf16>
func.func @routing(%probs: tensor<16x8xf16>, %ids: tensor<32xi64>, %counts: tensor<32xf32>, %x: tensor<32x64xf16>, %experts: tensor<8x64x256xf16>, %offsets: tensor<8xi64>) {
  %w, %e = ktir.topk %probs k 2 : tensor<16x8xf16> -> tensor<16x2xf16>, tensor<16x2xi64>
  %v, %p = ktir.sort %ids : tensor<32xi64> -> tensor<32xi64>, tensor<32xi64>
  %n = ktir.histc %counts bins 8 min 0.0 max 7.0 : tensor<32xf32> -> tensor<8xf32>
  %r = ktir.scatter_rows %ids into %ids[%p] : tensor<32xi64>, tensor<32xi64>, tensor<32xi64> -> tensor<32xi64>
  %rows = ktir.scatter_rows %x into %x[%p] : tensor<32x64xf16>, tensor<32x64xf16>, tensor<32xi64> -> tensor<32x64xf16>
  %y = ktir.grouped_matmul %x, %experts, %offsets : tensor<32x64xf16>, tensor<8x64x256xf16>, tensor<8xi64> -> tensor<32x256xf16>
  func.return
}

// A static KV cache's update: one token's keys at position %pos along dim 2, written in place
// (the cache has no other use); %other is read again, so its scatter copies it.
func.func @kv_cache(%cache: tensor<1x8x64x128xf16>, %other: tensor<1x8x64x128xf16>, %new: tensor<1x8x1x128xf16>, %pos: tensor<1xi64>) -> (tensor<1x8x64x128xf16>, tensor<1x8x64x128xf16>, tensor<1x8x64x128xf16>) {
  %k = ktir.scatter_rows %new into %cache[%pos] dim 2 in_place : tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi64> -> tensor<1x8x64x128xf16>
  %c = ktir.scatter_rows %new into %other[%pos] dim 2 : tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi64> -> tensor<1x8x64x128xf16>
  func.return %k, %c, %other : tensor<1x8x64x128xf16>, tensor<1x8x64x128xf16>, tensor<1x8x64x128xf16>
}

// A prefill chunk's 16 positions, known to be one run when compiled: written as one box.
func.func @prefill_chunk(%cache: tensor<1x8x64x128xf16>, %new: tensor<1x8x16x128xf16>, %pos: tensor<16xi64>) -> tensor<1x8x64x128xf16> {
  %k = ktir.scatter_rows %new into %cache[%pos] dim 2 in_place contiguous : tensor<1x8x16x128xf16>, tensor<1x8x64x128xf16>, tensor<16xi64> -> tensor<1x8x64x128xf16>
  func.return %k : tensor<1x8x64x128xf16>
}
