"""
Running a `ktdp` function on the simulated chip: every compute tile of the grid at once.

`TileProgram(function, grid, memory, target).run(arguments)` interprets the function body once,
with every SSA value batched over the grid's tiles (leading dim = tiles): an index is a vector
of per-tile values, a tensor an array (tiles, *shape). Each op runs as one NumPy call for all
tiles, so the cost is per op, not per element or per tile; an `scf.for` runs its body once per
iteration, its trip count per tile (a tile past its last iteration runs masked: the lock-step
core's `scf.for`, `ktir.ir.lockstep`, with this engine's hooks).

Numerics: values are stored in their element type and every op computes in float32 (float64 for
f32 and wider) and rounds once to its result type, as ktir's own simulator does. A reduction or
matmul into an uninitialised `tensor.empty` starts from its combiner's identity (the emitter's
convention); `linalg.fill` sets a start value.

Time, on the same chip model as ktir's own programs (`ktir.hardware.cost_model`), each op's
charges placed on per-tile queues as ktir's kernels are (`ktir.ktdp_engine.schedule`: loads overlap
compute and stores where the tensors allow):
- `ktdp.load` / `ktdp.store` of device memory: a DMA setup plus the chip-wide traffic, each
  tile moving every 128-byte stick its elements touch (`dma_cycles`); of a scratchpad view, an
  LX copy (`lx_copy_cycles`);
- `linalg.matmul` on the PE arrays (`pt_cycles`);
- elementwise ops, in whole sticks, at the SFU's pass rate (two passes for exp, log, sqrt,
  rsqrt, tanh and division), and reductions at its reduction rate;
- a `func.call` of a `ktir.routine` function as ktir times that graph op (`ktir.ktdp_engine.calls`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Operation, SSAValue

from ktir.dialects.ktdp import comm as ktdp_comm
from ktir.hardware import cost_model
from ktir.hardware.target import Target
from ktir.ir.diagnostics import location_of
from ktir.ir.interpreter import Implementations
from ktir.ir.lockstep import DIVIDING, Lockstep
from ktir.ktdp_engine import calls, comm, compute, control, intrinsics, transfers
from ktir.ktdp_engine.charges import Charges
from ktir.ktdp_engine.memory import DeviceMemory, KtdpError
from ktir.ktdp_engine.patterns import kernel_bandwidth
from ktir.ktdp_engine.schedule import Schedule
from ktir.ktdp_engine.tiles import Tile, TileError, View
from ktir.sim.timeline import UNITS

MAX_ITERATIONS = 1_000_000
"""Loop iterations a run may interpret in all (each runs every tile at once): a bound, not a hang."""

Handler = Callable[["TileProgram", Any], Any]
"""An op's interpretation: (program, op) -> its results' values, or None."""


class TileProgram(Lockstep):
    """
    One ktdp function on every tile of a grid (module docstring).

    Its ops' implementations are its modules' tables (`ktir.ir.interpreter`) over the lock-step
    core's `arith` and `scf` (`ktir.ir.lockstep`), whose hooks it overrides: masked tiles
    (`active`), loop bounds, index operands and results, the iteration budget, buffer aliases.
    """

    IMPLS = Implementations.compose(
        transfers.IMPLS, compute.IMPLS, intrinsics.IMPLS, control.IMPLS, comm.IMPLS, calls.IMPLS
    )
    TERMINATORS = (
        scf.YieldOp,
        LinalgYieldOp,
        ktdp_comm.YieldPartialOp,
        ktdp_comm.YieldReducedOp,
        func.ReturnOp,
    )

    def __init__(
        self,
        function: func.FuncOp,
        grid: Sequence[int],
        memory: DeviceMemory,
        target: Target,
        buffers: int = 1,
    ) -> None:
        super().__init__(math.prod(grid))
        self.function = function
        self.grid = list(grid)
        self.tiles = self.units
        self.memory = memory
        self.target = target
        self.empty: set[SSAValue] = set()
        self.charges = Charges(self.tiles)
        self.charges.pattern = kernel_bandwidth(function, self.tiles, target)
        self.schedule = Schedule(self.tiles, buffers, cost_model.turnaround_cycles_per_byte(target))
        self.space: list[int] = []  # the iteration space of the linalg.generic running (linalg.index)
        self.iterations = 0
        self.stack: list[func.FuncOp] = []  # the functions running (`ktir.ktdp_engine.calls`)

    def run(self, arguments: Sequence[np.ndarray]) -> None:
        """Bind each argument (a per-tile vector) and run the body."""
        self.call(self.function, arguments)

    def call(self, function: func.FuncOp, arguments: Sequence[Any]) -> list[Any]:
        """Run `function`'s body on `arguments` (batched over tiles); the values it returns."""
        for arg, value in zip(function.body.block.args, arguments, strict=True):
            self.env[arg] = value
        self.stack.append(function)
        try:
            return self.run_block(function.body.block.ops)
        finally:
            self.stack.pop()

    def run_op(self, op: Operation) -> None:
        """Run one op and place its charges; an error it raises is located at the op."""
        try:
            super().run_op(op)
            if not isinstance(op, _SCHEDULED_BY_HANDLER):
                self.place(op)
        except (TileError, ValueError, TypeError, IndexError, OverflowError, FloatingPointError) as error:
            if isinstance(error, KtdpError) and error.location is not None:
                raise
            raise KtdpError(f"'{op.name}': {error}", location_of(op)) from None
        except MemoryError:
            raise KtdpError(
                f"'{op.name}': its values need more memory than there is", location_of(op)
            ) from None

    def unsupported(self, op: Operation) -> Exception:
        """The error for an op the engine has no implementation of."""
        return KtdpError(f"'{op.name}' is not supported by the ktdp engine", location_of(op))

    # -- the lock-step core's hooks (`ktir.ir.lockstep`) -----------------------------------------

    @property
    def active(self) -> np.ndarray | None:
        """The tiles running now (a loop past some tiles' last iteration, a branch), None if all."""
        return self.charges.active

    @active.setter
    def active(self, mask: np.ndarray | None) -> None:
        self.charges.active = mask

    def loop_bounds(self, op: scf.ForOp) -> tuple[Any, Any, Any]:
        """
        Per tile, as `addressed`: a masked-off tile takes a running tile's bounds. Bounds may
        differ between tiles (a Triton-style `for row = pid to n step grid`): the lock-step core
        runs the loop to the longest trip count, a tile past its last iteration masked.

        Example: rows `pid to 1151 step 32` on 32 tiles: 36 iterations; tile 31 runs rows 31 to
        1119 (35) and is masked in the 36th, while tiles 0 to 30 run rows 1120 to 1150.
        """
        lower, upper, step = (self.addressed(self.env[v]) for v in (op.lb, op.ub, op.step))
        if (step <= 0).any():
            raise KtdpError("an scf.for step must be positive", location_of(op))
        return lower, upper, step

    def index_operands(self, op: Operation) -> tuple[Any, Any]:
        """
        The operands as arrays; a division's divisor checked on the running tiles only: a
        masked-off tile (past its last loop iteration) divides by 1, since its result is never used.
        """
        a, b = (np.asarray(self.env[v]) for v in op.operands)
        if not isinstance(op, DIVIDING):
            return a, b
        active = self.charges.active
        if active is not None and b.ndim > 0 and b.shape[0] == self.tiles:
            b = np.where(active.reshape(-1, *[1] * (b.ndim - 1)), b, 1)
        if (b == 0).any():
            raise KtdpError(f"'{op.name}' divides by zero", location_of(op))
        return a, b

    def index_value(self, value: Any) -> Any:
        """Index values are int64 (an `i32` operand's too)."""
        return value.astype(np.int64)

    def alias(self, values: Sequence[SSAValue], sources: Sequence[SSAValue]) -> None:
        """The schedule's buffers of `values` are those of `sources` (a carried or yielded value)."""
        self.schedule.alias(values, sources)

    def count_iterations(self, op: Operation, iterations: int) -> None:
        """Charge `iterations` of a loop to the run's budget (`MAX_ITERATIONS`: no run hangs)."""
        self.iterations += iterations
        if self.iterations > MAX_ITERATIONS:
            raise KtdpError(
                f"the program runs more than {MAX_ITERATIONS:,} loop iterations; the engine stops here",
                location_of(op),
            )

    def place(self, op: Operation) -> None:
        """Put the op's charges on the timeline (inside a fused payload, they are the call's)."""
        if not self.schedule.collecting:
            self.schedule.issue(op, self.charges.take())

    def per_tile(self, value: Any) -> np.ndarray:
        """An index value as a vector over tiles."""
        return np.broadcast_to(np.asarray(value, dtype=np.int64), (self.tiles,))

    def addressed(self, value: Any) -> np.ndarray:
        """
        An index per tile that an address, a bound or a subscript is made of: a masked-off
        tile (past its last loop iteration) takes the first running tile's, so that its
        accesses, which are not performed, stay inside the views.
        """
        values = self.per_tile(value)
        active = self.charges.active
        if active is None:
            return values
        return np.where(active, values, values[np.argmax(active)])

    def addressed_view(self, view: Any) -> Any:
        """
        A memory view as `addressed` sees it: a masked-off tile takes the first running tile's
        offset, sizes, strides and set, so that the access it does not perform is checked and
        read where a running tile's is (its own view may be smaller, or elsewhere).
        """
        if self.charges.active is None or not isinstance(view, View):
            return view
        covers = view.covers
        if covers is not None:
            first = int(np.argmax(self.charges.active))
            live = self.charges.active[:, None]
            covers = (
                np.where(live, covers[0], covers[0][first]),
                np.where(live, covers[1], covers[1][first]),
            )
        return replace(
            view,
            offset=self.addressed(view.offset),
            sizes=[self.addressed(n) for n in view.sizes],
            strides=[self.addressed(n) for n in view.strides],
            covers=covers,
        )

    def uniform(self, value: SSAValue, what: str) -> int:
        """An index that must be the same on every active tile (a slice bound)."""
        values = self.per_tile(self.env[value])
        if self.charges.active is not None:
            values = values[self.charges.active]
        if (values != values[0]).any():
            # A block argument (a loop's variable) is located at the op whose body defines it.
            op = value.owner if isinstance(value.owner, Operation) else value.owner.parent_op()
            location = None if op is None else location_of(op)
            raise KtdpError(f"{what} differs between compute tiles: not supported", location)
        return int(values[0])


_SCHEDULED_BY_HANDLER = (scf.ForOp, scf.IfOp, func.CallOp)
"""Ops whose handler places their time and their results' buffers itself (their bodies' ops)."""


__all__ = ["MAX_ITERATIONS", "UNITS", "Charges", "Handler", "Tile", "TileProgram", "View"]
