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

from ktir.sim.machine import SimResult, estimate, pack_arguments, simulate
from ktir.sim.memory import SimulationError
from ktir.sim.pictures import write_png, write_roofline_png
from ktir.sim.report import KernelReport, Report, ReportFormatError
from ktir.sim.trace import write_trace

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
