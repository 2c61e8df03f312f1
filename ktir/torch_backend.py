"""
The `torch.compile` backend `"ktir"` (docs/torch-compile.md): Dynamo's graph compiled by
`ktir.compile` for inference and run on the simulated chip.

```python
compiled = torch.compile(model, backend="ktir", options={"cores": 16, "target": "chip.toml"})
y = compiled(x)
ktir.torch_backend.last_report().print()    # the cycles of that call; last_program() is its IR
```

The name `"ktir"` is `torch_backend`, this module's `KtirBackend`. A backend object of one's own
keeps its own last program: `backend = KtirBackend()`, `torch.compile(model, backend=backend)`,
`backend.last_report()`.

The backend compiles for inference only, in grad mode or not: the graph is traced without
autograd, so `torch.no_grad()` changes nothing in the program, and `backward()` through its
outputs raises `TorchBackendError`. Options are `cores` and `target` (`BackendOptions`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

from ktir.compiler import compile
from ktir.hardware.target import SPYRE, Target, TargetTypeError, resolve_target
from ktir.program import Program
from ktir.sim import Report

INFERENCE_ONLY = "ktir's torch.compile backend is inference-only: backward() is not supported"
"""What `backward()` through a compiled model's outputs raises."""

OPTIONS = {"cores": "an int", "target": "a ktir.hardware.target.Target or a TOML file"}
"""The keys of `torch.compile(..., backend="ktir", options={...})`, and what each takes: the
cores to divide the work over (default: all of the target's) and the chip (default: Spyre)."""


class TorchBackendError(ValueError):
    """The backend was asked for what it does not do: an unknown option or a backward pass."""


@dataclass(frozen=True)
class BackendOptions:
    """What `options` of `torch.compile(model, backend="ktir", options=...)` set (`OPTIONS`)."""

    cores: int | None = None
    target: Target = SPYRE

    @classmethod
    def parse(cls, options: Any) -> BackendOptions:
        """The options of a `dict` (None: the defaults); `TorchBackendError` naming the problem."""
        if options is None:
            return cls()
        if not isinstance(options, Mapping):
            raise TorchBackendError(f"options must be a dict, not {type(options).__name__}")
        if unknown := sorted(str(key) for key in options if key not in OPTIONS):
            raise TorchBackendError(
                f"unknown option(s) {', '.join(repr(k) for k in unknown)} for torch.compile's 'ktir' "
                f"backend; known options: {', '.join(f'{k!r} ({v})' for k, v in OPTIONS.items())}"
            )
        try:
            target = resolve_target(options.get("target"))
        except (TargetTypeError, ValueError) as error:
            raise TorchBackendError(f"option 'target': {error}") from None
        cores = options.get("cores")
        if cores is not None and (isinstance(cores, bool) or not isinstance(cores, int)):
            raise TorchBackendError(f"option 'cores' must be an int, not {type(cores).__name__}")
        if cores is not None and not 1 <= cores <= target.cores:
            raise TorchBackendError(f"option 'cores' must be in 1..{target.cores}, not {cores}")
        return cls(cores, target)


class KtirBackend:
    """
    A `torch.compile` backend running Dynamo's graphs on the simulated chip, which keeps the
    program and report of the last call it ran (`last_program()`, `last_report()`).
    `torch_backend` is the one `backend="ktir"` names.
    """

    def __init__(self) -> None:
        self._last_program: Program | None = None

    def __call__(
        self, graph_module: Any, example_inputs: list[Any], *, options: Any = None, mode: str | None = None
    ) -> Callable[..., Any]:
        """
        The `torch.compile` backend `"ktir"`: `torch.compile(model, backend="ktir", options=...)`.

        aot_autograd turns Dynamo's graph into core ATen with parameters lifted to inputs, traced
        without autograd even in grad mode: in grad mode it would trace the joint forward and
        backward graph, whose forward also returns what backward saves (the input of a SiLU, a
        weight transposed), so those intermediates would be written out instead of staying in LX.
        ktir compiles static shapes, so the forward graph is specialized: the first call with a
        given set of input shapes, dtypes and symbolic sizes (with `dynamic=True`, or after Dynamo
        recompiles for a second shape, sizes arrive as integer inputs) compiles one `Program` for
        them, and later calls with the same key reuse it. Every call runs on the simulator; the
        last call's program and report are `last_program()` and `last_report()`.

        The module's parameters and buffers (Dynamo passes them as graph inputs) are the program's
        state, as with `ktir.compile`: laid out as their consumers read them, packed into device
        memory on the first call and kept there while the same, unmodified tensors come back.
        `mode` (torch.compile's) is refused: the backend has one way of compiling.
        """
        import torch
        from torch._dynamo.backends.common import aot_autograd

        settings = BackendOptions.parse(options)
        if mode is not None:
            raise TorchBackendError(f"torch.compile's 'ktir' backend has no modes; got mode={mode!r}")
        state = _state_positions(graph_module, example_inputs)
        compiler = functools.partial(_forward_compiler, len(example_inputs), state, settings, self._ran)
        with torch.no_grad():  # inference: the forward graph alone (see above)
            compiled = aot_autograd(fw_compiler=compiler)(graph_module, example_inputs)
        return _inference_only(compiled)

    def _ran(self, program: Program) -> None:
        self._last_program = program

    def last_program(self) -> Program:
        """The program of the last call through this backend (its IR is `.module`)."""
        if self._last_program is None:
            raise RuntimeError("no model has run through this ktir torch.compile backend yet")
        return self._last_program

    def last_report(self) -> Report:
        """The report of the last call through this backend."""
        return self.last_program().report


torch_backend = KtirBackend()
"""The backend `torch.compile(model, backend="ktir")` uses (pyproject's `torch_dynamo_backends`)."""


def _forward_compiler(
    input_count: int,
    state: frozenset[int],
    settings: BackendOptions,
    ran: Callable[[Program], None],
    graph: Any,
    fake_inputs: list[Any],
) -> Callable[..., Any]:
    """aot_autograd's forward compiler: a function running `graph` as ktir `Program`s."""
    from torch._functorch.aot_autograd import make_boxed_func  # pyright: ignore[reportPrivateImportUsage]  # torch: not re-exported

    # aot_autograd keeps Dynamo's inputs in order for inference; if it did not, no input
    # is taken for state (correct, only slower).
    positions = state if len(fake_inputs) == input_count else frozenset()
    # A static graph compiles now; a graph with symbolic sizes compiles per concrete shape
    # on its first call (outside Dynamo's tracing context, whose shape guards it must not see).
    programs: dict[tuple[Any, ...], Program] = {}
    if all(_is_tensor(a) and not _has_symbols(a) for a in fake_inputs):
        examples = _examples(fake_inputs)
        key = tuple(_specialization_key(a) for a in examples)
        programs[key] = _compile_specialized(graph, examples, positions, settings)

    def run(*args: Any) -> Any:
        key = tuple(_specialization_key(a) for a in args)
        if key not in programs:
            # A fresh thread has none of the dispatch state (functionalization, fake and
            # tracing modes) the calling frame may carry, so export traces from scratch.
            with ThreadPoolExecutor(max_workers=1) as worker:
                programs[key] = worker.submit(_compile_specialized, graph, args, positions, settings).result()
        program = programs[key]
        program.bind_state([args[i] for i in sorted(positions)])
        outputs = program(*(a for i, a in enumerate(args) if _is_tensor(a) and i not in positions))
        ran(program)
        return outputs

    return make_boxed_func(run)


def _inference_only(compiled: Callable[..., Any]) -> Callable[..., Any]:
    """
    `compiled`, whose floating-point outputs lead to `TorchBackendError(INFERENCE_ONLY)` when
    `backward()` reaches them, if the call could have recorded a graph for autograd (grad
    mode, an input that requires grad). Without that, backward would complain that they have
    no `grad_fn`, which does not say why.
    """
    import torch
    from torch.utils._pytree import tree_leaves

    def run(*args: Any) -> Any:
        graded = [a for a in tree_leaves(args) if _is_tensor(a) and a.requires_grad]
        outputs = compiled(*args)
        if not graded or not torch.is_grad_enabled() or not isinstance(outputs, list | tuple):
            return outputs
        inputs = {id(a) for a in tree_leaves(args)}  # an input handed back is the caller's: untouched
        positions = [
            i
            for i, o in enumerate(outputs)
            if _differentiable(o) and not o.requires_grad and id(o) not in inputs
        ]
        if not positions:
            return outputs
        attached = _no_backward().apply([outputs[i] for i in positions], *graded)
        result = list(outputs)
        for i, tensor in zip(positions, attached, strict=True):
            result[i] = tensor
        return type(outputs)(result)

    return run


def _differentiable(value: Any) -> bool:
    return _is_tensor(value) and (value.is_floating_point() or value.is_complex())


@functools.cache
def _no_backward() -> Any:
    """A `torch.autograd.Function` passing tensors through whose backward raises (lazy: torch)."""
    import torch

    class NoBackward(torch.autograd.Function):
        """Outputs of a ktir program: forward returns them as they are; backward refuses."""

        @staticmethod
        def forward(ctx: Any, outputs: list[Any], *graded: Any) -> tuple[Any, ...]:
            return tuple(outputs)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise TorchBackendError(INFERENCE_ONLY)

    return NoBackward


def _state_positions(graph_module: Any, example_inputs: Sequence[Any]) -> frozenset[int]:
    """Positions of Dynamo's graph inputs that are the module's parameters or buffers."""
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        return frozenset()
    found = set()
    for i, node in enumerate(placeholders):
        source = getattr(node.meta.get("grapharg"), "source", None)
        name = getattr(source, "name", "")
        name = name() if callable(name) else str(name)
        if ("._parameters[" in name or "._buffers[" in name) and _is_tensor(example_inputs[i]):
            found.add(i)
    return frozenset(found)


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _has_symbols(tensor: Any) -> bool:
    return not all(isinstance(n, int) for n in tensor.shape)


def _examples(fake_inputs: Sequence[Any]) -> list[Any]:
    """Real stand-ins for Dynamo's (static) fake inputs: zeros of each shape and dtype."""
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        return [torch.zeros(tuple(a.shape), dtype=a.dtype) for a in fake_inputs]


def _specialization_key(value: Any) -> Any:
    """What one compiled program is specialized on: a tensor's shape and dtype, or a value."""
    if _is_tensor(value):
        return (tuple(value.shape), value.dtype)
    return value


def _compile_specialized(
    graph: Any, args: Sequence[Any], state: frozenset[int], settings: BackendOptions
) -> Program:
    """
    `graph` compiled for `args` with `settings`: the inputs at `state` positions become the
    program's state, other tensors stay inputs, and every other argument becomes a constant.
    """
    import torch
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        # Fresh zeros, not the caller's tensors: only shapes and dtypes matter, and on a first
        # call those may still be wrapped by aot_autograd's functionalization. The state's
        # values are bound on every call (`Program.bind_state`).
        tensors = [i for i, a in enumerate(args) if _is_tensor(a)]
        zeros = {i: torch.zeros(tuple(args[i].shape), dtype=args[i].dtype) for i in tensors}
        bound = _bind_constants(graph, args)
        stateful = _stateful_module(
            bound, [i in state for i in tensors], [zeros[i] for i in tensors if i in state]
        )
        # No folding: the state is bound per call, so nothing computed from it is constant.
        user = [zeros[i] for i in tensors if i not in state]
        program = compile(stateful, user, fold=False, cores=settings.cores, target=settings.target)
        return cast(Program, program)  # one card


def _bind_constants(graph: Any, args: Sequence[Any]) -> Any:
    """A copy of the GraphModule whose non-tensor inputs (symbolic sizes) are the values in `args`."""
    import torch
    import torch.fx.node  # map_arg's module (torch.fx has loaded it)

    if all(_is_tensor(a) for a in args):
        return graph
    bound = torch.fx.GraphModule(graph, copy.deepcopy(graph.graph))
    placeholders = [n for n in bound.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, args, strict=True):
        if _is_tensor(value):
            continue
        for user in list(node.users):
            user.args = torch.fx.node.map_arg(
                user.args, lambda n, node=node, value=value: value if n is node else n
            )
            user.kwargs = torch.fx.node.map_arg(
                user.kwargs, lambda n, node=node, value=value: value if n is node else n
            )
        bound.graph.erase_node(node)
    for node in bound.graph.nodes:
        node.meta.clear()  # symbolic values of Dynamo's shape environment; export retraces them
    bound.recompile()
    return bound


def _stateful_module(graph: Any, is_state: list[bool], state: list[Any]) -> Any:
    """
    `graph` as a module whose inputs at the `is_state` positions are its buffers (`state00000`,
    ...), so export lifts them as model state; the other inputs stay the forward's arguments.
    """
    import torch

    class StatefulGraph(torch.nn.Module):
        def forward(self, *user: Any) -> Any:
            buffers, inputs = iter(self.buffers(recurse=False)), iter(user)
            return self.graph(*(next(buffers) if s else next(inputs) for s in is_state))  # pyright: ignore[reportCallIssue]  # torch: Module.__getattr__ is typed Tensor | Module

    module = StatefulGraph()
    module.graph = graph  # a submodule, so export sees the graph's own constants as it did
    for j, tensor in enumerate(state):
        module.register_buffer(f"state{j:05d}", tensor)
    return module


def last_program() -> Program:
    """The program of the last call through `torch.compile(model, backend="ktir")` (`torch_backend`)."""
    return torch_backend.last_program()


def last_report() -> Report:
    """The report of the last call through `torch.compile(model, backend="ktir")` (`torch_backend`)."""
    return torch_backend.last_report()
