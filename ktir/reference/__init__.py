"""
The NumPy reference executor of graph-level ktir: `executor` (running a function), `ops`
(elementwise and the precision contract) and `structured` (matmul, reductions, data movement).

`from ktir import reference; reference.run(module, inputs)` is the public entry point.
"""

from ktir.reference.executor import ExecutionError, run

__all__ = ["ExecutionError", "run"]
