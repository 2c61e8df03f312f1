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

from collections.abc import Callable

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
