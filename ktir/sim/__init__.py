"""
`ktir.sim`: a cycle-approximate simulator of the chip running core-level ktir.

Every core of a kernel runs the kernel's program on its own slice, with its own DMA engine,
PE arrays (PT), SFU and ring port; LPDDR5 bandwidth is shared by all cores; numerics are NumPy
(fp16 storage, fp32 compute, one rounding per op). See docs/simulator.md for the machine model.

```python
from ktir.sim import simulate
result = simulate(module, [x, w])            # after ktir-lower-to-cores (or ktir-compile)
result.outputs, result.report.total_cycles
estimate(module).total_cycles                # the same cycles without values (no tensor data)
result.report.print()                        # rich tables
result.report.to_json()                      # every number of the tables (Report.from_json reads it)
ktir.sim.write_trace(result.report, "trace.json")
```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ktir.sim.machine import SimResult, estimate, pack_arguments, simulate
    from ktir.sim.memory import SimulationError
    from ktir.sim.pictures import write_png, write_roofline_png
    from ktir.sim.report import KernelReport, Report, ReportFormatError
    from ktir.sim.trace import write_trace

_HOMES = {
    "KernelReport": "report",
    "Report": "report",
    "ReportFormatError": "report",
    "SimResult": "machine",
    "SimulationError": "memory",
    "estimate": "machine",
    "pack_arguments": "machine",
    "simulate": "machine",
    "write_png": "pictures",
    "write_roofline_png": "pictures",
    "write_trace": "trace",
}
"""Each public name and its module. The package imports a module when one of its names is first
used (PEP 562): the ktdp engine imports `ktir.sim.gemm` and `ktir.sim.report` without the
simulator, so `ktir-run KERNEL.mlir --function F` starts without it."""

# A literal list, not `sorted(_HOMES)`: linters read it to know the imports above are exports.
__all__ = [
    "KernelReport",
    "Report",
    "ReportFormatError",
    "SimResult",
    "SimulationError",
    "estimate",
    "pack_arguments",
    "simulate",
    "write_png",
    "write_roofline_png",
    "write_trace",
]


def __getattr__(name: str) -> Any:
    """`ktir.sim.NAME`: the name from its module, imported on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ktir.sim' has no attribute '{name}'")
    return getattr(importlib.import_module(f"ktir.sim.{home}"), name)
