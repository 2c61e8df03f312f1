"""
The pipeline API: run passes on a module in place, with `ktir-opt -p` syntax.

```python
import ktir
module = ktir.import_fx(model, (x,))
ktir.run_pipeline(module, "canonicalize,cse")          # same spec as `ktir-opt -p`
```

Passes are looked up in `available_passes()`: the ktir passes plus the general xDSL passes that
`ktir-opt` offers. The module is verified after every pass (including `#ktir.tiled`
encodings), so a pass that breaks the IR is named in the error. Apart from `ktir.compile`
(compiled programs and their runtime), so that `ktir-opt` starts without the simulator.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes as get_xdsl_passes
from xdsl.utils.exceptions import ArgSpecParseError

from ktir.hardware.target import Target, TargetTypeError, resolve_target
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, verify_module
from ktir.passes import get_all_passes
from ktir.passes.stages import expand_stages
from ktir.progress import StageProgress

TargetLike = Target | str | os.PathLike[str] | None
"""What a `target=` argument may be: a `Target`, a TOML file, or None for Spyre."""

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


def with_target(passes: list[ModulePass], target: TargetLike) -> list[ModulePass]:
    """
    `passes` with `target` (`chip_of`: a `Target` or a TOML file) set on each pass that has a
    `target` option left at its default.
    """
    if target is None or target == "":
        return passes
    chip = chip_of(target)
    return [
        dataclasses.replace(p, target=chip)
        if any(f.name == "target" for f in dataclasses.fields(p)) and not p.target  # pyright: ignore[reportAttributeAccessIssue]  # a pass with a target field, tested first
        else p
        for p in passes
    ]


def chip_of(target: TargetLike) -> Target:
    """
    The `Target` an API argument names (`resolve_target`: a `Target`, a TOML file, or None for
    Spyre); a file or `Target` it refuses is a `PipelineError`, a wrong type a `TargetTypeError`.
    """
    try:
        return resolve_target(target)
    except TargetTypeError:
        raise
    except ValueError as error:
        raise PipelineError(str(error)) from None


def run_pipeline(
    module: ModuleOp,
    spec: str,
    *,
    ctx: Context | None = None,
    verify: bool = True,
    target: TargetLike = None,
    progress: StageProgress | None = None,
) -> ModuleOp:
    """
    Run the passes of `spec` on `module` in place and return it.

    `target` (a `Target`, or a TOML file, see `ktir.hardware.target.load_target`) is given to
    every pass of the pipeline that takes a `target` option and was not given one in `spec`.

    With `verify` (the default) the module is verified after each pass; a failure raises
    `DiagnosticError` whose messages end with `(after pass '<name>')`. `ktir-compile` runs as
    its stages (`ktir.passes.stages.expand_stages`), each announced to `progress` if given.
    Something other than a `ModuleOp` (MLIR text, a function) or a `spec` that is not a string
    raises `PipelineError`.
    """
    if not isinstance(module, ModuleOp):
        hint = (
            ": parse MLIR text first, with ktir.ir.diagnostics.parse_module(make_context(), text)"
            if isinstance(module, str | bytes)
            else ""
        )
        raise PipelineError(
            f"run_pipeline needs a builtin.module (an xDSL ModuleOp), not {type(module).__name__}{hint}"
        )
    if not isinstance(spec, str):
        raise PipelineError(
            f"the pass pipeline must be a string like 'canonicalize,cse', not {type(spec).__name__}"
        )
    context = ctx or make_context()
    for stage in expand_stages(with_target(parse_pipeline(spec), target)):
        if progress is not None:
            progress.stage(stage.module_pass.name)
        stage.module_pass.apply(context, module)
        if not verify or not stage.last:  # a pipeline pass is verified once, after its last stage
            continue
        if errors := verify_module(module):
            for error in errors:
                error.message += f" (after pass '{stage.parent or stage.module_pass.name}')"
            raise DiagnosticError(errors)
    return module


__all__ = [
    "XDSL_PASSES",
    "PipelineError",
    "TargetLike",
    "available_passes",
    "chip_of",
    "parse_pipeline",
    "run_pipeline",
    "with_target",
]
