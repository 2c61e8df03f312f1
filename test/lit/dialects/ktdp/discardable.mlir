// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// The inter-tile ops keep their discardable attributes in the custom form (an attribute
// dictionary before the `:`, after the produce's region), as the generic form does: a round
// trip through the custom form used to drop them.

// CHECK-LABEL: func.func @discardable
// CHECK:         %f = ktdp.inter_tile_produce producer_tiles_per_group = #set -> <(tensor<64xf32>), groups = #set1> {
// CHECK:         } {tag = 1 : i64}
// CHECK-NEXT:    %c = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = #set {tag = 2 : i64} : <(tensor<64xf32>), groups = #set1> -> tensor<64xf32>
// CHECK:         %g = ktdp.inter_tile_gather(%h) consumer_tiles_per_group = #set, gather_dimensions = [0] {tag = 3 : i64} : <(tensor<64xf32>), groups = #set1> -> tensor<256xf32>
// CHECK:         %r = ktdp.inter_tile_reduce(%k) consumer_tiles_per_group = #set, identity(%zero : tensor<64xf32>) {tag = 4 : i64} : <(tensor<64xf32>), groups = #set1> -> tensor<64xf32> {
// CHECK-GENERIC: }) {tag = 1 : i64} : () -> !ktdp.tile_future<(tensor<64xf32>), groups = #set1>
// CHECK-GENERIC: "ktdp.inter_tile_consume"(%f) <{consumer_tiles_per_group = #set}> {tag = 2 : i64}
// CHECK-GENERIC: "ktdp.inter_tile_gather"(%h) <{consumer_tiles_per_group = #set, gather_dimensions = array<i64: 0>}> {tag = 3 : i64}
// CHECK-GENERIC: }) {tag = 4 : i64} : (!ktdp.tile_future<(tensor<64xf32>), groups = #set1>, tensor<64xf32>) -> tensor<64xf32>
#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#one = affine_set<(g) : (g == 0)>
func.func @discardable(%p: tensor<64xf32>, %zero: tensor<64xf32>) attributes {grid = [4]} {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  } {tag = 1 : i64}
  %c = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = #all {tag = 2 : i64} : <(tensor<64xf32>), groups = #one> -> tensor<64xf32>
  %h = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  %g = ktdp.inter_tile_gather(%h) consumer_tiles_per_group = #all, gather_dimensions = [0] {tag = 3 : i64} : <(tensor<64xf32>), groups = #one> -> tensor<256xf32>
  %k = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  %r = ktdp.inter_tile_reduce(%k) consumer_tiles_per_group = #all, identity(%zero : tensor<64xf32>) {tag = 4 : i64} : <(tensor<64xf32>), groups = #one> -> tensor<64xf32> {
  ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
    %s = arith.addf %a, %b : tensor<64xf32>
    ktdp.yield_reduced %s : tensor<64xf32>
  }
  return
}
