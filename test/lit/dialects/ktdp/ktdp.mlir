// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Round trips of the RFC 0682 `ktdp` ops (dialects/ktdp/ops.py): the RFC's worked example (a 96x64
// add on 32 tiles, 3 rows each, in the emitter's form: one index argument per buffer), views
// with SSA sizes and a scratchpad memory space, a distributed view, subscript expressions,
// `symbols(...)` and both spellings of the access-tile type in load and store.

// Maps and sets print as #map / #set aliases, defined before the module in order of first use
// (mlir-opt's form; ktir.dialects.ktdp.aliases).
// CHECK:       #set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>
// CHECK-NEXT:  #map = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-NEXT:  #set1 = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
// CHECK-NEXT:  #set2 = affine_set<(d0, d1)[s0] : (d0 >= 0, -d0 + s0 - 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>
// CHECK-NEXT:  #map1 = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @add(%a: index, %b: index, %c: index) attributes {grid = [32 : i64]} {
// CHECK-NEXT:    %id = ktdp.get_compute_tile_id : index
// CHECK:         %va = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = #set, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
// CHECK:         scf.for %i = %c0 to %c3 step %c1 {
// CHECK-NEXT:      %ta = ktdp.construct_access_tile %va[%row + %i, 0] {access_tile_order = #map, access_tile_set = #set1} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
// CHECK:           %x = ktdp.load %ta : <1x64xindex> -> tensor<1x64xf16>
// CHECK:           %sum = linalg.add ins(%x, %y : tensor<1x64xf16>, tensor<1x64xf16>) outs(%e : tensor<1x64xf16>) -> tensor<1x64xf16>
// CHECK-NEXT:      ktdp.store %sum, %tc : tensor<1x64xf16>, <1x64xindex>
// CHECK-LABEL: func.func @views(%base: index, %n: index)
// CHECK-NEXT:    %v = ktdp.construct_memory_view %base, sizes: [%n, 64], strides: [64, 1] {coordinate_set = #set2, memory_space = #ktdp.memory_space<ct_local, ct_id = 3>} : memref<128x64xf16>
// CHECK-NEXT:    %w = ktdp.construct_distributed_memory_view(%v, %v : memref<128x64xf16>, memref<128x64xf16>) : memref<256x64xf16>
// CHECK-NEXT:    %none = ktdp.construct_distributed_memory_view() : memref<0x64xf16>
// CHECK-NEXT:    %ids, %ids_1 = ktdp.get_compute_tile_id : index, index
// CHECK-NEXT:    %t = ktdp.construct_access_tile %v[%ids floordiv 64 - 2, %ids_1 mod 64] symbols(%n) {access_tile_order = #map1, access_tile_set = #set2} : memref<128x64xf16> -> !ktdp.access_tile<?x64xindex>
// CHECK-NEXT:    %u = ktdp.construct_access_tile %v[0, 0] {access_tile_order = #map, access_tile_set = #set3} : memref<128x64xf16> -> !ktdp.access_tile<2x64xindex>
// CHECK-NEXT:    %l = ktdp.load %u : <2x64xindex> -> tensor<2x64xf16>
// CHECK-NEXT:    ktdp.store %l, %u : tensor<2x64xf16>, <2x64xindex>
// CHECK-GENERIC: #set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>
// CHECK-GENERIC-NEXT: #map = affine_map<(d0, d1) -> (d0 + d1, 0)>
// CHECK-GENERIC-NEXT: #set1 = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
// CHECK-GENERIC-NEXT: #map1 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-GENERIC: "ktdp.construct_memory_view"(%a) <{static_sizes = array<i64: 96, 64>, static_strides = array<i64: 64, 1>, coordinate_set = #set, memory_space = #ktdp.memory_space<global>, operandSegmentSizes = array<i32: 1, 0, 0>}> : (index) -> memref<96x64xf16>
// CHECK-GENERIC: "ktdp.construct_access_tile"(%va, %row, %i) <{base_map = #map, access_tile_set = #set1, access_tile_order = #map1, operandSegmentSizes = array<i32: 1, 2, 0>}> : (memref<96x64xf16>, index, index) -> !ktdp.access_tile<1x64xindex>
// CHECK-GENERIC: "ktdp.load"(%ta) : (!ktdp.access_tile<1x64xindex>) -> tensor<1x64xf16>

#rows = affine_set<(d0, d1) : (d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>
#row = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @add(%a: index, %b: index, %c: index) attributes {grid = [32]} {
  %id = ktdp.get_compute_tile_id : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %row = arith.muli %id, %c3 : index
  %va = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  %vb = ktdp.construct_memory_view %b, sizes: [96, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  %vc = ktdp.construct_memory_view %c, sizes: [96, 64], strides: [64, 1] {coordinate_set = #rows, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  scf.for %i = %c0 to %c3 step %c1 {
    %ta = ktdp.construct_access_tile %va[%row + %i, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
    %tb = ktdp.construct_access_tile %vb[%row + %i, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
    %tc = ktdp.construct_access_tile %vc[%row + %i, 0] {access_tile_set = #row, access_tile_order = #id2} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
    %x = ktdp.load %ta : <1x64xindex> -> tensor<1x64xf16>
    %y = ktdp.load %tb : !ktdp.access_tile<1x64xindex> -> tensor<1x64xf16>
    %e = tensor.empty() : tensor<1x64xf16>
    %sum = linalg.add ins(%x, %y : tensor<1x64xf16>, tensor<1x64xf16>) outs(%e : tensor<1x64xf16>) -> tensor<1x64xf16>
    ktdp.store %sum, %tc : tensor<1x64xf16>, <1x64xindex>
  }
  return
}

func.func @views(%base: index, %n: index) {
  %v = ktdp.construct_memory_view %base, sizes: [%n, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1)[s0] : (d0 >= 0, -d0 + s0 - 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<ct_local, ct_id = 3>} : memref<128x64xf16>
  %w = ktdp.construct_distributed_memory_view(%v, %v : memref<128x64xf16>, memref<128x64xf16>) : memref<256x64xf16>
  %none = ktdp.construct_distributed_memory_view() : memref<0x64xf16>
  %ids, %ids_1 = ktdp.get_compute_tile_id : index, index
  %t = ktdp.construct_access_tile %v[%ids floordiv 64 - 2, %ids_1 mod 64] symbols(%n) {access_tile_set = affine_set<(d0, d1)[s0] : (d0 >= 0, -d0 + s0 - 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d1, d0)>} : memref<128x64xf16> -> !ktdp.access_tile<?x64xindex>
  %u = ktdp.construct_access_tile %v[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 1 >= 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<128x64xf16> -> !ktdp.access_tile<2x64xindex>
  %l = ktdp.load %u : <2x64xindex> -> tensor<2x64xf16>
  ktdp.store %l, %u : tensor<2x64xf16>, <2x64xindex>
  return
}

// Subscripts may name a result of a multi-result op (`%ids#1`), as MLIR's affine maps of SSA ids do.
// CHECK-LABEL: func.func @results(%base: index)
// CHECK:         %ids, %ids_1 = ktdp.get_compute_tile_id : index, index
// CHECK:         ktdp.construct_access_tile %v[%ids + %ids_1 * 2, %ids_1]
// CHECK-GENERIC: "ktdp.construct_access_tile"(%v, %ids, %ids_1) <{base_map = #map5
func.func @results(%base: index) attributes {grid = [2, 2]} {
  %ids:2 = ktdp.get_compute_tile_id : index, index
  %v = ktdp.construct_memory_view %base, sizes: [4, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 3 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<4x64xf16>
  %t = ktdp.construct_access_tile %v[%ids#0 + %ids#1 * 2, %ids#1] {access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 31 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<4x64xf16> -> !ktdp.access_tile<1x32xindex>
  return
}

// A view without coordinate_set (as ktir-cpu's kernels write it): the full index space of its sizes.
// CHECK-LABEL: func.func @view_without_set
// CHECK-NEXT:    %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
// CHECK-GENERIC: "ktdp.construct_memory_view"(%a) <{static_sizes = array<i64: 96, 64>, static_strides = array<i64: 64, 1>, memory_space = #ktdp.memory_space<global>, operandSegmentSizes = array<i32: 1, 0, 0>}> : (index) -> memref<96x64xf16>
func.func @view_without_set(%a: index) {
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  return
}
