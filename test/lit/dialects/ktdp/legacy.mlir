// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// The reference snapshot's spellings (dialects/ktdp/legacy.py): #ktdp.spyre_memory_space on a view
// and as a memref memory space, !ktdp.runtime_arg (keywords in any order, printed granularity
// first) and ktdp.runtime_arg_extract of a value, an i32 value and a granularity.

// CHECK-LABEL: func.func @legacy(%base: index, %arg: !ktdp.runtime_arg<index, granularity=8, upperbound=512>, %f: !ktdp.runtime_arg<i32>)
// CHECK-NEXT:    %v = ktdp.construct_memory_view %base, sizes: [128, 64], strides: [64, 1] {coordinate_set = {{.*}}, memory_space = #ktdp.spyre_memory_space<HBM>} : memref<128x64xf16>
// CHECK-NEXT:    %l = ktdp.construct_memory_view {{.*}}memory_space = #ktdp.spyre_memory_space<LX, core = 7>} : memref<128x64xf16, #ktdp.spyre_memory_space<LX, core = 7>>
// CHECK-NEXT:    %m = ktdp.runtime_arg_extract value from %arg : <index, granularity=8, upperbound=512> -> index
// CHECK-NEXT:    %g = ktdp.runtime_arg_extract granularity from %arg : <index, granularity=8, upperbound=512> -> index
// CHECK-NEXT:    %i = ktdp.runtime_arg_extract value from %f : <i32> -> i32
// CHECK-GENERIC: "ktdp.runtime_arg_extract"(%arg) <{kind = "value"}> : (!ktdp.runtime_arg<index, granularity=8, upperbound=512>) -> index
func.func @legacy(%base: index, %arg: !ktdp.runtime_arg<index, upperbound=512, granularity=8>, %f: !ktdp.runtime_arg<i32>) {
  %v = ktdp.construct_memory_view %base, sizes: [128, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 127 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.spyre_memory_space<HBM>} : memref<128x64xf16>
  %l = ktdp.construct_memory_view %base, sizes: [128, 64], strides: [64, 1] {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 127 >= 0, d1 >= 0, -d1 + 63 >= 0)>, memory_space = #ktdp.spyre_memory_space<LX, core = 7>} : memref<128x64xf16, #ktdp.spyre_memory_space<LX, core = 7>>
  %m = ktdp.runtime_arg_extract value from %arg : <index, granularity=8, upperbound=512> -> index
  %g = ktdp.runtime_arg_extract granularity from %arg : !ktdp.runtime_arg<index, granularity=8, upperbound=512> -> index
  %i = ktdp.runtime_arg_extract value from %f : <i32> -> i32
  return
}
