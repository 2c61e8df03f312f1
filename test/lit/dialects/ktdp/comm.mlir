// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// Inter-tile communication (dialects/ktdp/comm.py): a future produced by every tile of one group
// and all-reduced back to them (ktdp_invalid.mlir: a future used twice).

// CHECK:       #set = affine_set<(d0)[s0] : (d0 >= 0, -d0 + 3 >= 0)>
// CHECK-NEXT:  #set1 = affine_set<(d0) : (d0 == 0)>
// CHECK-LABEL: func.func @all_reduce
// CHECK-NEXT:    %f = ktdp.inter_tile_produce producer_tiles_per_group = #set -> <(tensor<64xf32>), groups = #set1> {
// CHECK-NEXT:    ^bb0(%gid: index):
// CHECK-NEXT:      ktdp.yield_partial %p : tensor<64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = #set, identity(%id : tensor<64xf32>) : <(tensor<64xf32>), groups = #set1> -> tensor<64xf32> {
// CHECK-NEXT:    ^bb0(%lhs: tensor<64xf32>, %rhs: tensor<64xf32>):
// CHECK-NEXT:      %s = arith.addf %lhs, %rhs : tensor<64xf32>
// CHECK-NEXT:      ktdp.yield_reduced %s : tensor<64xf32>
// CHECK-GENERIC: #set = affine_set<(d0)[s0] : (d0 >= 0, -d0 + 3 >= 0)>
// CHECK-GENERIC: "ktdp.inter_tile_produce"() <{producer_tiles_per_group = #set}> ({
// CHECK-GENERIC: "ktdp.inter_tile_reduce"(%f, %id) <{consumer_tiles_per_group = #set}> ({

#all = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#one = affine_set<(g) : (g == 0)>
func.func @all_reduce(%p: tensor<64xf32>, %id: tensor<64xf32>) -> tensor<64xf32> attributes {grid = [4]} {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #all -> <(tensor<64xf32>), groups = #one> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  %r = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = #all, identity(%id : tensor<64xf32>) : <(tensor<64xf32>), groups = #one> -> tensor<64xf32> {
  ^bb0(%lhs: tensor<64xf32>, %rhs: tensor<64xf32>):
    %s = arith.addf %lhs, %rhs : tensor<64xf32>
    ktdp.yield_reduced %s : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// inter_tile_consume (dialects/ktdp/delivery.py): a broadcast, and a routing whose dependency set
// pairs each consumer with one producer.
// Every set prints as an alias (upstream MLIR could not read a future's group set with an
// inequality in place, inside its type).
// CHECK:       #set2 = affine_set<(d0)[s0] : (d0 >= 0, -d0 + 3 >= 0)>
// CHECK-NEXT:  #set3 = affine_set<(d0)[s0] : (d0 - s0 * 2 >= 0, -d0 + s0 * 2 + 1 >= 0)>
// CHECK-NEXT:  #set4 = affine_set<(d0) : (d0 >= 0, -d0 + 1 >= 0)>
// CHECK-NEXT:  #set5 = affine_set<(d0)[s0, s1] : (d0 + s0 - s1 * 4 - 1 == 0)>
// CHECK-NEXT:  #set6 = affine_set<(d0)[s0] : (s0 - d0 >= 0)>
// CHECK-NEXT:  #set7 = affine_set<(d0)[s0] : (d0 - s0 == 0)>
// CHECK-LABEL: func.func @consume
// CHECK:         %b = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = #set2 : <(tensor<64xf32>), groups = #set1> -> tensor<64xf32>
// CHECK:         %s = ktdp.inter_tile_consume(%h) consumer_tiles_per_group = #set3, producer_dependency_per_consumer = #set5 : <(tensor<64xf32>), groups = #set4> -> tensor<64xf32>
// CHECK-GENERIC: #set5 = affine_set<(d0)[s0, s1] : (d0 + s0 - s1 * 4 - 1 == 0)>
// CHECK-GENERIC: "ktdp.inter_tile_consume"(%f) <{consumer_tiles_per_group = #set2}> : (!ktdp.tile_future<(tensor<64xf32>), groups = #set1>) -> tensor<64xf32>
// CHECK-GENERIC: "ktdp.inter_tile_consume"(%h) <{consumer_tiles_per_group = #set3, producer_dependency_per_consumer = #set5}>

#every = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>
#first = affine_set<(i)[g] : (i == 0)>
#single = affine_set<(g) : (g == 0)>
#pairs = affine_set<(i)[g] : (i - 2 * g >= 0, -i + 2 * g + 1 >= 0)>
#two = affine_set<(g) : (g >= 0, -g + 1 >= 0)>
func.func @consume(%p: tensor<64xf32>) -> tensor<64xf32> attributes {grid = [4]} {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = #first -> <(tensor<64xf32>), groups = #single> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  %b = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = #every : <(tensor<64xf32>), groups = #single> -> tensor<64xf32>
  %h = ktdp.inter_tile_produce producer_tiles_per_group = #pairs -> <(tensor<64xf32>), groups = #two> {
  ^bb0(%gid: index):
    ktdp.yield_partial %b : tensor<64xf32>
  }
  %s = ktdp.inter_tile_consume(%h) consumer_tiles_per_group = #pairs, producer_dependency_per_consumer = affine_set<(p)[c, g] : (p + c - 4 * g - 1 == 0)> : <(tensor<64xf32>), groups = #two> -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// A reduce whose consumers each name the producers they wait on and sum (a prefix sum: p <= c).
// CHECK-LABEL: func.func @partial_reduce
// CHECK:         %r = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = #set2, producer_dependency_per_consumer = #set6, identity(%id : tensor<64xf32>) : <(tensor<64xf32>), groups = #set1> -> tensor<64xf32> {
// CHECK-GENERIC: "ktdp.inter_tile_reduce"(%{{.*}}, %id) <{consumer_tiles_per_group = #set2, producer_dependency_per_consumer = #set6}> ({
func.func @partial_reduce(%p: tensor<64xf32>, %id: tensor<64xf32>) -> tensor<64xf32> attributes {grid = [4]} {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> -> <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  %r = ktdp.inter_tile_reduce(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, producer_dependency_per_consumer = affine_set<(p)[c] : (c - p >= 0)>, identity(%id : tensor<64xf32>) : <(tensor<64xf32>), groups = affine_set<(g) : (g == 0)>> -> tensor<64xf32> {
  ^bb0(%lhs: tensor<64xf32>, %rhs: tensor<64xf32>):
    %s = arith.addf %lhs, %rhs : tensor<64xf32>
    ktdp.yield_reduced %s : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// The inter-tile design document's spelling (the partial types before `->`, the future's
// parameters unparenthesized, `groups =` optional) reads as upstream's, which is printed.
// CHECK-LABEL: func.func @design_document_spelling
// CHECK:         %f = ktdp.inter_tile_produce producer_tiles_per_group = #set2 -> <(tensor<64xf32>), groups = #set1> {
// CHECK:         %r = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = #set2, producer_dependency_per_consumer = #set7 : <(tensor<64xf32>), groups = #set1> -> tensor<64xf32>
func.func @design_document_spelling(%p: tensor<64xf32>) -> tensor<64xf32> attributes {grid = [4]} {
  %f = ktdp.inter_tile_produce producer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)> : tensor<64xf32> -> !ktdp.tile_future<tensor<64xf32>, affine_set<(g) : (g == 0)>> {
  ^bb0(%gid: index):
    ktdp.yield_partial %p : tensor<64xf32>
  }
  %r = ktdp.inter_tile_consume(%f) consumer_tiles_per_group = affine_set<(i)[g] : (i >= 0, -i + 3 >= 0)>, producer_dependency_per_consumer = affine_set<(p)[c] : (p - c == 0)> : !ktdp.tile_future<tensor<64xf32>, groups = affine_set<(g) : (g == 0)>> -> tensor<64xf32>
  return %r : tensor<64xf32>
}
