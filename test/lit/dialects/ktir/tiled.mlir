// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// The default layout of a (5, 100, 150) fp16 tensor: 150 is padded to 3 sticks of 64.
// CHECK-LABEL: func.func @default_layout
// CHECK-SAME: tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-GENERIC: "func.func"() <{sym_name = "default_layout", function_type = (tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>) -> ()}>
func.func @default_layout(%a: tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>) {
  func.return
}

// -----

// dim_order [1, 0, 2], the device dtype written out, and an fp32 stick of 32.
// CHECK-LABEL: func.func @explicit
// CHECK-SAME: tensor<5x100x150xf16, #ktir.tiled<device_size = [5, 3, 100, 64], stride_map = [15000, 64, 150, 1], device_dtype = SEN169_FP16>>
// CHECK-SAME: tensor<64x40xf32, #ktir.tiled<device_size = [2, 64, 32], stride_map = [32, 40, 1]>>
func.func @explicit(%a: tensor<5x100x150xf16, #ktir.tiled<device_size = [5, 3, 100, 64], stride_map = [15000, 64, 150, 1], device_dtype = SEN169_FP16>>,
                    %b: tensor<64x40xf32, #ktir.tiled<device_size = [2, 64, 32], stride_map = [32, 40, 1]>>) {
  func.return
}

// -----

// Sparse (one element per stick), scalar, size-1 dims, int64 stored as int32, bool as fp16.
// CHECK-LABEL: func.func @special
// CHECK-SAME: tensor<512x256xf16, #ktir.tiled<device_size = [256, 1, 512, 64], stride_map = [1, -1, 256, -1]>>
// CHECK-SAME: tensor<f16, #ktir.tiled<device_size = [1, 64], stride_map = [-1, -1]>>
// CHECK-SAME: tensor<5x1xf16, #ktir.tiled<device_size = [1, 5, 64], stride_map = [-1, 1, -1]>>
// CHECK-SAME: tensor<10xi64, #ktir.tiled<device_size = [1, 32], stride_map = [32, 1], device_dtype = IEEE_INT32>>
// CHECK-SAME: tensor<8x64xi1, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>
func.func @special(%sparse: tensor<512x256xf16, #ktir.tiled<device_size = [256, 1, 512, 64], stride_map = [1, -1, 256, -1]>>,
                   %scalar: tensor<f16, #ktir.tiled<device_size = [1, 64], stride_map = [-1, -1]>>,
                   %ones: tensor<5x1xf16, #ktir.tiled<device_size = [1, 5, 64], stride_map = [-1, 1, -1]>>,
                   %long: tensor<10xi64, #ktir.tiled<device_size = [1, 32], stride_map = [32, 1], device_dtype = IEEE_INT32>>,
                   %mask: tensor<8x64xi1, #ktir.tiled<device_size = [1, 8, 64], stride_map = [64, 64, 1]>>) {
  func.return
}

// -----

// Explicit layouts: two rows of 32 folded into one stick, and a broadcast dim (stride 0).
// CHECK-LABEL: func.func @fold_and_broadcast
// CHECK-SAME: tensor<4x32xf16, #ktir.tiled<device_size = [2, 64], stride_map = [64, 1]>>
// CHECK-SAME: tensor<64xf16, #ktir.tiled<device_size = [3, 1, 64], stride_map = [0, 64, 1]>>
func.func @fold_and_broadcast(%fold: tensor<4x32xf16, #ktir.tiled<device_size = [2, 64], stride_map = [64, 1]>>,
                              %bcast: tensor<64xf16, #ktir.tiled<device_size = [3, 1, 64], stride_map = [0, 64, 1]>>) {
  func.return
}

// -----

// Layouts ride along through standard ops.
// CHECK-LABEL: func.func @through_ops
// CHECK: %{{.*}} = arith.addf %{{.*}}, %{{.*}} : tensor<1024x256xf16, #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1]>>
func.func @through_ops(%a: tensor<1024x256xf16, #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1]>>) -> tensor<1024x256xf16, #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1]>> {
  %0 = arith.addf %a, %a : tensor<1024x256xf16, #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1]>>
  func.return %0 : tensor<1024x256xf16, #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1]>>
}
