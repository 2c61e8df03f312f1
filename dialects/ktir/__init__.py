"""
The `ktir` dialect: Kernel Tile IR for tiled dataflow accelerators (IBM Spyre), assembled here
from its modules, as xDSL assembles its larger dialects:

- `attributes`: the `#ktir.tiled` tensor encoding, `#ktir.tile`, the compute unit and ring
  combine kinds, `#ktir.operand`; it imports no other module of the dialect;
- `elementwise`: the elementwise graph-level ops, and the element-type and shape rules every
  graph-level verifier shares;
- `structured` (matmul, reductions, norms, attention, views, `ktir.cpu_fallback`, `ktir.fused`),
  `data` (row gathers, cumsum) and `routing` (top-k, sort, grouped matmuls): graph-level ops;
- `collective`: the collectives between the cards of a tensor-parallel group (all-reduce,
  all-gather), graph-level ops;
- `core`: the core-level ops (`ktir.kernel`, DMA, compute, ring) and the IR state passes hand on;
- `kernel_plan`: the attributes recording a kernel's plan (`#ktir.chunk_plan`,
  `#ktir.lx_buffers`, `#ktir.prefetch`); like `attributes`, it imports no other module;
- `functions`: what a `func.func` holding ktir ops keeps to (`verify_function`), and its
  argument and function attributes.

The op modules import `attributes` and each other without cycles (`test/unit/test_layers.py`).
"""

from xdsl.ir import Dialect

from ktir.dialects.ktir.attributes import ATTRIBUTES
from ktir.dialects.ktir.collective import COLLECTIVE_OPS
from ktir.dialects.ktir.core import CORE_OPS
from ktir.dialects.ktir.data import DATA_OPS
from ktir.dialects.ktir.elementwise import ELEMENTWISE_OPS
from ktir.dialects.ktir.kernel_plan import PLAN_ATTRIBUTES
from ktir.dialects.ktir.routing import ROUTING_OPS
from ktir.dialects.ktir.structured import STRUCTURED_OPS

Ktir = Dialect(
    "ktir",
    [*ELEMENTWISE_OPS, *STRUCTURED_OPS, *DATA_OPS, *ROUTING_OPS, *COLLECTIVE_OPS, *CORE_OPS],
    [*ATTRIBUTES, *PLAN_ATTRIBUTES],
)
"""The `ktir` dialect: the `#ktir.tiled` encoding, the graph-level ops and the core-level ops."""

__all__ = ["Ktir"]
