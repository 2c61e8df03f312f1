"""
The `ktdp` dialect of RFC 0682 (KTIR as torch-spyre's frontends emit it): compute-tile ids,
memory views, access tiles, loads and stores, with the reference implementation's syntax and
verifier messages.

```mlir
func.func @add(%a: index, %c: index) attributes {grid = [32]} {
  %id = ktdp.get_compute_tile_id : index
  %va = ktdp.construct_memory_view %a, sizes: [96, 64], strides: [64, 1]
      {coordinate_set = affine_set<(d0, d1) : (d0 >= 0, -d0 + 95 >= 0, d1 >= 0, -d1 + 63 >= 0)>,
       memory_space = #ktdp.memory_space<global>} : memref<96x64xf16>
  %t = ktdp.construct_access_tile %va[%id, 0]
      {access_tile_order = affine_map<(d0, d1) -> (d0, d1)>,
       access_tile_set = affine_set<(d0, d1) : (d0 == 0, d1 >= 0, -d1 + 63 >= 0)>}
      : memref<96x64xf16> -> !ktdp.access_tile<1x64xindex>
  %x = ktdp.load %t : <1x64xindex> -> tensor<1x64xf16>
  ktdp.store %x, %t : tensor<1x64xf16>, <1x64xindex>
  return
}
```

- A memory view is a strided tensor at an element `offset` of a memory space (`global`: device
  memory; `ct_local, ct_id = N`: core N's scratchpad); `coordinate_set` is the part of the
  global index space it covers. It moves no data.
- An access tile is a set of coordinates relative to `base_map(indices)`: the points of
  `access_tile_set`, enumerated in `access_tile_order` (the rightmost output innermost).
- `ktdp.load` gathers the tile's elements into a tensor of the tile's shape; `ktdp.store`
  scatters one back.

The verifiers are as lax as the reference's (RFC 0682 notes, "keep the verifier as lax as
upstream"): extents are not checked against the sets. The dialect is assembled here from its
modules: `attributes` (memory spaces, access tiles, tile futures), `ops` (the ops above),
`indirect` (indirect access tiles), `comm` (inter-tile produce and reduce), `delivery`
(inter-tile consume), `placed_delivery` (reduce_scatter, gather, all_to_all and scatter, with
the axis algebra of `placement`), `legacy` (the older and extension spellings the reference's tests use:
`#ktdp.spyre_memory_space`, `!ktdp.runtime_arg`) and `syntax` (the printing and parsing they
share).
"""

from xdsl.ir import Dialect

from ktir.dialects.ktdp.attributes import AccessTileType, MemorySpaceAttr, TileFutureType
from ktir.dialects.ktdp.comm import COMM_OPS
from ktir.dialects.ktdp.delivery import InterTileConsumeOp
from ktir.dialects.ktdp.indirect import ConstructIndirectAccessTileOp
from ktir.dialects.ktdp.legacy import RuntimeArgExtractOp, RuntimeArgType, SpyreMemorySpaceAttr
from ktir.dialects.ktdp.ops import (
    ConstructAccessTileOp,
    ConstructDistributedMemoryViewOp,
    ConstructMemoryViewOp,
    GetComputeTileIdOp,
    LoadOp,
    StoreOp,
)
from ktir.dialects.ktdp.placed_delivery import PLACED_DELIVERY_OPS

KTDP_OPS = (
    GetComputeTileIdOp,
    ConstructMemoryViewOp,
    ConstructDistributedMemoryViewOp,
    ConstructAccessTileOp,
    ConstructIndirectAccessTileOp,
    LoadOp,
    StoreOp,
    RuntimeArgExtractOp,
    *COMM_OPS,
    InterTileConsumeOp,
    *PLACED_DELIVERY_OPS,
)
"""Every op of the dialect."""

ROUTINE_ATTRIBUTE = "ktir.routine"
"""
ktir's extension of ktdp programs: a private `func.func` with this attribute (a string, a ktir
graph op's name such as "ktir.rms_norm") is that op's device routine, called with `func.call`.
Its body gives the values; ktir's engine times the call with ktir's cost for the op on the
shapes it is called with (`ktir.ktdp_engine.routines`). Other MLIR tools see an ordinary function.
"""

FUSED_ROUTINE = "ktir.fused"
"""The `ROUTINE_ATTRIBUTE` of a fused kernel's payload (the name of `ktir.fused`): its ops, routines
among them, are the kernel's own and run as one compute."""

CAUSAL_ATTRIBUTE = "ktir.causal"
"""On a "ktir.attention" routine: the causal offset (a key past `query + causal` is hidden)."""

BUFFER_ATTRIBUTE = "ktir.buffer"
"""
ktir's extension of ktdp programs: on an op that makes a tensor, the LX buffer of ktir's kernel
it lands in, `array<i64: address, slots>` (the buffer's LX address and its slots, as ktir's
planner gave them). The tensors of every op naming one buffer take its slots in turn, one per
tensor made (a loop's iterations: chunk k's load lands in slot `k mod 2`, and waits for the
readers of chunk k - 2's), whatever else the loop holds. `ktir-emit-ktdp` writes it on the
loads into a buffer of several slots, on the op making a compute's result in one, and on an
accumulator's zero and ring sum (of any slots: ktir writes them in place); ktir's engine
gives a tensor without it the function's rule
(`ktir.ktdp_engine.lx_capacity.buffers_per_loop_tensor`).
"""

Ktdp = Dialect(
    "ktdp",
    list(KTDP_OPS),
    [MemorySpaceAttr, SpyreMemorySpaceAttr, AccessTileType, TileFutureType, RuntimeArgType],
)
"""The `ktdp` dialect (load it into a context with `ktir.ir.context.make_context`)."""

__all__ = ["BUFFER_ATTRIBUTE", "CAUSAL_ATTRIBUTE", "FUSED_ROUTINE", "KTDP_OPS", "ROUTINE_ATTRIBUTE", "Ktdp"]
