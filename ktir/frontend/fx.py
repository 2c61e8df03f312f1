"""
PyTorch FX -> graph-level ktir.

`import_fx(model_or_fn, example_args)` exports the program with `torch.export`, decomposes it
to core ATen while keeping linear, rms_norm, layer_norm, gelu, silu, softmax and
scaled_dot_product_attention whole (`ktir.frontend.attention`), and builds one `func.func`
whose arguments are the user inputs followed by the parameters, buffers and constant tensors
(each named by an argument attribute). Every op carries the source
location of its FX node. Static shapes only. Unsupported ops are reported together, each with
its location, and no module is returned.

```python
import ktir
module = ktir.import_fx(torch.nn.Linear(64, 32), (torch.randn(8, 64),))
```
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
import types
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import torch
import torch._dynamo.exc
import torch.fx.experimental.symbolic_shapes
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.transforms.dead_code_elimination import region_dce

import ktir.frontend.aten_conv
import ktir.frontend.aten_data as aten_data
import ktir.frontend.aten_indexing
import ktir.frontend.aten_norms
import ktir.frontend.aten_routing
import ktir.frontend.attention  # registers the attention converter
import ktir.frontend.collectives  # noqa: F401  (the ktir::all_reduce / all_gather ops, their converters)
from ktir.dialects.ktir.functions import BUFFER_ARG, CONSTANT_ARG, PARAMETER_ARG
from ktir.frontend.aten import converter_of
from ktir.frontend.emitter import (
    Emitter,
    UnsupportedNode,
    diagnostic_at,
    node_location,
    type_of_fake,
)
from ktir.frontend.outputs import OutputSlot, OutputTree, exported_tree, flatten_output, unflatten_output
from ktir.frontend.updates import mark_updates, split_outputs
from ktir.ir.diagnostics import Diagnostic, DiagnosticError, Location, Severity, verify_module
from ktir.reference.precision import to_numpy

KEPT_WHOLE = (
    torch.ops.aten.linear.default,
    torch.ops.aten.rms_norm.default,
    torch.ops.aten.layer_norm.default,
    torch.ops.aten.gelu.default,
    torch.ops.aten.silu.default,
    torch.ops.aten.softmax.int,
    torch.ops.aten.scaled_dot_product_attention.default,
    torch.ops.aten.index_copy.default,
)
"""Ops the core-ATen decomposition keeps whole: they map to named ktir ops (or, for linear, to
the reference's transpose + matmul + add) so lowering sees the real computation; index_copy (a
static KV cache's update) stays one `ktir.scatter_rows` that can write in place."""

_KIND_ATTRIBUTE = {
    InputKind.PARAMETER: PARAMETER_ARG,
    InputKind.BUFFER: BUFFER_ARG,
    InputKind.CONSTANT_TENSOR: CONSTANT_ARG,
}


class FxImportError(DiagnosticError):
    """The FX graph cannot be imported; `diagnostics` lists every reason with its location."""


@dataclass
class FxImport:
    """
    The result of importing an FX program.

    `module` holds one `func.func`; `input_names` are its argument names (the user inputs first,
    then parameters, buffers and constants); `state` maps the non-user argument names to their
    tensors (NumPy arrays for the constants `ktir.frontend.constants` makes arguments), so
    `arguments(*user_args)` gives every argument the function takes. `outputs` has one slot per
    tensor the model returns and `output_tree` the structure they sit in, so `restore(results)`
    turns the function's results into what the model returns.
    """

    module: ModuleOp
    input_names: list[str]
    user_input_count: int
    state: dict[str, torch.Tensor | np.ndarray] = field(default_factory=dict)
    node_count: int = 0
    outputs: list[OutputSlot] = field(default_factory=list)
    output_tree: OutputTree | None = None

    def arguments(self, *user_args: Any) -> list[np.ndarray]:
        """The function's arguments as NumPy arrays: `user_args` followed by the stored state."""
        if len(user_args) != self.user_input_count:
            raise ValueError(f"expected {self.user_input_count} user input(s), got {len(user_args)}")
        names = self.input_names[self.user_input_count :]
        values = [*user_args, *(self.state[name] for name in names)]
        return [_to_numpy(v) for v in values]

    def state_arrays(self, skip_meta: bool = False) -> dict[int, np.ndarray]:
        """
        The stored state (parameters, buffers, constants) as arrays, by argument index; with
        `skip_meta`, tensors on PyTorch's `meta` device (no values) are left out.
        """
        first = self.user_input_count
        names = self.input_names[first:]
        return {
            first + i: _to_numpy(self.state[name])
            for i, name in enumerate(names)
            if not (skip_meta and is_meta(self.state[name]))
        }

    def restore(self, results: Sequence[np.ndarray]) -> Any:
        """
        The model's return value from the function's results: the same structure (tensor,
        tuple, list, dict, dataclass, `ModelOutput`), each tensor with the model's shape and
        dtype (0-d stays 0-d, bf16 stays bf16); empty tensors are created on the host.
        """
        tensors = [slot.value(results) for slot in self.outputs]
        if self.output_tree is None:
            return tensors
        return unflatten_output(self.output_tree, tensors)


def is_meta(value: Any) -> bool:
    """Whether `value` is a tensor on PyTorch's `meta` device: a shape and dtype, no values."""
    return isinstance(value, torch.Tensor) and value.device.type == "meta"


def _to_numpy(value: Any) -> np.ndarray:
    if is_meta(value):
        raise ValueError("a meta tensor has no values: import a model with real weights to run it")
    return to_numpy(value)


def _function_module(fn: Callable[..., Any]) -> torch.nn.Module:
    """
    Wrap a plain function in a module so `torch.export` (which takes modules) can trace it.

    The module's `forward` carries the function's signature, so inputs keep their names.
    Export records source lines only from frames named `forward`, so the function runs as a
    copy of its code under that name and its ops keep the user's file and line.
    """
    renamed = _renamed_forward(fn)

    def forward(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        return renamed(*args, **kwargs)

    try:
        signature = inspect.signature(fn)
        this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        forward.__signature__ = signature.replace(parameters=[this, *signature.parameters.values()])
    except (TypeError, ValueError):
        pass  # builtins without a signature keep (*args, **kwargs)
    return type("FunctionModule", (torch.nn.Module,), {"forward": forward})()


def _renamed_forward(fn: Callable[..., Any]) -> Callable[..., Any]:
    if not isinstance(fn, types.FunctionType):
        return fn
    code = fn.__code__.replace(co_name="forward")
    renamed = types.FunctionType(code, fn.__globals__, "forward", fn.__defaults__, fn.__closure__)
    renamed.__kwdefaults__ = fn.__kwdefaults__
    return renamed


def export_program(
    model_or_fn: Any,
    example_args: Sequence[Any],
    example_kwargs: dict[str, Any] | None = None,
    dynamic_shapes: Any = None,
) -> ExportedProgram:
    """
    `torch.export` then core-ATen decomposition keeping `KEPT_WHOLE`.

    Accepts an `nn.Module`, a `GraphModule` (as a `torch.compile` backend receives it), a plain
    function, or an `ExportedProgram` (only decomposed). The exported program returns the
    model's tensor outputs as a flat tuple (see `ktir.frontend.outputs`).
    """
    return _export(model_or_fn, example_args, example_kwargs, dynamic_shapes)[0]


def _export(
    model_or_fn: Any,
    example_args: Sequence[Any],
    example_kwargs: dict[str, Any] | None,
    dynamic_shapes: Any,
) -> tuple[ExportedProgram, OutputTree]:
    """`export_program` and the structure of the model's outputs."""
    table = torch.export.default_decompositions()
    for op in KEPT_WHOLE:
        if op in table:
            del table[op]
    with warnings.catch_warnings():
        # torch 2.13's export warns about its own pytree internals (LeafSpec); not actionable.
        warnings.simplefilter("ignore", FutureWarning)
        if isinstance(model_or_fn, ExportedProgram):
            return model_or_fn.run_decompositions(table), exported_tree(model_or_fn)
        module = model_or_fn if isinstance(model_or_fn, torch.nn.Module) else _function_module(model_or_fn)
        # A GraphModule's outputs are already a flat sequence of tensors (and its forward is
        # generated code bound to its class, so it is exported as it is).
        graph = isinstance(module, torch.fx.GraphModule)
        flat, trees = (module, []) if graph else _flat_outputs(module)
        try:
            program = torch.export.export(
                flat, tuple(example_args), kwargs=example_kwargs or {}, dynamic_shapes=dynamic_shapes
            )
        except _EXPORT_FAILURES as error:
            raise FxImportError([_export_diagnostic(error)]) from None
        return program.run_decompositions(table), trees[0] if trees else exported_tree(program)


def _flat_outputs(module: torch.nn.Module) -> tuple[torch.nn.Module, list[OutputTree]]:
    """
    A shallow copy of `module` (same parameters, so the same argument names) whose `forward`
    returns only the tensor leaves of the real `forward`; the structure lands in the list.
    """
    trees: list[OutputTree] = []
    original = module.forward

    @functools.wraps(original)
    def forward(*args: Any, **kwargs: Any) -> tuple[torch.Tensor, ...]:
        tensors, tree = flatten_output(original(*args, **kwargs))
        trees[:] = [tree]
        return tuple(tensors)

    # Export binds inputs by this signature; a bound method's own is the one without `self`.
    forward.__signature__ = inspect.signature(original)  # pyright: ignore[reportAttributeAccessIssue]  # a function takes any attribute; its type declares none
    flat = type(module).__new__(type(module))
    flat.__dict__.update(module.__dict__)
    flat.forward = forward
    return flat, trees


_EXPORT_FAILURES: tuple[type[BaseException], ...] = (
    torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode,
    torch._dynamo.exc.UserError,
    torch._dynamo.exc.Unsupported,
)
"""What `torch.export` raises for a program it cannot trace statically (e.g. an `if` on a
tensor's value): reported as an `FxImportError` at the user's source line."""

_CALL_SITE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _export_diagnostic(error: BaseException) -> Diagnostic:
    """One located diagnostic for an export failure: torch's first line, at the user's frame."""
    text = str(error)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(error).__name__)
    sites = _CALL_SITE.findall(text)
    location = Location(sites[-1][0], int(sites[-1][1]), 1) if sites else None
    message = f"torch.export cannot trace the model ({type(error).__name__}): {first}"
    if "data-dependent" in text:
        message += "; control flow that depends on tensor values is not supported (static graphs only)"
    return Diagnostic(Severity.ERROR, message, location)


def import_program(
    model_or_fn: Any,
    example_args: Sequence[Any],
    example_kwargs: dict[str, Any] | None = None,
    *,
    func_name: str = "forward",
    dynamic_shapes: Any = None,
) -> FxImport:
    """Import a model or function and keep what is needed to run it (see `FxImport`)."""
    program, tree = _export(model_or_fn, example_args, example_kwargs, dynamic_shapes)
    return import_exported(program, func_name=func_name, output_tree=tree)


def import_fx(
    model_or_fn: Any,
    example_args: Sequence[Any],
    example_kwargs: dict[str, Any] | None = None,
    *,
    func_name: str = "forward",
    dynamic_shapes: Any = None,
) -> ModuleOp:
    """
    Graph-level ktir for `model_or_fn` called on `example_args` (and `example_kwargs`).

    Raises `FxImportError` listing every unsupported op, or every input with a dynamic dim
    (`dynamic_shapes` is passed to `torch.export` so such programs can be tried).
    """
    imported = import_program(
        model_or_fn, example_args, example_kwargs, func_name=func_name, dynamic_shapes=dynamic_shapes
    )
    return imported.module


#### The graph walk ####


@dataclass
class _Argument:
    node: torch.fx.Node
    name: str
    attributes: dict[str, Attribute]
    state_key: str | None


def _arguments(program: ExportedProgram) -> tuple[list[_Argument], int]:
    """The function arguments in ktir order: user inputs, then parameters, buffers, constants."""
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    user, state = [], []
    for spec in program.graph_signature.input_specs:
        name = getattr(spec.arg, "name", None)
        if name is None or name not in placeholders:
            continue  # a constant (non-tensor) user input, folded into the graph by export
        node = placeholders[name]
        if spec.kind == InputKind.USER_INPUT:
            if isinstance(node.meta.get("val"), torch.Tensor):
                attributes: dict[str, Attribute] = {"ktir.name": StringAttr(name)}
                user.append(_Argument(node, name, attributes, None))
            continue
        attribute = _KIND_ATTRIBUTE.get(spec.kind)
        if attribute is None:
            continue
        attrs: dict[str, Attribute] = {
            "ktir.name": StringAttr(name),
            attribute: StringAttr(spec.target or name),
        }
        state.append(_Argument(node, name, attrs, spec.target))
    return [*user, *state], len(user)


def _state_value(program: ExportedProgram, key: str) -> torch.Tensor:
    if key in program.state_dict:
        return program.state_dict[key]
    # A CONSTANT_TENSOR input (the only kind of constant `_KIND_ATTRIBUTE` takes): a tensor.
    return cast(torch.Tensor, program.constants[key])


def _check_unsupported(program: ExportedProgram) -> list[Diagnostic]:
    """One diagnostic per node whose ATen op has no converter (before anything is built)."""
    found = []
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target in aten_data.IGNORED:
            continue
        if node.target is operator.getitem or converter_of(node.target) is not None:
            continue
        if aten_data.is_cpu_fallback(node.target):
            continue
        if not isinstance(node.target, torch._ops.OpOverload) or node.target in _SYMBOLIC_SHAPE_OPS:
            message = (
                f"data-dependent or symbolic shape computation '{node.target}' (node '{node.name}'): "
                "ktir needs static shapes"
            )
        else:
            message = f"unsupported ATen op '{node.target}' (node '{node.name}')"
        found.append(diagnostic_at(node, message))
    return found


_SYMBOLIC_SHAPE_OPS = frozenset(
    {
        torch.ops.aten.sym_size.int,
        torch.ops.aten.sym_numel.default,
        torch.ops.aten.sym_stride.int,
        torch.ops.aten.sym_storage_offset.default,
        torch.ops.aten.nonzero.default,
        torch.ops.aten._local_scalar_dense.default,
    }
)


def _check_mutations(program: ExportedProgram) -> list[Diagnostic]:
    """
    In-place updates of inputs are errors (graph-level ktir is functional); a buffer's update is
    a result the program writes back (`ktir.frontend.updates`).
    """
    nodes = {n.name: n for n in program.graph.nodes}
    output = next(n for n in program.graph.nodes if n.op == "output")
    found = []
    for spec in program.graph_signature.output_specs:
        if spec.kind in (OutputKind.USER_OUTPUT, OutputKind.BUFFER_MUTATION):
            continue
        name = getattr(spec.arg, "name", "")
        what = {OutputKind.BUFFER_MUTATION: "buffer", OutputKind.USER_INPUT_MUTATION: "input"}.get(
            spec.kind, str(spec.kind)
        )
        node = nodes.get(name, output)
        found.append(
            diagnostic_at(
                node, f"in-place update of {what} '{spec.target}' is not supported (ktir is functional)"
            )
        )
    return found


def _check_static(arguments: list[_Argument]) -> list[Diagnostic]:
    found = []
    for argument in arguments:
        try:
            type_of_fake(argument.node.meta.get("val"), f"input '{argument.name}'")
        except UnsupportedNode as error:
            found.append(diagnostic_at(argument.node, str(error)))
    return found


def import_exported(
    program: ExportedProgram, func_name: str = "forward", output_tree: OutputTree | None = None
) -> FxImport:
    """
    Graph-level ktir for an already-decomposed `ExportedProgram`.

    `output_tree` is the structure of the model's outputs (default: the program's own output
    spec). A node whose result has no elements needs no kernel: it is not imported, `cat`
    skips it, and an output that is empty is created on the host (`FxImport.restore`).
    """
    arguments, user_count = _arguments(program)
    _check_program(program, arguments)

    block = Block(arg_types=[type_of_fake(a.node.meta["val"], a.name) for a in arguments])
    emitter = Emitter(block)
    for argument, block_arg in zip(arguments, block.args, strict=True):
        block_arg.name_hint = argument.name
        emitter.values[argument.node] = block_arg
    walked = _walk(emitter, program)

    results = [*walked.outputs, *(value for value, _ in walked.updates)]
    block.add_op(func.ReturnOp(*results))
    function = func.FuncOp(
        func_name, ([a.type for a in block.args], [v.type for v in results]), Region(block)
    )
    function.arg_attrs = _arg_attrs(arguments)
    mark_updates(function, [a.name for a in arguments], walked.updates, len(walked.outputs))
    # A converter may read past ops it made redundant (the copies of `repeat_kv` that
    # `ktir.attention` reads around); those are now unused and pure.
    region_dce(function.body)
    module = ModuleOp([function])
    # A converter bug must never hand out IR that fails its own verifier.
    if problems := verify_module(module):
        raise FxImportError(problems)
    state: dict[str, torch.Tensor | np.ndarray] = {
        a.name: _state_value(program, a.state_key) for a in arguments if a.state_key is not None
    }
    tree = output_tree or exported_tree(program)
    names = [a.name for a in arguments]
    return FxImport(module, names, user_count, state, walked.node_count, walked.slots, tree)


def _check_program(program: ExportedProgram, arguments: list[_Argument]) -> None:
    """Raise `FxImportError` for dynamic inputs, or listing every unsupported op and mutation."""
    if diagnostics := _check_static(arguments):
        raise FxImportError(diagnostics)
    diagnostics = _check_unsupported(program) + _check_mutations(program)
    if diagnostics:
        summary = Diagnostic(
            Severity.ERROR,
            f"{len(diagnostics)} unsupported op(s) in the FX graph; nothing was imported",
        )
        raise FxImportError([*diagnostics, summary])


@dataclass
class _Walked:
    """What the graph walk produced: the function's results, the output slots, the node count."""

    outputs: list[SSAValue] = field(default_factory=list)
    slots: list[OutputSlot] = field(default_factory=list)
    node_count: int = 0
    updates: list[tuple[SSAValue, str]] = field(default_factory=list)
    """Each updated buffer's new value and the buffer's argument name (`ktir.frontend.updates`)."""


def _walk(emitter: Emitter, program: ExportedProgram) -> _Walked:
    """Convert every node into the emitter's block; raise `FxImportError` listing every failure."""
    errors: list[Diagnostic] = []
    walked = _Walked()
    for node in program.graph.nodes:
        if node.op == "output":
            if not errors:  # a failed node already explains a missing output value
                user, updates = split_outputs(program, node)
                walked.outputs, walked.slots = _outputs(emitter, user, node, errors)
                walked.updates = [(emitter.value(item), name) for item, name in updates]
            continue
        if node.op != "call_function" or node.target in aten_data.IGNORED:
            continue
        walked.node_count += 1
        if _is_empty(node.meta.get("val")):
            emitter.empty.add(node)
            continue
        emitter.location, emitter.node_name = node_location(node), node.name
        try:
            _convert(emitter, node)
        except UnsupportedNode as error:
            errors.append(diagnostic_at(node, f"cannot import '{node.target}' (node '{node.name}'): {error}"))
    if errors:
        raise FxImportError(errors)
    return walked


def _convert(emitter: Emitter, node: torch.fx.Node) -> None:
    if node.target is operator.getitem:
        source_node, index = node.args[0], node.args[1]
        source = emitter.values.get(source_node) if isinstance(source_node, torch.fx.Node) else None
        if isinstance(source, list) and isinstance(index, int) and index < len(source):
            emitter.values[node] = source[index]
            return
        raise UnsupportedNode("getitem of an output ktir does not produce")
    converter = converter_of(node.target)
    if converter is None:
        converter = aten_data.cpu_fallback
    result = converter(emitter, node)
    if result is not None:
        emitter.values[node] = result


def _outputs(
    emitter: Emitter, items: list[Any], node: torch.fx.Node, errors: list[Diagnostic]
) -> tuple[list[SSAValue], list[OutputSlot]]:
    """
    The function's results and one slot per tensor the graph returns (`items`, the user
    outputs of the output `node`; constants are skipped).
    """
    values: list[SSAValue] = []
    slots: list[OutputSlot] = []
    for item in pytree.tree_leaves(items):
        if not isinstance(item, torch.fx.Node):
            continue  # None and numbers are constants of the output tree, not results
        fake = item.meta.get("val")
        shape = tuple(int(n) for n in getattr(fake, "shape", ()))
        dtype = getattr(fake, "dtype", torch.float32)
        if item in emitter.empty:
            slots.append(OutputSlot(shape, dtype, None))
            continue
        try:
            values.append(emitter.value(item))
        except UnsupportedNode as error:
            errors.append(diagnostic_at(node, f"cannot return {item!r}: {error}"))
            continue
        slots.append(OutputSlot(shape, dtype, len(values) - 1))
    return values, slots


def _is_empty(fake: Any) -> bool:
    """True for a tensor value with no elements (e.g. the pass-through half of a full rotary)."""
    return isinstance(fake, torch.Tensor) and fake.numel() == 0 and fake.dim() > 0


def _arg_attrs(arguments: list[_Argument]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr(a.attributes) for a in arguments])


__all__ = [
    "FxImport",
    "FxImportError",
    "export_program",
    "import_exported",
    "import_fx",
    "import_program",
]
