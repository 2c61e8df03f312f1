// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Upstream arith's integer casts of tensors (dialects/arith_ext.py), which xDSL's take as scalars
// only: index tensors cast to integers and floats and back, and index_castui.

// CHECK-LABEL: func.func @casts
// CHECK-NEXT:    %i = arith.index_cast %ids : tensor<4xindex> to tensor<4xi32>
// CHECK-NEXT:    %u = arith.index_castui %i : tensor<4xi32> to tensor<4xindex>
// CHECK-NEXT:    %f = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
// CHECK-NEXT:    %g = arith.uitofp %i : tensor<4xi32> to tensor<4xf16>
// CHECK-NEXT:    %s = arith.fptosi %f : tensor<4xf32> to tensor<4xi16>
// CHECK-NEXT:    %t = arith.fptoui %f : tensor<4xf32> to tensor<4xi8>
// CHECK-NEXT:    %w = arith.extsi %s : tensor<4xi16> to tensor<4xi64>
// CHECK-NEXT:    %x = arith.extui %t : tensor<4xi8> to tensor<4xi32>
// CHECK-NEXT:    %n = arith.trunci %w : tensor<4xi64> to tensor<4xi8>
// CHECK-NEXT:    %k = arith.index_castui %c : i32 to index
// CHECK-GENERIC: %i = "arith.index_cast"(%ids) : (tensor<4xindex>) -> tensor<4xi32>
// CHECK-GENERIC: %k = "arith.index_castui"(%c) : (i32) -> index
func.func @casts(%ids: tensor<4xindex>, %c: i32) {
  %i = arith.index_cast %ids : tensor<4xindex> to tensor<4xi32>
  %u = arith.index_castui %i : tensor<4xi32> to tensor<4xindex>
  %f = arith.sitofp %i : tensor<4xi32> to tensor<4xf32>
  %g = arith.uitofp %i : tensor<4xi32> to tensor<4xf16>
  %s = arith.fptosi %f : tensor<4xf32> to tensor<4xi16>
  %t = arith.fptoui %f : tensor<4xf32> to tensor<4xi8>
  %w = arith.extsi %s : tensor<4xi16> to tensor<4xi64>
  %x = arith.extui %t : tensor<4xi8> to tensor<4xi32>
  %n = arith.trunci %w : tensor<4xi64> to tensor<4xi8>
  %k = arith.index_castui %c : i32 to index
  return
}
