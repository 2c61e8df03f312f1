"""
`ktir-compile{cores=32 policy=dataflow handoff=true solver=greedy fuse=true target="t.toml"}`:
the whole pipeline from graph-level to core-level ktir, as one pass, for one target (default:
Spyre, all its cores).

It runs, in order: `ktir-propagate-layouts`, `ktir-insert-restickify`, `ktir-pad-matmul`,
`ktir-fuse` (unless `fuse=false`), `ktir-divide-work{cores policy handoff}`, `ktir-plan-scratchpad{solver}`,
`ktir-plan-kernels` and `ktir-lower-to-cores`.
`ktir.compile(model, example_args)` is this pass applied to the imported model.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ktir.hardware.target import Target
from ktir.passes.divide_work import DivideWorkPass
from ktir.passes.fuse import FusePass
from ktir.passes.insert_restickify import InsertRestickifyPass
from ktir.passes.lower_to_cores import LowerToCoresPass
from ktir.passes.pad_matmul import PadMatmulPass
from ktir.passes.plan_kernels import PlanKernelsPass
from ktir.passes.plan_scratchpad import PlanScratchpadPass
from ktir.passes.propagate_layouts import PropagateLayoutsPass


@dataclass(frozen=True)
class CompilePass(ModulePass):
    """Graph-level ktir to core-level ktir (see the module docstring)."""

    name = "ktir-compile"

    cores: int | None = None
    """Cores to divide over; default: all of the target's."""
    policy: str = "dataflow"
    """The work-division policy (`ktir-divide-work`): matmuls split for time with their chunking."""
    handoff: bool = True
    """Keep a matmul's result in LX for the matmul reading it where faster (`ktir-divide-work`)."""
    solver: str = "greedy"
    fuse: bool = True
    """Run `ktir-fuse`: producer-consumer chains become one kernel each."""
    target: str | Target = ""
    """A target TOML file (`ktir.hardware.target.load_target`), or from Python a `Target`, that
    every stage uses; default: Spyre."""

    def __post_init__(self) -> None:
        # Building the inner passes checks cores, policy and solver when the pipeline is parsed,
        # so a bad option is a usage error (exit 2), not a failure halfway through the pipeline.
        self.passes()

    def passes(self) -> list[ModulePass]:
        """The pipeline's passes, in order."""
        return [
            PropagateLayoutsPass(),
            InsertRestickifyPass(),
            PadMatmulPass(),
            *([FusePass(target=self.target)] if self.fuse else []),
            DivideWorkPass(cores=self.cores, policy=self.policy, handoff=self.handoff, target=self.target),
            PlanScratchpadPass(solver=self.solver, target=self.target),
            PlanKernelsPass(target=self.target),
            LowerToCoresPass(target=self.target),
        ]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for module_pass in self.passes():
            module_pass.apply(ctx, op)
