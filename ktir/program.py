"""
Compiled programs at run time: a `Program` holds a model's core-level ktir and its state in
device memory and runs calls on the simulated chip; a `ShardedProgram` runs one over several
cards. `ktir.compile` builds them (`ktir.compiler`); `ktir.load` reads a saved one (`ktir.saved`).

```python
import ktir
program = ktir.compile(model, (x,))
y = program(x)                      # on the simulated chip; program.report has the cycles
```
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from ktir.hardware.target import Target
from ktir.ir.state import updated_arguments
from ktir.ir.values import is_tensor, tensor_layout
from ktir.reference.blas import one_blas_thread
from ktir.reference.collective import CardGroup
from ktir.reference.executor import entry_function
from ktir.sim import Report, SimResult, pack_arguments, simulate
from ktir.sim import estimate as estimate_module


class Program:
    """
    A compiled model: core-level ktir for every op, run on the simulated chip.

    `program(*args)` runs the cores' programs on `ktir.sim` and returns what the model returns
    (the same structure of torch tensors, with the model's shapes and dtypes);
    `program.report` is the cycle report of the last call; `program.module` is the core-level IR.

    The model's state (parameters, buffers, constant tensors) lives in device memory: `load()`
    packs it once into the layouts the compiler chose for it and transfers it to the device, and
    every call reuses it. The first call loads if `load()` was not called; that call's report
    shows the transfer as `load_bytes` / `load_us`, apart from kernel time, and later calls
    show none. `loads` counts the transfers.
    """

    def __init__(self, module: ModuleOp, imported: Any, target: Target) -> None:
        self.module = module
        self.imported = imported
        self.target = target
        self.loads = 0
        self._report: Report | None = None
        self._resident: dict[int, Any] | None = None
        self._pending_load_bytes = 0.0
        self._state_key: list[tuple[int, Any]] | None = None

    @property
    def report(self) -> Report:
        """The simulator's report of the last call (cycles, per kernel and op, roofline, per core)."""
        if self._report is None:
            raise RuntimeError("the program has not run yet: call it first, e.g. prog(*example_args)")
        return self._report

    def bind_state(self, tensors: Sequence[Any]) -> None:
        """
        Use `tensors` (in argument order) as the model's state from now on. The same tensor
        objects, unmodified since they were packed, stay resident; anything else is loaded again
        on the next call. The `torch.compile` backend binds the module's live parameters so.
        """
        names = self.imported.input_names[self.imported.user_input_count :]
        if len(tensors) != len(names):
            raise ValueError(f"expected {len(names)} state tensor(s), got {len(tensors)}")
        key = [(id(t), getattr(t, "_version", None)) for t in tensors]
        if key == self._state_key:
            return
        self.imported.state.update(zip(names, tensors, strict=True))
        self._state_key = key
        self._resident = None

    def load(self) -> None:
        """Pack the model's state into device memory (once; a second call does nothing)."""
        if self._resident is not None:
            return
        self._resident = pack_arguments(self.module, self.imported.state_arrays())
        self._pending_load_bytes = float(sum(buffer.nbytes for buffer in self._resident.values()))
        self.loads += 1

    def save(self, directory: str | Path) -> None:
        """
        Write the program to `directory` without pickle (`ktir.saved`): the core-level MLIR,
        an `.npz` of the packed parameters and a JSON description; `ktir.load` reads it back.
        """
        from ktir.saved import save

        self.load()  # the state, packed
        assert self._resident is not None
        save(self.module, self.imported, self.target, self._resident, directory)

    def estimate(self) -> Report:
        """
        The report a call would give, without values (`ktir.sim.estimate`): the same cycles,
        and, like the first call, the one-time load of the state (unless it is resident). The
        state may be on PyTorch's `meta` device. Does not change `report`.
        """
        load_bytes = self.state_device_bytes() if self._resident is None else 0.0
        return estimate_module(self.module, target=self.target, load_bytes=load_bytes)

    def state_device_bytes(self) -> float:
        """Bytes of the model's state (parameters, buffers, constants) in their device layouts."""
        args = entry_function(self.module, None).body.block.args[self.imported.user_input_count :]
        return float(sum(tensor_layout(a.type)[0].device_bytes for a in args if is_tensor(a)))

    def __call__(self, *args: Any) -> Any:
        self.load()
        result = simulate(
            self.module,
            self.imported.arguments(*args),
            target=self.target,
            resident=self._resident,
            load_bytes=self._pending_load_bytes,
        )
        self._pending_load_bytes = 0.0
        self._report = result.report
        self._write_back(result)
        return self.imported.restore(result.outputs)

    def hand_state_to(self, other: Program) -> None:
        """
        Give `other` (compiled from the same model) this program's device copy of the state
        both update in place, a KV cache: one device memory, two programs. Loads both first.
        Raises `ValueError` if `other` lays that state out differently.
        """
        self.load()
        other.load()
        assert self._resident is not None and other._resident is not None
        ours, theirs = entry_function(self.module, None), entry_function(other.module, None)
        positions = {name: i for i, name in enumerate(other.imported.input_names)}
        for index in updated_arguments(ours):
            name = self.imported.input_names[index]
            if (position := positions.get(name)) is None:
                continue
            mine, its = ours.body.block.args[index].type, theirs.body.block.args[position].type
            if mine != its:
                raise ValueError(f"state '{name}' has another layout in the other program: {mine} vs {its}")
            other._resident[position] = self._resident[index]

    def _write_back(self, result: SimResult) -> None:
        """State updated in place (a KV cache) keeps its new value in device memory."""
        assert self._resident is not None
        function = entry_function(self.module, None)
        for arg_index, result_index in updated_arguments(function).items():
            # The verifier holds the result to the argument's type, layout included.
            self._resident[arg_index] = result.device_outputs[result_index]


class ShardedProgram:
    """
    A model split over `cards` cards by tensor parallelism (`compile(..., cards=N)`): one
    compiled shard program, run by every card on its own share of the weights
    (`ktir.frontend.tensor_parallel`), the cards exchanging values at its collectives.

    `program(*args)` runs every card's shard on `ktir.sim` at once (a `CardGroup`, one thread per
    card) and returns card 0's outputs (every card ends with the same ones); `report` is card 0's:
    one shard's time plus its collectives' (`report.collectives`, `report.collective_cycles`),
    which is each card's time, as the cards run in step. `programs` are the cards' `Program`s,
    sharing `module`.
    """

    def __init__(self, programs: list[Program]) -> None:
        self.programs = programs
        self.cards = len(programs)
        self.module = programs[0].module
        self.target = programs[0].target

    @property
    def report(self) -> Report:
        """Card 0's report of the last call: one shard and its collectives."""
        return self.programs[0].report

    def load(self) -> None:
        """Pack every card's state into its device memory (once)."""
        for program in self.programs:
            program.load()

    def estimate(self) -> Report:
        """One card's report without values (`Program.estimate`): every card's is the same."""
        return self.programs[0].estimate()

    def __call__(self, *args: Any) -> Any:
        # One BLAS limit around all cards: each card's own enter and exit then leave it at 1.
        with one_blas_thread():
            outputs = CardGroup(self.cards).run(lambda rank: self.programs[rank](*args))
        return outputs[0]
