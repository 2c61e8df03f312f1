// The layout passes on an imported PyTorch model: each linear reads its weight transposed
// (sticked on K), so the weight is restickified to N before its matmul; nothing else moves.
// RUN: ktir-import %S/../../Inputs/models/mlp.py | ktir-opt -p ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-verify-layouts | filecheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: ktir.layout_plan = {cost = 12288 : i64, lower_bound = 12288 : i64, search = "exact"}
// CHECK: %linear = ktir.permute %p_fc1_weight perm [1, 0]
// CHECK-NEXT: %[[W1:.*]] = ktir.restickify %linear : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>
// CHECK-NEXT: %linear_1 = ktir.matmul %x, %[[W1]]
// CHECK: ktir.restickify
// CHECK-NOT: ktir.restickify
// CHECK: func.return
