"""
The emission round trip: every kernel of a core-level module converted to `ktdp`
(`ktir.export.to_ktdp`), printed, re-read, run by ktir's `ktdp` engine, and compared with
ktir's own simulation of the kernel on the same device buffers.

For each kernel the inputs are seeded random host tensors (`ktir-run`'s `random_input`) packed
into their device layouts; ktir's simulator runs the kernel (`SimKernel`) and
the `ktdp` engine runs the emitted function on the same device buffers, each output starting as
zeros. `KernelRoundTrip` holds whether the host outputs are equal bit for bit (NaNs equal) and
what both runs charge the kernel (`ACCOUNTS`: cycles, bytes moved, compulsory bytes, FLOPs and
matmul FLOPs), which agree when both engines charge by the one set of rules
(`ktir.hardware.accounting`) what the emitted program states ktir's kernel does.

```
python -m tools.ktdp_roundtrip PROGRAM.mlir       # core-level IR, e.g. ktir-opt -p ktir-compile
```
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

import ktir.ktdp_engine as ktdp
from ktir.dialects.ktir import core
from ktir.export.to_ktdp import emit_kernel, kernel_names
from ktir.hardware.target import SPYRE, Target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, module_text, parse_module, render
from ktir.ir.values import tensor_layout
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.blas import one_blas_thread
from ktir.sim.engine import SimKernel
from ktir.sim.executor import device_buffer, host_array
from ktir.sim.memory import LxBuffer, Scratchpad
from ktir.sim.report import KernelReport
from ktir.tools.arguments import ArgumentParser
from ktir.tools.sim_run import random_input

ACCOUNTS = ("cycles", "bytes", "compulsory_bytes", "flops", "matmul_flops")
"""What both engines charge a kernel and the round trip compares (`KernelReport` fields)."""


def accounts(line: KernelReport) -> dict[str, float]:
    """A kernel's line of a report as its `ACCOUNTS`."""
    return {account: float(getattr(line, account)) for account in ACCOUNTS}


@dataclass(frozen=True)
class KernelRoundTrip:
    """
    One kernel's round trip: its function name, why it was not written (or None), whether the
    outputs are equal, and the `ACCOUNTS` of ktir's simulation (`ktir`) and the ktdp run (`ktdp`).
    """

    name: str
    skipped: str | None = None
    equal: bool = False
    max_abs_difference: float = 0.0
    ktir: dict[str, float] = field(default_factory=dict)
    ktdp: dict[str, float] = field(default_factory=dict)

    @property
    def ktir_cycles(self) -> float:
        """The kernel's cycles in ktir's simulator."""
        return self.ktir.get("cycles", 0.0)

    @property
    def ktdp_cycles(self) -> float:
        """The emitted function's cycles in the ktdp engine."""
        return self.ktdp.get("cycles", 0.0)

    def same(self, account: str) -> bool:
        """Both engines charge the kernel the same `account` (to a relative 1e-9: summed in another order)."""
        want, got = self.ktir.get(account, 0.0), self.ktdp.get(account, 0.0)
        return abs(got - want) <= 1e-9 * abs(want)

    @property
    def same_cycles(self) -> bool:
        """Both engines give the kernel the same time."""
        return self.same("cycles")

    @property
    def differing(self) -> list[str]:
        """The `ACCOUNTS` the engines charge differently (none: the same accounting)."""
        return [account for account in ACCOUNTS if not self.same(account)]


def _inputs(kernel: core.KernelOp, rng: np.random.Generator) -> list[np.ndarray]:
    return [device_buffer(random_input(t, rng), t) for t in cast("Sequence[TensorType]", kernel.inputs.types)]


def roundtrip_kernel(
    kernel: core.KernelOp, index: int, name: str, rng: np.random.Generator, target: Target = SPYRE
) -> KernelRoundTrip:
    """Emit, print, re-read and run one kernel against ktir's simulation of it (module docstring)."""
    try:
        text = module_text(emit_kernel(kernel, name))
    except DiagnosticError as error:
        return KernelRoundTrip(name, skipped=error.diagnostics[0].message)
    inputs = _inputs(kernel, rng)
    scratchpad = Scratchpad(target.lx_usable_bytes)
    residents = _residents(kernel, scratchpad, rng)
    simulated = SimKernel(kernel, index, name, scratchpad, 0.0, target)
    # One BLAS thread, as ktir's machine runs a program (`ktir.sim.machine`) and the ktdp engine
    # runs a function: a GEMM's bits depend on how many threads share it.
    with np.errstate(all="ignore"), one_blas_thread():  # random inputs: an rsqrt of a negative is NaN
        expected = simulated.run(inputs)
    arrays = {f"in{i}": buffer for i, buffer in enumerate(inputs)}
    for j, value_type in enumerate(kernel.outputs.types):
        layout, _, dtype = tensor_layout(value_type)
        arrays[f"out{j}"] = np.zeros(tuple(layout.device_size), dtype)
    place = {}
    for resident in residents:
        for core_index in range(kernel.cores.value.data):
            arrays[resident.name(core_index)] = resident.before[core_index]
            place[resident.name(core_index)] = (resident.address // resident.before.itemsize, core_index)
    try:
        with np.errstate(all="ignore"):
            outputs, report = ktdp.run(text, name, arrays, place=place, target=target)
    except (DiagnosticError, ktdp.KtdpError) as error:  # written, but not a program the engine runs
        return KernelRoundTrip(name, skipped=f"the ktdp engine: {str(error).strip().splitlines()[0]}")
    equal, difference = True, 0.0
    pairs = [
        (host_array(outputs[f"out{j}"], value_type), host_array(want, value_type))
        for j, (value_type, want) in enumerate(zip(kernel.outputs.types, expected, strict=True))
        if isinstance(value_type, TensorType) and not resident_result(kernel)
    ]
    pairs += [
        (outputs[r.name(c)], r.buffer.data[c]) for r in residents for c in range(kernel.cores.value.data)
    ]
    for got, want in pairs:
        equal &= bool(np.array_equal(got, want, equal_nan=True))
        both = np.isfinite(got) & np.isfinite(want) if got.dtype.kind == "f" else True
        gap = np.abs(got.astype(np.float64)[both] - want.astype(np.float64)[both])
        difference = max(difference, float(gap.max(initial=0.0)))
    return KernelRoundTrip(
        name,
        equal=equal,
        max_abs_difference=difference,
        ktir=accounts(simulated.report()),
        ktdp=accounts(report.kernels[0]),
    )


@dataclass
class _Resident:
    """A resident LX tensor a kernel reads or writes: its address, ktir's buffer, its start."""

    address: int
    buffer: LxBuffer
    before: np.ndarray
    """Each core's slot before the kernel (cores, slots, *tile): random if it reads it, else zeros."""

    def name(self, core_index: int) -> str:
        """The ktdp engine's array of one core's copy (placed at the address in that core's LX)."""
        return f"lx{self.address}_core{core_index}"


def _residents(kernel: core.KernelOp, scratchpad: Scratchpad, rng: np.random.Generator) -> list[_Resident]:
    """
    The resident LX tensors of a kernel, allocated in `scratchpad` as ktir's machine left them:
    a tensor the kernel loads holds seeded random values (written by an earlier kernel), one it
    stores, zeros.
    """
    found = []
    for op in kernel.body.walk():
        if not isinstance(op, core.LxAllocOp) or op.resident is None:
            continue
        memref = op.result.type
        shape = (kernel.cores.value.data, *memref.get_shape())
        dtype = numpy_dtype(memref.element_type)
        loaded = any(isinstance(use.operation, core.DmaLoadOp) for use in op.result.uses)
        before = (rng.standard_normal(shape) if loaded else np.zeros(shape)).astype(dtype)
        buffer = scratchpad.allocate(op.address.value.data, op.bytes, shape, dtype, True, "round trip")
        buffer.data[...] = before
        buffer.written[...] = True
        found.append(_Resident(op.address.value.data, buffer, before))
    return found


def resident_result(kernel: core.KernelOp) -> bool:
    """Whether the kernel stores its result into a resident LX tensor, not device memory."""
    return any(
        isinstance(op, core.DmaStoreOp) and not isinstance(op.target.type, TensorType)
        for op in kernel.body.walk()
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
    assert __doc__ is not None  # the module docstring
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
        print(_line(r))
    written = [r for r in results if not r.skipped]
    print(
        f"{len(written)} of {len(results)} kernels written, "
        f"{sum(r.equal for r in written)} with equal outputs, "
        f"{sum(r.same_cycles for r in written)} with ktir's cycles, "
        f"{sum(not r.differing for r in written)} with ktir's bytes, compulsory bytes and FLOPs too"
    )
    return 0


def _line(r: KernelRoundTrip) -> str:
    """One kernel's line: its outputs, its cycles in both engines, and any account they differ on."""
    if r.skipped:
        return f"{r.name}: not written: {r.skipped}"
    line = (
        f"{r.name}: {'equal' if r.equal else f'differs (max {r.max_abs_difference:.3g})'}, "
        f"cycles ktir {r.ktir_cycles:,.0f} ktdp {r.ktdp_cycles:,.0f}"
    )
    for account in r.differing:
        if account != "cycles":
            line += f", {account.replace('_', ' ')} ktir {r.ktir[account]:,.0f} ktdp {r.ktdp[account]:,.0f}"
    return line


if __name__ == "__main__":
    sys.exit(main())
