"""
`ktir-emit-ktdp`: replace a core-level module by its RFC 0682 `ktdp` program
(`ktir.export.to_ktdp`, docs/ktdp.md "Emission").

Each `ktir.kernel` becomes a function `@k<i>_<op>` (kernels numbered in program order from 0)
in torch-spyre's emitter form: one `index` argument per kernel tensor (`%in<j>`, `%out<j>`,
the element offset of its device buffer), `#ktdp.memory_space<global>` views in device layout,
access tiles, loads, `linalg` on host tiles into `tensor.empty`, stores. The program is built
op by op with xDSL's typed builders and verified before it replaces the module, so what the
pass prints is xDSL's printer output and what `ktir-run --function` runs.

Every kernel that cannot be written yet is a located error at its ktir op (all of them are
listed), and the module is left unchanged. Function-level ops that are not kernels (views,
host fallbacks) have no `ktdp` form: a module whose function holds only those is an error too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ktir.export.to_ktdp import emit_module
from ktir.ir.diagnostics import DiagnosticError, verify_module


@dataclass(frozen=True)
class EmitKtdpPass(ModulePass):
    """Replace the module by the `ktdp` program of its kernels (see the module docstring)."""

    name = "ktir-emit-ktdp"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        program = emit_module(op)
        if errors := verify_module(program):  # the conversion built something the verifiers refuse
            raise DiagnosticError(errors)
        for old in list(op.body.block.ops):
            old.detach()
            old.erase()
        for new in list(program.body.block.ops):
            new.detach()
            op.body.block.add_op(new)
