"""
The data-dependent ATen ops that run on the chip (`ktir.frontend.aten_indexing`): embedding,
index_select, index and cumsum import as `ktir.gather_rows` / `ktir.cumsum`, compile, simulate,
and give eager's values exactly (a gather moves whole rows; an integer cumsum is exact and an
fp16 one rounds each fp32 prefix once, as PyTorch's CPU kernel does). Forms without an on-chip
lowering stay CPU fallbacks, which the simulator charges (`test/unit/sim/test_function_level.py`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from test_fx import op_names

import ktir
from ktir.frontend.fx import import_fx
from ktir.sim.memory import SimulationError

_G = torch.Generator().manual_seed(21)
TABLE = torch.randn(100, 64, generator=_G).half()
X3 = torch.randn(4, 10, 64, generator=_G).half()
IDS = torch.randint(0, 100, (2, 12), generator=_G)
I4 = torch.tensor([3, -1, 0])
J = torch.tensor([[1], [-2]])

Case = tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...], str]
CASES: dict[str, Case] = {
    "embedding": (lambda t, i: torch.nn.functional.embedding(i, t), (TABLE, IDS), "ktir.gather_rows"),
    "index_select_dim1": (lambda x, i: torch.index_select(x, 1, i.abs()), (X3, I4), "ktir.gather_rows"),
    "index_dim0_negative": (lambda x, i: x[i], (X3, I4), "ktir.gather_rows"),
    "index_two_dims_broadcast": (lambda x, j, i: x[j, i], (X3, J, I4), "ktir.gather_rows"),
    "index_dim1": (lambda x, i: x[:, i], (X3, I4), "ktir.gather_rows"),
    "index_dims_1_2": (lambda x, j, i: x[:, j, i], (X3, J, I4), "ktir.gather_rows"),
    "cumsum_int": (lambda i: torch.cumsum(i, dim=1), (IDS,), "ktir.cumsum"),
    "cumsum_bool": (lambda i: torch.cumsum(i > 50, dim=-1), (IDS,), "ktir.cumsum"),
    "cumsum_f16": (lambda x: torch.cumsum(x, dim=1), (X3,), "ktir.cumsum"),
    "cumsum_f16_stick_dim": (lambda x: torch.cumsum(x, dim=2), (X3,), "ktir.cumsum"),
    # DeBERTa's relative positions: gather along the last dim of a score tensor.
    "gather_last_dim": (
        lambda s, i: torch.gather(s, -1, i),
        (X3, IDS.reshape(1, 2, 12) % 64),
        "ktir.take_along",
    ),
    # RoBERTa's token types: gather from a (1, n) buffer along dim 1.
    "gather_dim1_fewer_rows": (
        lambda x, i: torch.gather(x, 1, i),
        (X3, (IDS[:1, :3] % 10).reshape(1, 3, 1).expand(1, 3, 64)),
        "ktir.take_along",
    ),
    "repeat": (lambda x: x.repeat(1, 2, 3), (X3,), "ktir.expand"),
    # MoE routers' one-hot masks: a scalar scattered at each row's chosen positions.
    "scatter_value": (
        lambda x, i: torch.zeros_like(x).scatter(2, i, 1.0),
        (X3, torch.randint(0, 64, (4, 10, 4), generator=_G)),
        "ktir.where",
    ),
    "scatter_value_dim1": (
        lambda x, i: x.scatter(1, i, -2.0),
        (X3, torch.randint(0, 10, (4, 2, 64), generator=_G)),
        "ktir.where",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_runs_on_the_chip_with_eagers_values(name: str) -> None:
    fn, args, op = CASES[name]
    names = op_names(import_fx(fn, args))
    assert op in names and "ktir.cpu_fallback" not in names
    program = ktir.compile(fn, args)
    ours, want = program(*args), fn(*args)
    assert ours.dtype == want.dtype and ours.shape == want.shape
    np.testing.assert_array_equal(ours.numpy(), want.numpy())
    assert not [k for k in program.report.kernels if "(host)" in k.op]


def test_an_index_outside_the_table_is_a_located_error() -> None:
    fn, args, _ = CASES["embedding"]
    program = ktir.compile(fn, args)
    bad = IDS.clone()
    bad[1, 3] = 100
    with pytest.raises(SimulationError, match="index 100 is out of range for a table of 100 rows"):
        program(TABLE, bad)


def test_index_tensors_on_dims_apart_stay_a_charged_cpu_fallback() -> None:
    """`x[i, :, j]` moves the index dims to the front (PyTorch's rule): the host runs it, at a cost."""
    fn = lambda x, i, j: x[i, :, j.abs()]  # noqa: E731
    args = (X3, torch.tensor([0, 3]), torch.tensor([5, -7]))
    assert "ktir.cpu_fallback" in op_names(import_fx(fn, args))
    program = ktir.compile(fn, args)
    np.testing.assert_array_equal(program(*args).numpy(), fn(*args).numpy())
    (host,) = [k for k in program.report.kernels if "(host)" in k.op]
    assert host.op == "ktir.cpu_fallback aten::index.Tensor (host)"
    assert host.cycles > 10.0 * 1500 and host.host_bytes > 0
