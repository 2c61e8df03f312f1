"""
The Python pipeline API: run passes on a module in place, with `ktir-opt -p` syntax.

```python
import ktir
module = ktir.import_fx(model, (x,))
ktir.run_pipeline(module, "canonicalize,cse")          # same spec as `ktir-opt -p`
```

Passes are looked up in `available_passes()`: the ktir passes plus the general xDSL passes that
`ktir-opt` offers. The module is verified after every pass (including `#ktir.tiled`
encodings), so a pass that breaks the IR is named in the error.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes as get_xdsl_passes
from xdsl.utils.exceptions import ArgSpecParseError

from ktir.context import make_context
from ktir.diagnostics import DiagnosticError, verify_module
from ktir.passes import get_all_passes
from ktir.sim import Report, simulate
from ktir.target import SPYRE, Target

XDSL_PASSES = ("canonicalize", "cse", "dce", "arith-add-fastmath", "convert-linalg-to-loops")
"""General-purpose xDSL passes available in ktir pipelines."""


class PipelineError(ValueError):
    """A pipeline spec names an unknown pass or option, or does not parse."""


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> import thunk, for every pass a ktir pipeline may name."""
    xdsl_passes = get_xdsl_passes()
    passes = {name: xdsl_passes[name] for name in XDSL_PASSES}
    passes.update(get_all_passes())
    return passes


def parse_pipeline(spec: str) -> list[ModulePass]:
    """
    The passes of a `ktir-opt -p` spec, e.g. `"cse,arith-add-fastmath{flags=none}"`.

    Raises `PipelineError` naming the problem and listing the available passes.
    """
    passes = available_passes()
    available = ", ".join(sorted(passes))
    try:
        return list(PassPipeline.parse_spec(passes, spec).passes)
    except ArgSpecParseError as error:
        detail = str(error).strip().splitlines()[-1].strip()
        raise PipelineError(
            f"invalid pass pipeline '{spec}': {detail}; available passes: {available}"
        ) from error
    except Exception as error:  # xDSL raises plain exceptions for unknown passes and options
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PipelineError(
            f"invalid pass pipeline '{spec}': {message}; available passes: {available}"
        ) from error


def run_pipeline(module: ModuleOp, spec: str, *, ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """
    Run the passes of `spec` on `module` in place and return it.

    With `verify` (the default) the module is verified after each pass; a failure raises
    `DiagnosticError` whose messages end with `(after pass '<name>')`.
    """
    context = ctx or make_context()
    for module_pass in parse_pipeline(spec):
        module_pass.apply(context, module)
        if not verify:
            continue
        if errors := verify_module(module):
            for error in errors:
                error.message += f" (after pass '{module_pass.name}')"
            raise DiagnosticError(errors)
    return module


class Program:
    """
    A compiled model: core-level ktir for every op, run on the simulated chip.

    `program(*args)` runs the cores' programs on `ktir.sim` and returns torch tensors;
    `program.report` is the cycle report of the last call; `program.module` is the core-level IR.
    """

    def __init__(self, module: ModuleOp, imported: Any, target: Target = SPYRE) -> None:
        self.module = module
        self.imported = imported
        self.target = target
        self._report: Report | None = None

    @property
    def report(self) -> Report:
        """The simulator's report of the last call (cycles, per kernel and op, roofline, per core)."""
        if self._report is None:
            raise RuntimeError("the program has not run yet: call it first, e.g. prog(*example_args)")
        return self._report

    def __call__(self, *args: Any) -> list[Any]:
        import torch

        result = simulate(self.module, self.imported.arguments(*args), target=self.target)
        self._report = result.report
        return [torch.from_numpy(np.ascontiguousarray(o)) for o in result.outputs]


def compile(
    model_or_fn: Any,
    example_args: Any,
    example_kwargs: Any = None,
    *,
    cores: int = 32,
    policy: str = "default",
) -> Program:
    """
    Import a PyTorch model and lower it to core-level ktir over `cores` cores.

    ```python
    prog = ktir.compile(model, (x,), cores=32)
    y, = prog(x)
    ```
    """
    from ktir.frontend.fx import import_program

    imported = import_program(model_or_fn, tuple(example_args), example_kwargs or {})
    run_pipeline(imported.module, f"ktir-compile{{cores={cores} policy={policy}}}")
    return Program(imported.module, imported)


def torch_backend(graph_module: Any, example_inputs: list[Any]) -> Callable[..., Any]:
    """
    The `torch.compile` backend `"ktir"`: `torch.compile(model, backend="ktir")`.

    aot_autograd turns Dynamo's graph into core ATen with parameters lifted to inputs; the
    forward graph goes through `compile` once (Dynamo guards on shapes) and every call runs on
    the simulator (`Program`). The last call's report is `ktir.compile.last_report()`.
    """
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    def forward_compiler(graph: Any, fake_inputs: list[Any]) -> Callable[..., Any]:
        import torch
        from torch._subclasses.fake_tensor import unset_fake_temporarily

        # Export needs real example tensors; only shapes and dtypes matter (static shapes).
        with unset_fake_temporarily():
            examples = [torch.zeros(tuple(t.shape), dtype=t.dtype) for t in fake_inputs]
            program = compile(graph, examples)

        def run(*args: Any) -> list[Any]:
            outputs = program(*args)
            _LAST_REPORT[0] = program.report
            return outputs

        return make_boxed_func(run)

    return aot_autograd(fw_compiler=forward_compiler)(graph_module, example_inputs)


_LAST_REPORT: list[Report | None] = [None]


def last_report() -> Report:
    """The report of the last program run through the `"ktir"` torch.compile backend."""
    if _LAST_REPORT[0] is None:
        raise RuntimeError("no model has run through torch.compile(backend='ktir') yet")
    return _LAST_REPORT[0]


class _CallableModule(types.ModuleType):
    """Lets `ktir.compile(model, args)` call `compile` although `ktir.compile` is this module."""

    def __call__(self, *args: Any, **kwargs: Any) -> Program:
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
