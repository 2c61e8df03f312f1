// The layout passes on an imported PyTorch model: each linear reads its weight transposed, and
// a matmul reads y sticked on N. The weights are parameters, packed once at load time, so the
// plan gives each the layout its permute turns into N-sticked y: nothing is restickified.
// RUN: ktir-import %S/../../Inputs/models/mlp.py | ktir-opt -p ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-verify-layouts | filecheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %p_fc1_weight: tensor<128x64xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [4096, 1, 64]>>
// CHECK-SAME: %p_fc2_weight: tensor<32x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>
// CHECK-SAME: ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}
// CHECK-NOT: ktir.restickify
// CHECK: %linear = ktir.permute %p_fc1_weight perm [1, 0]
// CHECK-NEXT: %linear_1 = ktir.matmul %x, %linear
// CHECK: %linear_3 = ktir.permute %p_fc2_weight perm [1, 0]
// CHECK-NEXT: %linear_4 = ktir.matmul %gelu, %linear_3
// CHECK: func.return
