"""`ktir-pad-matmul`: y padded along K with zeros to whole sticks; K = 1 becomes a multiply."""

from __future__ import annotations

import numpy as np
import torch

import ktir
from ktir.dialects.ktir.structured import BmmOp, MatmulOp, PadOp, ints
from ktir.frontend.fx import import_program
from ktir.ir.values import encoding_of
from ktir.layout.sticks import layout_stick
from ktir.passes.propagate_layouts import functions_of
from ktir.reference.executor import run

PIPELINE = "ktir-propagate-layouts,ktir-insert-restickify,ktir-pad-matmul,ktir-verify-layouts"


def test_bmm_y_is_padded_to_whole_sticks_and_values_are_unchanged() -> None:
    x, y = torch.randn(2, 8, 67).half(), torch.randn(2, 67, 128).half()
    program = import_program(lambda x, y: torch.bmm(x, y), (x, y))
    before = run(program.module, [x.numpy(), y.numpy()])
    ktir.run_pipeline(program.module, PIPELINE)
    ops = list(functions_of(program.module)[0].body.block.ops)
    (pad,) = [op for op in ops if isinstance(op, PadOp)]
    (bmm,) = [op for op in ops if isinstance(op, BmmOp)]
    assert pad.result.type.get_shape() == (2, 128, 128)  # the reference's [2, 67, 128] -> [2, 128, 128]
    assert (ints(pad.low), ints(pad.high), pad.value.value.data) == ((0, 0, 0), (0, 61, 0), 0.0)
    layout = encoding_of(pad.result)
    assert layout is not None and layout_stick(layout, (2, 128, 128)) == 2  # still sticked on N
    assert layout.device_size == [128, 2, 2, 64]  # as the reference's example
    assert bmm.y is pad.result and bmm.x.type.get_shape() == (2, 8, 67)  # x is left as is
    after = run(program.module, [x.numpy(), y.numpy()])
    assert np.array_equal(before[0], after[0])


def test_k_of_one_becomes_a_multiply() -> None:
    x, y = torch.randn(16, 1).half(), torch.randn(1, 64).half()
    program = import_program(lambda x, y: x @ y, (x, y))
    before = run(program.module, [x.numpy(), y.numpy()])
    ktir.run_pipeline(program.module, PIPELINE)
    names = [op.name for op in functions_of(program.module)[0].body.block.ops]
    assert "ktir.matmul" not in names and "ktir.mul" in names
    assert np.array_equal(before[0], run(program.module, [x.numpy(), y.numpy()])[0])


def test_whole_stick_k_is_untouched_and_the_pass_is_idempotent() -> None:
    program = import_program(lambda x, y: x @ y, (torch.ones(8, 128).half(), torch.ones(128, 64).half()))
    ktir.run_pipeline(program.module, PIPELINE)
    once = str(program.module)
    assert "ktir.pad" not in once
    ragged = import_program(lambda x, y: x @ y, (torch.ones(8, 100).half(), torch.ones(100, 64).half()))
    ktir.run_pipeline(ragged.module, PIPELINE)
    padded = str(ragged.module)
    ktir.run_pipeline(ragged.module, "ktir-pad-matmul")
    assert str(ragged.module) == padded and padded.count("ktir.pad") == 1
    assert any(isinstance(op, MatmulOp) for op in functions_of(ragged.module)[0].body.block.ops)


def test_k_of_one_with_an_already_padded_y_stays_a_matmul() -> None:
    from ktir.ir.context import make_context
    from ktir.ir.diagnostics import parse_module

    module = parse_module(
        make_context(),
        "func.func @f(%x: tensor<16x1xf16>, %y: tensor<64x32xf16>) -> tensor<16x32xf16> {\n"
        "  %r = ktir.matmul %x, %y : tensor<16x1xf16>, tensor<64x32xf16> -> tensor<16x32xf16>\n"
        "  func.return %r : tensor<16x32xf16>\n}\n",
    )
    ktir.run_pipeline(module, "ktir-pad-matmul")
    assert "ktir.matmul" in str(module) and "ktir.mul" not in str(module)
