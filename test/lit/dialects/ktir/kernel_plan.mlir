// RUN: KTIR_ROUNDTRIP
// RUN: KTIR_GENERIC_ROUNDTRIP

// The attributes of a kernel's plan (ktir-plan-kernels), printed as parsed in both forms.

// CHECK-LABEL: func.func @chunk_plan
// CHECK: "test.op"() {plan = #ktir.chunk_plan<m = 1, n = 16, k = 2>, whole = #ktir.chunk_plan<m = 4, n = 1, k = 8, whole_x>, one = #ktir.chunk_plan<d0 = 64>} : () -> ()
// CHECK-GENERIC: "test.op"() {plan = #ktir.chunk_plan<m = 1, n = 16, k = 2>, whole = #ktir.chunk_plan<m = 4, n = 1, k = 8, whole_x>, one = #ktir.chunk_plan<d0 = 64>} : () -> ()
func.func @chunk_plan() {
  "test.op"() {plan = #ktir.chunk_plan<m = 1, n = 16, k = 2>, whole = #ktir.chunk_plan<m = 4, n = 1, k = 8, whole_x>, one = #ktir.chunk_plan<d0 = 64>} : () -> ()
  func.return
}

// -----

// CHECK-LABEL: func.func @lx_buffers
// CHECK: "test.op"() {buffers = #ktir.lx_buffers<in0 = 0, in1 = 458752, in2 = 262144, scratch = 327680, acc = 131072, acc1 = 4096, online = 8192, out0 = 393216>} : () -> ()
// CHECK-GENERIC: "test.op"() {buffers = #ktir.lx_buffers<in0 = 0, in1 = 458752, in2 = 262144, scratch = 327680, acc = 131072, acc1 = 4096, online = 8192, out0 = 393216>} : () -> ()
func.func @lx_buffers() {
  "test.op"() {buffers = #ktir.lx_buffers<in0 = 0, in1 = 458752, in2 = 262144, scratch = 327680, acc = 131072, acc1 = 4096, online = 8192, out0 = 393216>} : () -> ()
  func.return
}

// -----

// CHECK-LABEL: func.func @prefetch
// CHECK: "test.op"() {one = #ktir.prefetch<1>, two = #ktir.prefetch<0, 2>} : () -> ()
// CHECK-GENERIC: "test.op"() {one = #ktir.prefetch<1>, two = #ktir.prefetch<0, 2>} : () -> ()
func.func @prefetch() {
  "test.op"() {one = #ktir.prefetch<1>, two = #ktir.prefetch<0, 2>} : () -> ()
  func.return
}
