// Tensors carrying Spyre layouts: default, permuted, sparse and a scalar.
func.func @layouts(%x: tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>,
                   %y: tensor<5x100x150xf16, #ktir.tiled<device_size = [5, 3, 100, 64], stride_map = [15000, 64, 150, 1]>>,
                   %s: tensor<512x256xf16, #ktir.tiled<device_size = [256, 1, 512, 64], stride_map = [1, -1, 256, -1]>>,
                   %c: tensor<f16, #ktir.tiled<device_size = [1, 64], stride_map = [-1, -1]>>) {
  func.return
}
