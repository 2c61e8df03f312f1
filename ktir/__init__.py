"""
ktir: Kernel Tile IR for the IBM Spyre accelerator, built on xDSL.

`ktir.compile` and `ktir.estimate` compile a PyTorch model (the second times one call without
values); `ktir.generate` and `ktir.estimate_llm` run and estimate language models with a KV
cache (`ktir.llm`). The layout algebra is in `ktir.layout`, the hardware description in
`ktir.hardware.target`, the dialect in `ktir.dialects.ktir`, passes in `ktir.passes`,
`ktir-opt` in `ktir.tools`, the PyTorch importer in `ktir.frontend.fx` and the NumPy reference
executor in `ktir.reference`.
"""

from typing import Any

from ktir.layout.spyre import SpyreTensorLayout
from ktir.layout.transfer import to_device, to_host

__all__ = [
    "SpyreTensorLayout",
    "compile",
    "estimate",
    "estimate_llm",
    "generate",
    "import_fx",
    "load",
    "run_pipeline",
    "simulate_serving",
    "to_device",
    "to_host",
]
__version__ = "0.1.0"


def import_fx(model_or_fn: Any, example_args: Any, example_kwargs: Any = None) -> Any:
    """Graph-level ktir (an xDSL `ModuleOp`) for a PyTorch model; see `ktir.frontend.fx.import_fx`."""
    # Imported lazily: torch is an optional dependency and slow to import.
    from ktir.frontend import require_torch

    require_torch("ktir.import_fx")
    from ktir.frontend.fx import import_fx as _import_fx

    return _import_fx(model_or_fn, example_args, example_kwargs)


def compile(model_or_fn: Any, example_args: Any, example_kwargs: Any = None, **options: Any) -> Any:
    """
    A PyTorch model compiled to core-level ktir, a `Program` that runs on the simulated chip:
    `ktir.compile(model, (x,), cores=32)(x)`; the options: see `ktir.compiler.compile`.
    """
    from ktir.compiler import compile as _compile

    return _compile(model_or_fn, example_args, example_kwargs, **options)


def estimate(model_or_fn: Any, example_args: Any, example_kwargs: Any = None, **options: Any) -> Any:
    """The cycle report of one call without computing values; see `ktir.compiler.estimate`."""
    from ktir.compiler import estimate as _estimate

    return _estimate(model_or_fn, example_args, example_kwargs, **options)


def estimate_llm(model_or_config: Any, **options: Any) -> Any:
    """Time to first token and per-token decode time of a causal LM; see `ktir.llm.estimate`."""
    from ktir.llm.estimate import estimate_llm as _estimate_llm

    return _estimate_llm(model_or_config, **options)


def generate(model: Any, input_ids: Any, max_new_tokens: int, **options: Any) -> Any:
    """Greedy generation with a static KV cache on the simulator; see `ktir.llm.generate`."""
    from ktir.llm.generate import generate as _generate

    return _generate(model, input_ids, max_new_tokens, **options)


def load(directory: Any) -> Any:
    """A program `Program.save` wrote, ready to call; see `ktir.saved.load`."""
    from ktir.saved import load as _load

    return _load(directory)


def run_pipeline(module: Any, spec: str, **options: Any) -> Any:
    """
    Run a `ktir-opt -p` pass pipeline on `module` in place; `options` (`target=` a `Target` or
    a TOML file, ...) and the rest: see `ktir.pipeline.run_pipeline`.
    """
    from ktir.pipeline import run_pipeline as _run_pipeline

    return _run_pipeline(module, spec, **options)


def simulate_serving(model_or_config: Any, **options: Any) -> Any:
    """Continuous-batching serving of a causal LM on the simulated chip; see `ktir.llm.serving`."""
    from ktir.llm.serving import simulate_serving as _simulate_serving

    return _simulate_serving(getattr(model_or_config, "config", model_or_config), **options)
