// RUN: ktir-opt %s --split-input-file -p 'ktir-divide-work{policy=default}' | filecheck %s --check-prefix=C32
// RUN: ktir-opt %s --split-input-file -p 'ktir-divide-work{cores=8 policy=default}' | filecheck %s --check-prefix=C8

// Batched attention divides for time with its chunking (ktir.cores.attention): the most cores,
// then balanced work and every key and value head read once. The inputs were generated with
//   ktir-opt -p 'ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse'
// from graph-level attention (test/unit/helpers.py `attention`); the last one has the layouts
// of Llama-3.2-1B's prefill at batch 8 (ktir-estimate bench/configs/llama-3.2-1b.json --batch 8).

// A decode step of 8 sequences, 8 query heads over 2 key heads: 4 sequences x 8 query heads
// on 32 cores; the 4 cores of a group read its key head in one broadcast read, and each core's
// 2 chunks (one sequence each) read it once. (Before, {b0 = 8, h = 4}: 2 query heads per core,
// in 2 chunks of one head that each read the key head: twice the bytes, 2.11x the bound.)
// C32-LABEL: func.func @decode_batch8
// C32: ktir.attention {{.*}} {ktir.work_division = {b0 = 4 : i64, h = 8 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}}
func.func @decode_batch8(%q: tensor<8x8x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>>, %k: tensor<8x2x2048x64xf16, #ktir.tiled<device_size = [2, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 262144, 1]>>, %v: tensor<8x2x2048x64xf16, #ktir.tiled<device_size = [2, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 262144, 1]>>) -> tensor<8x8x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %g = ktir.reshape %q : tensor<8x8x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>> -> tensor<8x2x4x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>>
  %o = ktir.attention %g, %k, %v scale 1.250000e-01 causal 2047 : tensor<8x2x4x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>>, tensor<8x2x2048x64xf16, #ktir.tiled<device_size = [2, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 262144, 1]>>, tensor<8x2x2048x64xf16, #ktir.tiled<device_size = [2, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 262144, 1]>> -> tensor<8x2x4x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>>
  %r = ktir.reshape %o : tensor<8x2x4x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>> -> tensor<8x8x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>>
  func.return %r : tensor<8x8x1x64xf16, #ktir.tiled<device_size = [8, 1, 1, 8, 64], stride_map = [64, -1, 64, 512, 1]>>
}

// -----

// A prefill of 4 sequences, 32 query heads over 8 key heads, on 8 cores: a core takes a
// sequence and 16 query heads, never a range of queries (under the causal limit the last
// queries see the most keys), and walks them a group at a time.
// C8-LABEL: func.func @prefill_batch4
// C8: ktir.attention {{.*}} {ktir.work_division = {b0 = 4 : i64, h = 2 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}}
func.func @prefill_batch4(%q: tensor<4x32x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>>, %k: tensor<4x8x1024x64xf16, #ktir.tiled<device_size = [8, 1024, 1, 4, 64], stride_map = [65536, 64, 64, 524288, 1]>>, %v: tensor<4x8x1024x64xf16, #ktir.tiled<device_size = [8, 1024, 1, 4, 64], stride_map = [65536, 64, 64, 524288, 1]>>) -> tensor<4x32x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %g = ktir.reshape %q : tensor<4x32x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>> -> tensor<4x8x4x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>>
  %o = ktir.attention %g, %k, %v scale 1.250000e-01 causal 0 : tensor<4x8x4x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>>, tensor<4x8x1024x64xf16, #ktir.tiled<device_size = [8, 1024, 1, 4, 64], stride_map = [65536, 64, 64, 524288, 1]>>, tensor<4x8x1024x64xf16, #ktir.tiled<device_size = [8, 1024, 1, 4, 64], stride_map = [65536, 64, 64, 524288, 1]>> -> tensor<4x8x4x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>>
  %r = ktir.reshape %o : tensor<4x8x4x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>> -> tensor<4x32x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>>
  func.return %r : tensor<4x32x128x64xf16, #ktir.tiled<device_size = [32, 128, 1, 4, 64], stride_map = [8192, 64, 64, 262144, 1]>>
}

// -----

// Llama-3.2-1B's prefill at batch 8 (512 queries over a 2048-position cache): on 32 cores a
// query head of every sequence per core, in 8 chunks of one sequence; on 8 cores a sequence per
// core. (Before, {b0 = 4, h = 1, s = 8} with 4,096 chunks reloaded the key heads 128 times.)
// C32-LABEL: func.func @llama_1b_prefill_batch8
// C32: ktir.attention {{.*}} {ktir.work_division = {b0 = 1 : i64, h = 32 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}}
// C8-LABEL: func.func @llama_1b_prefill_batch8
// C8: ktir.attention {{.*}} {ktir.work_division = {b0 = 8 : i64, h = 1 : i64, s = 1 : i64, e = 1 : i64, l = 1 : i64, d = 1 : i64}}
func.func @llama_1b_prefill_batch8(%q: tensor<8x8x4x512x64xf16, #ktir.tiled<device_size = [512, 32, 8, 64], stride_map = [64, 32768, 1048576, 1]>>, %k: tensor<8x8x2048x64xf16, #ktir.tiled<device_size = [8, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 1048576, 1]>>, %v: tensor<8x8x2048x64xf16, #ktir.tiled<device_size = [8, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 1048576, 1]>>) -> tensor<8x8x4x512x64xf16, #ktir.tiled<device_size = [512, 32, 8, 64], stride_map = [64, 32768, 1048576, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %o = ktir.attention %q, %k, %v scale 1.250000e-01 causal 0 : tensor<8x8x4x512x64xf16, #ktir.tiled<device_size = [512, 32, 8, 64], stride_map = [64, 32768, 1048576, 1]>>, tensor<8x8x2048x64xf16, #ktir.tiled<device_size = [8, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 1048576, 1]>>, tensor<8x8x2048x64xf16, #ktir.tiled<device_size = [8, 2048, 1, 8, 64], stride_map = [131072, 64, 64, 1048576, 1]>> -> tensor<8x8x4x512x64xf16, #ktir.tiled<device_size = [512, 32, 8, 64], stride_map = [64, 32768, 1048576, 1]>>
  func.return %o : tensor<8x8x4x512x64xf16, #ktir.tiled<device_size = [512, 32, 8, 64], stride_map = [64, 32768, 1048576, 1]>>
}
