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
    A compiled model: core-level ktir for every op, runnable on NumPy inputs.

    `program(*args)` runs the cores' programs functionally (`ktir.core_executor`) and returns
    torch tensors; `program.module` is the core-level IR.
    """

    def __init__(self, module: ModuleOp, imported: Any) -> None:
        self.module = module
        self.imported = imported

    def __call__(self, *args: Any) -> list[Any]:
        import torch

        from ktir.core_executor import run

        outputs = run(self.module, self.imported.arguments(*args))
        return [torch.from_numpy(np.ascontiguousarray(o)) for o in outputs]


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


class _CallableModule(types.ModuleType):
    """Lets `ktir.compile(model, args)` call `compile` although `ktir.compile` is this module."""

    def __call__(self, *args: Any, **kwargs: Any) -> Program:
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
