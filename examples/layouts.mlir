// Tensors carrying Spyre layouts: default, permuted, sparse and a scalar. The function adds the
// first two (sticks along the same dim, so no restickify) and takes the exponential:
// `ktir-opt -p ktir-compile` fuses both into one kernel and divides it over the cores.
func.func @layouts(%x: tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>,
                   %y: tensor<5x100x150xf16, #ktir.tiled<device_size = [5, 3, 100, 64], stride_map = [15000, 64, 150, 1]>>,
                   %s: tensor<512x256xf16, #ktir.tiled<device_size = [256, 1, 512, 64], stride_map = [1, -1, 256, -1]>>,
                   %c: tensor<f16, #ktir.tiled<device_size = [1, 64], stride_map = [-1, -1]>>) -> tensor<5x100x150xf16> {
  %sum = ktir.add %x, %y : tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>,
                           tensor<5x100x150xf16, #ktir.tiled<device_size = [5, 3, 100, 64], stride_map = [15000, 64, 150, 1]>>
                           -> tensor<5x100x150xf16>
  %e = ktir.exp %sum : tensor<5x100x150xf16> -> tensor<5x100x150xf16>
  func.return %e : tensor<5x100x150xf16>
}
