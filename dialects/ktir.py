"""
The `ktir` dialect: Kernel Tile IR for tiled dataflow accelerators (IBM Spyre).

Spyre stores every device tensor as 128-byte *sticks*. Which host elements go into which
stick is the tensor's layout, written as the encoding of a builtin ranked tensor:

```mlir
tensor<5x100x150xf16, #ktir.tiled<device_size = [100, 3, 5, 64], stride_map = [150, 64, 15000, 1]>>
```

Using the builtin encoding slot (as sparse_tensor, IREE and Triton do) keeps standard ops
and upstream MLIR parsing working: in generic form the attribute is opaque to MLIR.
The layout math lives in `ktir.layout`; this file only carries it in the IR.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntAttr,
    IntegerAttr,
    NoneAttr,
    TensorType,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir_core import CORE_ATTRIBUTES, CORE_OPS, I64_MAX, I64_MIN, KernelOp
from ktir.dialects.ktir_data import DATA_OPS, GatherRowsOp, TakeAlongOp
from ktir.dialects.ktir_elementwise import ELEMENTWISE_OPS, require_fits_device
from ktir.dialects.ktir_routing import ROUTING_OPS, GroupedMatmulOp, HistcOp, ScatterRowsOp, SortOp, TopkOp
from ktir.dialects.ktir_structured import (
    STRUCTURED_ATTRIBUTES,
    STRUCTURED_OPS,
    CpuFallbackOp,
    ExpandOp,
    PermuteOp,
    ReshapeOp,
    SliceOp,
)
from ktir.hardware.target import SPYRE
from ktir.layout.dtypes import ELEMENT_TYPE_TO_DEVICE_DTYPE, DeviceDType
from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.tiled import MAX_HOST_RANK, LayoutError, TiledLayout

#### Types and attributes ####


@irdl_attr_definition
class DeviceDTypeAttr(EnumAttribute[DeviceDType], SpacedOpaqueSyntaxAttribute):  # type: ignore[type-var]
    """A Spyre device data format; `SEN169_FP16` inside `#ktir.tiled<...>`."""

    name = "ktir.device_dtype"


@irdl_attr_definition
class TiledLayoutAttr(ParametrizedAttribute):
    """
    A Spyre tiled layout used as a tensor encoding.

    Syntax:

    ```mlir
    #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1]>
    #ktir.tiled<device_size = [4, 1024, 64], stride_map = [64, 256, 1], device_dtype = SEN169_FP16>
    ```

    `device_size` is the row-major device shape (the last dim is one stick);
    `stride_map[j]` is the host element stride of device dim `j` (-1: synthetic, 0: broadcast).
    `device_dtype` is optional: it defaults to the format of the tensor's element type and,
    when written, must agree with it. On its own the attribute checks what it can without a
    tensor (equal lengths, positive sizes, strides >= -1, no host stride walked twice);
    `verify_tiled_tensor` checks it against the tensor's shape and element type.
    """

    name = "ktir.tiled"

    device_size: ArrayAttr[IntAttr]
    stride_map: ArrayAttr[IntAttr]
    device_dtype: DeviceDTypeAttr | NoneAttr

    def __init__(
        self,
        device_size: Sequence[int],
        stride_map: Sequence[int],
        device_dtype: DeviceDType | None = None,
    ) -> None:
        super().__init__(
            ArrayAttr(IntAttr(v) for v in device_size),
            ArrayAttr(IntAttr(v) for v in stride_map),
            NoneAttr() if device_dtype is None else DeviceDTypeAttr(DeviceDType(device_dtype)),
        )

    @classmethod
    def from_layout(cls, stl: SpyreTensorLayout, explicit_dtype: bool = False) -> TiledLayoutAttr:
        """The encoding of `stl`; the dtype is written out only if `explicit_dtype`."""
        return cls(stl.device_size, stl.stride_map, stl.device_dtype if explicit_dtype else None)

    @property
    def tiled(self) -> TiledLayout:
        """The layout as a `ktir.layout.TiledLayout`."""
        return TiledLayout(
            tuple(v.data for v in self.device_size.data),
            tuple(v.data for v in self.stride_map.data),
        )

    @property
    def explicit_device_dtype(self) -> DeviceDType | None:
        """The written `device_dtype`, or None when it is implied by the element type."""
        if isinstance(self.device_dtype, NoneAttr):
            return None
        return self.device_dtype.data

    def layout_for(self, element_type: Attribute) -> SpyreTensorLayout:
        """The `SpyreTensorLayout` this encoding denotes on tensors of `element_type`."""
        implied = device_dtype_of_element(element_type)
        return SpyreTensorLayout.from_device(
            self.tiled.device_size, self.tiled.stride_map, self.explicit_device_dtype or implied
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def int_list() -> list[int]:
            return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)

        with parser.in_angle_brackets():
            parser.parse_keyword("device_size")
            parser.parse_punctuation("=")
            device_size = int_list()
            parser.parse_punctuation(",")
            parser.parse_keyword("stride_map")
            parser.parse_punctuation("=")
            stride_map = int_list()
            device_dtype: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("device_dtype")
                parser.parse_punctuation("=")
                pos = parser.pos
                name = parser.parse_identifier()
                if name not in DeviceDType.__members__:
                    known = ", ".join(DeviceDType.__members__)
                    parser.raise_error(
                        f"unknown device_dtype '{name}' (expected one of {known})", pos, parser.pos
                    )
                device_dtype = DeviceDTypeAttr(DeviceDType(name))
        return (
            ArrayAttr(IntAttr(v) for v in device_size),
            ArrayAttr(IntAttr(v) for v in stride_map),
            device_dtype,
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("device_size = ")
            with printer.in_square_brackets():
                printer.print_list(self.device_size.data, lambda v: printer.print_int(v.data))
            printer.print_string(", stride_map = ")
            with printer.in_square_brackets():
                printer.print_list(self.stride_map.data, lambda v: printer.print_int(v.data))
            if isinstance(self.device_dtype, DeviceDTypeAttr):
                printer.print_string(f", device_dtype = {self.device_dtype.data.value}")

    def verify(self) -> None:
        for what, values in (("device_size", self.device_size), ("stride_map", self.stride_map)):
            if any(not I64_MIN <= v.data <= I64_MAX for v in values.data):
                raise VerifyException(f"{what} entries must fit in i64, not {[v.data for v in values.data]}")
        try:
            self.tiled  # noqa: B018  (constructing it checks the host-independent rules)
        except LayoutError as error:
            raise VerifyException(f"invalid #ktir.tiled layout: {error}") from error


def device_dtype_of_element(element_type: Attribute) -> DeviceDType:
    """The Spyre device format of an MLIR element type (f16 -> fp16, i64 -> int32 ...)."""
    name = str(element_type)
    if (found := ELEMENT_TYPE_TO_DEVICE_DTYPE.get(name)) is None:
        known = ", ".join(ELEMENT_TYPE_TO_DEVICE_DTYPE)
        raise VerifyException(f"element type {name} has no Spyre device format (supported: {known})")
    return found


def verify_tiled_tensor(tensor: TensorType[Attribute]) -> None:
    """
    Check a tensor type whose encoding is `#ktir.tiled` against its shape and element type.

    Raises `VerifyException` naming the rule that fails: a static shape, an element type with
    a device format, a matching `device_dtype`, a stick of the right size as the last device
    dim, a device tensor that fits the device memory, and a `stride_map` that stores every host
    element exactly once.
    Tensors with another encoding (or none) are accepted unchanged.
    """
    encoding = tensor.encoding
    if not isinstance(encoding, TiledLayoutAttr):
        return
    shape = tensor.get_shape()
    if any(dim < 0 for dim in shape):
        raise VerifyException("a #ktir.tiled tensor must have a static shape")
    implied = device_dtype_of_element(tensor.element_type)
    explicit = encoding.explicit_device_dtype
    if explicit is not None and explicit != implied:
        raise VerifyException(
            f"device_dtype {explicit} does not match element type {tensor.element_type}, "
            f"which is stored as {implied}"
        )
    stick = encoding.tiled.device_size[-1]
    if stick != implied.elems_per_stick:
        raise VerifyException(
            f"the last device dim is the stick: it must hold {implied.elems_per_stick} "
            f"{tensor.element_type} elements, not {stick}"
        )
    device_bytes = math.prod(encoding.tiled.device_size) * implied.element_bytes
    if device_bytes > SPYRE.device_memory_bytes:
        raise VerifyException(
            f"the #ktir.tiled device tensor {list(encoding.tiled.device_size)} takes "
            f"{device_bytes / 1024**3:,.1f} GiB, more than the "
            f"{SPYRE.device_memory_bytes / 1024**3:,.0f} GiB of {SPYRE.name} device memory"
        )
    try:
        encoding.layout_for(tensor.element_type).bind(shape)
    except LayoutError as error:
        raise VerifyException(
            f"#ktir.tiled layout does not fit tensor shape {list(shape)}: {error}"
        ) from error


#### Functions holding ktir ops ####

LAYOUT_PIN = "ktir.layout"
"""Argument attribute pinning an argument's layout: `{ktir.layout = #ktir.tiled<...>}`."""

LAYOUT_PLAN = "ktir.layout_plan"
"""Function attribute `ktir-propagate-layouts` writes: the chosen plan's cost (host elements
relayouted), its lower bound and the search that found it."""

PARAMETER_ARG = "ktir.parameter"
BUFFER_ARG = "ktir.buffer"
CONSTANT_ARG = "ktir.constant"
STATE_ARGS = (PARAMETER_ARG, BUFFER_ARG, CONSTANT_ARG)
"""Argument attributes marking a model's state (a parameter, buffer or constant tensor; the value
is its name in the state dict). State is packed into device memory once, before the first call,
so its layout is the compiler's choice: layout propagation gives it the stick its consumers read."""

UPDATED_BY_ARG = "ktir.updated_by"
"""Argument attribute of a model's state that a call updates in place (a static KV cache): the
value is the index of the function result holding its new value, which the program writes back
to the argument's device memory after each call. The result must have the argument's type."""

TIMED_FUNCTION_LEVEL_OPS = (
    GatherRowsOp,
    TakeAlongOp,
    TopkOp,
    SortOp,
    HistcOp,
    ScatterRowsOp,
    GroupedMatmulOp,
)
"""Data-dependent ops that stay at function level (not `ktir.kernel`s): how long they take depends
on values, so the simulator times each as a whole when it runs (`ktir.sim.machine`)."""

FUNCTION_LEVEL_OPS = (PermuteOp, ReshapeOp, ExpandOp, SliceOp, CpuFallbackOp, *TIMED_FUNCTION_LEVEL_OPS)
"""Graph-level ops that may stay next to kernels: views (which may reuse their input's device
bytes), the data-dependent ops the simulator times as a whole (`TIMED_FUNCTION_LEVEL_OPS`) and
CPU fallbacks, which run on the host."""


class OpVerifyException(VerifyException):
    """A rule a function breaks at one of its ops: `op` is where it is reported."""

    def __init__(self, op: Operation, message: str) -> None:
        super().__init__(message)
        self.op = op


def _verify_updates(function: func.FuncOp) -> None:
    """Each `ktir.updated_by` names a result of the argument's type, layout included."""
    inputs, outputs = function.function_type.inputs.data, function.function_type.outputs.data
    attributes = function.arg_attrs.data if function.arg_attrs is not None else ()
    for index, entry in enumerate(attributes):
        result = entry.data.get(UPDATED_BY_ARG)
        if result is None:
            continue
        if not isinstance(result, IntegerAttr) or not 0 <= result.value.data < len(outputs):
            raise VerifyException(
                f"argument {index}: {UPDATED_BY_ARG} must name one of the {len(outputs)} results"
            )
        if outputs[result.value.data] != inputs[index]:
            raise VerifyException(
                f"argument {index} is updated in place by result {result.value.data}, whose type "
                f"{outputs[result.value.data]} is not the argument's {inputs[index]}"
            )


def verify_function(function: func.FuncOp) -> None:
    """
    ktir's rules on a `func.func`: it has at most one block; each `ktir.layout` argument pin is
    a `#ktir.tiled` layout that fits its argument; its tensor arguments and results have rank at
    most `MAX_HOST_RANK` (the layout passes give every argument a Spyre layout) and fit in device
    memory; and a function
    holding `ktir.kernel`s (core-level IR) holds no other graph-level op than views, row gathers
    and CPU fallbacks, each with `#ktir.tiled` tensors.

    Raises `VerifyException` (an `OpVerifyException` naming the op that breaks a rule inside).
    """
    if len(function.body.blocks) > 1:
        raise VerifyException(
            f"has {len(function.body.blocks)} blocks; a ktir function has one (no control flow)"
        )
    _verify_pins(function)
    _verify_updates(function)
    for i, value_type in enumerate([*function.function_type.inputs, *function.function_type.outputs]):
        if not isinstance(value_type, TensorType):
            continue
        what = f"argument {i}" if i < len(function.function_type.inputs) else "a result"
        if value_type.get_num_dims() > MAX_HOST_RANK:
            raise VerifyException(
                f"{what} has rank {value_type.get_num_dims()}; Spyre layouts hold tensors of rank "
                f"at most {MAX_HOST_RANK}"
            )
        if all(dim >= 0 for dim in value_type.get_shape()):
            require_fits_device(value_type, what)
    ops = list(function.body.block.ops) if function.body.blocks else []
    if any(isinstance(op, KernelOp) for op in ops):
        for op in ops:
            _verify_next_to_kernels(op)


def _verify_pins(function: func.FuncOp) -> None:
    if function.arg_attrs is None:
        return
    for i, (attrs, arg_type) in enumerate(
        zip(function.arg_attrs, function.function_type.inputs, strict=False)
    ):
        pin = attrs.data.get(LAYOUT_PIN)
        if pin is None:
            continue
        where = f"argument {i}: the {LAYOUT_PIN} pin"
        if not isinstance(pin, TiledLayoutAttr):
            raise VerifyException(f"{where} must be a #ktir.tiled layout, not {pin}")
        if not isinstance(arg_type, TensorType):
            raise VerifyException(f"{where} is on a {arg_type}, not a tensor")
        try:
            verify_tiled_tensor(TensorType(arg_type.element_type, arg_type.get_shape(), pin))
        except VerifyException as error:
            raise VerifyException(f"{where} does not fit {arg_type}: {error}") from error


def _verify_next_to_kernels(op: Operation) -> None:
    if op.dialect_name() != "ktir" or isinstance(op, KernelOp):
        return
    if not isinstance(op, FUNCTION_LEVEL_OPS):
        raise OpVerifyException(
            op,
            "is a graph-level op in a function of ktir.kernel ops: core-level IR keeps only views "
            "and CPU fallbacks outside kernels (compile a graph-level function whole with ktir-compile)",
        )
    for value in (*op.operands, *op.results):
        if not isinstance(value.type, TensorType) or not isinstance(value.type.encoding, TiledLayoutAttr):
            raise OpVerifyException(
                op, f"in a function of ktir.kernel ops needs #ktir.tiled tensors, not {value.type}"
            )


Ktir = Dialect(
    "ktir",
    [*ELEMENTWISE_OPS, *STRUCTURED_OPS, *DATA_OPS, *ROUTING_OPS, *CORE_OPS],
    [TiledLayoutAttr, DeviceDTypeAttr, *STRUCTURED_ATTRIBUTES, *CORE_ATTRIBUTES],
)
"""The `ktir` dialect: the `#ktir.tiled` encoding, the graph-level ops and the core-level ops."""
