// RUN: ktir-opt %s --split-input-file --verify-diagnostics

// Invalid core-level ops: the verifier rules of dialects/ktir_core.py.

func.func @tile_count(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  // expected-error @+1 {{expected 2 tiles (one per block argument), got 1}}
  %y = ktir.kernel "ktir.abs" cores 1 chunks 1 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %b: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
    ktir.yield
  }
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

func.func @tile_cores(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  // expected-error @+1 {{tile 0 must give 2 core starts and 1 chunk starts}}
  %y = ktir.kernel "ktir.abs" cores 2 chunks 1 work_division {d0 = 2 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0]]>](%x) : (tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>) -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> {
  ^bb0(%a: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %b: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
    ktir.yield
  }
  func.return %y : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
}

// -----

func.func @alloc_space() {
  // expected-error @+1 {{the result must be an LX buffer (memref in "lx")}}
  %0 = ktir.lx_alloc address 0 : memref<1x4x64xf16>
  func.return
}

// -----

func.func @alloc_address() {
  // expected-error @+1 {{LX address must be non-negative, not -128}}
  %0 = ktir.lx_alloc address -128 : memref<1x4x64xf16, "lx">
  func.return
}

// -----

func.func @ring_combine(%b: memref<1x4x64xf32, "lx">, %s: index) {
  // expected-error @+1 {{Expected `add`, `max`, or `min`.}}
  ktir.ring_reduce %b[%s] group 2 combine mul : memref<1x4x64xf32, "lx">
  func.return
}

// -----

func.func @ring_group(%b: memref<1x4x64xf32, "lx">, %s: index) {
  // expected-error @+1 {{a ring reduction needs a group of at least 2 cores}}
  ktir.ring_reduce %b[%s] group 1 combine add : memref<1x4x64xf32, "lx">
  func.return
}

// -----

func.func @dma_target(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %b: memref<1x1x4x64xf16>, %i: index) {
  // expected-error @+1 {{the target must be an LX buffer}}
  ktir.dma_load %x -> %b[%i, %i, %i] tile 0 : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> memref<1x1x4x64xf16>
  func.return
}

// -----

func.func @compute_unit(%b: memref<1x1x4x64xf16, "lx">, %i: index) {
  // expected-error @+1 {{Expected `pt`, or `sfu`.}}
  ktir.compute gpu[%i, %i, %i] ins(%b : memref<1x1x4x64xf16, "lx">) outs(%b : memref<1x1x4x64xf16, "lx">) tiles [0, 1] {
  ^bb0(%t: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
    %r = ktir.abs %t : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    ktir.yield %r : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  }
  func.return
}

// -----

func.func @into_without_accumulate(%b: memref<2x1x4x64xf16, "lx">, %i: index) {
  // expected-error @+1 {{'into' names an accumulator slot: it needs 'accumulate'}}
  ktir.compute sfu[%i, %i, %i] ins(%b : memref<2x1x4x64xf16, "lx">) outs(%b : memref<2x1x4x64xf16, "lx">) tiles [0, 1] into %i {
  ^bb0(%t: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
    %r = ktir.abs %t : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
    ktir.yield %r : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  }
  func.return
}

// -----

func.func @into_slot(%b: memref<2x1x4x64xf16, "lx">, %acc: memref<2x1x4x64xf32, "lx">, %i: index) {
  %two = arith.constant 2 : index
  // expected-error @+1 {{slot 2 is not one of the 2 slots of memref<2x1x4x64xf32, "lx">}}
  ktir.compute pt[%i, %i, %i] ins(%b, %b : memref<2x1x4x64xf16, "lx">, memref<2x1x4x64xf16, "lx">) outs(%acc : memref<2x1x4x64xf32, "lx">) tiles [0, 0, 1] accumulate into %two {
  ^bb0(%t: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>):
    ktir.yield %t : tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  }
  func.return
}

// -----

func.func @fill_space(%b: memref<1x4x64xf32>, %s: index) {
  // expected-error @+1 {{the buffer must be an LX buffer}}
  ktir.lx_fill %b[%s] value 0 : i64 : memref<1x4x64xf32>
  func.return
}

// -----

func.func @dma_source(%x: tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>, %b: memref<1x1x4x64xf16>, %i: index) {
  // expected-error @+1 {{the source must be an LX buffer}}
  ktir.dma_store %b -> %x[%i, %i, %i] tile 0 : memref<1x1x4x64xf16> -> tensor<4x64xf16, #ktir.tiled<device_size = [1, 4, 64], stride_map = [64, 64, 1]>>
  func.return
}

// -----

func.func @core_id_type() {
  // expected-error @+1 {{result 'result' at position 0 does not verify}}
  %0 = "ktir.core_id"() : () -> i32
  func.return
}

// -----

func.func @yield_not_last() {
  // expected-error @+1 {{'ktir.yield' op must be the last operation in its parent block}}
  "ktir.yield"() : () -> ()
  func.return
}

// -----

// A `whole` load fills one slot of the core's whole slice: [2, 4, 64] here (2 K chunks of 1 stick).
func.func @whole_slots(%x: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 2 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>](%x) : (tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  ^bb0(%a: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %b: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
    %c = ktir.core_id : index
    %buf = ktir.lx_alloc address 0 : memref<2x2x4x64xf16, "lx">
    %i = arith.constant 0 : index
    // expected-error @+1 {{the target memref<2x2x4x64xf16, "lx"> must hold one slot of tile 0's whole slice [2, 4, 64], not 2 of [2, 4, 64]}}
    ktir.dma_load %a -> %buf[%c, %i, %i] tile 0 whole : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> memref<2x2x4x64xf16, "lx">
    ktir.yield
  }
  func.return %y : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
}

// -----

// A compute reads a tile, or its chunk's window of a one-slot whole slice; nothing else.
func.func @window_extent(%x: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 2 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>](%x) : (tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  ^bb0(%a: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %b: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
    %c = ktir.core_id : index
    %in = ktir.lx_alloc address 0 : memref<1x3x4x64xf16, "lx">
    %out = ktir.lx_alloc address 4096 : memref<1x1x4x64xf16, "lx">
    %i = arith.constant 0 : index
    // expected-error @+1 {{buffer #0 memref<1x3x4x64xf16, "lx"> must hold slots of tile 0's extent [1, 4, 64], not [3, 4, 64]}}
    ktir.compute sfu[%c, %i, %i] ins(%in : memref<1x3x4x64xf16, "lx">) outs(%out : memref<1x1x4x64xf16, "lx">) tiles [0, 1] {
    ^bb0(%t: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
      %r = ktir.abs %t : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
      ktir.yield %r : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
    }
    ktir.yield
  }
  func.return %y : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
}

// -----

// A prefetch runs before the kernel starts: nothing of the kernel may come before it.
func.func @prefetch_late(%x: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 2 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>](%x) : (tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  ^bb0(%a: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %b: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
    %c = ktir.core_id : index
    %buf = ktir.lx_alloc address 0 : memref<2x1x4x64xf16, "lx">
    %i = arith.constant 0 : index
    %j = arith.constant 1 : index
    ktir.dma_load %a -> %buf[%c, %i, %i] tile 0 : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> memref<2x1x4x64xf16, "lx">
    // expected-error @+1 {{a prefetch load must come before the kernel's other transfers and computes, not after 'ktir.dma_load'}}
    ktir.dma_load %a -> %buf[%c, %j, %j] tile 0 prefetch : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> memref<2x1x4x64xf16, "lx">
    ktir.yield
  }
  func.return %y : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
}

// -----

// ... and it runs at the top of the kernel, not in its loop.
func.func @prefetch_in_loop(%x: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  %y = ktir.kernel "ktir.abs" cores 1 chunks 2 work_division {d0 = 1 : i64, d1 = 1 : i64} tiles [#ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>, #ktir.tile<extent = [1, 4, 64], starts = [[0, 0, 0]], chunk_starts = [[0, 0, 0], [1, 0, 0]]>](%x) : (tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>) -> tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> {
  ^bb0(%a: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>, %b: tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>):
    %c = ktir.core_id : index
    %buf = ktir.lx_alloc address 0 : memref<2x1x4x64xf16, "lx">
    %i = arith.constant 0 : index
    %j = arith.constant 1 : index
    %n = arith.constant 2 : index
    scf.for %k = %i to %n step %j {
      // expected-error @+1 {{a prefetch load must be in the kernel's body, not in a loop}}
      ktir.dma_load %a -> %buf[%c, %k, %k] tile 0 prefetch : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>> -> memref<2x1x4x64xf16, "lx">
    }
    ktir.yield
  }
  func.return %y : tensor<4x128xf16, #ktir.tiled<device_size = [2, 4, 64], stride_map = [64, 128, 1]>>
}

// -----

func.func @prefetch_lx(%b: memref<1x1x4x64xf16, "lx">, %t: memref<1x1x4x64xf16, "lx">, %i: index) {
  // expected-error @+1 {{a prefetch load reads device memory, not an LX buffer}}
  ktir.dma_load %b -> %t[%i, %i, %i] tile 0 prefetch : memref<1x1x4x64xf16, "lx"> -> memref<1x1x4x64xf16, "lx">
  func.return
}
