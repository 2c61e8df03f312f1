// RUN: ktir-opt %s --split-input-file -p 'ktir-propagate-layouts,ktir-divide-work{cores=2}' | filecheck %s
// RUN: ktir-opt %s --split-input-file -p 'ktir-propagate-layouts,ktir-divide-work' | filecheck %s --check-prefix=C32

// The seed's (4, 64) abs: rows split over 2 cores; on 32 cores only 4 rows exist.
// CHECK-LABEL: func.func @abs
// CHECK: ktir.abs %{{.*}} {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}}
// C32-LABEL: func.func @abs
// C32: ktir.abs %{{.*}} {ktir.work_division = {d0 = 4 : i64, d1 = 1 : i64}}
func.func @abs(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}

// -----

// Reductions list output dims first, then the reduced ones; reduced dims stay whole.
// C32-LABEL: func.func @sum
// C32: ktir.sum %{{.*}} {ktir.work_division = {d0 = 32 : i64, d1 = 1 : i64}}
func.func @sum(%x: tensor<64x128xf16>) -> tensor<64xf16> {
  %y = ktir.sum %x dims [1] : tensor<64x128xf16> -> tensor<64xf16>
  return %y : tensor<64xf16>
}

// -----

// A hint is taken as given; matmul dims are m, n, k.
// C32-LABEL: func.func @hint
// C32: ktir.matmul {{.*}}ktir.work_division = {m = 2 : i64, n = 1 : i64, k = 1 : i64}
func.func @hint(%x: tensor<64x256xf16>, %y: tensor<256x128xf16>) -> tensor<64x128xf16> {
  %r = ktir.matmul %x, %y {ktir.work_division_hint = {m = 2 : i64}} : tensor<64x256xf16>, tensor<256x128xf16> -> tensor<64x128xf16>
  return %r : tensor<64x128xf16>
}
