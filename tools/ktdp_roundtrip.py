"""
The emission round trip: every kernel of a core-level module written as `ktdp`
(`ktir.export.ktdp`), re-read, run by ktir's `ktdp` engine, and compared with ktir's own
simulation of the kernel on the same device buffers.

For each kernel the inputs are seeded random host tensors (`ktir-run`'s `random_input`) packed
into their device layouts; ktir's simulator runs the kernel (`SimKernel`) and
the `ktdp` engine runs the emitted function on the same device buffers, each output starting as
zeros. `KernelRoundTrip` holds whether the host outputs are equal bit for bit (NaNs equal) and
the cycles of both runs.

```
python -m tools.ktdp_roundtrip PROGRAM.mlir       # core-level IR, e.g. ktir-opt -p ktir-compile
```
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

import ktir.ktdp as ktdp
from ktir.cores.executor import tensor_layout, to_device, to_host
from ktir.dialects import ktir_core as core
from ktir.export.ktdp import emit_kernel, kernel_names
from ktir.hardware.target import SPYRE, Target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module, render
from ktir.sim.engine import SimKernel
from ktir.sim.memory import Scratchpad
from ktir.tools.arguments import ArgumentParser
from ktir.tools.ktir_run import random_input


@dataclass(frozen=True)
class KernelRoundTrip:
    """One kernel's round trip: its function name, why it was not written (or None), the result."""

    name: str
    skipped: str | None = None
    equal: bool = False
    max_abs_difference: float = 0.0
    ktir_cycles: float = 0.0
    ktdp_cycles: float = 0.0

    @property
    def same_cycles(self) -> bool:
        """Both engines give the kernel the same time (to a relative 1e-9: costs summed in another order)."""
        return abs(self.ktdp_cycles - self.ktir_cycles) <= 1e-9 * self.ktir_cycles


def _inputs(kernel: core.KernelOp, rng: np.random.Generator) -> list[np.ndarray]:
    return [to_device(random_input(t, rng), t) for t in kernel.inputs.types]  # type: ignore[arg-type]


def roundtrip_kernel(
    kernel: core.KernelOp, index: int, name: str, rng: np.random.Generator, target: Target = SPYRE
) -> KernelRoundTrip:
    """Emit, re-read and run one kernel against ktir's simulation of it (module docstring)."""
    try:
        text = emit_kernel(kernel, name)
    except DiagnosticError as error:
        return KernelRoundTrip(name, skipped=error.diagnostics[0].message)
    inputs = _inputs(kernel, rng)
    simulated = SimKernel(kernel, index, name, Scratchpad(target.lx_usable_bytes), 0.0, target)
    with np.errstate(all="ignore"):  # random inputs: an rsqrt of a negative is NaN on both sides
        expected = simulated.run(inputs)
    arrays = {f"in{i}": buffer for i, buffer in enumerate(inputs)}
    for j, value_type in enumerate(kernel.outputs.types):
        layout, _, dtype = tensor_layout(value_type)
        arrays[f"out{j}"] = np.zeros(tuple(layout.device_size), dtype)
    with np.errstate(all="ignore"):
        outputs, report = ktdp.run(text, name, arrays, target=target)
    equal, difference = True, 0.0
    for j, (value_type, want) in enumerate(zip(kernel.outputs.types, expected, strict=True)):
        assert isinstance(value_type, TensorType)
        got_host, want_host = to_host(outputs[f"out{j}"], value_type), to_host(want, value_type)
        equal &= bool(np.array_equal(got_host, want_host, equal_nan=True))
        both = np.isfinite(got_host) & np.isfinite(want_host) if got_host.dtype.kind == "f" else True
        gap = np.abs(got_host.astype(np.float64)[both] - want_host.astype(np.float64)[both])
        difference = max(difference, float(gap.max(initial=0.0)))
    return KernelRoundTrip(
        name,
        equal=equal,
        max_abs_difference=difference,
        ktir_cycles=simulated.report().cycles,
        ktdp_cycles=report.kernels[0].cycles,
    )


def roundtrip_module(module: ModuleOp, seed: int = 0, target: Target = SPYRE) -> list[KernelRoundTrip]:
    """Every kernel of a core-level module, in program order."""
    rng = np.random.default_rng(seed)
    return [
        roundtrip_kernel(kernel, index, name, rng, target)
        for index, (name, kernel) in enumerate(kernel_names(module))
    ]


def main(argv: list[str] | None = None) -> int:
    """Print each kernel's round trip and a summary; 1 for unreadable input."""
    parser = ArgumentParser(prog="ktdp-roundtrip", description=__doc__.split("\n\n")[0])
    parser.add_argument("program", type=Path, help="core-level ktir (after ktir-lower-to-cores)")
    args = parser.parse_args(argv)
    try:
        text = args.program.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        print(f"error: cannot read '{args.program}': {error}", file=sys.stderr)
        return 1
    try:
        module = parse_module(make_context(), text, str(args.program))
    except DiagnosticError as error:
        for diagnostic in error.diagnostics:
            print(render(diagnostic, {str(args.program): text}), file=sys.stderr)
        return 1
    results = roundtrip_module(module)
    for r in results:
        if r.skipped:
            print(f"{r.name}: not written: {r.skipped}")
        else:
            print(
                f"{r.name}: {'equal' if r.equal else f'differs (max {r.max_abs_difference:.3g})'}, "
                f"cycles ktir {r.ktir_cycles:,.0f} ktdp {r.ktdp_cycles:,.0f}"
            )
    written = [r for r in results if not r.skipped]
    print(
        f"{len(written)} of {len(results)} kernels written, "
        f"{sum(r.equal for r in written)} with equal outputs, "
        f"{sum(r.same_cycles for r in written)} with ktir's cycles"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
