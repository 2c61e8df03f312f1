"""
What the `ktir` dialect says about the functions holding its ops: the argument and function
attributes (layout pins, model state, updates in place, the layout plan), and `verify_function`,
the rules a ktir `func.func` keeps (which graph-level ops may stay next to `ktir.kernel`s is
`ktir.dialects.ktir.core_functions`).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from ktir.dialects.ktir.attributes import TiledLayoutAttr, require_fits_device, verify_tiled_tensor
from ktir.layout.tiled import MAX_HOST_RANK

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
    if any(op.dialect_name() == "ktir" for op in ops):
        # Imported on use: a function of other dialects' ops (a ktdp kernel) is verified
        # without building the ktir dialect's op classes (ktir-run's start-up on ktdp kernels).
        from ktir.dialects.ktir.core_functions import misplaced_next_to_kernels

        if (misplaced := misplaced_next_to_kernels(ops)) is not None:
            raise OpVerifyException(*misplaced)


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
