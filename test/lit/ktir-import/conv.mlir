// Convolutions import as matmuls over strided windows of the input; depthwise ones and pooling
// as elementwise ops over the same windows; inference batch norm as a per-channel scale and
// shift in f32 (ktir.frontend.aten_conv). Nothing runs on the host.
// RUN: ktir-import %inputs/models/conv.py -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: ktir-opt %t.mlir -p 'ktir-compile{cores=4}' | filecheck %s --check-prefix=COMPILED

// The 4x4 stride-4 patch embedding is a reshape and a permute of the input, then one matmul.
// CHECK:      %convolution = ktir.reshape %x : tensor<1x3x16x16xf16> -> tensor<1x3x4x4x4x4xf16>
// CHECK-NEXT: %convolution_1 = ktir.permute %convolution perm [0, 2, 4, 1, 3, 5] : tensor<1x3x4x4x4x4xf16> -> tensor<1x4x4x3x4x4xf16>
// CHECK-NEXT: %convolution_2 = ktir.reshape %convolution_1 : tensor<1x4x4x3x4x4xf16> -> tensor<16x48xf16>
// CHECK:      ktir.matmul %convolution_2, %{{.*}} : tensor<16x48xf16>, tensor<48x16xf16> -> tensor<16x16xf16>
// The 3x3 convolution pads by one, takes nine windows (three row slices, shared), joins them
// along the channels and contracts 9 x 16 = 144 of them per position.
// CHECK:      ktir.pad %{{.*}} low [0, 0, 1, 1] high [0, 0, 1, 1] {value = 0.000000e+00 : f64} : tensor<1x16x4x4xf16> -> tensor<1x16x6x6xf16>
// CHECK:      ktir.cat {{.*}} dim 1 : {{.*}} -> tensor<1x144x4x4xf16>
// CHECK:      ktir.matmul %{{.*}}, %{{.*}} : tensor<16x144xf16>, tensor<144x16xf16> -> tensor<16x16xf16>
// CHECK:      ktir.rsqrt %{{.*}} : tensor<16x1x1xf32> -> tensor<16x1x1xf32>
// CHECK:      ktir.relu
// The depthwise 3x3 multiplies each window by its tap of the filter in f32 and sums.
// CHECK-COUNT-9: ktir.mul %{{.*}}, %{{.*}} : tensor<1x16x4x4xf32>, tensor<16x1x1xf32> -> tensor<1x16x4x4xf32>
// CHECK:      ktir.convert %{{.*}} : tensor<1x16x4x4xf32> -> tensor<1x16x4x4xf16>
// The 2x2 max pool: four stride-2 windows and three maximums.
// CHECK-COUNT-3: ktir.maximum
// CHECK-NOT:  ktir.cpu_fallback
// CHECK:      func.return

// COMPILED-COUNT-2: ktir.compute pt
// COMPILED-NOT: ktir.cpu_fallback
