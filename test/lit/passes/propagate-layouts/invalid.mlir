// RUN: ktir-opt %s --split-input-file --verify-diagnostics -p ktir-propagate-layouts

// A matmul reads x in dense sticks along K; a sparse x (one element per stick) cannot be gathered.
func.func @sparse_into_matmul(%x: tensor<128x128xf16, #ktir.tiled<device_size = [128, 1, 128, 64], stride_map = [1, -1, 128, -1]>>, %y: tensor<128x128xf16>) -> tensor<128x128xf16> {
  // expected-error @+1 {{'ktir.matmul' op has no feasible layout: operand #0 can be sparse; operand #1 can be dim 1; its result can be dim 1. A sparse tensor (one element per stick) cannot be restickified to a dense one}}
  %r = ktir.matmul %x, %y : tensor<128x128xf16, #ktir.tiled<device_size = [128, 1, 128, 64], stride_map = [1, -1, 128, -1]>>, tensor<128x128xf16> -> tensor<128x128xf16>
  func.return %r : tensor<128x128xf16>
}

// -----

// Layout propagation knows graph-level ktir only.
func.func @foreign(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.negf' op has no layout rule: layout propagation handles graph-level ktir ops only}}
  %r = arith.negf %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0: layout}}
func.func @split_pin(%x: tensor<8x4x16xf16> {ktir.layout = #ktir.tiled<device_size = [8, 64], stride_map = [64, 1]>}) -> tensor<8x4x16xf16> {
  func.return %x : tensor<8x4x16xf16>
}

// -----

// expected-error @+1 {{argument #0 tensor<4x64xf64>: f64 has no Spyre device format}}
func.func @f64(%x: tensor<4x64xf64>) -> tensor<4x64xf64> {
  func.return %x : tensor<4x64xf64>
}

// -----

// expected-error @+1 {{argument #0 tensor<?x64xf16> has a dynamic shape; layouts need static shapes}}
func.func @dynamic(%x: tensor<?x64xf16>) -> tensor<?x64xf16> {
  func.return %x : tensor<?x64xf16>
}

// -----

func.func @empty_result(%x: tensor<4x64xf16>) -> tensor<0x64xf16> {
  // expected-error @+1 {{result #0 tensor<0x64xf16> is empty; layouts need non-zero dims}}
  %s = ktir.slice %x dim 0 start 2 end 2 step 1 : tensor<4x64xf16> -> tensor<0x64xf16>
  func.return %s : tensor<0x64xf16>
}
