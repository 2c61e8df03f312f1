// ktir-fuse: producer-consumer chains become one ktir.fused kernel; what stays out, and why.
// RUN: ktir-opt %s --split-input-file -p ktir-fuse | filecheck %s
// RUN: ktir-opt %s --split-input-file -p 'ktir-fuse{remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: ktir-opt %s --split-input-file -p ktir-fuse,ktir-fuse | filecheck %s

// The input below meets the preconditions of ktir-fuse (layouts planned, restickify inserted,
// matmuls padded); generated once from graph-level IR with
//   ktir-opt --split-input-file -p 'ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul'
// (see test/lit/Inputs/passes/README.md).

// HF's RMSNorm: eight ops, one kernel reading x, eps and the weight.
// CHECK-LABEL: func.func @rms_norm
// CHECK: %y = ktir.fused(%x, %eps, %w)
// CHECK: ktir.convert
// CHECK-NEXT: ktir.pow
// CHECK-NEXT: ktir.mean
// CHECK-NEXT: ktir.add
// CHECK-NEXT: ktir.rsqrt
// CHECK-NEXT: ktir.mul
// CHECK-NEXT: ktir.convert
// CHECK-NEXT: ktir.mul
// CHECK-NEXT: ktir.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return %y

// A consumer on another division: the matmul needs %s in device memory, so silu stays a
// kernel of its own; exp and neg fuse.
// CHECK-LABEL: func.func @shared_producer
// CHECK: %s = ktir.silu %x
// CHECK-NEXT: %n = ktir.fused(%s)
// CHECK: ktir.matmul %s, %w
// REMARK: remark: not fused: its result is also read by 'ktir.matmul', a kernel of its own that needs it in device memory (consumer: 'ktir.neg')
// REMARK-NEXT: %s = ktir.silu

// Layout disagreement: the restickify stays a kernel; exp, the permute and add fuse behind it.
// CHECK-LABEL: func.func @other_layout
// CHECK: %0 = ktir.restickify %x
// CHECK-NEXT: %y = ktir.fused(%0, %b)
// REMARK: remark: not fused: 'ktir.restickify' changes the stick layout between producer and consumer (consumer: 'ktir.add')

// LX overflow: a softmax row of 4 MiB fp32 must stay whole on a core; with exp it does not fit.
// CHECK-LABEL: func.func @lx_overflow
// CHECK-NOT: ktir.fused
// CHECK: ktir.exp
// CHECK-NEXT: ktir.softmax
// REMARK: remark: not fused: LX overflow: the fused kernel needs 20,971,520 bytes of LX per core for its smallest chunk, more than the 1,677,721 usable (consumer: 'ktir.softmax')

// A matmul epilogue: SwiGLU's gate and up projections read one x, so both products and
// silu(gate) * up are one kernel. The matmuls read weights, so they keep their dataflow
// schedule and their x, then each y, come first among the inputs; %n, their x, stays out.
// CHECK-LABEL: func.func @swiglu
// CHECK: %n = ktir.neg %x
// CHECK-NEXT: %m = ktir.fused(%n, %wg, %wu)
// CHECK: ktir.matmul
// CHECK-NEXT: ktir.silu
// CHECK-NEXT: ktir.matmul
// CHECK-NEXT: ktir.mul
// REMARK: remark: not fused: a matmul on a function argument does not take a prologue (consumer: 'ktir.mul')

// Matmuls on two different x do not share an epilogue: the up projection's matmul fuses with
// silu(gate) * up, the gate's stays a kernel of its own.
// CHECK-LABEL: func.func @two_inputs
// CHECK: %g = ktir.matmul %n, %wg
// CHECK-NEXT: %m = ktir.fused(%x, %wu, %g)
// CHECK: ktir.silu
// CHECK-NEXT: ktir.matmul
// CHECK-NEXT: ktir.mul
// REMARK: remark: not fused: a matmul on a function argument keeps its dataflow schedule and fuses only as a matmul of an elementwise epilogue (matmuls sharing one x) (consumer: 'ktir.mul')

// No prologue: a weight matmul's operands stay outside its kernel.
// CHECK-LABEL: func.func @no_prologue
// CHECK: %n = ktir.neg %x
// CHECK-NEXT: %y = ktir.fused(%n, %w, %b)
// REMARK: remark: not fused: a matmul on a function argument does not take a prologue (consumer: 'ktir.add')

// A full read by two kernels: each gets its own copy, made inside its kernel.
// CHECK-LABEL: func.func @shared_full
// CHECK-NEXT: %a = ktir.fused(%x)
// CHECK: ktir.full 2.000000e+00
// CHECK: %b = ktir.fused(%y)
// CHECK: ktir.full 2.000000e+00

func.func @rms_norm(%x: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %w: tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>>, %eps: tensor<1xf32, #ktir.tiled<device_size = [1, 32], stride_map = [-1, -1]>>) -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %c = ktir.convert %x : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf32, #ktir.tiled<device_size = [8, 16, 32], stride_map = [32, 256, 1]>>
  %p = ktir.pow %c {exponent = 2.000000e+00 : f64} : tensor<16x256xf32, #ktir.tiled<device_size = [8, 16, 32], stride_map = [32, 256, 1]>> -> tensor<16x256xf32, #ktir.tiled<device_size = [8, 16, 32], stride_map = [32, 256, 1]>>
  %m = ktir.mean %p dims [1] keepdim : tensor<16x256xf32, #ktir.tiled<device_size = [8, 16, 32], stride_map = [32, 256, 1]>> -> tensor<16x1xf32, #ktir.tiled<device_size = [1, 16, 32], stride_map = [-1, 1, -1]>>
  %a = ktir.add %m, %eps : tensor<16x1xf32, #ktir.tiled<device_size = [1, 16, 32], stride_map = [-1, 1, -1]>>, tensor<1xf32, #ktir.tiled<device_size = [1, 32], stride_map = [-1, -1]>> -> tensor<16x1xf32, #ktir.tiled<device_size = [1, 16, 32], stride_map = [-1, 1, -1]>>
  %r = ktir.rsqrt %a : tensor<16x1xf32, #ktir.tiled<device_size = [1, 16, 32], stride_map = [-1, 1, -1]>> -> tensor<16x1xf32, #ktir.tiled<device_size = [1, 16, 32], stride_map = [-1, 1, -1]>>
  %n = ktir.mul %c, %r : tensor<16x256xf32, #ktir.tiled<device_size = [8, 16, 32], stride_map = [32, 256, 1]>>, tensor<16x1xf32, #ktir.tiled<device_size = [1, 16, 32], stride_map = [-1, 1, -1]>> -> tensor<16x256xf32, #ktir.tiled<device_size = [8, 16, 32], stride_map = [32, 256, 1]>>
  %h = ktir.convert %n : tensor<16x256xf32, #ktir.tiled<device_size = [8, 16, 32], stride_map = [32, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  %y = ktir.mul %w, %h : tensor<256xf16, #ktir.tiled<device_size = [4, 64], stride_map = [64, 1]>>, tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  func.return %y : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
}

// -----
func.func @shared_producer(%x: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %w: tensor<256x64xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 64, 1]>>) -> (tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>) attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %s = ktir.silu %x : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  %e = ktir.exp %s : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  %n = ktir.neg %e : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  %mm = ktir.matmul %s, %w : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x64xf16, #ktir.tiled<device_size = [1, 256, 64], stride_map = [64, 64, 1]>> -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  func.return %n, %mm : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
}

// -----
func.func @other_layout(%x: tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>, %b: tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>) -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> attributes {ktir.layout_plan = {cost = 8192 : i64, lower_bound = 8192 : i64, search = "exact"}} {
  %0 = ktir.restickify %x : tensor<64x128xf16, #ktir.tiled<device_size = [2, 64, 64], stride_map = [64, 128, 1]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>
  %e = ktir.exp %0 : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>>
  %t = ktir.permute %e perm [1, 0] : tensor<64x128xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [8192, 1, 128]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
  %y = ktir.add %t, %b : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>, tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>> -> tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
  func.return %y : tensor<128x64xf16, #ktir.tiled<device_size = [1, 128, 64], stride_map = [64, 64, 1]>>
}

// -----
func.func @lx_overflow(%x: tensor<4x1048576xf32, #ktir.tiled<device_size = [32768, 4, 32], stride_map = [32, 1048576, 1]>>) -> tensor<4x1048576xf32, #ktir.tiled<device_size = [32768, 4, 32], stride_map = [32, 1048576, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %e = ktir.exp %x : tensor<4x1048576xf32, #ktir.tiled<device_size = [32768, 4, 32], stride_map = [32, 1048576, 1]>> -> tensor<4x1048576xf32, #ktir.tiled<device_size = [32768, 4, 32], stride_map = [32, 1048576, 1]>>
  %s = ktir.softmax %e dim 1 : tensor<4x1048576xf32, #ktir.tiled<device_size = [32768, 4, 32], stride_map = [32, 1048576, 1]>> -> tensor<4x1048576xf32, #ktir.tiled<device_size = [32768, 4, 32], stride_map = [32, 1048576, 1]>>
  func.return %s : tensor<4x1048576xf32, #ktir.tiled<device_size = [32768, 4, 32], stride_map = [32, 1048576, 1]>>
}

// -----
func.func @swiglu(%x: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %wg: tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> {ktir.parameter = "wg"}, %wu: tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> {ktir.parameter = "wu"}) -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %n = ktir.neg %x : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  %g = ktir.matmul %n, %wg : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  %s = ktir.silu %g : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  %u = ktir.matmul %n, %wu : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  %m = ktir.mul %s, %u : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>, tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  func.return %m : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
}

// -----
func.func @two_inputs(%x: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %wg: tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> {ktir.parameter = "wg"}, %wu: tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> {ktir.parameter = "wu"}) -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %n = ktir.neg %x : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  %g = ktir.matmul %n, %wg : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  %s = ktir.silu %g : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  %u = ktir.matmul %x, %wu : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  %m = ktir.mul %s, %u : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>, tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  func.return %m : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
}

// -----
func.func @no_prologue(%x: tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, %w: tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> {ktir.parameter = "w"}, %b: tensor<512xf16, #ktir.tiled<device_size = [8, 64], stride_map = [64, 1]>>) -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>> attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %n = ktir.neg %x : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>> -> tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>
  %u = ktir.matmul %n, %w : tensor<16x256xf16, #ktir.tiled<device_size = [4, 16, 64], stride_map = [64, 256, 1]>>, tensor<256x512xf16, #ktir.tiled<device_size = [8, 256, 64], stride_map = [64, 512, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  %y = ktir.add %u, %b : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>, tensor<512xf16, #ktir.tiled<device_size = [8, 64], stride_map = [64, 1]>> -> tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
  func.return %y : tensor<16x512xf16, #ktir.tiled<device_size = [8, 16, 64], stride_map = [64, 512, 1]>>
}

// -----
func.func @shared_full(%x: tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, %y: tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>) -> (tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>) attributes {ktir.layout_plan = {cost = 0 : i64, lower_bound = 0 : i64, search = "exact"}} {
  %z = ktir.full 2.000000e+00 : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  %a = ktir.mul %x, %z : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>> -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  %b = ktir.mul %y, %z : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>> -> tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
  func.return %a, %b : tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>, tensor<16x64xf16, #ktir.tiled<device_size = [1, 16, 64], stride_map = [64, 64, 1]>>
}

