// `--timing-only` prints the report without computing values: the same kernels and cycles as a
// run on values (the softmax + matmul here: 2 kernels), no outputs table, and the assumption a
// gather needs (which rows it reads) under the report. It takes no inputs and writes no outputs:
// those options are usage errors (exit 2) and nothing is written.

// RUN: ktir-run %s --cores 4 --quiet --json %t.values.json > /dev/null
// RUN: ktir-run %s --cores 4 --timing-only --json %t.timing.json | filecheck %s
// RUN: %python -c "import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:]); print([k['cycles'] for k in a['kernels']] == [k['cycles'] for k in b['kernels']], a['totals']['total_cycles'] == b['totals']['total_cycles'], b['assumptions'][0][:7])" %t.values.json %t.timing.json | filecheck %s --check-prefix=SAME
// RUN: not ktir-run %s --timing-only --inputs %t.npz -o %t.out.npz 2>&1 | filecheck %s --check-prefix=USAGE
// RUN: not ktir-run %s --timing-only --random 2>&1 | filecheck %s --check-prefix=USAGE-RANDOM
// RUN: not test -e %t.out.npz

// CHECK-NOT: outputs
// CHECK: ktir.sim: 3 ops (3 on the chip)
// CHECK-NEXT: 4,303 cycles
// CHECK: per op
// CHECK: assumed (timing only): gathers (embeddings, index_select) read distinct rows
// SAME: True True gathers
// USAGE: ktir-run: error: argument --timing-only: computes no values, so it takes no --inputs or -o
// USAGE-RANDOM: ktir-run: error: argument --timing-only: computes no values, so it takes no --random

func.func @f(%table: tensor<512x64xf16>, %ids: tensor<8xi64>, %w: tensor<64x128xf16>) -> tensor<8x128xf16> {
  %rows = ktir.gather_rows %table[%ids] : tensor<512x64xf16>, tensor<8xi64> -> tensor<8x64xf16>
  %p = ktir.softmax %rows dim 1 : tensor<8x64xf16> -> tensor<8x64xf16>
  %y = ktir.matmul %p, %w : tensor<8x64xf16>, tensor<64x128xf16> -> tensor<8x128xf16>
  return %y : tensor<8x128xf16>
}
