// REQUIRES: mlir-python
// ktir's generic form is valid upstream MLIR: it parses with unregistered dialects allowed,
// verifies, prints stably, and what MLIR prints parses back into the same ktir IR.
// RUN: ktir-opt %s --print-op-generic | %python %inputs/upstream_mlir.py | ktir-opt | filecheck %s

// CHECK-LABEL: func.func @layouts
// CHECK-SAME: (%{{.*}}: tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>,
// CHECK-SAME: %{{.*}}: tensor<512x256xf16, #ktir.tiled<device_size = [256, 1, 512, 64], stride_map = [1, -1, 256, -1]>>,
// CHECK-SAME: %{{.*}}: tensor<10xi64, #ktir.tiled<device_size = [1, 32], stride_map = [32, 1], device_dtype = IEEE_INT32>>)
// CHECK-NEXT: %{{.*}} = arith.addf %{{.*}}, %{{.*}} : tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
// CHECK-NEXT: %{{.*}} = "test.op"() {note = "an unregistered-looking op"} : () -> tensor<f16, #ktir.tiled<device_size = [1, 64], stride_map = [-1, -1]>>
// CHECK-NEXT: func.return
func.func @layouts(%a: tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>,
                   %b: tensor<512x256xf16, #ktir.tiled<device_size = [256, 1, 512, 64], stride_map = [1, -1, 256, -1]>>,
                   %c: tensor<10xi64, #ktir.tiled<device_size = [1, 32], stride_map = [32, 1], device_dtype = IEEE_INT32>>) -> tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>> {
  %0 = arith.addf %a, %a : tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
  %1 = "test.op"() {note = "an unregistered-looking op"} : () -> tensor<f16, #ktir.tiled<device_size = [1, 64], stride_map = [-1, -1]>>
  func.return %0 : tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
}
