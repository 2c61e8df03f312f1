"""
The NumPy reference executor of graph-level ktir: `executor` (running a function), `ops`
(elementwise and the precision contract) and `structured` (matmul, reductions, data movement).

`from ktir import reference; reference.run(module, inputs)` is the public entry point. The
executor is imported on first use of `run` or `ExecutionError` (PEP 562): the ktdp engine uses
`ops` and `blas` alone.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ktir.reference.executor import ExecutionError, run

__all__ = ["ExecutionError", "run"]


def __getattr__(name: str) -> Any:
    """`ktir.reference.run` and `ExecutionError`, from the executor imported on first use."""
    if name not in __all__:
        raise AttributeError(f"module 'ktir.reference' has no attribute '{name}'")
    return getattr(importlib.import_module("ktir.reference.executor"), name)
