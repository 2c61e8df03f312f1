"""
`ktir-plan-kernels` decides and `ktir-lower-to-cores` builds: the plan recorded on every divided
op carries every decision (printed, parsed back and lowered, it gives `ktir-compile`'s kernels),
and none of it reaches core-level IR.
"""

from __future__ import annotations

import pytest
from helpers import compiled, unary
from test_lower_to_cores import SWIGLU

import ktir
from ktir.dialects.ktir.core import CHUNK_PLAN_ATTR, LX_BUFFERS_ATTR, PREFETCH_ATTR, WORK_DIVISION_ATTR
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.ir.state import read_chunk_plan, read_lx_buffers
from ktir.ir.values import functions_of

GRAPH_STAGES = (
    "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse,"
    "ktir-divide-work{cores=2},ktir-plan-scratchpad"
)


def planned(text: str) -> str:
    """`text` through the graph-level stages of `ktir-compile{cores=2}` and `ktir-plan-kernels`, printed."""
    module = parse_module(make_context(), text)
    ktir.run_pipeline(module, f"{GRAPH_STAGES},ktir-plan-kernels")
    return str(module)


@pytest.mark.parametrize("text", [SWIGLU, unary("ktir.exp", "1024x1024")], ids=["swiglu", "exp"])
def test_the_recorded_plan_lowers_to_what_ktir_compile_builds(text: str) -> None:
    plan = planned(text)
    module = parse_module(make_context(), plan)  # only what the text records reaches the builder
    ktir.run_pipeline(module, "ktir-lower-to-cores")
    assert str(module) == str(compiled(text, cores=2))


def test_every_divided_op_carries_a_plan_and_core_level_ir_none() -> None:
    module = parse_module(make_context(), planned(SWIGLU))
    divided = [op for op in functions_of(module)[0].body.block.ops if WORK_DIVISION_ATTR in op.attributes]
    assert divided and all(read_chunk_plan(op) is not None and read_lx_buffers(op) for op in divided)
    text = str(compiled(SWIGLU, cores=2))
    assert not any(name in text for name in (CHUNK_PLAN_ATTR, LX_BUFFERS_ATTR, PREFETCH_ATTR))


def test_a_chunked_kernel_records_its_chunks() -> None:
    module = parse_module(make_context(), planned(unary("ktir.exp", "1024x1024")))
    (op,) = [op for op in functions_of(module)[0].body.block.ops if op.name == "ktir.exp"]
    assert read_chunk_plan(op) == ({"d0": 64, "d1": 1}, False)  # 64 chunks of 8 rows per core
    assert read_lx_buffers(op) == {"in0": 0, "out0": 32768}  # two 16 KiB slots of input below


def test_lowering_without_a_plan_asks_for_the_planner() -> None:
    module = parse_module(
        make_context(), unary("ktir.abs", "4x64", extra=f"{{{WORK_DIVISION_ATTR} = {{d0 = 2}}}}")
    )
    with pytest.raises(DiagnosticError, match=r"has no ktir\.chunk_plan; run ktir-plan-kernels first"):
        ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-lower-to-cores")


@pytest.mark.parametrize("stage", ["ktir-divide-work{cores=2}", "ktir-plan-scratchpad"])
def test_dividing_or_placing_again_drops_the_plan(stage: str) -> None:
    module = parse_module(make_context(), planned(SWIGLU))
    ktir.run_pipeline(module, stage)
    assert not any(
        CHUNK_PLAN_ATTR in op.attributes or LX_BUFFERS_ATTR in op.attributes for op in module.walk()
    )
