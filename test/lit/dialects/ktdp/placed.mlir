// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// The placed inter-tile deliveries (dialects/ktdp/placed_delivery.py), each from its own future:
// gather, reduce_scatter (with a dependency set), all_to_all and scatter
// (ktdp_invalid.mlir: their invalid forms; Inputs/ktdp/placed.mlir runs them).

// CHECK:       #set = affine_set<(d0)[s0] : (d0 >= 0, -d0 + 3 >= 0)>
// CHECK-NEXT:  #set1 = affine_set<(d0) : (d0 == 0)>
// CHECK-NEXT:  #set2 = affine_set<(d0)[s0] : (d0 >= 0)>
// CHECK-LABEL: func.func @placed
// CHECK:         %g = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = #set, gather_dimensions = [0] : <(tensor<1x64xf32>), groups = #set1> -> tensor<4x64xf32>
// CHECK:         %s = ktdp.inter_tile_reduce_scatter(%h) consumer_tiles_per_group = #set, scatter_dimensions = [1], producer_dependency_per_consumer = #set2, identity(%zero : tensor<1x64xf32>) : <(tensor<1x64xf32>), groups = #set1> -> tensor<1x16xf32> {
// CHECK-NEXT:    ^bb0(%lhs: tensor<1x64xf32>, %rhs: tensor<1x64xf32>):
// CHECK-NEXT:      %sum = arith.addf %lhs, %rhs : tensor<1x64xf32>
// CHECK-NEXT:      ktdp.yield_reduced %sum : tensor<1x64xf32>
// CHECK-NEXT:    }
// CHECK:         %a = ktdp.inter_tile_all_to_all(%k) consumer_tiles_per_group = #set, split_dimensions = [1], concat_dimensions = [0] : <(tensor<1x64xf32>), groups = #set1> -> tensor<4x16xf32>
// CHECK:         %c = ktdp.inter_tile_scatter(%m) consumer_tiles_per_group = #set, scatter_dimensions = [1] : <(tensor<1x64xf32>), groups = #set1> -> tensor<1x16xf32>

// CHECK-GENERIC: #set = affine_set<(d0)[s0] : (d0 >= 0, -d0 + 3 >= 0)>
// CHECK-GENERIC-NEXT: #set1 = affine_set<(d0) : (d0 == 0)>
// CHECK-GENERIC-NEXT: #set2 = affine_set<(d0)[s0] : (d0 >= 0)>
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "placed"
// CHECK-GENERIC:         %g = "ktdp.inter_tile_gather"(%f) <{consumer_tiles_per_group = #set, gather_dimensions = array<i64: 0>}> : (!ktdp.tile_future<(tensor<1x64xf32>), groups = #set1>) -> tensor<4x64xf32>
// CHECK-GENERIC:         %s = "ktdp.inter_tile_reduce_scatter"(%h, %zero) <{consumer_tiles_per_group = #set, scatter_dimensions = array<i64: 1>, producer_dependency_per_consumer = #set2}> ({
// CHECK-GENERIC:         %a = "ktdp.inter_tile_all_to_all"(%k) <{consumer_tiles_per_group = #set, split_dimensions = array<i64: 1>, concat_dimensions = array<i64: 0>}>
// CHECK-GENERIC:         %c = "ktdp.inter_tile_scatter"(%m) <{consumer_tiles_per_group = #set, scatter_dimensions = array<i64: 1>}>
#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#one = affine_set<(g) : (g == 0)>
func.func @placed(%p: tensor<1x64xf32>, %zero: tensor<1x64xf32>) {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  %g = ktdp.inter_tile_gather(%f) consumer_tiles_per_group = #all, gather_dimensions = [0] : <(tensor<1x64xf32>), groups = #one> -> tensor<4x64xf32>
  %h = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  %s = ktdp.inter_tile_reduce_scatter(%h) consumer_tiles_per_group = #all, scatter_dimensions = [1], producer_dependency_per_consumer = affine_set<(p)[c] : (p >= 0)>, identity(%zero : tensor<1x64xf32>) : <(tensor<1x64xf32>), groups = #one> -> tensor<1x16xf32> {
  ^bb0(%lhs: tensor<1x64xf32>, %rhs: tensor<1x64xf32>):
    %sum = arith.addf %lhs, %rhs : tensor<1x64xf32>
    ktdp.yield_reduced %sum : tensor<1x64xf32>
  }
  %k = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  %a = ktdp.inter_tile_all_to_all(%k) consumer_tiles_per_group = #all, split_dimensions = [1], concat_dimensions = [0] : <(tensor<1x64xf32>), groups = #one> -> tensor<4x16xf32>
  %m = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i == 0)> -> <(tensor<1x64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<1x64xf32>
  }
  %c = ktdp.inter_tile_scatter(%m) consumer_tiles_per_group = #all, scatter_dimensions = [1] : <(tensor<1x64xf32>), groups = #one> -> tensor<1x16xf32>
  return
}
