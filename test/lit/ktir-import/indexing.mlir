// embedding, index and cumsum import as on-chip ops: ktir.gather_rows and ktir.cumsum.
// RUN: ktir-import %inputs/models/indexing.py -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: ktir-opt %t.mlir --print-op-generic | ktir-opt | filecheck %s

// CHECK:      func.func @forward(%ids: tensor<1x4xi64> {ktir.name = "ids"}, %table: tensor<8x64xf32> {ktir.name = "table"}) -> tensor<1x4x64xf32> {
// CHECK-NEXT:   %full_like = ktir.full 1 : tensor<1x4xi64>
// CHECK-NEXT:   %cumsum = ktir.cumsum %full_like dim 1 : tensor<1x4xi64> -> tensor<1x4xi64>
// CHECK-NEXT:   %embedding = ktir.gather_rows %table[%ids] : tensor<8x64xf32>, tensor<1x4xi64> -> tensor<1x4x64xf32>
// CHECK:        %sin = ktir.sin %{{.*}} : tensor<1x4xf32> -> tensor<1x4xf32>
// CHECK:        %index = ktir.gather_rows %table[%slice] : tensor<8x64xf32>, tensor<2xi64> -> tensor<2x64xf32>
// CHECK-NOT:    ktir.cpu_fallback
// CHECK:        func.return
