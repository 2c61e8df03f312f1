"""
`ktir.compile` and `ktir.estimate`: import a PyTorch model (torch.export), run the pass
pipeline (`ktir.pipeline`) down to core-level ktir and return a `Program` that runs on the
simulated chip (`ktir.program`), or the report of one call without values.

```python
import ktir
program = ktir.compile(model, (x,))
y = program(x)                      # on the simulated chip; program.report has the cycles
```
"""

from __future__ import annotations

from typing import Any

from ktir.ir.values import functions_of
from ktir.passes.stages import expand_stages
from ktir.pipeline import TargetLike, chip_of, parse_pipeline, run_pipeline
from ktir.program import Program, ShardedProgram
from ktir.progress import StageProgress
from ktir.sim import Report


def compile(
    model_or_fn: Any,
    example_args: Any,
    example_kwargs: Any = None,
    *,
    cores: int | None = None,
    policy: str = "dataflow",
    target: TargetLike = None,
    fold: bool = True,
    fuse: bool = True,
    handoff: bool = True,
    quiet: bool = False,
    cards: int = 1,
) -> Program | ShardedProgram:
    """
    Import a PyTorch model and lower it to core-level ktir over `cores` cores of `target`.

    `target` is the chip: a `ktir.hardware.target.Target` or a TOML file describing one
    (`ktir.hardware.target.load_target`; default: Spyre); planning, the static check and the
    simulator all use it. `cores` defaults to all of the target's cores. With `fold` (the
    default) what depends on no user input (masks, rotary tables, casts of weights) is computed
    once here and kept as state (`ktir.frontend.constants.fold_constants`). With `fuse` (the
    default) producer-consumer chains run as one kernel each (`ktir-fuse`); `fuse=False` keeps
    one kernel per op. With `handoff` (the default) a matmul reading another matmul's result
    reads it from LX where that is faster (`ktir-divide-work`, `ktir.cores.handoff`);
    `handoff=False` keeps every kernel result that crosses between them in device memory. A
    compile that takes more than 2 s shows a progress bar with the stage running on stderr, if
    stderr is a terminal (`ktir.progress`);
    `quiet=True` turns it off.

    ```python
    prog = ktir.compile(model, (x,), cores=32)
    y = prog(x)
    ```

    With `cards` > 1 (a Hugging Face decoder; 1 to 8) the model is split over that many cards
    by tensor parallelism (`ktir.frontend.tensor_parallel`: Megatron's split, an all-reduce after
    each attention and MLP, an all-gather of the logits) and the result is a `ShardedProgram`:
    one shard compiled, every card's shard run, card 0's report. A card count or model it
    cannot split raises `ktir.frontend.tensor_parallel.TensorParallelError`.
    """
    # The frontend loads on use: torch is an optional dependency, and slow to import.
    from ktir.frontend import require_torch

    require_torch("ktir.compile")
    chip = chip_of(target)  # a bad target fails before the (slow) import
    from ktir.frontend.attention import trim_hidden_keys
    from ktir.frontend.constants import fold_constants
    from ktir.frontend.fx import import_program
    from ktir.frontend.tensor_parallel import check_cards, shard_model

    models = [model_or_fn]
    if check_cards(cards) > 1:
        models = [shard_model(model_or_fn, rank, cards) for rank in range(cards)]
    options = f"policy={policy} fuse={str(fuse).lower()} handoff={str(handoff).lower()}"
    options += "" if cores is None else f" cores={cores}"
    spec = f"ktir-compile{{{options}}}"
    stages = len(expand_stages(parse_pipeline(spec)))
    imports = []
    with StageProgress(2 * len(models) + stages, quiet=quiet) as progress:
        for rank, model in enumerate(models):
            progress.stage("importing (torch.export)" + (f", card {rank}" if cards > 1 else ""))
            imports.append(import_program(model, tuple(example_args), example_kwargs or {}))
            progress.stage("folding constants")
            if fold:
                fold_constants(imports[-1])
            trim_hidden_keys(functions_of(imports[-1].module)[0].body.block)  # causal offsets final
        run_pipeline(imports[0].module, spec, target=chip, progress=progress)
    if cards == 1:
        return Program(imports[0].module, imports[0], chip)
    # Every card's shard is the same program; only its state (the weights) differs.
    assert all(i.input_names == imports[0].input_names for i in imports), "shards import differently"
    return ShardedProgram([Program(imports[0].module, imported, chip) for imported in imports])


def estimate(
    model_or_fn: Any,
    example_args: Any,
    example_kwargs: Any = None,
    *,
    cores: int | None = None,
    policy: str = "dataflow",
    target: TargetLike = None,
    fuse: bool = True,
    quiet: bool = True,
) -> Report:
    """
    Compile like `compile` and return the report of one call without computing values
    (`Program.estimate`): the same cycles as running it. The model and the example arguments
    may live on PyTorch's `meta` device, so no weights need to be allocated; what is computed
    from meta state at compile time stays state (never a constant splat).

    ```python
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(config)
    report = ktir.estimate(model, (torch.zeros(1, 512, dtype=torch.long, device="meta"),))
    ```
    """
    options = {"cores": cores, "policy": policy, "target": target, "fuse": fuse, "quiet": quiet}
    return compile(model_or_fn, example_args, example_kwargs, **options).estimate()
