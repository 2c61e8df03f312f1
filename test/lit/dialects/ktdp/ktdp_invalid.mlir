// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// Invalid `ktdp` ops: the reference verifier's messages (RFC 0682 notes, section 3), each
// checked by --verify-diagnostics and, with its location, by FileCheck.

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.load' op access tile shape must match result tensor shape
func.func @load_shape(%t: !ktdp.access_tile<1x64xindex>) {
  // expected-error @+1 {{access tile shape must match result tensor shape}}
  %x = ktdp.load %t : <1x64xindex> -> tensor<2x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:3: error: 'ktdp.store' op data tile shape must match access tile shape
func.func @store_shape(%t: !ktdp.access_tile<1x64xindex>, %x: tensor<1x32xf16>) {
  // expected-error @+1 {{data tile shape must match access tile shape}}
  ktdp.store %x, %t : tensor<1x32xf16>, <1x64xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_distributed_memory_view' op all input memrefs must have the same element type as the result
func.func @distributed_element(%a: memref<16x64xf32>) {
  // expected-error @+1 {{all input memrefs must have the same element type as the result}}
  %v = ktdp.construct_distributed_memory_view(%a : memref<16x64xf32>) : memref<32x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_distributed_memory_view' op all input memrefs must have the same rank as the result
func.func @distributed_rank(%a: memref<1024xf16>) {
  // expected-error @+1 {{all input memrefs must have the same rank as the result}}
  %v = ktdp.construct_distributed_memory_view(%a : memref<1024xf16>) : memref<32x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_memory_view' op result memref rank does not match sizes/strides length
func.func @view_rank(%a: index) {
  // expected-error @+1 {{result memref rank does not match sizes/strides length}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<6144xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_memory_view' op static_sizes and static_strides must have equal length
func.func @view_lengths(%a: index) {
  // expected-error @+1 {{static_sizes and static_strides must have equal length}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: ct_id is only valid for the ct_local memory space, not 'global'
func.func @ct_id_on_global(%a: index) {
  // expected-error @+1 {{ct_id is only valid for the ct_local memory space, not 'global'}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<global, ct_id = 2>} : memref<96x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: ct_id must be non-negative, but got: -3
func.func @ct_id_negative(%a: index) {
  // expected-error @+1 {{ct_id must be non-negative, but got: -3}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<ct_local, ct_id = -3>} : memref<96x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: memory space must be 'global' or 'ct_local', not 'HBM'
func.func @memory_space_kind(%a: index) {
  // expected-error @+1 {{memory space must be 'global' or 'ct_local', not 'HBM'}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.memory_space<HBM>} : memref<96x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: requires attribute 'memory_space'
func.func @view_without_memory_space(%a: index) {
  // expected-error @+1 {{requires attribute 'memory_space'}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<96x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: tile element type must be 'index', but got: f16
func.func @tile_element(%t: index) {
  // expected-error @+1 {{tile element type must be 'index', but got: f16}}
  %x = ktdp.load %t : <1x64xf16> -> tensor<1x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: Access tile set is missing in the operation
func.func @tile_without_set(%v: memref<96x64xf16>) {
  // expected-error @+1 {{Access tile set is missing in the operation}}
  %t = ktdp.construct_access_tile %v[0, 0] {access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: Access tile order is missing in the operation
func.func @tile_without_order(%v: memref<96x64xf16>) {
  // expected-error @+1 {{Access tile order is missing in the operation}}
  %t = ktdp.construct_access_tile %v[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: Access tile set and Base input dimensions should match
func.func @tile_set_dims(%v: memref<96x64xf16>) {
  // expected-error @+1 {{Access tile set and Base input dimensions should match}}
  %t = ktdp.construct_access_tile %v[0] {access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: access_tile_set has 0 symbols but got 1 symbol operands
func.func @tile_symbols(%v: memref<96x64xf16>, %n: index) {
  // expected-error @+1 {{access_tile_set has 0 symbols but got 1 symbol operands}}
  %t = ktdp.construct_access_tile %v[0, 0] symbols(%n) {access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_access_tile' op result type rank (1) must match access_tile_set dimensions (2)
func.func @tile_rank(%v: memref<96x64xf16>) {
  // expected-error @+1 {{result type rank (1) must match access_tile_set dimensions (2)}}
  %t = ktdp.construct_access_tile %v[0, 0] {access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, access_tile_order = affine_map<(d0, d1) -> (d0, d1)>} : memref<96x64xf16> -> !ktdp.access_tile<64xindex>
  return
}


// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_indirect_access_tile' op number of subscripts (1) must match base rank (2)
func.func @indirect_rank(%X: memref<512x64xf16>, %IDX: memref<16xi32>) {
  // expected-error @+1 {{number of subscripts (1) must match base rank (2)}}
  %t = ktdp.construct_indirect_access_tile intermediate_variables(%p) %X[ind(%IDX[%p])] {variables_space_order = affine_map<(d0) -> (d0)>, variables_space_set = affine_set<(d0) : (d0 >= 0, -d0 + 15 >= 0)>} : memref<512x64xf16>, memref<16xi32> -> !ktdp.access_tile<16xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_indirect_access_tile' op indirect subscript map for dimension 0 produces 1 results, but indirect memref has rank 2
func.func @indirect_view_rank(%X: memref<512x64xf16>, %IDX: memref<16x64xi32>) {
  // expected-error @+1 {{indirect subscript map for dimension 0 produces 1 results, but indirect memref has rank 2}}
  %t = ktdp.construct_indirect_access_tile intermediate_variables(%p, %q) %X[ind(%IDX[%p]), (%q)] {variables_space_order = affine_map<(d0, d1) -> (d0, d1)>, variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<512x64xf16>, memref<16x64xi32> -> !ktdp.access_tile<16x64xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.construct_indirect_access_tile' op number of intermediate variables (1) must match variables_space_set dimensions (2)
func.func @indirect_variables(%X: memref<512x64xf16>, %IDX: memref<16xi32>) {
  // expected-error @+1 {{number of intermediate variables (1) must match variables_space_set dimensions (2)}}
  %t = ktdp.construct_indirect_access_tile intermediate_variables(%p) %X[ind(%IDX[%p]), (%p)] {variables_space_order = affine_map<(d0, d1) -> (d0, d1)>, variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>} : memref<512x64xf16>, memref<16xi32> -> !ktdp.access_tile<16x64xindex>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: expected 2 types (base + 1 indirect memrefs), but got 1
func.func @indirect_types(%X: memref<512x64xf16>, %IDX: memref<16xi32>) {
  // expected-error @+1 {{expected 2 types (base + 1 indirect memrefs), but got 1}}
  %t = ktdp.construct_indirect_access_tile intermediate_variables(%p) %X[ind(%IDX[%p]), (0)] {variables_space_order = affine_map<(d0) -> (d0)>, variables_space_set = affine_set<(d0) : (d0 >= 0, -d0 + 15 >= 0)>} : memref<512x64xf16> -> !ktdp.access_tile<16xindex>
  return
}

// -----


// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:8: error: 'ktdp.inter_tile_produce' op future result must have exactly one use
func.func @used_twice(%p: tensor<64xf32>, %id: tensor<64xf32>) {
  // expected-error @+1 {{future result must have exactly one use}}
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  %a = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, identity(%id : tensor<64xf32>) : <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<64xf32> {
  ^bb0(%lhs: tensor<64xf32>, %rhs: tensor<64xf32>):
    ktdp.yield_reduced %lhs : tensor<64xf32>
  }
  %b = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, identity(%id : tensor<64xf32>) : <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<64xf32> {
  ^bb0(%lhs: tensor<64xf32>, %rhs: tensor<64xf32>):
    ktdp.yield_reduced %lhs : tensor<64xf32>
  }
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: core affinity is only valid for LX or L0 memory spaces, but got memory space 'HBM' with core = 2
func.func @core_on_hbm(%a: index) {
  // expected-error @+1 {{core affinity is only valid for LX or L0 memory spaces, but got memory space 'HBM' with core = 2}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.spyre_memory_space<HBM, core = 2>} : memref<96x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: core affinity must be non-negative, but got: -4
func.func @core_negative(%a: index) {
  // expected-error @+1 {{core affinity must be non-negative, but got: -4}}
  %v = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.spyre_memory_space<LX, core = -4>} : memref<96x64xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'ktdp.runtime_arg_extract' op result type (i32) must match runtime_arg underlying type (index) when extracting value
func.func @extract_type(%r: !ktdp.runtime_arg<index, granularity=8>) {
  // expected-error @+1 {{result type (i32) must match runtime_arg underlying type (index) when extracting value}}
  %m = ktdp.runtime_arg_extract value from %r : <index, granularity=8> -> i32
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'ktdp.runtime_arg_extract' op cannot extract upperbound from runtime_arg that doesn't have one
func.func @extract_missing(%r: !ktdp.runtime_arg<index, granularity=8>) {
  // expected-error @+1 {{cannot extract upperbound from runtime_arg that doesn't have one}}
  %m = ktdp.runtime_arg_extract upperbound from %r : <index, granularity=8> -> index
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: runtime_arg granularity must be positive, but got: 0
func.func @granularity(%r: !ktdp.runtime_arg<index, granularity=0>) { // expected-error {{runtime_arg granularity must be positive, but got: 0}}
  return
}

// -----

// A subscript kind that is no integer (the generic form): a verifier error, not a crash.
// CHECK: ktdp_invalid.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'ktdp.construct_indirect_access_tile' op per_dim_subscript_kinds entry 0 must be an integer attribute (true: indirect), not "ind"
"func.func"() <{sym_name = "indirect_kind_not_integer", function_type = (memref<512x64xf16>, memref<16xi32>) -> ()}> ({
^bb0(%X: memref<512x64xf16>, %IDX: memref<16xi32>):
  // expected-error @+1 {{per_dim_subscript_kinds entry 0 must be an integer attribute (true: indirect), not "ind"}}
  %t = "ktdp.construct_indirect_access_tile"(%X, %IDX) <{variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>, variables_space_order = affine_map<(d0, d1) -> (d0, d1)>, per_dim_subscript_kinds = ["ind", true], per_dim_subscript_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>], operandSegmentSizes = array<i32: 1, 1, 0, 0>}> ({
  ^bb0(%p: index, %q: index):
  }) : (memref<512x64xf16>, memref<16xi32>) -> !ktdp.access_tile<16x64xindex>
  "func.return"() : () -> ()
}) : () -> ()

// -----

// A subscript map that is no affine map: a verifier error, not a crash.
// CHECK: ktdp_invalid.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'ktdp.construct_indirect_access_tile' op per_dim_subscript_maps entry 1 must be an affine map, not 1 : i64
"func.func"() <{sym_name = "indirect_map_not_affine", function_type = (memref<512x64xf16>, memref<16xi32>) -> ()}> ({
^bb0(%X: memref<512x64xf16>, %IDX: memref<16xi32>):
  // expected-error @+1 {{per_dim_subscript_maps entry 1 must be an affine map, not 1 : i64}}
  %t = "ktdp.construct_indirect_access_tile"(%X, %IDX) <{variables_space_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 15 >= 0, d1 >= 0, -d1 + 63 >= 0)>, variables_space_order = affine_map<(d0, d1) -> (d0, d1)>, per_dim_subscript_kinds = [true, false], per_dim_subscript_maps = [affine_map<(d0, d1) -> (d0)>, 1], operandSegmentSizes = array<i32: 1, 1, 0, 0>}> ({
  ^bb0(%p: index, %q: index):
  }) : (memref<512x64xf16>, memref<16xi32>) -> !ktdp.access_tile<16x64xindex>
  "func.return"() : () -> ()
}) : () -> ()

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_consume' op result types must match future partial types
func.func @consume_type(%p: tensor<64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i == 0)> -> <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  // expected-error @+1 {{result types must match future partial types}}
  %r = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> : <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<32xf32>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_consume' op producer_dependency_per_consumer must be a set (p)[c] or (p)[c, g] of producer tile ids
func.func @consume_dependency(%p: tensor<64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i == 0)> -> <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  // expected-error @+1 {{producer_dependency_per_consumer must be a set (p)[c] or (p)[c, g] of producer tile ids}}
  %r = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, producer_dependency_per_consumer = affine_set<(p, q) : (p - q == 0)> : <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<64xf32>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_gather' op gather_dimensions must be strictly ascending, not {{\[}}1, 0{{\]}}
func.func @gather_order(%p: tensor<1x64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  // expected-error @+1 {{gather_dimensions must be strictly ascending, not [1, 0]}}
  %r = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, gather_dimensions = [1, 0] : <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<4x64xf32>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_gather' op gather_dimensions {{\[}}2{{\]}} names an axis outside a rank-2 partial
func.func @gather_axis(%p: tensor<1x64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  // expected-error @+1 {{gather_dimensions [2] names an axis outside a rank-2 partial}}
  %r = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, gather_dimensions = [2] : <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<4x64xf32>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_gather' op the result must have the partial's rank (no rank reduction)
func.func @gather_rank(%p: tensor<1x64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  // expected-error @+1 {{the result must have the partial's rank (no rank reduction)}}
  %r = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, gather_dimensions = [0] : <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<256xf32>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_all_to_all' op the result must be a tensor of the partial's element type
func.func @all_to_all_element(%p: tensor<1x64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  // expected-error @+1 {{the result must be a tensor of the partial's element type}}
  %r = ktdp.inter_tile_all_to_all(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, split_dimensions = [1], concat_dimensions = [0] : <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<4x16xf16>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_scatter' op ktdp.inter_tile_scatter takes no producer_dependency_per_consumer: its group has one producer
func.func @scatter_dependency(%p: tensor<1x64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  // expected-error @+1 {{ktdp.inter_tile_scatter takes no producer_dependency_per_consumer: its group has one producer}}
  %r = ktdp.inter_tile_scatter(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, scatter_dimensions = [1], producer_dependency_per_consumer = affine_set<(p)[c] : (p == 0)> : <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<1x16xf32>
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_reduce_scatter' op the identity must have the partial's type
func.func @reduce_scatter_identity(%p: tensor<1x64xf32>, %id: tensor<1x16xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  // expected-error @+1 {{the identity must have the partial's type}}
  %r = ktdp.inter_tile_reduce_scatter(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, scatter_dimensions = [1], identity(%id : tensor<1x16xf32>) : <(tensor<1x64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<1x16xf32> {
  ^bb0(%lhs: tensor<1x64xf32>, %rhs: tensor<1x64xf32>):
    ktdp.yield_reduced %lhs : tensor<1x64xf32>
  }
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 7]]:8: error: 'ktdp.inter_tile_reduce' op producer_dependency_per_consumer must be a set (p)[c] or (p)[c, g] of producer tile ids
func.func @reduce_dependency(%p: tensor<64xf32>, %id: tensor<64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  // expected-error @+1 {{producer_dependency_per_consumer must be a set (p)[c] or (p)[c, g] of producer tile ids}}
  %r = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, producer_dependency_per_consumer = affine_set<(p, q) : (p - q == 0)>, identity(%id : tensor<64xf32>) : <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<64xf32> {
  ^bb0(%lhs: tensor<64xf32>, %rhs: tensor<64xf32>):
    ktdp.yield_reduced %lhs : tensor<64xf32>
  }
  return
}

// -----

// CHECK: ktdp_invalid.mlir:[[# @LINE + 3]]:102: error: the partial types before '->' must be the future's
func.func @produce_partial_types(%p: tensor<64xf32>) {
  // expected-error @+1 {{the partial types before '->' must be the future's}}
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> : tensor<32xf32> -> !ktdp.tile_future<tensor<64xf32>, affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  return
}
