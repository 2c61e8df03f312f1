// ktir-insert-restickify: one restickify per consumer edge, right before the consumer, with
// the reference's target layout; running it again changes nothing.
// RUN: ktir-opt %s -p ktir-insert-restickify | filecheck %s
// RUN: ktir-opt %s -p ktir-insert-restickify,ktir-insert-restickify | filecheck %s
// RUN: ktir-opt %s -p ktir-insert-restickify,cse | filecheck %s --check-prefix=CSE

// The input below meets the preconditions of ktir-insert-restickify; generated once with
//   git show f9d10e6:test/lit/passes/insert-restickify/insert.mlir | ktir-opt -p 'ktir-propagate-layouts'
// (see test/lit/Inputs/passes/README.md).

// x.t() feeds two matmuls as x: each edge gets its restickify (cost 2 * numel); cse merges them.
// CHECK-LABEL: func.func @two_consumers
// CHECK-SAME: cost = 65536 : i64
// CHECK: %t = ktir.permute %x perm [1, 0] : tensor<256x128xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [64, 128, 1]>> -> tensor<128x256xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
// CHECK-NEXT: %[[R0:.*]] = ktir.restickify %t : tensor<128x256xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>> -> tensor<128x256xf16, #ktir.tiled<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>
// CHECK-NEXT: %m = ktir.matmul %[[R0]], %y
// CHECK-NEXT: %[[R1:.*]] = ktir.restickify %t
// CHECK-NEXT: %n = ktir.matmul %[[R1]], %z
// CHECK-NOT: ktir.restickify
// CSE-LABEL: func.func @two_consumers
// CSE-COUNT-1: ktir.restickify
// CSE-NOT: ktir.restickify
func.func @two_consumers(%x: tensor<256x128xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [64, 128, 1]>>, %y: tensor<256x64xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>, %z: tensor<256x64xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>) -> (tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) attributes {ktir.layout_plan = {cost = 65536 : i64, lower_bound = 65536 : i64, search = "exact"}} {
  %t = ktir.permute %x perm [1, 0] : tensor<256x128xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [64, 128, 1]>> -> tensor<128x256xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>
  %m = ktir.matmul %t, %y : tensor<128x256xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>, tensor<256x64xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 64, 1]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
  %n = ktir.matmul %t, %z : tensor<128x256xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>, tensor<256x64xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 64, 1]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
  func.return %m, %n : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
}
