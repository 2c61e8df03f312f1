// RUN: ktir-opt %s -p 'ktir-compile{cores=4}' | filecheck %s
// RUN: %python -c "import numpy as np, sys; np.savez(sys.argv[1], table=np.ones((8, 64), np.float16), ids=np.array([[3, 9, 0, 7]]))" %t.npz
// RUN: not ktir-run %s --cores 4 --inputs %t.npz -o %t.out.npz 2>&1 | filecheck %s --check-prefix=BAD-INDEX
// RUN: not test -e %t.out.npz

// A row gather stays at function level with its rows split over the cores (the simulator times
// its indirect DMA); a cumsum becomes a kernel whose scan dim stays whole on a core.
// CHECK:      %rows = ktir.gather_rows %table[%ids] {ktir.work_division = {rows = 4 : i64}}
// CHECK-SAME:   -> tensor<1x4x64xf16, #ktir.tiled<device_size = [4, 1, 1, 64], stride_map = [64, 64, -1, 1]>>
// CHECK:      %positions = ktir.kernel "ktir.cumsum" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64}
// CHECK:        ktir.compute sfu
// CHECK-NEXT:   ^{{.*}}:
// CHECK-NEXT:     ktir.cumsum %{{.*}} dim 1

// An index outside the table is a run-time error at the gather, and nothing is written.
// BAD-INDEX: data.mlir:[[# @LINE + 2]]:11: error: index 9 is out of range for a table of 8 rows
func.func @f(%table: tensor<8x64xf16>, %ids: tensor<1x4xi64>) -> (tensor<1x4x64xf16>, tensor<1x4xi64>) {
  %rows = ktir.gather_rows %table[%ids] : tensor<8x64xf16>, tensor<1x4xi64> -> tensor<1x4x64xf16>
  %positions = ktir.cumsum %ids dim 1 : tensor<1x4xi64> -> tensor<1x4xi64>
  return %rows, %positions : tensor<1x4x64xf16>, tensor<1x4xi64>
}
