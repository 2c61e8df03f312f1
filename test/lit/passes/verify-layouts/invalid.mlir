// RUN: ktir-opt %s --split-input-file --verify-diagnostics -p ktir-verify-layouts

// A matmul reads x sticked on K (dim 1); this x is sticked on dim 0.
func.func @x_not_on_k(%x: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, %y: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) {
  // expected-error @+1 {{'ktir.matmul' op operand #0 is sticked on dim 0, but the op reads it on dim 1; ktir-insert-restickify would fix it}}
  %r = ktir.matmul %x, %y : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>, tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
  func.return
}

// -----

// A matmul result is sticked on N.
func.func @result_off_n(%x: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>, %y: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) {
  // expected-error @+1 {{result #0 is sticked on dim 0; allowed: dim 1}}
  %r = ktir.matmul %x, %y : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>, tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>>
  func.return
}

// -----

// A view's result is its input seen through the view: a transpose moves the stick to dim 0.
func.func @view_claims_wrong_stick(%x: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>) {
  // expected-error @+1 {{view of an input sticked on dim 1 is sticked on dim 0, but its result claims dim 1}}
  %t = ktir.permute %x perm [1, 0] : tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>> -> tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
  func.return
}

// -----

// Sparse elements (one per stick) cannot be gathered back into dense sticks.
func.func @gather(%x: tensor<128x128xf16, #ktir.tiled<device_size = [128, 1, 128, 64], stride_map = [1, -1, 128, -1]>>) {
  // expected-error @+1 {{copies a sparse input into dim 1: sparse elements cannot be gathered}}
  %c = ktir.copy %x : tensor<128x128xf16, #ktir.tiled<device_size = [128, 1, 128, 64], stride_map = [1, -1, 128, -1]>> -> tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [64, 128, 1]>>
  func.return
}

// -----

func.func @no_layout(%x: tensor<4xf16>) {
  // expected-error @+1 {{operand #0 has no #ktir.tiled layout (run ktir-propagate-layouts first)}}
  %r = ktir.neg %x : tensor<4xf16> -> tensor<4xf16>
  func.return
}
