// RUN: ktir-opt %s -p 'ktir-propagate-layouts,ktir-divide-work,ktir-plan-scratchpad' | filecheck %s
// RUN: ktir-opt %s -p 'ktir-propagate-layouts,ktir-divide-work,ktir-plan-scratchpad{solver=bestfit}' | filecheck %s

// add and exp stay in LX (2 rows of 256 fp16 = 1,024 bytes per core); exp writes over add,
// which dies there; the returned abs stays in device memory.
// CHECK: %a = ktir.add {{.*}}ktir.lx_address = 0 : i64, ktir.lx_bytes = 1024 : i64
// CHECK: %e = ktir.exp {{.*}}ktir.lx_address = 0 : i64, ktir.lx_bytes = 1024 : i64
// CHECK: %r = ktir.abs
// CHECK-NOT: lx_address
// CHECK-SAME: work_division
func.func @f(%x: tensor<64x256xf16>, %y: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %a = ktir.add %x, %y : tensor<64x256xf16>, tensor<64x256xf16> -> tensor<64x256xf16>
  %e = ktir.exp %a : tensor<64x256xf16> -> tensor<64x256xf16>
  %r = ktir.abs %e : tensor<64x256xf16> -> tensor<64x256xf16>
  return %r : tensor<64x256xf16>
}
