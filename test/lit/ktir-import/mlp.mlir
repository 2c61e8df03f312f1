// ktir-import prints graph-level ktir for a model file; the output parses back with ktir-opt.
// RUN: ktir-import %inputs/models/mlp.py --print-debuginfo --func-name mlp -o %t.mlir
// RUN: filecheck %s --check-prefix=LOC < %t.mlir
// RUN: ktir-opt %t.mlir | filecheck %s
// RUN: ktir-opt %t.mlir --print-op-generic | ktir-opt | filecheck %s

// Arguments: the user input, then the parameters with their FX and state-dict names.
// CHECK:      func.func @mlp(%x: tensor<8x64xf16> {ktir.name = "x"},
// CHECK-SAME:   %p_fc1_weight: tensor<128x64xf16> {ktir.name = "p_fc1_weight", ktir.parameter = "fc1.weight"},
// CHECK-SAME:   %p_fc1_bias: tensor<128xf16> {ktir.name = "p_fc1_bias", ktir.parameter = "fc1.bias"},
// CHECK-SAME:   %p_fc2_weight: tensor<32x128xf16> {ktir.name = "p_fc2_weight", ktir.parameter = "fc2.weight"}) -> tensor<8x32xf16> {
// linear is the reference lowering: transpose of the weight, matmul, bias add.
// CHECK-NEXT:   %[[WT:.+]] = ktir.permute %p_fc1_weight perm [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
// CHECK-NEXT:   %[[MM:.+]] = ktir.matmul %x, %[[WT]] : tensor<8x64xf16>, tensor<64x128xf16> -> tensor<8x128xf16>
// CHECK-NEXT:   %[[B:.+]] = ktir.add %[[MM]], %p_fc1_bias : tensor<8x128xf16>, tensor<128xf16> -> tensor<8x128xf16>
// Named ops stay whole.
// CHECK-NEXT:   %[[G:.+]] = ktir.gelu %[[B]] {approximate = "tanh"} : tensor<8x128xf16> -> tensor<8x128xf16>
// CHECK-NEXT:   %[[WT2:.+]] = ktir.permute %p_fc2_weight perm [1, 0] : tensor<32x128xf16> -> tensor<128x32xf16>
// CHECK-NEXT:   %[[MM2:.+]] = ktir.matmul %[[G]], %[[WT2]] : tensor<8x128xf16>, tensor<128x32xf16> -> tensor<8x32xf16>
// CHECK-NEXT:   %[[S:.+]] = ktir.softmax %[[MM2]] dim 1 : tensor<8x32xf16> -> tensor<8x32xf16>
// CHECK-NEXT:   func.return %[[S]] : tensor<8x32xf16>

// Every op carries the line of the model source that produced it.
// LOC: ktir.gelu {{.*}} loc("{{.*}}mlp.py":12:9)
// LOC: ktir.softmax {{.*}} loc("{{.*}}mlp.py":13:9)
