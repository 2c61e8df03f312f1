// A static KV cache in buffers (index_copy_ into them): the importer returns each buffer's new
// value after the model's output and marks the buffer with the result that holds it
// (ktir.updated_by); the scatters that write the cache, its only readers, are in_place and stay
// so through ktir-compile; ktir-run times each as one row written (1,504 cycles: three DMA
// setups on one core and 128 + 2 x 128 bytes at 100 bytes per cycle), not a copy of the cache.
// RUN: ktir-import %inputs/models/kv_cache.py -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: ktir-opt %t.mlir -p 'ktir-compile{cores=4}' | filecheck %s --check-prefix=CORES
// RUN: cat %t.mlir | ktir-run - --cores 4 --top 0 --order program | filecheck %s --check-prefix=TIMES

// CHECK:      func.func @forward(%x: tensor<1x1x64xf16> {ktir.name = "x"}, %position: tensor<1xi64> {ktir.name = "position"},
// CHECK-SAME:   %b_key_cache: tensor<1x1x16x64xf16> {ktir.name = "b_key_cache", ktir.buffer = "key_cache", ktir.updated_by = 1 : i64}
// CHECK-SAME:   %b_value_cache: tensor<1x1x16x64xf16> {ktir.name = "b_value_cache", ktir.buffer = "value_cache", ktir.updated_by = 2 : i64}
// CHECK:        %index_copy = ktir.scatter_rows %unsqueeze into %b_key_cache[%position] dim 2 in_place : tensor<1x1x1x64xf16>, tensor<1x1x16x64xf16>, tensor<1xi64> -> tensor<1x1x16x64xf16>
// CHECK:        %index_copy_1 = ktir.scatter_rows %unsqueeze_1 into %b_value_cache[%position] dim 2 in_place
// CHECK:        ktir.attention %{{.*}}, %index_copy, %index_copy_1
// CHECK:        func.return %{{.*}}, %index_copy, %index_copy_1 : tensor<1x1x1x64xf16>, tensor<1x1x16x64xf16>, tensor<1x1x16x64xf16>

// CORES:      ktir.updated_by = 1
// CORES-SAME: ktir.updated_by = 2
// CORES:      ktir.scatter_rows %unsqueeze into %b_key_cache[%position] dim 2 in_place
// CORES:      ktir.scatter_rows %unsqueeze_1 into %b_value_cache[%position] dim 2 in_place

// TIMES:    │ {{ *}}3 │ %index_copy {{.*}}│ scatter_rows {{.*}}│  1,504 │
// TIMES:    │ {{ *}}7 │ %index_copy {{.*}}│ scatter_rows {{.*}}│  1,504 │
