"""
Compiled programs on disk, without pickle: `Program.save(directory)` and `ktir.load(directory)`.

A saved program is a directory of three files:

- `program.mlir`: the core-level ktir (`ktir.kernel` ops), as `ktir-opt` prints it;
- `parameters.npz`: the model's state (parameters, buffers, constants) packed in the device
  layouts the compiler chose, one array per state argument, by argument name;
- `program.json`: `{"format": "ktir-program", "version": 1, ...}` with the target's fields, the
  argument names and how many are user inputs, and the output tensors (shape, dtype and which
  function result each is), plus the output structure as torch's pytree JSON when it has one.

```python
prog = ktir.compile(model, (x,))
prog.save("saved/model")
again = ktir.load("saved/model")    # parses and verifies it, checks its parameters and target
y = again(x)                        # the same outputs and report as prog(x)
```

The loaded program returns what the model returned when the output structure is one torch's
pytree can write as JSON (a tensor, tuples, lists, dicts of tensors); otherwise (a Hugging Face
`ModelOutput`, a dataclass, constants among the outputs) a tuple of the output tensors, in
order. Without torch installed, it takes and returns NumPy arrays.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ktir.dialects.ktir import core
from ktir.hardware.target import Target, target_from_fields
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, module_text, parse_module, verify_module
from ktir.ir.values import element_type_of, shape_of, tensor_layout
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.executor import argument_names, entry_function
from ktir.sim import Report, simulate

FORMAT = "ktir-program"
VERSION = 1
FILES = ("program.mlir", "parameters.npz", "program.json")
"""The files of a saved program."""


class SavedProgramError(ValueError):
    """A directory that is not a saved program `load` can read; the message says what is wrong."""


def save(
    module: ModuleOp, imported: Any, target: Target, packed: dict[int, np.ndarray], directory: str | Path
) -> None:
    """
    Write a compiled program to `directory` (created; its files replaced): its core-level
    `module`, its import (`ktir.frontend.fx.FxImport`: argument and output descriptions), its
    `target` and its state `packed` by argument index (`ktir.sim.pack_arguments`).
    """
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    names = argument_names(entry_function(module, None))
    text = module_text(module)
    description = {
        "format": FORMAT,
        "version": VERSION,
        "target": dataclasses.asdict(target),
        "input_names": names,
        "user_inputs": imported.user_input_count,
        "outputs": [
            {"shape": list(s.shape), "dtype": str(s.dtype).removeprefix("torch."), "result": s.result}
            for s in imported.outputs
        ],
        "structure": _structure(imported.output_tree),
    }
    (path / "program.mlir").write_text(text, encoding="utf-8")
    with open(path / "parameters.npz", "wb") as f:
        np.savez(f, **{names[i]: array for i, array in packed.items()})  # pyright: ignore[reportArgumentType]  # NumPy's stubs: a key could be allow_pickle
    (path / "program.json").write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")


def _structure(tree: Any) -> str | None:
    """The output structure as torch's pytree JSON, or None when it cannot be written so."""
    if tree is None or any(type(leaf).__name__ != "_Tensor" for leaf in tree.leaves):
        return None
    try:
        from torch.utils import _pytree as pytree

        return pytree.treespec_dumps(tree.spec)
    except Exception:  # a type pytree cannot serialize (e.g. a ModelOutput): outputs as a tuple
        return None


class SavedProgram:
    """
    A program read back by `load`: call it like the compiled one (the user inputs only); its
    state, packed, stays in device memory (the first call's report shows its transfer as
    `load_bytes`, like a compiled program's). `report` is the last call's report.
    """

    def __init__(self, module: ModuleOp, description: dict[str, Any], state: dict[int, np.ndarray]) -> None:
        self.module = module
        self.description = description
        self.target = target_from_fields(description["target"], "the saved program's target")
        self.user_inputs = int(description["user_inputs"])
        self._resident = state
        self._report: Report | None = None
        # The state is resident; its host-side inputs are only shape-checked by `simulate`, so
        # zero-stride views stand for them without allocating the parameters again.
        args = entry_function(module, None).body.block.args[self.user_inputs :]
        self._state_views = [
            np.broadcast_to(np.zeros((), numpy_dtype(element_type_of(a))), shape_of(a)) for a in args
        ]
        # The first call transfers the packed state host -> device, as a compiled program's does.
        self._pending_load_bytes = float(sum(a.nbytes for a in state.values()))

    @property
    def report(self) -> Report:
        """The simulator's report of the last call."""
        if self._report is None:
            raise RuntimeError("the program has not run yet: call it first")
        return self._report

    def __call__(self, *args: Any) -> Any:
        if len(args) != self.user_inputs:
            raise ValueError(f"expected {self.user_inputs} input(s), got {len(args)}")
        inputs = [_array(a) for a in args] + self._state_views
        result = simulate(
            self.module,
            inputs,
            target=self.target,
            resident=self._resident,
            load_bytes=self._pending_load_bytes,
        )
        self._pending_load_bytes = 0.0
        self._report = result.report
        return self._outputs(result.outputs)

    def _outputs(self, results: Sequence[np.ndarray]) -> Any:
        try:
            import torch
        except ImportError:
            return tuple(results)
        tensors = [_tensor(torch, slot, results) for slot in self.description["outputs"]]
        structure = self.description.get("structure")
        if structure is None:
            return tuple(tensors)
        from torch.utils import _pytree as pytree

        return pytree.tree_unflatten(tensors, pytree.treespec_loads(structure))


def _array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _tensor(torch: Any, slot: dict[str, Any], results: Sequence[np.ndarray]) -> Any:
    dtype = getattr(torch, slot["dtype"])
    shape = tuple(slot["shape"])
    if slot["result"] is None:
        return torch.empty(shape, dtype=dtype)
    array = np.ascontiguousarray(results[slot["result"]])
    return torch.from_numpy(array).reshape(shape).to(dtype)


def load(directory: str | Path) -> SavedProgram:
    """
    Read a program `save` wrote. A `SavedProgramError` (or, for IR that does not parse or
    verify, a located `DiagnosticError`) when the directory is not one: a missing file, a
    description that is not this format, a target with unusable fields or fewer cores than a
    kernel uses, parameters missing or not of their argument's device shape and dtype.
    """
    path = Path(directory)
    missing = [name for name in FILES if not (path / name).is_file()]
    if missing:
        raise SavedProgramError(f"'{path}' is not a saved ktir program: no {', '.join(missing)}")
    description = _description(path / "program.json")
    text = (path / "program.mlir").read_text(encoding="utf-8")
    module = parse_module(make_context(), text, str(path / "program.mlir"))
    if errors := verify_module(module):
        raise DiagnosticError(errors)
    _check_cores(module, target_from_fields(description["target"], str(path)), path)
    return SavedProgram(module, description, _state(path / "parameters.npz", module, description))


def _description(path: Path) -> dict[str, Any]:
    """`program.json`, checked: the format, its fields' kinds, a usable target."""
    try:
        description = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SavedProgramError(f"{path}: not JSON: {error}") from None
    if not isinstance(description, dict) or description.get("format") != FORMAT:
        raise SavedProgramError(f"{path}: not a {FORMAT} version {VERSION} description")
    if description.get("version") != VERSION:
        raise SavedProgramError(f"{path}: not a {FORMAT} version {VERSION} description")
    names, users, outputs = (description.get(k) for k in ("input_names", "user_inputs", "outputs"))
    if not (isinstance(names, list) and isinstance(users, int) and 0 <= users <= len(names)):
        raise SavedProgramError(f"{path}: 'input_names' and 'user_inputs' do not describe the arguments")
    if not isinstance(outputs, list) or not all(isinstance(o, dict) for o in outputs):
        raise SavedProgramError(f"{path}: 'outputs' must be a list of output descriptions")
    try:
        target_from_fields(description.get("target"), f"{path}")
    except (TypeError, ValueError) as error:
        raise SavedProgramError(str(error)) from None
    return description


def _check_cores(module: ModuleOp, target: Target, path: Path) -> None:
    """Every kernel fits the saved target (no more cores than it has)."""
    for op in module.walk():
        if isinstance(op, core.KernelOp) and (cores := op.cores.value.data) > target.cores:
            name = target.name
            raise SavedProgramError(
                f"{path}: a kernel uses {cores} cores, the target '{name}' has {target.cores}"
            )


def _state(path: Path, module: ModuleOp, description: dict[str, Any]) -> dict[int, np.ndarray]:
    """The packed parameters, each checked against its argument's device shape and dtype."""
    names = description["input_names"]
    args = entry_function(module, None).body.block.args
    if len(args) != len(names):
        raise SavedProgramError(
            f"{path.parent / 'program.json'}: {len(names)} argument names for {len(args)} arguments"
        )
    try:
        with np.load(path) as stored:
            state = {}
            for i in range(description["user_inputs"], len(names)):
                if names[i] not in stored:
                    raise SavedProgramError(f"{path} has no array for {names[i]}")
                state[i] = stored[names[i]]
    except (OSError, ValueError) as error:
        raise SavedProgramError(f"{path}: cannot read the parameters: {error}") from None
    for i, array in state.items():
        layout, _, dtype = tensor_layout(args[i].type)
        expected = (tuple(layout.device_size), np.dtype(dtype))
        if (array.shape, array.dtype) != expected:
            raise SavedProgramError(
                f"{path}: '{names[i]}' is {array.dtype} {list(array.shape)}, its device layout needs "
                f"{expected[1]} {list(expected[0])}"
            )
    return state


__all__ = ["FILES", "SavedProgram", "SavedProgramError", "load", "save"]
