// ktir-emit-superdsc: the reference's (4, 64) fp16 abs on 2 cores. Each core takes 2 rows (one
// stick each); the input sits at byte 0 and the output at 512, so the cores start at 0/256 and
// 512/768. Labels follow the reference's code, not its stale doc: mb/out, OUTPUT, sfp, 0_abs.
// The directory is quoted: xDSL's pass-option lexer does not take a bare path.
// RUN: rm -rf %t
// RUN: ktir-opt %s -p 'ktir-emit-superdsc{dir="%t"}' | filecheck %s --check-prefix=IR
// RUN: cat %t/0_abs.json | filecheck %s

// The input below meets the preconditions of ktir-emit-superdsc; generated once with
//   git show f9d10e6:test/lit/passes/emit-superdsc/abs.mlir | ktir-opt -p 'ktir-propagate-layouts,ktir-divide-work{cores=2 policy=default}'
// (see test/lit/Inputs/passes/README.md).

// The IR is unchanged by the export.
// IR: ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}}

// CHECK:      "0_abs": {
// CHECK-NEXT:   "coreFoldProp_": {
// CHECK-NEXT:     "factor_": 2,
// CHECK:        "coreIdToWkSlice_": {
// CHECK-NEXT:     "0": {
// CHECK-NEXT:       "mb": 0,
// CHECK-NEXT:       "out": 0
// CHECK-NEXT:     },
// CHECK-NEXT:     "1": {
// CHECK-NEXT:       "mb": 1,
// CHECK-NEXT:       "out": 0
// CHECK:        "dscs_": [
// CHECK-NEXT:     {
// CHECK-NEXT:       "abs": {
// CHECK-NEXT:         "N_": {
// CHECK-NEXT:           "mb_": 4,
// CHECK-NEXT:           "name_": "n",
// CHECK-NEXT:           "out_": 64
// CHECK:                "exUnit": "sfp",
// CHECK:                "inputLabeledDs": [
// CHECK-NEXT:             "Tensor0-idx0"
// CHECK:                "opFuncName": "abs",
// CHECK-NEXT:           "outputLabeledDs": [
// CHECK-NEXT:             "Tensor1-idx1"
// CHECK:                "ss_": {
// CHECK-NEXT:             "mb_": 2,
// CHECK-NEXT:             "name_": "core",
// CHECK-NEXT:             "out_": 64
// CHECK:                "dsName_": "Tensor0",
// CHECK-NEXT:           "dsType_": "OUTPUT",
// CHECK:                "wordLength": 2
// CHECK:                "dsName_": "Tensor1",
// CHECK-NEXT:           "dsType_": "OUTPUT",
// CHECK:              "primaryDsInfo_": {
// CHECK-NEXT:           "OUTPUT": {
// CHECK-NEXT:             "layoutDimOrder_": [
// CHECK-NEXT:               "mb",
// CHECK-NEXT:               "out"
// CHECK-NEXT:             ],
// CHECK-NEXT:             "stickDimOrder_": [
// CHECK-NEXT:               "out"
// CHECK:                "name_": "allocate-Tensor0_hbm",
// CHECK:                  "[0, 0, 0]": "0",
// CHECK-NEXT:             "[1, 0, 0]": "256"
// CHECK:                "name_": "allocate-Tensor1_hbm",
// CHECK:                  "[0, 0, 0]": "512",
// CHECK-NEXT:             "[1, 0, 0]": "768"
// CHECK:          "numCoresUsed_": 2,
// CHECK-NEXT:     "numWkSlicesPerDim_": {
// CHECK-NEXT:       "mb": 2,
// CHECK-NEXT:       "out": 1
// CHECK-NEXT:     },

func.func @f(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %y = ktir.abs %x {ktir.work_division = {d0 = 2 : i64, d1 = 1 : i64}} : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}
