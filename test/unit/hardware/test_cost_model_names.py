"""
The cost model knows graph ops by name (`"ktir.exp"`), so it imports no dialect
(`test/unit/test_layers.py`): every name it keys on is an op of the `ktir` dialect, and each of
its groups is exactly one family of the dialect's ops.
"""

from __future__ import annotations

from ktir.dialects.ktir import Ktir
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.hardware import cost_model


def _names(base: type) -> set[str]:
    return {op.name for op in Ktir.operations if issubclass(op, base)}


def test_every_name_the_cost_model_keys_on_is_a_ktir_op() -> None:
    keyed = {
        *cost_model._SFU_PASSES,
        *cost_model.REDUCTIONS,
        *cost_model._NORM_EXTRA_PASSES,
        *cost_model._DATA_MOVEMENT,
    }
    assert keyed - _names(object) == set()
    assert {"ktir.exp", "ktir.silu", "ktir.gelu"} <= keyed


def test_each_group_is_one_family_of_the_dialects_ops() -> None:
    assert cost_model.REDUCTIONS == _names(st.ReductionOp)
    assert set(cost_model._NORM_EXTRA_PASSES) == _names(st.NormOp)
    assert cost_model._DATA_MOVEMENT == _names(st.ShapeChangeOp) | {st.CatOp.name}


def test_an_op_and_its_name_cost_the_same() -> None:
    assert cost_model.sfu_cycles_of(ew.SiluOp.name, 0, 4096) == 5 * cost_model.sfu_cycles_of(
        "ktir.add", 0, 4096
    )
    assert (
        cost_model.sfu_cycles_of(st.SoftmaxOp.name, 4096, 4096)
        == 4096 / cost_model.SPYRE.softmax_elems_per_us * cost_model.SPYRE.clock_mhz
    )
    assert cost_model.sfu_flops_of(st.PermuteOp.name, 4096, 4096) == 0.0
    assert cost_model.sfu_flops_of(st.RmsNormOp.name, 100, 100) == 500.0
