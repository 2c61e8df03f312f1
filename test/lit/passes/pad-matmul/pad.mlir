// ktir-pad-matmul: y padded along K with zeros to whole sticks (x untouched); K = 1 becomes mul.
// RUN: ktir-opt %s -p ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-verify-layouts | filecheck %s
// RUN: ktir-opt %s -p ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-pad-matmul | filecheck %s

// The reference's example: bmm y [2, 67, 128] becomes [2, 128, 128], device layout [128, 2, 2, 64].
// CHECK-LABEL: func.func @ragged_k
// CHECK: %[[P:.*]] = ktir.pad %y low [0, 0, 0] high [0, 61, 0] {value = 0.000000e+00 : f64} : tensor<2x67x128xf16, {{.*}}> -> tensor<2x128x128xf16, #ktir.tiled<device_size = [128, 2, 2, 64], stride_map = [128, 64, 16384, 1]>>
// CHECK-NEXT: ktir.bmm %x, %[[P]] : tensor<2x8x67xf16, {{.*}}>, tensor<2x128x128xf16, {{.*}}> -> tensor<2x8x128xf16, {{.*}}>
func.func @ragged_k(%x: tensor<2x8x67xf16>, %y: tensor<2x67x128xf16>) -> tensor<2x8x128xf16> {
  %r = ktir.bmm %x, %y : tensor<2x8x67xf16>, tensor<2x67x128xf16> -> tensor<2x8x128xf16>
  func.return %r : tensor<2x8x128xf16>
}

// CHECK-LABEL: func.func @whole_sticks
// CHECK-NOT: ktir.pad
// CHECK: ktir.matmul %x, %y
func.func @whole_sticks(%x: tensor<8x128xf16>, %y: tensor<128x64xf16>) -> tensor<8x64xf16> {
  %r = ktir.matmul %x, %y : tensor<8x128xf16>, tensor<128x64xf16> -> tensor<8x64xf16>
  func.return %r : tensor<8x64xf16>
}

// CHECK-LABEL: func.func @outer_product
// CHECK-NOT: ktir.matmul
// CHECK: %r = ktir.mul %x, %y : tensor<16x1xf16, {{.*}}>, tensor<1x64xf16, {{.*}}> -> tensor<16x64xf16, {{.*}}>
func.func @outer_product(%x: tensor<16x1xf16>, %y: tensor<1x64xf16>) -> tensor<16x64xf16> {
  %r = ktir.matmul %x, %y : tensor<16x1xf16>, tensor<1x64xf16> -> tensor<16x64xf16>
  func.return %r : tensor<16x64xf16>
}
