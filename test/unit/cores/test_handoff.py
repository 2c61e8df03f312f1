"""
The LX hand-off between two matmul kernels (`ktir.cores.handoff`, decided by `ktir-divide-work`):
SwiGLU's result stays in LX for the down projection when the dataflow model finds that faster,
the consumer is divided to read it where it was written, and the numbers do not change.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import compiled, fp16_ulp_at_largest
from helpers import swiglu_mlp as mlp

import ktir
from ktir.dialects.ktir import core
from ktir.dialects.ktir.core import CORE_ORDER_ATTR
from ktir.ir.context import make_context
from ktir.ir.diagnostics import DiagnosticError, parse_module
from ktir.ir.state import read_core_order, read_lx_placement, set_core_order
from ktir.passes.propagate_layouts import functions_of
from ktir.reference.executor import run
from ktir.sim import estimate, simulate


def kernels(module: object) -> list[core.KernelOp]:
    return [op for op in functions_of(module)[0].body.block.ops if isinstance(op, core.KernelOp)]  # type: ignore[arg-type]


def division(kernel: core.KernelOp) -> dict[str, int]:
    """The work division a kernel was lowered with."""
    return {d: n.value.data for d, n in kernel.work_division.data.items()}  # type: ignore[attr-defined]


def test_swiglus_result_stays_in_lx_for_the_down_projection_with_the_same_numbers() -> None:
    """
    256 tokens, 256 -> 2048 -> 256 on 32 cores: the down projection takes SwiGLU's M split and
    its N split as K, and each core reads the hidden tile it wrote; the 1 MiB hidden tensor
    never crosses LPDDR5 (stored and loaded before), and the MLP runs 24% faster.
    """
    text = mlp(256, 256, 2048)
    module = compiled(text, 32)
    swiglu, down = kernels(module)
    assert read_core_order(swiglu)[0] == "n" and read_lx_placement(swiglu) is not None
    producer_splits, consumer_splits = division(swiglu), division(down)
    assert consumer_splits["k"] == producer_splits["n"] > 1 and consumer_splits["n"] == 1
    assert consumer_splits["m"] == producer_splits["m"]
    assert CORE_ORDER_ATTR not in down.attributes
    rng = np.random.default_rng(0)
    shapes = ((256, 256), (256, 2048), (256, 2048), (2048, 256))
    inputs = [(rng.standard_normal(s) / 8).astype(np.float16) for s in shapes]
    (expected,) = run(parse_module(make_context(), text), inputs)
    (ours,) = simulate(module, inputs).outputs
    # fp32 partial sums per K partner, added over the ring: within one fp16 ulp of the largest output
    assert np.abs(ours.astype(np.float64) - expected).max() <= fp16_ulp_at_largest(expected)

    apart = parse_module(make_context(), text)
    ktir.run_pipeline(apart, "ktir-compile{cores=32 handoff=false}")
    assert CORE_ORDER_ATTR not in str(apart)
    kept, stored = estimate(module), estimate(apart)
    hidden = 256 * 2048 * 2
    assert stored.bytes - kept.bytes == 2 * hidden
    assert kept.total_cycles < 0.8 * stored.total_cycles


def test_no_handoff_from_a_producer_whose_store_hides_under_its_pe_work() -> None:
    """128 tokens, 512 -> 1024 -> 512 on 8 cores: SwiGLU is compute-bound (module ktir.cores.handoff)."""
    module = compiled(mlp(128, 512, 1024), 8)
    swiglu, down = kernels(module)
    assert read_core_order(swiglu) == () and read_lx_placement(swiglu) is None
    assert division(down)["k"] == 1


def test_dividing_again_drops_an_earlier_runs_core_order_and_handoff() -> None:
    """A producer keeps no stale `ktir.core_order` under a new division (a K split would break)."""
    module = parse_module(make_context(), mlp(256, 256, 2048))
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-fuse")
    ktir.run_pipeline(module, "ktir-divide-work{policy=dataflow}")
    assert CORE_ORDER_ATTR in str(module)
    ktir.run_pipeline(module, "ktir-divide-work{policy=default}")
    assert CORE_ORDER_ATTR not in str(module) and "ktir.lx_handoff" not in str(module)


def test_a_core_order_that_breaks_a_k_split_is_a_located_error() -> None:
    """K partners reduce over the ring as consecutive cores: the split K must come first."""
    text = """
func.func @f(%x: tensor<64x512xf16>, %w: tensor<512x128xf16>) -> tensor<64x128xf16> {
  %y = ktir.matmul %x, %w {ktir.work_division_hint = {m = 1 : i64, n = 2 : i64, k = 4 : i64}}
      : tensor<64x512xf16>, tensor<512x128xf16> -> tensor<64x128xf16>
  return %y : tensor<64x128xf16>
}"""
    module = parse_module(make_context(), text)
    ktir.run_pipeline(module, "ktir-propagate-layouts,ktir-pad-matmul,ktir-divide-work{cores=8}")
    matmul = next(op for op in functions_of(module)[0].body.block.ops if op.name == "ktir.matmul")
    set_core_order(matmul, ["n", "m", "k"])
    with pytest.raises(DiagnosticError, match="must put the split reduction dim 'k' first"):
        ktir.run_pipeline(module, "ktir-plan-scratchpad")
