// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: tiled_invalid.mlir:[[# @LINE + 2]]:21: error: the last device dim is the stick: it must hold 64 f16 elements, not 32
// expected-error @+1 {{the last device dim is the stick: it must hold 64 f16 elements, not 32}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [2, 4, 32], stride_map = [32, 64, 1]>>

// -----

// CHECK: error: #ktir.tiled layout does not fit tensor shape [5, 100, 150]: the device dims walking host dim 2 span 128 < its size 150
// expected-error @+1 {{the device dims walking host dim 2 span 128 < its size 150}}
"test.op"() : () -> tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 2, 5, 64], stride_map = [150, 64, 15000, 1]>>

// -----

// CHECK: error: invalid #ktir.tiled layout: device_size has 3 dims but stride_map has 2
// expected-error @+1 {{device_size has 3 dims but stride_map has 2}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 1]>>

// -----

// CHECK: error: invalid #ktir.tiled layout: device dims 0 and 1 both step host stride 64
// expected-error @+1 {{device dims 0 and 1 both step host stride 64}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [2, 2, 64], stride_map = [64, 64, 1]>>

// -----

// CHECK: error: invalid #ktir.tiled layout: stride_map[0] = -2
// expected-error @+1 {{stride_map[0] = -2}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [4, 64], stride_map = [-2, 1]>>

// -----

// CHECK: error: invalid #ktir.tiled layout: device dim 0 has size 0
// expected-error @+1 {{device dim 0 has size 0; sizes must be positive}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [0, 64], stride_map = [64, 1]>>

// -----

// A row step that is no multiple of the row length.
// CHECK: error: #ktir.tiled layout does not fit tensor shape [4, 64]: device dim 0 steps host stride 96, which is not a multiple of host dim 0's stride 64
// expected-error @+1 {{device dim 0 steps host stride 96, which is not a multiple of host dim 0's stride 64}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [4, 64], stride_map = [96, 1]>>

// -----

// Elements stored twice: the stick already spans the 64-wide row that dim 0 steps into.
// CHECK: error: #ktir.tiled layout does not fit tensor shape [4, 64]: device dim 0 steps 32 along host dim 1 but the device dims inside it already span 64
// expected-error @+1 {{host elements would be stored twice}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [32, 64, 1]>>

// -----

// CHECK: error: #ktir.tiled layout does not fit tensor shape [4, 64]: host dim 0 (size 4) is not walked by any device dim
// expected-error @+1 {{host dim 0 (size 4) is not walked by any device dim}}
"test.op"() : () -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [-1, 1]>>

// -----

// CHECK: error: device_dtype IEEE_FP32 does not match element type f16, which is stored as SEN169_FP16
// expected-error @+1 {{device_dtype IEEE_FP32 does not match element type f16}}
"test.op"() : () -> tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1], device_dtype = IEEE_FP32>>

// -----

// CHECK: error: unknown device_dtype 'FP16' (expected one of SEN169_FP16,
// expected-error @+1 {{unknown device_dtype 'FP16'}}
"test.op"() : () -> tensor<64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1], device_dtype = FP16>>

// -----

// CHECK: error: element type f64 has no Spyre device format
// expected-error @+1 {{element type f64 has no Spyre device format}}
"test.op"() : () -> tensor<64xf64, #ktir.tiled<device_size = [2, 32], stride_map = [32, 1]>>

// -----

// CHECK: error: a #ktir.tiled tensor must have a static shape
// expected-error @+1 {{a #ktir.tiled tensor must have a static shape}}
"test.op"() : () -> tensor<?x64xf16, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>

// -----

// Checked in function signatures too, at the position of the type.
// CHECK: tiled_invalid.mlir:[[# @LINE + 2]]:18: error: the last device dim is the stick
// expected-error @+1 {{the last device dim is the stick}}
func.func @f(%a: tensor<64xf32, #ktir.tiled<device_size = [1, 64], stride_map = [64, 1]>>) {
  func.return
}

// -----

// CHECK: error: Expected 'device_size'
// expected-error @+1 {{Expected 'device_size'}}
"test.op"() : () -> tensor<64xf16, #ktir.tiled<stride_map = [64, 1]>>
