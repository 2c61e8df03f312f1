// RUN: ktir-opt %s --split-input-file -p ktir-plan-kernels | filecheck %s

// ktir-plan-kernels records each divided op's chunking, LX buffer addresses and prefetches on
// the op and changes nothing else. The inputs are divided and scratchpad-planned graph-level
// IR, taken from test/lit/passes/lower-to-cores (lower.mlir and prefetch.mlir).

// The seed's (4, 64) abs on 2 cores fits whole: one chunk, its buffers from the bottom of LX.
// CHECK-LABEL: func.func @abs
// CHECK: ktir.abs %{{.*}} {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<d0 = 1, d1 = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, out0 = 256>} :
// CHECK-NOT: ktir.prefetch
func.func @abs(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

// Chunked: 1 MiB in and out per core does not fit; the rows stream in 64 chunks of 8 (16 KiB),
// two slots per buffer: 2 x 16 KiB of input below the output buffer.
// CHECK-LABEL: func.func @chunked
// CHECK: ktir.exp %{{.*}} {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<d0 = 64, d1 = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 0, out0 = 32768>} :
func.func @chunked(%x: tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>) -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.exp %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>> -> tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
  func.return %y : tensor<1024x1024xf16, #ktir.tiled<device_size = [16, 1024, 64], stride_map = [64, 1024, 1]>>
}

// -----

// LX addresses and a prefetch: the exp's result stays resident at [0, 65536) (ktir.lx_address),
// so both kernels place their buffers above it. The matmul's weight `w` is a parameter the exp
// does not write: its first load is a prefetch (input 1), its buffer placed from the top of LX,
// clear of the exp's buffers. x (input 0) is the exp's result: never prefetched.
// CHECK-LABEL: func.func @exp_then_matmul
// CHECK: ktir.exp %{{.*}} {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.lx_address = 0 : i64, ktir.lx_bytes = 65536 : i64, ktir.chunk_plan = #ktir.chunk_plan<d0 = 4, d1 = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 65536, out0 = 98304>} :
// CHECK: ktir.matmul %{{.*}}, %{{.*}} {ktir.work_division = {m = 2 : i64, n = 1 : i64, k = 1 : i64}, ktir.chunk_plan = #ktir.chunk_plan<m = 1, n = 32, k = 1>, ktir.lx_buffers = #ktir.lx_buffers<in0 = 65536, in1 = 1153408, out0 = 196608>, ktir.prefetch = #ktir.prefetch<1>} :
func.func @exp_then_matmul(%x: tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, %w: tensor<1024x4096xf16, #ktir.tiled<device_size = [64, 1024, 64], stride_map = [64, 4096, 1]>> {ktir.parameter = "w"}) -> tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %a = ktir.exp %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}, ktir.lx_address = 0 : i64, ktir.lx_bytes = 65536 : i64} : tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>> -> tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>
  %y = ktir.matmul %a, %w {ktir.work_division = {m = 2 : i64, n = 1 : i64, k = 1 : i64}} : tensor<64x1024xf16, #ktir.tiled<device_size = [16, 64, 64], stride_map = [64, 1024, 1]>>, tensor<1024x4096xf16, #ktir.tiled<device_size = [64, 1024, 64], stride_map = [64, 4096, 1]>> -> tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>>
  func.return %y : tensor<64x4096xf16, #ktir.tiled<device_size = [64, 64, 64], stride_map = [64, 4096, 1]>>
}
