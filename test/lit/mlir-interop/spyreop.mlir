// REQUIRES: mlir-python
// The generic form of `spyreop` ops and types is valid upstream MLIR (unregistered dialects
// allowed), and what MLIR prints back parses into the same ops.
// RUN: ktir-opt %inputs/../dialects/spyreop/spyreop.mlir --split-input-file --print-op-generic | %python %inputs/upstream_mlir.py --split-input-file | ktir-opt --split-input-file | filecheck %s

// CHECK: spyreop.softplus %{{.*}} beta 5.000000e-01 threshold 2.000000e+01 : f16
// CHECK: spyreop.compare <lesserequal> %{{.*}}, %{{.*}} : !spyreop.df16
// CHECK: spyreop.exx2_fused %{{.*}} : f32 -> !spyreop.fp32_fused
// CHECK: spyreop.idx32toaddr %{{.*}} base %{{.*}} stride %{{.*}}
// CHECK: spyreop.slice_reduction %{{.*}} {reduction_kind = #spyreop.reduction_kind<abs_max>, reduction_scope = #spyreop.reduction_scope<in_slice>}
// CHECK: spyreop.exp %{{.*}} : f16
