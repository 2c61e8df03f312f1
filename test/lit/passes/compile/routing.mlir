// RUN: ktir-opt %s -p 'ktir-compile{cores=4}' | filecheck %s
// RUN: %python -c "import numpy as np, sys; r = np.random.default_rng(0); np.savez(sys.argv[1], x=r.standard_normal((8, 64)).astype(np.float16), probs=r.random((8, 4)).astype(np.float16), experts=(r.standard_normal((4, 64, 128)) / 8).astype(np.float16), offsets=np.array([3, 3, 8, 8]))" %t.npz
// RUN: ktir-run %s --cores 4 --inputs %t.npz -o %t.out.npz --json %t.json --quiet
// RUN: %python %inputs/checks/routing_check.py %t.npz %t.out.npz %t.json | filecheck %s --check-prefix=SIM

// The routing ops stay at function level, each with the cores that share it: a top-k splits its
// rows, a grouped matmul each expert's output columns N (its weights read once).
// CHECK: %w, %e = ktir.topk %probs k 2 {ktir.work_division = {rows = 4 : i64}}
// CHECK: %y = ktir.grouped_matmul %x, %experts, %offsets {ktir.work_division = {n = 4 : i64}}
// CHECK-NOT: ktir.kernel

// Offsets [3, 3, 8, 8]: rows 0-2 to expert 0, rows 3-7 to expert 2; experts 1 and 3 read nothing.
// SIM: top-k and grouped matmul match NumPy: True True
// SIM: grouped matmul cycles match the cost model: True
// SIM: compulsory bytes count 2 of 4 experts: True
func.func @f(%x: tensor<8x64xf16>, %probs: tensor<8x4xf16>, %experts: tensor<4x64x128xf16>, %offsets: tensor<4xi64>) -> (tensor<8x2xf16>, tensor<8x2xi64>, tensor<8x128xf16>) {
  %w, %e = ktir.topk %probs k 2 : tensor<8x4xf16> -> tensor<8x2xf16>, tensor<8x2xi64>
  %y = ktir.grouped_matmul %x, %experts, %offsets : tensor<8x64xf16>, tensor<4x64x128xf16>, tensor<4xi64> -> tensor<8x128xf16>
  return %w, %e, %y : tensor<8x2xf16>, tensor<8x2xi64>, tensor<8x128xf16>
}
