// RUN: printf 'name = "small"\nlx_bytes = 131072\n' > %t.toml
// RUN: ktir-opt %s -p 'ktir-plan-kernels{target="%t.toml"},ktir-lower-to-cores{target="%t.toml"}' | filecheck %s

// Attention whose keys and values do not fit LX whole walks its keys in chunks with an online
// softmax (`IterationSpace.chunkable`): on a chip with 128 KiB of LX (104 KiB usable), one
// query head per core keeps its 256 queries (32 KiB) and their fp32 accumulator (64 KiB) in
// LX, zeroes the accumulator, and streams its 512 keys and values in 64 chunks of 8, each
// `ktir.compute pt ... accumulate` combining its chunk into the running max, sum and output;
// the accumulator is stored once. A 2 KiB buffer holds the rows' running max and sum.
// Input generated with
//   ktir-opt attention.mlir -p 'ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse,ktir-divide-work{cores=2 policy=default target="small.toml"},ktir-plan-scratchpad{target="small.toml"}'

builtin.module {
  func.func @attention(%q: tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, %k: tensor<1x1x512x64xf16, #ktir.tiled<device_size = [1, 512, 1, 1, 64], stride_map = [-1, 64, 64, -1, 1]>>, %v: tensor<1x1x512x64xf16, #ktir.tiled<device_size = [1, 512, 1, 1, 64], stride_map = [-1, 64, 64, -1, 1]>>) -> tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
    %g = ktir.reshape %q : tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
    %o = ktir.attention %g, %k, %v scale 1.250000e-01 causal 256 {ktir.work_division = {b0 = 1 : i64, h = 2 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}} : tensor<1x1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>, tensor<1x1x512x64xf16, #ktir.tiled<device_size = [1, 512, 1, 1, 64], stride_map = [-1, 64, 64, -1, 1]>>, tensor<1x1x512x64xf16, #ktir.tiled<device_size = [1, 512, 1, 1, 64], stride_map = [-1, 64, 64, -1, 1]>> -> tensor<1x1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
    %r = ktir.reshape %o : tensor<1x1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>> -> tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
    func.return %r : tensor<1x2x256x64xf16, #ktir.tiled<device_size = [2, 256, 1, 1, 64], stride_map = [16384, 64, 64, -1, 1]>>
  }
}


// CHECK:      ktir.kernel "ktir.attention" cores 2 chunks 64 work_division {b0 = 1 : i64, h = 2 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}
// CHECK:      %[[Q:.*]] = ktir.lx_alloc address {{[0-9]+}} : memref<1x1x256x1x1x64xf16, "lx">
// CHECK:      %[[K:.*]] = ktir.lx_alloc address {{[0-9]+}} : memref<2x1x8x1x1x64xf16, "lx">
// CHECK:      %[[V:.*]] = ktir.lx_alloc address {{[0-9]+}} : memref<2x1x8x1x1x64xf16, "lx">
// CHECK:      %[[ACC:.*]] = ktir.lx_alloc address {{[0-9]+}} : memref<1x1x256x1x1x64xf32, "lx">
// CHECK:      ktir.lx_alloc address {{[0-9]+}} : memref<1x2048xi8, "lx">
// CHECK:      ktir.dma_load %{{.*}} -> %[[Q]]{{.*}} tile 0 :
// CHECK:      ktir.lx_fill %[[ACC]]
// CHECK:      scf.for
// CHECK:        ktir.dma_load %{{.*}} -> %[[K]]{{.*}} tile 1 :
// CHECK-NEXT:   ktir.dma_load %{{.*}} -> %[[V]]{{.*}} tile 2 :
// CHECK-NEXT:   ktir.compute pt{{.*}} ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) outs(%[[ACC]] : {{.*}}) tiles [0, 1, 2, 3] accumulate {
// CHECK:        ktir.attention
// CHECK:      ktir.dma_store %[[ACC]] -> {{.*}} tile 3 :
