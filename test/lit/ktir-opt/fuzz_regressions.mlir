// Regressions found by tools/fuzz.py: each input used to end in an "internal error", a traceback
// or a hang; each is now a located error at the offending text (or a usage error), and -o is
// never written on failure. Exit codes and files are checked in test/unit/tools/test_fuzz_regressions.py.
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: not ktir-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=NOINTERNAL
// RUN: %python %inputs/fuzz/make_inputs.py %t
// RUN: not ktir-opt %t/not_utf8.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: not ktir-opt %t/deep_regions.mlir 2>&1 | filecheck %s --check-prefix=REGIONS
// RUN: not ktir-opt %t/deep_attribute.mlir 2>&1 | filecheck %s --check-prefix=ATTRIBUTE
// RUN: ktir-opt %inputs/fuzz/prime_rows.mlir -p 'ktir-propagate-layouts,ktir-divide-work{policy=default}' | filecheck %s --check-prefix=PRIME
// RUN: not ktir-opt %inputs/fuzz/padded_column.mlir -p ktir-compile 2>&1 | filecheck %s --check-prefix=DEVICE
// RUN: not ktir-opt %inputs/fuzz/padded_column.mlir -p 'ktir-compile{cores=0}' 2>&1 | filecheck %s --check-prefix=CORES
// RUN: not ktir-opt %inputs/fuzz/padded_column.mlir -p 'ktir-compile{solver=bogus}' 2>&1 | filecheck %s --check-prefix=SOLVER
// RUN: not ktir-opt %inputs/fuzz/bad_regex.mlir --verify-diagnostics 2>&1 | filecheck %s --check-prefix=REGEX
// RUN: echo "previous output" > %t.out
// RUN: not ktir-opt %inputs/diagnostics_mismatch.mlir --split-input-file --verify-diagnostics -o %t.out 2>/dev/null
// RUN: filecheck %s --check-prefix=KEPT --input-file %t.out
// RUN: not ktir-opt %s --split-input-file -o %t.missing/out.mlir 2>&1 | filecheck %s --check-prefix=UNWRITABLE

// NOINTERNAL-NOT: {{internal error|Traceback}}
// UTF8: not_utf8.mlir:4:9: error: the input is not valid UTF-8: byte 0xff at byte offset 99 (invalid start byte)
// UTF8-NEXT: // café �
// UTF8-NEXT: {{^}}        ^
// REGIONS: deep_regions.mlir:51:10: error: nesting deeper than 100 levels of brackets, regions, attributes or types is not supported
// ATTRIBUTE: deep_attribute.mlir:1:120: error: nesting deeper than 100 levels of brackets, regions, attributes or types is not supported
// PRIME: ktir.work_division = {d0 = 1 : i64, d1 = 1 : i64}
// DEVICE: padded_column.mlir:3:8: error: 'ktir.abs' op a tensor of shape [34359738368, 1] takes 4,096.0 GiB of device memory, more than the 128.0 GiB of spyre
// CORES: ktir-opt: error: invalid pass pipeline 'ktir-compile{cores=0}': cores must be in 1..32, not 0; available passes:
// SOLVER: ktir-opt: error: invalid pass pipeline 'ktir-compile{solver=bogus}': unknown solver 'bogus' (expected one of: greedy, firstfit, bestfit); available passes:
// REGEX: bad_regex.mlir:3:6: error: invalid regular expression in expected-error-re: bad character range 1-- at position 14
// KEPT: previous output
// UNWRITABLE: ktir-opt: error: cannot write '{{.*}}.missing/out.mlir': no such directory

// CHECK: fuzz_regressions.mlir:[[# @LINE + 1]]:20: error: dimension 18446744073709551616 is out of range of i64 (at most 9223372036854775807)
func.func @dim(%x: tensor<18446744073709551616x64xf16>) {
  return
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 2]]:43: error: integer 9223372036854775808 is out of range of i64 [-9223372036854775808, 9223372036854775807]
func.func @normalized_shape(%x: tensor<2x64xf16>) -> tensor<2x64xf16> {
  %0 = ktir.rms_norm %x normalized_shape [9223372036854775808] {eps = 1.0e-06 : f64} : tensor<2x64xf16> -> tensor<2x64xf16>
  return %0 : tensor<2x64xf16>
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 2]]:47: error: Integer value 18446744073709551616 is out of range for type i64
func.func @slice_step(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %0 = ktir.slice %x dim 0 start 0 end 4 step 18446744073709551616 : tensor<4x64xf16> -> tensor<4x64xf16>
  return %0 : tensor<4x64xf16>
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 3]]:172: error: integer -9223372036854775809 is out of range of i64 [-9223372036854775808, 9223372036854775807]
#L = #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>
func.func @tile_start(%x: tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, -9223372036854775809, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  ^bb0(%in: tensor<4x64xf16, #L>, %out: tensor<4x64xf16, #L>):
    ktir.yield
  }
  return %y : tensor<4x64xf16, #L>
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 1]]:1: error: 'func.func' op argument 0: the ktir.layout pin does not fit tensor<8x64xf16>: the last device dim is the stick: it must hold 64 f16 elements, not 1
func.func @pin(%x: tensor<8x64xf16> {ktir.layout = #ktir.tiled<device_size = [8, 1], stride_map = [64, 1]>}) -> tensor<8x64xf16> {
  return %x : tensor<8x64xf16>
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 1]]:1: error: 'func.func' op argument 0 has rank 7; Spyre layouts hold tensors of rank at most 6
func.func @rank7(%x: tensor<2x2x2x2x2x2x2xf16>) {
  return
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 2]]:8: error: 'ktir.reshape' op result has rank 7; Spyre layouts hold tensors of rank at most 6
func.func @rank7_op(%x: tensor<2x2x2x2x2x2xf16>) {
  %0 = ktir.reshape %x : tensor<2x2x2x2x2x2xf16> -> tensor<1x2x2x2x2x2x2xf16>
  return
}

// -----

// Core 1's tile starts at row 3 of 4 and is 2 rows long.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 3]]:8: error: 'ktir.kernel' op tile 0 leaves its tensor on core 1, chunk 0: box [0, 3, 0] + [1, 2, 64] does not fit the device size [1, 4, 64]
#L = #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>
func.func @tile_outside(%x: tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  %y = ktir.kernel "ktir.abs" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 3, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 2, 64], starts = [[0, 0, 0], [0, 2, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  ^bb0(%in: tensor<4x64xf16, #L>, %out: tensor<4x64xf16, #L>):
    ktir.yield
  }
  return %y : tensor<4x64xf16, #L>
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 7]]:8: error: 'ktir.abs' op is a graph-level op in a function of ktir.kernel ops: core-level IR keeps only views and CPU fallbacks outside kernels (compile a graph-level function whole with ktir-compile)
#L = #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>
func.func @mixed(%x: tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  ^bb0(%in: tensor<4x64xf16, #L>, %out: tensor<4x64xf16, #L>):
    ktir.yield
  }
  %z = ktir.abs %y : tensor<4x64xf16, #L> -> tensor<4x64xf16, #L>
  return %z : tensor<4x64xf16, #L>
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 1]]:1: error: 'func.func' op has 2 blocks; a ktir function has one (no control flow)
func.func @two_blocks(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  return %x : tensor<4x64xf16>
^bb1:
  return %x : tensor<4x64xf16>
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 1]]:1: error: 'func.func' op argument 0 (tensor<99999999999999x3xf16>) holds 545.7 TiB, more than the 16 TiB of device memory a target may have
func.func @too_big(%x: tensor<99999999999999x3xf16>) {
  return
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 2]]:8: error: 'ktir.expand' op result (tensor<1099511627776x4x64xf16>) holds 512.0 TiB, more than the 16 TiB of device memory a target may have
func.func @too_big_result(%x: tensor<4x64xf16>) {
  %0 = ktir.expand %x : tensor<4x64xf16> -> tensor<1099511627776x4x64xf16>
  return
}

// -----

// Ten elements padded to 2**40 sticks.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 1]]:23: error: the #ktir.tiled device tensor [1099511627776, 32] takes 128.0 TiB, more than the 16 TiB of device memory a target may have
func.func @padded(%x: tensor<10xi64, #ktir.tiled<device_size = [1099511627776, 32], stride_map = [32, 1], device_dtype = IEEE_INT32>>) {
  return
}

// -----

// CHECK: fuzz_regressions.mlir:[[# @LINE + 1]]:42: error: device_size entries must fit in i64, not [9223372036854775808, 32]
func.func @layout_int(%x: tensor<10xi64, #ktir.tiled<device_size = [9223372036854775808, 32], stride_map = [32, 1]>>) {
  return
}

// -----

// An unterminated string: xDSL's lexer took time exponential in the rest of the line.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 2]]:64: error: End of file reached before closing string literal.
func.func @unterminated(%x: tensor<4x70xf16>) {
  %0 = ktir.pad %x low [1, 0] high [0, 4] {value = 0.0 : f64} :"tensor<4x60xf16> -> tensor<4x64xf16>
  return
}

// -----

// A use before its definition: the simulator met a value not yet computed.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 2]]:8: error: 'ktir.abs' op operand #0 does not dominate this use
func.func @use_before_def(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %0 = ktir.abs %1 : tensor<4x64xf16> -> tensor<4x64xf16>
  %1 = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %0 : tensor<4x64xf16>
}

// -----

// A DMA naming a tile the kernel does not have: the simulator indexed past its tile list.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 8]]:5: error: 'ktir.dma_load' op tile 2 is not one of the kernel's 2 tiles
#L = #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>
func.func @dma_tile(%x: tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  ^bb0(%in: tensor<4x64xf16, #L>, %out: tensor<4x64xf16, #L>):
    %core = ktir.core_id : index
    %zero = arith.constant 0 : index
    %buffer = ktir.lx_alloc address 0 : memref<1x1x4x64xf16, "lx">
    ktir.dma_load %in -> %buffer[%core, %zero, %zero] tile 2 : tensor<4x64xf16, #L> -> memref<1x1x4x64xf16, "lx">
    ktir.yield
  }
  return %y : tensor<4x64xf16, #L>
}

// -----

// An LX buffer of another shape than the tile it receives: the simulator failed to broadcast.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 8]]:5: error: 'ktir.dma_load' op the target memref<1x1x2x64xf16, "lx"> must hold slots of tile 0's extent [1, 4, 64], not [1, 2, 64]
#L = #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>
func.func @dma_buffer(%x: tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  ^bb0(%in: tensor<4x64xf16, #L>, %out: tensor<4x64xf16, #L>):
    %core = ktir.core_id : index
    %zero = arith.constant 0 : index
    %buffer = ktir.lx_alloc address 0 : memref<1x1x2x64xf16, "lx">
    ktir.dma_load %in -> %buffer[%core, %zero, %zero] tile 0 : tensor<4x64xf16, #L> -> memref<1x1x2x64xf16, "lx">
    ktir.yield
  }
  return %y : tensor<4x64xf16, #L>
}

// -----

// A constant chunk index past the kernel's chunks: the simulator indexed past its chunk starts.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 9]]:5: error: 'ktir.dma_load' op chunk 9223372036854775807 is not one of the kernel's 1 chunks
#L = #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>
func.func @dma_chunk(%x: tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #L>) -> tensor<4x64xf16, #L> {
  ^bb0(%in: tensor<4x64xf16, #L>, %out: tensor<4x64xf16, #L>):
    %core = ktir.core_id : index
    %zero = arith.constant 0 : index
    %chunk = arith.constant 9223372036854775807 : index
    %buffer = ktir.lx_alloc address 0 : memref<1x1x4x64xf16, "lx">
    ktir.dma_load %in -> %buffer[%core, %chunk, %zero] tile 0 : tensor<4x64xf16, #L> -> memref<1x1x4x64xf16, "lx">
    ktir.yield
  }
  return %y : tensor<4x64xf16, #L>
}

// -----

// A splat constant of a huge shape: xDSL's parser expands `dense<0.0>` element by element and ran
// out of memory.
// CHECK: fuzz_regressions.mlir:[[# @LINE + 2]]:3: error: the input needs more memory than there is (a constant or shape too large)
func.func @huge_splat() {
  %zero = arith.constant dense<0.0> : tensor<99999999999x1x64xf32>
  return
}

// Added after the chunks, so that the errors above keep their line numbers.
// A named linalg op on index elements (fuzzing the ktdp corpus made a fill's scalar an index).
// RUN: not ktir-opt %inputs/fuzz/index_fill.mlir 2>&1 | filecheck %s --check-prefix=INDEX
// INDEX: index_fill.mlir:4:8: error: 'linalg.fill' builds its body from float or integer elements only (not index or another type)
