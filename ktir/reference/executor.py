"""
The NumPy reference executor: the functional meaning of every graph-level ktir op.

`run(module, inputs)` executes one `func.func` op by op. Floating-point tensors narrower than
fp32 (f16, bf16) are computed in fp32 and rounded to their element type after every op;
the floating-point reductions accumulate in fp32 and matmul exactly (float64, rounded once, so
that any tiling of it gives the same bits); fp32 and fp64 compute in their
own precision. This is what the simulator is checked against later, so every op is one
vectorized NumPy expression (no per-element Python). `ktir.cpu_fallback` runs its ATen op
through PyTorch.

```python
outputs = ktir.reference.run(module, [x, w1, b1])     # NumPy arrays (or torch tensors) in
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ktir.dialects.ktir import structured as st
from ktir.ir.diagnostics import ExecutionError
from ktir.ir.interpreter import Implementations
from ktir.layout.dtypes import numpy_dtype
from ktir.reference.collective import COLLECTIVE
from ktir.reference.data import DATA
from ktir.reference.ops import ELEMENTWISE, Implementation
from ktir.reference.precision import to_numpy
from ktir.reference.structured import STRUCTURED

IMPLEMENTATIONS: Implementations[Implementation] = Implementations.compose(
    ELEMENTWISE, STRUCTURED, DATA, COLLECTIVE
)
"""Every graph-level op the executor runs, by op class: its modules' tables (`ktir.ir.interpreter`)."""


def run_body(
    op: st.FusedOp,
    inputs: Sequence[np.ndarray],
    run: Callable[[Operation, list[np.ndarray]], np.ndarray],
) -> np.ndarray:
    """A `ktir.fused` body: `run` on each op in order with its operands' arrays; the result."""
    body = op.body.block
    env: dict[SSAValue, np.ndarray] = dict(zip(body.args, inputs, strict=True))
    for member in op.members:
        env[member.results[0]] = run(member, [env[v] for v in member.operands])
    assert body.last_op is not None
    return env[body.last_op.operands[0]]


@IMPLEMENTATIONS.impl(st.FusedOp)
def _fused(op: Operation, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """A `ktir.fused` kernel: its ops one by one, each rounded to its own result type."""
    assert isinstance(op, st.FusedOp)
    return [run_body(op, inputs, lambda member, ins: IMPLEMENTATIONS[type(member)](member, ins)[0])]


def entry_function(module: ModuleOp, func_name: str | None) -> func.FuncOp:
    """The function to run: the one named `func_name`, or the module's only function with a body."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    if func_name is not None:
        named = [f for f in functions if f.sym_name.data == func_name]
        if not named:
            raise ExecutionError(f"no function @{func_name} with a body; the module has: {names}")
        return named[0]
    if len(functions) != 1:
        raise ExecutionError(f"expected one function with a body, found {len(functions)}: {names}")
    return functions[0]


def argument_names(function: func.FuncOp) -> list[str]:
    """Input names: the `ktir.name` argument attribute, else the SSA name, else `arg<i>`."""
    names = []
    for i, arg in enumerate(function.body.block.args):
        name = arg.name_hint or f"arg{i}"
        if function.arg_attrs is not None:
            attr = function.arg_attrs.data[i].data.get("ktir.name")
            if isinstance(attr, StringAttr):
                name = attr.data
        names.append(name)
    return names


def input_array(value: Any, expected: TensorType[Attribute], what: str) -> np.ndarray:
    """`value` as a NumPy array, checked to have exactly the argument's shape and storage dtype."""
    array = to_numpy(value)
    shape = tuple(expected.get_shape())
    if array.shape != shape:
        raise ExecutionError(f"{what} has shape {list(array.shape)}, expected {list(shape)}")
    dtype = numpy_dtype(expected.element_type)
    if array.dtype != dtype:
        raise ExecutionError(f"{what} has dtype {array.dtype}, expected {dtype} ({expected.element_type})")
    return array


def run(
    module: ModuleOp,
    inputs: Sequence[Any] | Mapping[str, Any],
    func_name: str | None = None,
) -> list[np.ndarray]:
    """
    Execute the module's function on `inputs` and return its results as NumPy arrays.

    `inputs` is a sequence in argument order, or a mapping from argument name (the `ktir.name`
    argument attribute, else the SSA name) to value. Values are NumPy arrays or torch tensors of
    exactly the argument's shape and storage dtype.
    """
    function = entry_function(module, func_name)
    block = function.body.block
    env: dict[SSAValue, np.ndarray] = dict(zip(block.args, ordered_inputs(function, inputs), strict=True))

    last_use = last_uses(block.ops)
    # Overflow to inf and 0/0 are part of IEEE semantics (e.g. sigmoid's exp(-x)); no warnings.
    with np.errstate(all="ignore"):
        return _run_block(function, block, env, last_use)


def ordered_inputs(function: func.FuncOp, inputs: Sequence[Any] | Mapping[str, Any]) -> list[np.ndarray]:
    """
    `inputs` (in argument order, or by argument name) as checked NumPy arrays in argument order.

    Raises `ExecutionError` for a missing input, a wrong count, shape or dtype.
    """
    names = argument_names(function)
    if isinstance(inputs, Mapping):
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ExecutionError(f"missing input(s): {', '.join(missing)}")
        ordered = [inputs[n] for n in names]
    else:
        ordered = list(inputs)
        if len(ordered) != len(names):
            raise ExecutionError(f"@{function.sym_name.data} takes {len(names)} input(s), got {len(ordered)}")
    arrays = []
    for arg, value, name in zip(function.body.block.args, ordered, names, strict=True):
        assert isinstance(arg.type, TensorType)
        arrays.append(input_array(value, arg.type, f"input '{name}'"))
    return arrays


def _run_block(
    function: func.FuncOp, block: Any, env: dict[SSAValue, np.ndarray], last_use: dict[int, list[SSAValue]]
) -> list[np.ndarray]:
    for index, op in enumerate(block.ops):
        if isinstance(op, func.ReturnOp):
            return [np.array(env[v]) for v in op.arguments]
        for value, result in zip(op.results, execute_op(op, [env[v] for v in op.operands]), strict=True):
            env[value] = result
        for value in last_use.get(index, ()):
            env.pop(value, None)  # free intermediates at their last use
    raise ExecutionError(f"@{function.sym_name.data} has no func.return")


def last_uses(ops: Any) -> dict[int, list[SSAValue]]:
    """Op index -> values whose last use is that op (returned values are never freed)."""
    last: dict[SSAValue, int] = {}
    for index, op in enumerate(ops):
        if isinstance(op, func.ReturnOp):
            for value in op.operands:
                last.pop(value, None)
            continue
        for value in op.operands:
            last[value] = index
    by_op: dict[int, list[SSAValue]] = {}
    for value, index in last.items():
        by_op.setdefault(index, []).append(value)
    return by_op


def execute_op(op: Operation, args: list[np.ndarray]) -> list[np.ndarray]:
    """Run one graph-level op on NumPy arrays; `ExecutionError` if it has no implementation."""
    implementation = IMPLEMENTATIONS.lookup(op)
    if implementation is None:
        raise ExecutionError(f"the reference executor has no implementation of '{op.name}'")
    results = implementation(op, args)
    for value, result in zip(op.results, results, strict=True):
        assert isinstance(value.type, TensorType)
        expected = (tuple(value.type.get_shape()), numpy_dtype(value.type.element_type))
        if (result.shape, result.dtype) != expected:
            raise ExecutionError(
                f"'{op.name}' produced {result.dtype}{list(result.shape)}, "
                f"expected {expected[1]}{list(expected[0])}"
            )
    return results


__all__ = ["ExecutionError", "execute_op", "numpy_dtype", "run"]
