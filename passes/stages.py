"""
The stages of a pipeline as they run: each pass itself, except a pass that is a sequence of
passes (`PassSequence`, as `ktir-compile` is), which runs as its passes one by one, so that
each can be timed, shown or printed (`ktir-opt --mlir-timing`, `--print-ir-after-all`, the
compile progress bar).

This module imports no pass: `ktir-opt` reads a pipeline without importing the passes it
does not run.

Example: `cse,ktir-compile{cores=4}` runs as `cse`, then `ktir-propagate-layouts` ... `ktir-lower-to-cores`,
each with parent `ktir-compile`, the first and last marked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from xdsl.passes import ModulePass


@runtime_checkable
class PassSequence(Protocol):
    """A pass that is its passes run in order (`ktir-compile`)."""

    name: str

    def passes(self) -> list[ModulePass]:
        """The passes, in order."""
        ...


@dataclass(frozen=True)
class Stage:
    """A pass as it runs: itself, or a stage of a pipeline pass (`parent`, its first and last)."""

    module_pass: ModulePass
    parent: str | None = None
    first: bool = True
    last: bool = True


def expand_stages(passes: Iterable[ModulePass]) -> list[Stage]:
    """
    Each pass as it is, except a `PassSequence`, which becomes its passes in order: running them
    one by one is running it, and each can be timed, shown or printed.
    """
    stages: list[Stage] = []
    for module_pass in passes:
        if not isinstance(module_pass, PassSequence):
            stages.append(Stage(module_pass))
            continue
        inner = module_pass.passes()
        stages.extend(Stage(p, module_pass.name, i == 0, i == len(inner) - 1) for i, p in enumerate(inner))
    return stages
