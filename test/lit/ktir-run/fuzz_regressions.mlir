// Regressions found by tools/fuzz.py for ktir-run: located errors or one line instead of an
// "internal error", and no output file written when any output cannot be.
// RUN: %python %inputs/fuzz/make_inputs.py %t
// RUN: not ktir-run %t/not_utf8.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// RUN: not ktir-run %t/deep_regions.mlir 2>&1 | filecheck %s --check-prefix=REGIONS
// RUN: not ktir-run %inputs/fuzz/i32_argument.mlir 2>&1 | filecheck %s --check-prefix=I32
// RUN: not ktir-run %inputs/fuzz/padded_column.mlir 2>&1 | filecheck %s --check-prefix=DEVICE
// RUN: not ktir-run %inputs/fuzz/tile_mismatch.mlir --cores 2 2>&1 | filecheck %s --check-prefix=TILES
// RUN: not ktir-run %inputs/fuzz/fallback_shape.mlir 2>&1 | filecheck %s --check-prefix=FALLBACK
// RUN: ktir-run %inputs/fuzz/full_bf16_scalar.mlir -o %t.bf16.npz && %python -c "import numpy; print(numpy.load('%t.bf16.npz')['out0'].shape)" | filecheck %s --check-prefix=BF16
// RUN: not ktir-run %s --cores 0 2>&1 | filecheck %s --check-prefix=CORES
// RUN: rm -f %t.npz
// RUN: not ktir-run %s --cores 2 -o %t.npz --png %t.missing/timeline.png 2>&1 | filecheck %s --check-prefix=PNG
// RUN: not ls %t.npz
// RUN: ktir-run %s --cores 2 -o %t.npz | filecheck %s --check-prefix=WRITES
// RUN: ls %t.npz

// UTF8: not_utf8.mlir:4:9: error: the input is not valid UTF-8: byte 0xff at byte offset 99 (invalid start byte)
// REGIONS: deep_regions.mlir:51:10: error: nesting deeper than 100 levels of brackets, regions, attributes or types is not supported
// I32: i32_argument.mlir:2:1: error: 'func.func' op ktir-run cannot pass argument 0 (%n): its type i32 is not a tensor
// DEVICE: padded_column.mlir:3:8: error: 'ktir.abs' op a tensor of shape [34359738368, 1] takes 4,096.0 GiB of device memory, more than the 128.0 GiB of spyre
// TILES: tile_mismatch.mlir:10:5: error: 'ktir.abs' on core 1: its operand tiles give a result of host shape [1, 64], but its output tile covers [2, 64]
// FALLBACK: fallback_shape.mlir:3:8: error: 'aten::clone.default' returned result #0 of shape [4, 8], the op declares [4, 4]
// BF16: ()
// CORES: ktir-run: error: argument --cores: must be in 1..32, not 0
// CORES-NOT: usage:
// PNG: ktir-run: error: cannot write '{{.*}}.missing/timeline.png': no such directory
// WRITES: outputs
func.func @abs(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %y = ktir.abs %x : tensor<4x64xf16> -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}
