// RUN: ktir-opt %s --split-input-file --verify-diagnostics
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s

// #ktir.chunk_plan: counts at least 1, each dim once, whole_x last.

// CHECK: error: #ktir.chunk_plan counts must be at least 1, not n = 0
// expected-error @+1 {{#ktir.chunk_plan counts must be at least 1, not n = 0}}
"test.op"() {plan = #ktir.chunk_plan<m = 2, n = 0>} : () -> ()

// -----

// CHECK: error: #ktir.chunk_plan dim m given more than once
// expected-error @+1 {{#ktir.chunk_plan dim m given more than once}}
"test.op"() {plan = #ktir.chunk_plan<m = 2, m = 4>} : () -> ()

// -----

// CHECK: error: 'whole_x' must come last
// expected-error @+1 {{'whole_x' must come last}}
"test.op"() {plan = #ktir.chunk_plan<whole_x, m = 2>} : () -> ()

// -----

// #ktir.lx_buffers: known roles, each once, non-negative addresses.

// CHECK: error: #ktir.lx_buffers roles are in<i>, out0, acc<p>, scratch or online, not out1
// expected-error @+1 {{#ktir.lx_buffers roles are in<i>, out0, acc<p>, scratch or online, not out1}}
"test.op"() {buffers = #ktir.lx_buffers<in0 = 0, out1 = 256>} : () -> ()

// -----

// CHECK: error: #ktir.lx_buffers buffer in0 given more than once
// expected-error @+1 {{#ktir.lx_buffers buffer in0 given more than once}}
"test.op"() {buffers = #ktir.lx_buffers<in0 = 0, in0 = 256>} : () -> ()

// -----

// CHECK: error: expected an integer in [0, 9223372036854775807], not -256
// expected-error @+1 {{expected an integer in [0, 9223372036854775807], not -256}}
"test.op"() {buffers = #ktir.lx_buffers<in0 = 0, out0 = -256>} : () -> ()

// -----

// #ktir.prefetch: input indices once each, in increasing order.

// CHECK: error: #ktir.prefetch lists input indices once each, non-negative and increasing, not [2, 0]
// expected-error @+1 {{#ktir.prefetch lists input indices once each, non-negative and increasing, not [2, 0]}}
"test.op"() {prefetch = #ktir.prefetch<2, 0>} : () -> ()

// -----

// CHECK: error: #ktir.prefetch lists input indices once each, non-negative and increasing, not [1, 1]
// expected-error @+1 {{#ktir.prefetch lists input indices once each, non-negative and increasing, not [1, 1]}}
"test.op"() {prefetch = #ktir.prefetch<1, 1>} : () -> ()
