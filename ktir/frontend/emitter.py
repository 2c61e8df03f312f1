"""
The state shared by the ATen converters while one FX graph is imported: the block being
built, the FX node -> SSA value map, locations, and small builders (scalars, conversions).
"""

from __future__ import annotations

import functools
import linecache
import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from xdsl.dialects.builtin import (
    BFloat16Type,
    FileLineColLoc,
    Float8E4M3FNType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ktir.dialects.ktir.elementwise import ConvertOp, FullOp
from ktir.dialects.ktir.structured import PermuteOp, ReshapeOp, int_array
from ktir.ir.diagnostics import Diagnostic, Location, Severity
from ktir.layout.dtypes import FORMATS

_ELEMENT_TYPES: dict[str, Attribute] = {
    "f16": Float16Type(),
    "bf16": BFloat16Type(),
    "f32": Float32Type(),
    "f64": Float64Type(),
    "f8E4M3FN": Float8E4M3FNType(),
    "i1": i1,
    "i8": IntegerType(8),
    "i32": IntegerType(32),
    "i64": i64,
}

TORCH_TO_ELEMENT_TYPE: dict[torch.dtype, Attribute] = {
    getattr(torch, row.torch): _ELEMENT_TYPES[row.mlir] for row in FORMATS if row.imported and row.torch
}
"""PyTorch dtype -> MLIR element type of graph-level ktir (the importable rows of `FORMATS`)."""

ELEMENT_TYPE_TO_TORCH: dict[str, torch.dtype] = {str(v): k for k, v in TORCH_TO_ELEMENT_TYPE.items()}
"""MLIR element type (as printed) -> PyTorch dtype."""

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


class UnsupportedNode(Exception):
    """A converter cannot express this node (the message says why); collected, not raised to users."""


@dataclass
class Emitter:
    """Builds the body of the imported `func.func`, one FX node at a time."""

    block: Block
    values: dict[torch.fx.Node, SSAValue | list[SSAValue]] = field(default_factory=dict)
    empty: set[torch.fx.Node] = field(default_factory=set)
    """Nodes whose tensor has no elements: they have no SSA value (see `import_exported`)."""
    location: FileLineColLoc | None = None
    node_name: str = ""

    #### Values and types ####

    def value(self, arg: Any) -> SSAValue:
        """The SSA value of an FX node argument that must be one tensor."""
        if not isinstance(arg, torch.fx.Node):
            raise UnsupportedNode(f"expected a tensor argument, got {arg!r}")
        if arg in self.empty:
            shape = list(arg.meta["val"].shape)
            raise UnsupportedNode(
                f"argument '{arg.name}' is an empty tensor (shape {shape}); only cat and the "
                "outputs accept empty tensors"
            )
        found = self.values.get(arg)
        if found is None:
            raise UnsupportedNode(f"argument '{arg.name}' has no tensor value")
        if isinstance(found, list):
            raise UnsupportedNode(f"argument '{arg.name}' is a tuple of tensors")
        return found

    def operand(
        self,
        arg: Any,
        like: SSAValue,
        element_type: Attribute | None = None,
        scalar_type: Attribute | None = None,
    ) -> SSAValue:
        """
        A tensor argument converted to `element_type`, or a Python number as a size-1 constant
        of `scalar_type` (default: `element_type`; arithmetic passes f32 for f16/bf16 so the
        scalar keeps PyTorch's compute precision).
        """
        target = element_type or tensor_type(like).element_type
        if isinstance(arg, torch.fx.Node):
            return self.convert(self.value(arg), target)
        if isinstance(arg, bool | int | float):
            return self.scalar(arg, scalar_type or target, rank=min(len(tensor_type(like).get_shape()), 1))
        raise UnsupportedNode(f"unsupported operand {arg!r}")

    #### Builders ####

    def emit(self, op: Operation, name: str | None = None) -> Operation:
        """Append `op` with the current node's location and name its results after the node."""
        if self.location is not None:
            op.location = self.location
        self.block.add_op(op)
        hint = _name_hint(name or self.node_name)
        if hint is not None:
            for result in op.results:
                result.name_hint = hint
        return op

    def scalar(self, value: float | int | bool, element_type: Attribute, rank: int = 1) -> SSAValue:
        """
        A `ktir.full` constant of shape [1] (or [] for rank 0): the hardware has no immediates.
        Integer tensors get the exact integer; float tensors the value as f64.
        """
        shape = [1] * rank
        exact: float | int = int(value) if isinstance(element_type, IntegerType) else float(value)
        return self.emit(FullOp(exact, TensorType(element_type, shape)), "cst").results[0]

    def permute(self, value: SSAValue, perm: Sequence[int]) -> SSAValue:
        """`value` with its dims reordered (`result dim i` = `value dim perm[i]`); identity: itself."""
        if list(perm) == list(range(len(perm))):
            return value
        source = tensor_type(value)
        shape = [source.get_shape()[p] for p in perm]
        op = PermuteOp.build(
            operands=[value],
            properties={"perm": int_array(perm)},
            result_types=[TensorType(source.element_type, shape)],
        )
        return self.emit(op).results[0]

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`value` with a new shape of as many elements; the same shape: itself."""
        source = tensor_type(value)
        if list(source.get_shape()) == list(shape):
            return value
        result_type = TensorType(source.element_type, list(shape))
        return self.emit(ReshapeOp.build(operands=[value], result_types=[result_type])).results[0]

    def convert(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        """`value` with `element_type`, through a `ktir.convert` when it differs."""
        source = tensor_type(value)
        if source.element_type == element_type:
            return value
        result_type = TensorType(element_type, source.get_shape())
        return self.emit(ConvertOp.build(operands=[value], result_types=[result_type])).results[0]


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    """The tensor type of a value produced by the importer."""
    assert isinstance(value.type, TensorType)
    return value.type


def type_of_fake(fake: Any, what: str) -> TensorType[Attribute]:
    """The builtin tensor type of a FakeTensor from `node.meta["val"]` (static shapes only)."""
    static = isinstance(fake, torch.Tensor) and all(isinstance(size, int) for size in fake.shape)
    if static and fake.dtype in TORCH_TO_ELEMENT_TYPE:
        return _tensor_type(fake.dtype, tuple(fake.shape))
    if not isinstance(fake, torch.Tensor):
        raise UnsupportedNode(f"{what} is not a tensor ({type(fake).__name__})")
    element_type = TORCH_TO_ELEMENT_TYPE.get(fake.dtype)
    if element_type is None:
        raise UnsupportedNode(f"{what} has dtype {fake.dtype}, which ktir does not support")
    shape = []
    for dim, size in enumerate(fake.shape):
        if not isinstance(size, int):
            raise UnsupportedNode(
                f"{what} has a dynamic dimension {dim} ({size}): ktir needs static shapes "
                "(export without dynamic_shapes)"
            )
        shape.append(size)
    return TensorType(element_type, shape)


@functools.lru_cache(maxsize=4096)
def _tensor_type(dtype: torch.dtype, shape: tuple[int, ...]) -> TensorType[Attribute]:
    # A model has few distinct (dtype, shape) pairs; attributes are immutable, so share them.
    return TensorType(TORCH_TO_ELEMENT_TYPE[dtype], shape)


def node_type(node: torch.fx.Node) -> TensorType[Attribute]:
    """The result type of a single-tensor FX node."""
    return type_of_fake(node.meta.get("val"), f"the result of '{node.name}'")


def mlir_element_type(dtype: torch.dtype) -> Attribute:
    """The MLIR element type of a PyTorch dtype."""
    found = TORCH_TO_ELEMENT_TYPE.get(dtype)
    if found is None:
        raise UnsupportedNode(f"dtype {dtype} is not supported by ktir")
    return found


def node_location(node: torch.fx.Node) -> FileLineColLoc | None:
    """
    The source location of an FX node: the innermost frame of its recorded stack trace.

    Example: a stack trace ending in `File "model.py", line 12, in forward` gives
    `loc("model.py":12:9)` when line 12 is indented by 8 (the column of its first character).
    Nodes without a stack trace get None.
    """
    trace = node.meta.get("stack_trace")
    return _trace_location(trace) if trace else None


@functools.lru_cache(maxsize=4096)
def _trace_location(trace: str) -> FileLineColLoc | None:
    # Many nodes share one stack trace (one source line gives several ATen ops).
    frames = list(_FRAME.finditer(trace))
    if not frames:
        return None
    last = frames[-1]
    line = int(last["line"])
    text = linecache.getline(last["file"], line)
    column = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
    return FileLineColLoc(StringAttr(last["file"]), IntAttr(line), IntAttr(column))


def diagnostic_at(node: torch.fx.Node, message: str) -> Diagnostic:
    """An error diagnostic located at the node's source line (unknown location otherwise)."""
    loc = node_location(node)
    where = None if loc is None else Location(loc.filename.data, loc.line.data, loc.column.data)
    return Diagnostic(Severity.ERROR, message, where)


def _name_hint(name: str) -> str | None:
    """FX node names are valid SSA names already; anything else is dropped."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name or "") else None


#### FX node arguments ####
# `node.args` is typed as any FX `Argument`; the ATen schema says which one each converter reads.
# These narrow an argument to it, or raise `UnsupportedNode` (reported at the node) otherwise.


def node_arg(value: object) -> torch.fx.Node:
    """An FX argument that must be a tensor: its producing node."""
    if not isinstance(value, torch.fx.Node):
        raise UnsupportedNode(f"expected a tensor argument, got {value!r}")
    return value


def int_arg(value: object) -> int:
    """An FX argument that must be a Python int (SymInts are rejected), unchanged."""
    if not isinstance(value, int):
        raise UnsupportedNode(f"expected a static integer, got {value!r}")
    return value


def float_arg(value: object) -> float:
    """An FX argument that must be a Python number (an ATen float or Scalar), unchanged: ints stay ints."""
    if not isinstance(value, int | float):
        raise UnsupportedNode(f"expected a number, got {value!r}")
    return value


def used_outputs(node: torch.fx.Node) -> set[int]:
    """The indices of a multi-output node's results that its `getitem` users read."""
    return {int_arg(u.args[1]) for u in node.users if u.target is operator.getitem}


def node_list(values: object) -> list[torch.fx.Node]:
    """An FX argument that must be a list of tensors (an ATen `Tensor[]`): their producing nodes."""
    if not isinstance(values, list | tuple):
        raise UnsupportedNode(f"expected a list of tensors, got {values!r}")
    return [node_arg(v) for v in values]


def optional_node_list(values: object) -> list[torch.fx.Node | None]:
    """An FX argument that must be a list of optional tensors (an ATen `Tensor?[]`)."""
    if not isinstance(values, list | tuple):
        raise UnsupportedNode(f"expected a list of tensors, got {values!r}")
    return [None if v is None else node_arg(v) for v in values]


def int_list(values: object) -> list[int]:
    """A list of Python ints from an FX argument (SymInts are rejected)."""
    if not isinstance(values, Iterable):
        raise UnsupportedNode(f"expected a list of static integers, got {values!r}")
    result: list[int] = []
    for v in values:
        if not isinstance(v, int):
            raise UnsupportedNode(f"expected a static integer, got {v!r}")
        result.append(v)
    return result
