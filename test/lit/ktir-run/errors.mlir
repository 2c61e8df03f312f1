// Errors in hand-edited core-level IR: each simulator error names the kernel, the op,
// a core and the sizes, at the offending op's line (inputs in Inputs/ktir-run); exit code 1 and nothing on stdout.
// RUN: not ktir-run %inputs/ktir-run/oob.mlir 2>&1 | filecheck %s --check-prefix=OOB
// RUN: not ktir-run %inputs/ktir-run/unwritten.mlir 2>&1 | filecheck %s --check-prefix=UNWRITTEN
// RUN: not ktir-run %inputs/ktir-run/overflow.mlir 2>&1 | filecheck %s --check-prefix=OVERFLOW
// RUN: not ktir-run %inputs/ktir-run/race.mlir 2>&1 | filecheck %s --check-prefix=RACE
// RUN: not ktir-run %inputs/ktir-run/oob.mlir 2>/dev/null | %python -c "import sys; assert not sys.stdin.read()"
// RUN: not ktir-run %inputs/ktir-run/unwritten.mlir --inputs %t.none.npz 2>&1 | filecheck %s --check-prefix=INPUTS

// Core 1 reads rows 3-4 of a 4-row tensor: the kernel's verifier rejects the tile before anything runs
// (the simulator checks every DMA box too, for IR that was not verified).
// OOB: oob.mlir:2:8: error: 'ktir.kernel' op tile 0 leaves its tensor on core 1, chunk 0: box [0, 3, 0] + [1, 2, 64] does not fit the device size [1, 4, 64]
// The load is missing: the compute reads LX nothing wrote.
// UNWRITTEN: unwritten.mlir:8:5: error: kernel 0 (%y = ktir.abs), ktir.compute: core 0 reads LX bytes [0, 256) slot 0, which nothing has written
// The output buffer is placed past the 1,677,721 usable LX bytes.
// OVERFLOW: overflow.mlir:6:10: error: kernel 0 (%y = ktir.abs), ktir.lx_alloc: LX capacity exceeded on cores 0-1: 256 bytes at address 1677568 end at 1677824 > 1677721 usable bytes
// Both cores store rows 0-1.
// RACE: race.mlir:14:5: error: kernel 0 (%y = ktir.abs), ktir.dma_store tile 1: cores 0 and 1 both write device bytes of the output box [(0, 1), (0, 2), (0, 64)] in one kernel
// INPUTS: ktir-run: error: cannot read inputs

