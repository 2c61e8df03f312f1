// Graph-level IR goes through ktir-compile, then runs on the simulator; the same module lowered
// by ktir-opt first runs as is. (4, 64) fp16 abs on 2 cores: each core loads 256 bytes (the two
// DMAs share the LPDDR5 at its sustained 100 bytes per cycle: 500 + 512 / 100 = 505.12 cycles),
// abs costs 128 / 8.8e3 µs = 21.82 cycles on the SFU, the store 505.12 again: 1032.1 cycles.
// The bounds are the 1024 compulsory bytes (512 in, 512 out): 10.24 cycles at the sustained 100
// bytes per cycle, 7.5 at the datasheet's 136.53: the DMA setup dominates.
// RUN: ktir-run %s --cores 2 | filecheck %s
// RUN: ktir-run %s --cores 2 --target spyre-datasheet | filecheck %s --check-prefix=DATASHEET
// RUN: ktir-opt %s -p 'ktir-compile{cores=2}' | ktir-run - | filecheck %s
// RUN: ktir-run %s --cores 2 --trace %t.json -o %t.npz --png %t.png --roofline-png %t.roofline.png
// RUN: %python -c "import sys; print([open(p, 'rb').read(4) for p in sys.argv[1:]])" %t.png %t.roofline.png | filecheck %s --check-prefix=PNG
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1])); print(sorted({e['name'] for e in d['traceEvents'] if e['ph'] == 'X'}))" %t.json | filecheck %s --check-prefix=TRACE
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1])); print([e['args'] for e in d['traceEvents'] if e['name'] in ('load tile 0', '%%y = ktir.abs')][:2])" %t.json | filecheck %s --check-prefix=TRACE-ARGS
// RUN: %python -c "import numpy as np, sys; o = np.load(sys.argv[1])['out0']; print(o.shape, o.dtype, bool((o >= 0).all()))" %t.npz | filecheck %s --check-prefix=NPZ
// RUN: ktir-run %s --cores 2 --json %t.report.json > /dev/null
// RUN: ktir-run %s --cores 2 --quiet --order program --top 0 | filecheck %s --check-prefix=PROGRAM-ORDER
// RUN: filecheck %s --check-prefix=JSON --input-file %t.report.json
// RUN: %python -c "import sys; from ktir.sim import Report; t = open(sys.argv[1]).read(); print(Report.from_json(t).to_json() + chr(10) == t)" %t.report.json | filecheck %s --check-prefix=ROUNDTRIP

// JSON: "format": "ktir-report",
// JSON: "totals": {
// JSON-NEXT: "total_cycles": 1033,
// JSON: "kernels": [
// JSON: "op": "ktir.abs",
// JSON: "cycles": 1032.{{[0-9]+}},
// JSON: "bytes": 1024.0,
// JSON: "vs_bound": 137.6{{[0-9]+}},
// JSON-NEXT: "sustained_bound_cycles": 10.24,
// JSON-NEXT: "vs_sustained": 100.78{{[0-9]+}},
// JSON: "bottleneck": "dma"
// ROUNDTRIP: True
// PROGRAM-ORDER: │ 0 │ %y     │ abs │  1,032 │
// PNG: [b'\x89PNG', b'\x89PNG']
// CHECK: outputs
// CHECK: │ 0 │ %y     │ [4, 64] │ float16 │
// The datasheet target moves the bytes at 136.53 per cycle: 2 x 503.75 + 21.82 = 1029.3 cycles.
// DATASHEET: ktir.sim: 1 op (1 on the chip)
// DATASHEET-NEXT: 1,030 cycles, 0.7 µs = 137.33x the sustained bound of 0.0 µs,
// DATASHEET-NEXT: 137.33x the datasheet roofline of 0.0 µs; traffic 1.00x
// CHECK: ktir.sim: 1 op (1 on the chip)
// CHECK-NEXT: 1,033 cycles, 0.7 µs = 100.88x the sustained bound of 0.0 µs,
// CHECK-NEXT: 137.73x the datasheet roofline of 0.0 µs; traffic 1.00x
// CHECK: ┃ # ┃ result ┃ op  ┃ cycles ┃ x sust ┃ x roof ┃ sustained ┃    MB ┃ traffic ┃
// CHECK: │ 0 │ %y     │ abs │  1,032 │ 100.79 │ 137.61 │        10 │ 0.001 │    1.00 │
// CHECK: per op
// CHECK: ktir.abs │     1 │  1,032 │ 100.0%
// CHECK: per core: busy fraction of the run
// CHECK: │   0-1 │ 97.9% │ 0.0% │ 2.1% │ 0.0% │

// TRACE: ['%y = ktir.abs', 'ktir.abs', 'load tile 0', 'store tile 1']
// TRACE-ARGS: [{'kernel': 0, 'result': '%y', 'op': 'ktir.abs', 'work_division': 'd0=2, d1=1', 'cores': 2, 'chunks': 1, {{.*}}'bottleneck': 'dma', {{.*}}}, {'kernel': 0, 'result': '%y', 'op': 'ktir.abs', 'work_division': 'd0=2, d1=1'}]
// NPZ: (4, 64) float16 True
func.func @abs(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}
