"""
The accounting rules know ops by name (`"ktir.exp"`, `"math.exp"`), so `ktir.hardware` imports no
dialect (`test/unit/test_layers.py`): every name they key on is an op of the `ktir` dialect or of
the upstream dialects a ktdp program computes with (`arith`, `math`, `linalg`, `spyreop`), and each ktir
group is exactly one family of the dialect's ops.
"""

from __future__ import annotations

from xdsl.dialects.arith import Arith
from xdsl.dialects.math import Math

from ktir.dialects.ktir import Ktir
from ktir.dialects.ktir import elementwise as ew
from ktir.dialects.ktir import structured as st
from ktir.dialects.linalg_ext import LinalgExt
from ktir.dialects.spyreop import SpyreOp
from ktir.hardware import accounting, cost_model
from ktir.hardware.target import SPYRE


def _names(base: type) -> set[str]:
    return {op.name for op in Ktir.operations if issubclass(op, base)}


def _keyed() -> set[str]:
    return {
        *accounting.SFU_PASSES,
        *accounting.REDUCTIONS,
        *accounting.NORM_EXTRA_PASSES,
        *accounting.DATA_MOVEMENT,
        *accounting.BODY_FREE,
    }


def test_every_name_the_accounting_keys_on_is_an_op() -> None:
    upstream = {op.name for dialect in (Arith, Math, LinalgExt, SpyreOp) for op in dialect.operations}
    assert _keyed() - _names(object) - upstream == set()
    assert {"ktir.exp", "ktir.silu", "ktir.gelu", "math.exp", "linalg.copy"} <= _keyed()


def test_each_ktir_group_is_one_family_of_the_dialects_ops() -> None:
    def ktir(names: frozenset[str] | dict[str, float]) -> set[str]:
        return {n for n in names if n.startswith("ktir.")}

    assert ktir(accounting.REDUCTIONS) == _names(st.ReductionOp)
    assert ktir(accounting.NORM_EXTRA_PASSES) == _names(st.NormOp)
    assert ktir(accounting.DATA_MOVEMENT) == _names(st.ShapeChangeOp) | {st.CatOp.name}


def test_a_ktdp_op_takes_the_passes_of_the_ktir_op_it_writes() -> None:
    # the functions ktir-emit-ktdp writes for ktir's ops take their passes and FLOPs
    for ktdp, graph in [("math.exp", "ktir.exp"), ("arith.divf", "ktir.div"), ("math.rsqrt", "ktir.rsqrt")]:
        assert accounting.sfu_passes_of(ktdp) == accounting.sfu_passes_of(graph) == 2.0
    flops = accounting.sfu_flops_of
    assert flops("linalg.transpose", 64, 64) == flops("ktir.permute", 64, 64) == 0.0
    assert flops("linalg.reduce", 4096, 64) == flops("ktir.sum", 4096, 64) == 4096.0


def test_an_op_and_its_name_cost_the_same() -> None:
    assert cost_model.sfu_cycles_of(ew.SiluOp.name, 0, 4096, target=SPYRE) == 5 * cost_model.sfu_cycles_of(
        "ktir.add", 0, 4096, target=SPYRE
    )
    assert (
        cost_model.sfu_cycles_of(st.SoftmaxOp.name, 4096, 4096, target=SPYRE)
        == 4096 / SPYRE.softmax_elems_per_us * SPYRE.clock_mhz
    )
    assert accounting.sfu_flops_of(st.PermuteOp.name, 4096, 4096) == 0.0
    assert accounting.sfu_flops_of(st.RmsNormOp.name, 100, 100) == 500.0
