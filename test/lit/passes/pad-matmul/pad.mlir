// ktir-pad-matmul: y padded along K with zeros to whole sticks (x untouched); K = 1 becomes mul.
// RUN: ktir-opt %s -p ktir-pad-matmul,ktir-verify-layouts | filecheck %s
// RUN: ktir-opt %s -p ktir-pad-matmul,ktir-pad-matmul | filecheck %s

// The input below meets the preconditions of ktir-pad-matmul; generated once with
//   git show f9d10e6:test/lit/passes/pad-matmul/pad.mlir | ktir-opt -p 'ktir-propagate-layouts,ktir-insert-restickify'
// (see test/lit/Inputs/passes/README.md).

// The reference's example: bmm y [2, 67, 128] becomes [2, 128, 128], device layout [128, 2, 2, 64].
// CHECK-LABEL: func.func @ragged_k
// CHECK: %[[P:.*]] = ktir.pad %y low [0, 0, 0] high [0, 61, 0] {value = 0.000000e+00 : f64} : tensor<2x67x128xf16, {{.*}}> -> tensor<2x128x128xf16, #ktir.tiled<device_size = [128, 2, 2, 64], stride_map = [128, 64, 16384, 1]>>
// CHECK-NEXT: ktir.bmm %x, %[[P]] : tensor<2x8x67xf16, {{.*}}>, tensor<2x128x128xf16, {{.*}}> -> tensor<2x8x128xf16, {{.*}}>
func.func @ragged_k(%x: tensor<2x8x67xf16, #ktir.tiled<device_size = [8, 2, 2, 64], stride_map = [67, 64, 536, 1]>>, %y: tensor<2x67x128xf16, #ktir.tiled<device_size = [67, 2, 2, 64], stride_map = [128, 64, 8576, 1]>>) -> tensor<2x8x128xf16, #ktir.tiled<device_size = [8, 2, 2, 64], stride_map = [128, 64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %r = ktir.bmm %x, %y : tensor<2x8x67xf16, #ktir.tiled<device_size = [8, 2, 2, 64], stride_map = [67, 64, 536, 1]>>, tensor<2x67x128xf16, #ktir.tiled<device_size = [67, 2, 2, 64], stride_map = [128, 64, 8576, 1]>> -> tensor<2x8x128xf16, #ktir.tiled<device_size = [8, 2, 2, 64], stride_map = [128, 64, 1024, 1]>>
  func.return %r : tensor<2x8x128xf16, #ktir.tiled<device_size = [8, 2, 2, 64], stride_map = [128, 64, 1024, 1]>>
}

// CHECK-LABEL: func.func @whole_sticks
// CHECK-NOT: ktir.pad
// CHECK: ktir.matmul %x, %y
func.func @whole_sticks(%x: tensor<8x128xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>, %y: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<8x64xf16, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %r = ktir.matmul %x, %y : tensor<8x128xf16, #ktir.tiled<device_size = [2, 8, 64], stride_map = [64, 128, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<8x64xf16, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>
  func.return %r : tensor<8x64xf16, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>
}

// CHECK-LABEL: func.func @outer_product
// CHECK-NOT: ktir.matmul
// CHECK: %r = ktir.mul %x, %y : tensor<16x1xf16, {{.*}}>, tensor<1x64xf16, {{.*}}> -> tensor<16x64xf16, {{.*}}>
func.func @outer_product(%x: tensor<16x1xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [-1, 1, -1]>>, %y: tensor<1x64xf16, #ktir.tiled<device_size = [1, 1, 64], stride_map = [64, -1, 1]>>) -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %r = ktir.matmul %x, %y : tensor<16x1xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [-1, 1, -1]>>, tensor<1x64xf16, #ktir.tiled<device_size = [1, 1, 64], stride_map = [64, -1, 1]>> -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  func.return %r : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
}
