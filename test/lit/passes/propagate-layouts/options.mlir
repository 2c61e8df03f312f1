// Options, pinned arguments and the recorded plan.
// RUN: ktir-opt %s -p ktir-propagate-layouts | filecheck %s --check-prefix=EXACT
// RUN: ktir-opt %s -p 'ktir-propagate-layouts{strategy=beam beam-width=1}' | filecheck %s --check-prefix=BEAM
// RUN: ktir-opt %s -p ktir-propagate-layouts,ktir-propagate-layouts | filecheck %s --check-prefix=EXACT
// RUN: ktir-opt %s -p 'ktir-propagate-layouts{max-table-size=1}' 2>&1 | filecheck %s --check-prefix=FALLBACK
// RUN: not ktir-opt %s -p 'ktir-propagate-layouts{strategy=greedy}' 2>&1 | filecheck %s --check-prefix=STRATEGY
// RUN: not ktir-opt %s -p 'ktir-propagate-layouts{beam-width=0}' 2>&1 | filecheck %s --check-prefix=WIDTH

// (a + b.t() + c.t() + d.t()) @ e: the majority (three transposes) wins, then x is restickified
// for the matmul: 2 * 128 * 128 elements.
// EXACT-LABEL: func.func @majority
// EXACT-SAME: ktir.layout_plan = {cost = 32768 : i64, lower_bound = 32768 : i64, search = "exact"}
// BEAM-LABEL: func.func @majority
// BEAM-SAME: ktir.layout_plan = {cost = [[COST:[0-9]+]] : i64, lower_bound = [[BOUND:[0-9]+]] : i64, search = "beam"}
// When an exact table would exceed max-table-size, the beam takes over and a remark says so.
// FALLBACK: remark: exact layout search too large; beam search found cost 32768, at most {{[0-9]+}} above the optimum
// FALLBACK: ktir.layout_plan = {cost = 32768 : i64, lower_bound = {{[0-9]+}} : i64, search = "beam"}
// STRATEGY: ktir-opt: error: invalid pass pipeline 'ktir-propagate-layouts{strategy=greedy}': unknown strategy 'greedy' (expected one of: exact, beam)
// WIDTH: ktir-opt: error: invalid pass pipeline 'ktir-propagate-layouts{beam-width=0}': beam-width must be positive, not 0
func.func @majority(%a: tensor<128x128xf16>, %b: tensor<128x128xf16>, %c: tensor<128x128xf16>, %d: tensor<128x128xf16>, %e: tensor<128x128xf16>) -> tensor<128x128xf16> {
  %bt = ktir.permute %b perm [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
  %ct = ktir.permute %c perm [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
  %dt = ktir.permute %d perm [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
  %0 = ktir.add %a, %bt : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  %1 = ktir.add %0, %ct : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  %2 = ktir.add %1, %dt : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  %3 = ktir.matmul %2, %e : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  func.return %3 : tensor<128x128xf16>
}

// An argument attribute pins a layout: x sticked on dim 0 matches a.t(), nothing moves.
// EXACT-LABEL: func.func @pinned
// EXACT-SAME: %x: tensor<128x128xf16, #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>> {ktir.layout = #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>}
// EXACT-SAME: cost = 0 : i64
func.func @pinned(%a: tensor<128x128xf16>, %x: tensor<128x128xf16> {ktir.layout = #ktir.tiled<device_size = [2, 128, 64], stride_map = [8192, 1, 128]>}) -> tensor<128x128xf16> {
  %t = ktir.permute %a perm [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
  %s = ktir.add %t, %x : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  func.return %s : tensor<128x128xf16>
}
