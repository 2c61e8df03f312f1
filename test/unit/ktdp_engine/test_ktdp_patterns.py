"""
`ktir.ktdp_engine.patterns`: a kernel `ktir-emit-ktdp` writes moves its bytes at the access pattern's
rate on the ktdp engine, as ktir's simulator moves the kernel's (`ktir.sim.patterns.access_pattern`),
so the round trip keeps the cycles.
"""

from __future__ import annotations

import pytest
import torch
from helpers import transpose_module
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import ktir
from ktir.export.to_ktdp import emit_kernel
from ktir.hardware import cost_model
from ktir.hardware.target import SPYRE
from ktir.ktdp_engine.patterns import kernel_bandwidth
from ktir.tools.ktdp_roundtrip import roundtrip_module

CASES = {
    "row sum": (lambda x: x.sum(-1), [(512, 256)], cost_model.row_reduction_bandwidth(512, 4, target=SPYRE)),
    "row amax": (
        lambda x: x.amax(-1),
        [(512, 256)],
        cost_model.row_reduction_bandwidth(512, 4, target=SPYRE),
    ),
    "column sum": (lambda x: x.sum(0), [(512, 256)], SPYRE.column_reduction_bandwidth),
    "a + b[1, C]": (lambda a, b: a + b, [(512, 256), (1, 256)], SPYRE.broadcast_bandwidth),
    "x + 1.0": (lambda x: x + 1.0, [(512, 256)], SPYRE.broadcast_bandwidth),
    "a + b": (lambda a, b: a + b, [(512, 256), (512, 256)], None),
    "gelu": (torch.nn.functional.gelu, [(512, 256)], None),
}


def emitted(module: ModuleOp) -> func.FuncOp:
    """The ktdp function of the module's only kernel."""
    (kernel,) = [op for op in module.walk() if op.name == "ktir.kernel"]
    written = emit_kernel(kernel, "k0")
    return next(op for op in written.walk() if isinstance(op, func.FuncOp) and op.sym_name.data == "k0")


@pytest.mark.parametrize("name", CASES)
def test_each_pattern_is_recognised_and_keeps_the_round_trip_cycles(name: str) -> None:
    function, shapes, expected = CASES[name]
    args = tuple(torch.randn(*shape, generator=torch.Generator().manual_seed(0)).half() for shape in shapes)
    module = ktir.compile(function, args, cores=4, quiet=True).module
    assert kernel_bandwidth(emitted(module), 4, SPYRE) == expected
    (result,) = roundtrip_module(module)
    assert result.skipped is None and result.equal and result.same_cycles, result


def test_a_restickify_is_a_transport_at_116_gbps() -> None:
    module = transpose_module(256, 128, 4)
    assert kernel_bandwidth(emitted(module), 4, SPYRE) == 116e9
    (result,) = roundtrip_module(module)
    assert result.skipped is None and result.equal and result.same_cycles, result
