"""Function-level ops of the functional executor on device buffers (ktir/sim/executor.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ktir.dialects.ktir import structured as st
from ktir.ir.context import make_context
from ktir.ir.diagnostics import parse_module
from ktir.sim import executor

# A (256 x 128) weight stored with its sticks along dim 0, and its transpose with its sticks
# along dim 1: device position (s, k, l) holds w[64 s + l, k] in both.
W = "tensor<256x128xf16, #ktir.tiled<device_size = [4, 128, 64], stride_map = [8192, 1, 128]>>"
WT = "tensor<128x256xf16, #ktir.tiled<device_size = [4, 128, 64], stride_map = [64, 256, 1]>>"
# The same transpose into a layout with its sticks along dim 0: the bytes move.
WT_MOVED = "tensor<128x256xf16, #ktir.tiled<device_size = [2, 256, 64], stride_map = [16384, 1, 256]>>"


def _permute(result_type: str) -> st.PermuteOp:
    text = (
        f"func.func @f(%w: {W}) -> {result_type} {{\n"
        f"  %t = ktir.permute %w perm [1, 0] : {W} -> {result_type}\n  return %t : {result_type}\n}}"
    )
    (op,) = [o for o in parse_module(make_context(), text).walk() if isinstance(o, st.PermuteOp)]
    return op


@pytest.mark.parametrize(("result_type", "same_buffer"), [(WT, True), (WT_MOVED, False)])
def test_a_permute_that_keeps_the_device_bytes_reuses_its_buffer(result_type: str, same_buffer: bool) -> None:
    """
    A weight's transpose that the layout plan keeps in place (`copying_view`: its result is the
    input's device bytes seen another way) returns the input's buffer itself; one into a
    layout that moves the bytes is computed on the host. Both hold the transposed weight.
    """
    op = _permute(result_type)
    w = np.arange(256 * 128, dtype=np.float16).reshape(256, 128)
    device = executor.device_buffer(w, op.input.type)
    (result,) = executor.host_op(op, [device])
    assert np.shares_memory(result, device) == same_buffer
    assert result.shape == tuple(executor.tensor_layout(op.result.type)[0].device_size)
    assert np.array_equal(executor.host_array(result, op.result.type), w.T)
