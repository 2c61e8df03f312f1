// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Round trips of ktdp.construct_indirect_access_tile (dialects/ktdp/indirect.py): a gather
// X[IDX[p, q], q], a captured variable composed with an intermediate one (printed as MLIR prints
// the composed map, `%i + %off`), two index views, and zero intermediate variables.

// CHECK:       #map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-NEXT:  #set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>
// CHECK:       #map1 = affine_map<() -> ()>
// CHECK-NEXT:  #set2 = affine_set<() : ()>
// CHECK-LABEL: func.func @indirect
// CHECK-NEXT:    %t = ktdp.construct_indirect_access_tile intermediate_variables(%p, %q) %X[ind(%IDX[%p, %q]), (%q)] {variables_space_order = #map, variables_space_set = #set} : memref<512x64xf16>, memref<16x64xi32> -> !ktdp.access_tile<16x64xindex>
// CHECK-NEXT:    %u = ktdp.construct_indirect_access_tile intermediate_variables(%i, %j) %X[ind(%IDX[%i + %off, %j]), (%j floordiv 2)] {{.*}} -> !ktdp.access_tile<8x64xindex>
// CHECK-NEXT:    %w = ktdp.construct_indirect_access_tile intermediate_variables(%m, %k) %Y[ind(%IDX[%m, %k]), ind(%IDX2[%m, %k])] {{.*}} : memref<512x512xf16>, memref<16x64xi32>, memref<16x64xi32> -> !ktdp.access_tile<16x64xindex>
// CHECK-NEXT:    %z = ktdp.construct_indirect_access_tile intermediate_variables() %X[ind(%IDX[%off, 0]), (%off)] {variables_space_order = #map1, variables_space_set = #set2} : memref<512x64xf16>, memref<16x64xi32> -> !ktdp.access_tile<index>
// CHECK-GENERIC: #set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>
// CHECK-GENERIC-NEXT: #map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-GENERIC-NEXT: #map1 = affine_map<(d0, d1) -> (d1)>
// CHECK-GENERIC: "ktdp.construct_indirect_access_tile"(%X, %IDX) <{variables_space_set = #set, variables_space_order = #map, per_dim_subscript_kinds = [true, false], per_dim_subscript_maps = [#map, #map1], operandSegmentSizes = array<i32: 1, 1, 0, 0>}> ({
// CHECK-GENERIC-NEXT: ^bb0(%p: index, %q: index):
#full = affine_map<(d0, d1) -> (d0, d1)>
func.func @indirect(%X: memref<512x64xf16>, %Y: memref<512x512xf16>, %IDX: memref<16x64xi32>, %IDX2: memref<16x64xi32>, %off: index) {
  %t = ktdp.construct_indirect_access_tile intermediate_variables(%p, %q) %X[ind(%IDX[%p, %q]), (%q)] {variables_space_order = #full, variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<512x64xf16>, memref<16x64xi32> -> !ktdp.access_tile<16x64xindex>
  %u = ktdp.construct_indirect_access_tile intermediate_variables(%i, %j) %X[ind(%IDX[%i + %off, %j]), (%j floordiv 2)] {variables_space_order = #full, variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 7 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<512x64xf16>, memref<16x64xi32> -> !ktdp.access_tile<8x64xindex>
  %w = ktdp.construct_indirect_access_tile intermediate_variables(%m, %k) %Y[ind(%IDX[%m, %k]), ind(%IDX2[%m, %k])] {variables_space_order = #full, variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<512x512xf16>, memref<16x64xi32>, memref<16x64xi32> -> !ktdp.access_tile<16x64xindex>
  %z = ktdp.construct_indirect_access_tile intermediate_variables() %X[ind(%IDX[%off, 0]), (%off)] {variables_space_order = affine_map<() -> ()>, variables_space_set = affine_set<() : ()>} : memref<512x64xf16>, memref<16x64xi32> -> !ktdp.access_tile<index>
  return
}
