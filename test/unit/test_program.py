"""`ktir.compile`'s `Program`: model state packed into device memory once, in the compiler's layouts."""

from __future__ import annotations

import torch
from model_zoo import MLP, pair

import ktir
from ktir.dialects.ktir import core
from ktir.ir.values import functions_of, layout_of_type


def test_parameters_are_packed_once_and_never_relayouted() -> None:
    model, _ = pair(MLP)
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(4)).half()
    program = ktir.compile(model, (x,))
    function = functions_of(program.module)[0]
    state = set(function.body.block.args[program.imported.user_input_count :])
    assert len(state) == 4  # two weights, two biases
    kernels = [op for op in function.body.block.ops if isinstance(op, core.KernelOp)]
    # Each linear reads its weight transposed; the weights' own layouts make that free.
    assert not [k for k in kernels if k.op_name.data == "ktir.restickify"]
    assert program.loads == 0
    first = program(x)
    first_report = program.report
    second = program(x)
    second_report = program.report
    assert program.loads == 1
    # What is transferred: every state tensor once, at its device-layout size (padding included).
    expected = sum(layout_of_type(a.type).device_bytes for a in state)  # type: ignore[union-attr]
    assert first_report.load_bytes == expected >= 2 * (64 * 256 + 256 + 256 * 32 + 32)
    assert first_report.load_us == expected / 63.0e9 * 1e6
    assert second_report.load_bytes == 0 and second_report.load_us == 0
    assert first_report.total_cycles == second_report.total_cycles  # load time is not kernel time
    assert torch.equal(first, second)
    program.load()  # already resident: nothing moves again
    assert program.loads == 1


def test_torch_compile_keeps_parameters_resident_until_they_change() -> None:
    model, _ = pair(MLP)
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(5)).half()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="ktir")
    with torch.no_grad():
        first = compiled(x)
        first_report = ktir.torch_backend.last_report()
        second = compiled(x)
        second_report = ktir.torch_backend.last_report()
    assert first_report.load_bytes > 0 and second_report.load_bytes == 0
    assert not [k for k in first_report.kernels if k.op == "ktir.restickify"]
    assert torch.equal(first, second)
    weight = next(model.parameters())
    with torch.no_grad():
        weight.mul_(2)  # an in-place update: the device copy is stale and is loaded again
        third = compiled(x)
        expected = model(x)
    assert ktir.torch_backend.last_report().load_bytes == first_report.load_bytes
    assert not torch.equal(third, first)
    assert (third.float() - expected.float()).abs().max() <= 4 * torch.finfo(
        torch.float16
    ).eps * expected.abs().max()
