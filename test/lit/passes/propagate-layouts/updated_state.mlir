// State a call replaces without reading it (a KV cache a prefill fills whole, which the importer
// turns into a copy of the new keys) is only the memory of its new value: it takes the layout
// the plan gives that value (here the exp keeps the transpose's stick on dim 0), so the update
// keeps the argument's type, as `ktir.updated_by` requires, and nothing is relayouted.
// RUN: ktir-opt %s -p ktir-propagate-layouts | filecheck %s

// CHECK:      func.func @filled(%x: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>,
// CHECK-SAME:   %cache: tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>> {ktir.buffer = "cache", ktir.updated_by = 1 : i64})
// CHECK-SAME:   ktir.layout_plan = {cost = 0 : i64
// CHECK:      %e = ktir.exp %t : {{.*}} -> tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>
func.func @filled(%x: tensor<64x128xf16>, %cache: tensor<128x64xf16> {ktir.buffer = "cache", ktir.updated_by = 1 : i64}) -> (tensor<64x128xf16>, tensor<128x64xf16>) {
  %t = ktir.permute %x perm [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
  %e = ktir.exp %t : tensor<128x64xf16> -> tensor<128x64xf16>
  func.return %x, %e : tensor<64x128xf16>, tensor<128x64xf16>
}
