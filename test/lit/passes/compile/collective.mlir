// RUN: ktir-opt %s -p 'ktir-compile{cores=4}' | filecheck %s
// RUN: ktir-run %s --cores 4 --timing-only | filecheck %s --check-prefix=TIMING
// RUN: not ktir-run %s --cores 4 2>&1 | filecheck %s --check-prefix=ALONE

// One card's shard of a row-parallel matmul: the collectives stay at function level next to
// the kernels, with Spyre layouts and the chunks the ring moves, each a report line of its
// own timed over the card link (dialects/ktir/collective.py, docs/hardware.md "Between cards").
// CHECK: %p = ktir.kernel "ktir.matmul" cores 4
// CHECK: %h = ktir.all_reduce %p cards 4 {ktir.work_division = {chunks = 4 : i64}} : tensor<8x128xf16, #ktir.tiled<{{.*}}>> -> tensor<8x128xf16, #ktir.tiled<{{.*}}>>
// CHECK: %g = ktir.all_gather %h dim 1 cards 4 {ktir.work_division = {chunks = 4 : i64}} : tensor<8x128xf16, #ktir.tiled<{{.*}}>> -> tensor<8x512xf16, #ktir.tiled<{{.*}}>>

// 8 x 128 fp16 = 2048 B: the all-reduce takes 6 steps of 512 B (3072 B / 63 GB/s + 12 µs =
// 18,073 cycles), the gather of 8 KiB 3 steps of 2048 B (6144 B / 63 GB/s + 6 µs = 9,146).
// TIMING: ktir.sim: 3 ops (1 on the chip, 2 between cards)
// TIMING: %h {{.*}} all_reduce (link) {{.*}} 18,073
// TIMING: %g {{.*}} all_gather (link) {{.*}} 9,146

// ALONE: error: ktir.all_reduce over 4 cards needs the other cards' values: run the 4 shards together (ktir.compile(model, args, cards=4))
func.func @shard(%x: tensor<8x256xf16>, %w: tensor<256x128xf16>) -> tensor<8x512xf16> {
  %p = ktir.matmul %x, %w : tensor<8x256xf16>, tensor<256x128xf16> -> tensor<8x128xf16>
  %h = ktir.all_reduce %p cards 4 : tensor<8x128xf16> -> tensor<8x128xf16>
  %g = ktir.all_gather %h dim 1 cards 4 : tensor<8x128xf16> -> tensor<8x512xf16>
  func.return %g : tensor<8x512xf16>
}
