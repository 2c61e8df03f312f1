"""
`FunctionPass`: the shape the target-aware ktir passes share. Each runs on every function of
the module for one target, given as a TOML file (`ktir.hardware.target.load_target`; default:
Spyre), checked when the pipeline is parsed (a bad file is a usage error). An error of
`ktir.cores` that names its op (`IterationError`, `CoreCheckError`) becomes a located
diagnostic at that op.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ktir.cores.check import CoreCheckError
from ktir.cores.iteration import IterationError
from ktir.hardware.target import Target, resolve_target
from ktir.ir.diagnostics import op_error
from ktir.ir.values import functions_of


@dataclass(frozen=True)
class FunctionPass(ModulePass, ABC):
    """A pass applied to each function for one target (see the module docstring)."""

    target: str | Target = ""
    """A target TOML file (`ktir.hardware.target.load_target`), or from Python a `Target`;
    default: Spyre."""

    def __post_init__(self) -> None:
        resolve_target(self.target)  # a bad file is a usage error when the pipeline is parsed

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = resolve_target(self.target)
        for function in functions_of(op):
            try:
                self.apply_function(function, target)
            except (IterationError, CoreCheckError) as error:
                raise op_error(error.op, str(error)) from error

    @abstractmethod
    def apply_function(self, function: func.FuncOp, target: Target) -> None:
        """Transform or check one function."""
