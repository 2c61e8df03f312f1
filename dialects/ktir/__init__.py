"""
The `ktir` dialect: Kernel Tile IR for tiled dataflow accelerators (IBM Spyre), assembled
from its modules in `dialect.py`, as xDSL assembles its larger dialects:

- `attributes`: the `#ktir.tiled` tensor encoding and the rules every tensor type keeps to,
  `#ktir.tile`, the compute unit and ring combine kinds, `#ktir.operand`; it imports no other
  module of the dialect;
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
  argument and function attributes; `core_functions`: what a function of `ktir.kernel`s may hold
  besides its kernels.

The op modules import `attributes` and each other without cycles (`test/unit/test_layers.py`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ktir.dialects.ktir.dialect import Ktir

__all__ = ["Ktir"]


def __getattr__(name: str) -> object:
    """
    `ktir.dialects.ktir.Ktir`, imported on first use (PEP 562): importing one module of the
    package, as the verifier imports `attributes` for every program, builds no op class of the
    others (`ktir-run` on a ktdp kernel starts without them).
    """
    if name != "Ktir":
        raise AttributeError(f"module 'ktir.dialects.ktir' has no attribute '{name}'")
    return importlib.import_module("ktir.dialects.ktir.dialect").Ktir
